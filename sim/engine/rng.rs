//! The seed tree: one ChaCha8 stream per purpose and entity, derived from the scenario seed.
//!
//! Why a tree and not one shared generator: a shared generator couples every draw to the order of
//! events, so adding a member or changing a strategy would reshuffle every other draw and destroy
//! common random numbers across sweep points (des-anchors §6). Entities are keyed by a hash of their
//! *name*, not their position, so adding a member does not change any other member's draws.
//!
//! ChaCha is a counter-based generator: a block of keystream is a function of (key, nonce, block
//! counter), so an entity's stream is a *position*, not a generator to seed. A replication derives
//! one ChaCha8 key per purpose; an entity's keys hash to a 64-bit nonce and a 64-bit starting
//! block, and its draws are the keystream from there ([`Stream`]). Opening a stream costs two
//! hashes, and the first draw one 64-byte block (an upgrade attempt uses two or three of its eight
//! 64-bit numbers), where seeding a generator per entity cost a key schedule and a four-block
//! refill. The blocks are ChaCha8 exactly as `rand_chacha` computes them (djb's layout: 64-bit
//! counter in words 12–13, 64-bit nonce in words 14–15); `rand_chacha` refills four blocks at a time
//! and has no single-block access at a position, hence [`chacha8_block`];
//! `streams_are_rand_chacha_keystreams` checks every word against `rand_chacha`.
//!
//! `rand` and `rand_chacha` are pinned exactly in `Cargo.toml`; `golden_draws_are_stable` fails if an
//! upgrade (or a change here) changes the values drawn.

use rand::RngCore;

/// What a stream is used for. The discriminant is part of the derivation: never renumber.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Purpose {
    UpgradeDuration = 1,
    UpgradeFailure = 2,
    Approval = 3,
    FleetGenerator = 4,
    ReleaseRollout = 5,
    Incident = 6,
    BadRelease = 7,
    ReleaseStream = 8,
}

/// SplitMix64's finaliser: a fixed, portable 64-bit mixer (not std's `Hasher`, which may change
/// between Rust releases).
pub const fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes of a name: the stable identity of an entity in the seed tree.
pub fn name_key(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash
}

/// The root of one replication's seed tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedTree {
    root: u64,
}

impl SeedTree {
    /// `seed` is the scenario seed; `replication` numbers the replications of a sweep (0 for `run`).
    pub fn new(seed: u64, replication: u64) -> SeedTree {
        SeedTree { root: mix64(mix64(seed) ^ mix64(replication.wrapping_add(0x5EED))) }
    }

    /// The ChaCha8 key of `purpose` in this replication: every stream of that purpose is a position
    /// in its keystream. Worked out once where many streams of one purpose are opened.
    pub fn key(&self, purpose: Purpose) -> StreamKey {
        let mut words = [0u32; 8];
        let mut state = mix64(self.root ^ (purpose as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        for pair in words.chunks_exact_mut(2) {
            state = mix64(state ^ 0x0123_4567_89AB_CDEF);
            pair[0] = state as u32;
            pair[1] = (state >> 32) as u32;
        }
        StreamKey { words }
    }

    /// The stream for `purpose` and an entity identified by up to three keys (e.g. member name key,
    /// run name key, attempt). Unused keys are 0.
    pub fn stream(&self, purpose: Purpose, keys: [u64; 3]) -> Stream {
        self.key(purpose).stream(keys)
    }
}

/// A ChaCha8 key: the streams of one purpose in one replication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamKey {
    words: [u32; 8],
}

/// Where an entity's stream starts: the nonce and the first block of its keystream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    nonce: u64,
    block: u64,
}

/// Words of a stream's first block computed ahead (with others, in a batch): a stream made from
/// them draws these first ([`StreamKey::stream_from`]).
pub type Head = [u32; HEAD_WORDS];

/// How many first words a [`Head`] keeps: an upgrade attempt of the simple duration model draws two
/// 64-bit numbers.
pub const HEAD_WORDS: usize = 4;

impl StreamKey {
    /// The stream of the entity `keys`: the keystream of nonce `h(keys)` from block `h'(keys)`,
    /// two independent 64-bit hashes, so two entities share draws only if both collide.
    pub fn stream(&self, keys: [u64; 3]) -> Stream {
        let Position { nonce, block } = StreamKey::position(keys);
        Stream { key: self.words, nonce, block, words: [0; 16], used: 16, available: 16 }
    }

    pub fn position(keys: [u64; 3]) -> Position {
        let nonce = mix64(keys[0] ^ mix64(keys[1] ^ mix64(keys[2] ^ 0x6E6F_6E63_6521_0001)));
        let block = mix64(keys[2] ^ mix64(keys[1] ^ mix64(keys[0] ^ 0x626C_6F63_6B21_0002)));
        Position { nonce, block }
    }

    /// The stream at `position` whose first words `head` were computed ahead: the same draws as
    /// [`stream`](Self::stream) of the same keys; the rest of the first block is computed only if
    /// the stream draws past `head`.
    pub fn stream_from(&self, position: Position, head: &Head) -> Stream {
        let mut words = [0; 16];
        words[..HEAD_WORDS].copy_from_slice(head);
        let block = position.block.wrapping_add(1);
        Stream { key: self.words, nonce: position.nonce, block, words, used: 0, available: HEAD_WORDS }
    }

    /// The first words of the streams at the positions of `entries`, into their heads: eight at a
    /// time with AVX2 where the processor has it, one by one otherwise (the same words either way).
    pub fn heads(&self, entries: &mut [(Position, Head)]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for entries in entries.chunks_mut(LANES) {
                let mut counters = [0u64; LANES];
                let mut nonces = [0u64; LANES];
                for (lane, (p, _)) in entries.iter().enumerate() {
                    (counters[lane], nonces[lane]) = (p.block, p.nonce);
                }
                // SAFETY: the processor has AVX2 (checked above), the only requirement of the call.
                let words = unsafe { x86::chacha8_lanes(&self.words, &counters, &nonces) };
                for (lane, (_, head)) in entries.iter_mut().enumerate() {
                    *head = std::array::from_fn(|w| words[w][lane]);
                }
            }
            return;
        }
        for (position, head) in entries {
            let block = chacha8_block(&self.words, position.block, position.nonce);
            head.copy_from_slice(&block[..HEAD_WORDS]);
        }
    }
}

/// Streams computed together by [`StreamKey::heads`].
const LANES: usize = 8;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        _mm256_add_epi32, _mm256_or_si256, _mm256_set1_epi32, _mm256_setr_epi8, _mm256_setr_epi32,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32, _mm256_storeu_si256,
        _mm256_xor_si256,
    };

    use super::{HEAD_WORDS, LANES, SIGMA};

    /// The first words of eight ChaCha8 blocks of one key, the state laid out word by word across
    /// the lanes (word `w` of block `l` is lane `l` of `x[w]`), so that each step of the rounds
    /// works on all eight blocks at once. Written with the AVX2 instructions themselves rather than
    /// left to the compiler's vectorizer, which keeps it vectorized under any optimization settings
    /// (a build with `lto = "fat"` and one codegen unit made scalar code of the lane loops it was
    /// written as, 1,773 lines of disassembly instead of 232, and a replication of the speed
    /// workload 22 % slower).
    #[target_feature(enable = "avx2")]
    pub(super) fn chacha8_lanes(
        key: &[u32; 8],
        counters: &[u64; LANES],
        nonces: &[u64; LANES],
    ) -> [[u32; LANES]; HEAD_WORDS] {
        // Rotations by whole bytes move bytes within each word; the others shift both ways.
        let by16 = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        );
        let by8 = _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
        );
        macro_rules! quarter {
            ($x:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
                $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
                $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), by16);
                $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
                let t = _mm256_xor_si256($x[$b], $x[$c]);
                $x[$b] = _mm256_or_si256(_mm256_slli_epi32::<12>(t), _mm256_srli_epi32::<20>(t));
                $x[$a] = _mm256_add_epi32($x[$a], $x[$b]);
                $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), by8);
                $x[$c] = _mm256_add_epi32($x[$c], $x[$d]);
                let t = _mm256_xor_si256($x[$b], $x[$c]);
                $x[$b] = _mm256_or_si256(_mm256_slli_epi32::<7>(t), _mm256_srli_epi32::<25>(t));
            };
        }
        // One word of each lane: `word(l)` for lanes 0 to 7.
        macro_rules! lanes {
            ($word:expr) => {{
                let word = $word;
                _mm256_setr_epi32(word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7))
            }};
        }
        // The constants and the key are the same in every lane; the counters and nonces are not.
        let mut input = [_mm256_setzero_si256(); 16];
        for (word, &value) in input.iter_mut().zip(SIGMA.iter().chain(key)) {
            *word = _mm256_set1_epi32(value as i32);
        }
        input[12] = lanes!(|l: usize| counters[l] as u32 as i32);
        input[13] = lanes!(|l: usize| (counters[l] >> 32) as u32 as i32);
        input[14] = lanes!(|l: usize| nonces[l] as u32 as i32);
        input[15] = lanes!(|l: usize| (nonces[l] >> 32) as u32 as i32);
        let mut x = input;
        for _ in 0..4 {
            quarter!(x, 0, 4, 8, 12);
            quarter!(x, 1, 5, 9, 13);
            quarter!(x, 2, 6, 10, 14);
            quarter!(x, 3, 7, 11, 15);
            quarter!(x, 0, 5, 10, 15);
            quarter!(x, 1, 6, 11, 12);
            quarter!(x, 2, 7, 8, 13);
            quarter!(x, 3, 4, 9, 14);
        }
        let mut words = [[0u32; LANES]; HEAD_WORDS];
        for (w, out) in words.iter_mut().enumerate() {
            // SAFETY: `out` is eight `u32`s, the 32 bytes the unaligned store writes.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), _mm256_add_epi32(x[w], input[w])) };
        }
        words
    }
}

/// One entity's draws: the ChaCha8 keystream of its key and nonce from its starting block, one
/// 64-byte block computed at a time (most streams use one). Draws as `rand_chacha::ChaCha8Rng`
/// would at that position: a `u32` takes the next word, a `u64` the next two (low word first), bytes
/// whole words (the rest of a last partial word is dropped).
#[derive(Clone, Debug)]
pub struct Stream {
    key: [u32; 8],
    nonce: u64,
    /// The counter of the next block to compute.
    block: u64,
    words: [u32; 16],
    /// Words of `words` already drawn.
    used: usize,
    /// Words of `words` known: 16, or the head of the block before `block` (see
    /// [`StreamKey::stream_from`]).
    available: usize,
}

impl Stream {
    #[inline]
    fn word(&mut self) -> u32 {
        if self.used == self.available {
            if self.available < 16 {
                // The rest of the block whose head was computed ahead.
                self.words = chacha8_block(&self.key, self.block.wrapping_sub(1), self.nonce);
                self.available = 16;
            } else {
                self.words = chacha8_block(&self.key, self.block, self.nonce);
                self.block = self.block.wrapping_add(1);
                self.used = 0;
            }
        }
        let word = self.words[self.used];
        self.used += 1;
        word
    }
}

impl RngCore for Stream {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.word()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        // Two words known: one test for both (most draws are of a stream's first words).
        if self.used + 2 <= self.available {
            let (low, high) = (self.words[self.used], self.words[self.used + 1]);
            self.used += 2;
            return u64::from(low) | u64::from(high) << 32;
        }
        let low = u64::from(self.word());
        low | u64::from(self.word()) << 32
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(4) {
            chunk.copy_from_slice(&self.word().to_le_bytes()[..chunk.len()]);
        }
    }
}

/// ChaCha's constant words 0–3 ("expand 32-byte k").
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The ChaCha8 block function (RFC 7539 §2.3 with 8 rounds: four double rounds, columns then
/// diagonals; djb's layout: a 64-bit block counter in words 12–13 and a 64-bit nonce in words
/// 14–15, as `rand_chacha` lays its state out). `x86::chacha8_lanes` spells out the same rounds on
/// eight blocks at once.
pub fn chacha8_block(key: &[u32; 8], counter: u64, nonce: u64) -> [u32; 16] {
    #[inline(always)]
    fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    }
    #[rustfmt::skip]
    let input = [
        SIGMA[0], SIGMA[1], SIGMA[2], SIGMA[3],
        key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
        counter as u32, (counter >> 32) as u32, nonce as u32, (nonce >> 32) as u32,
    ];
    let mut x = input;
    for _ in 0..4 {
        quarter(&mut x, 0, 4, 8, 12);
        quarter(&mut x, 1, 5, 9, 13);
        quarter(&mut x, 2, 6, 10, 14);
        quarter(&mut x, 3, 7, 11, 15);
        quarter(&mut x, 0, 5, 10, 15);
        quarter(&mut x, 1, 6, 11, 12);
        quarter(&mut x, 2, 7, 8, 13);
        quarter(&mut x, 3, 4, 9, 14);
    }
    for (word, input) in x.iter_mut().zip(input) {
        *word = word.wrapping_add(input);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `rand_chacha`'s generator at the position of a stream (the reference the blocks must equal).
    fn reference(key: &StreamKey, nonce: u64, block: u64) -> ChaCha8Rng {
        let mut seed = [0u8; 32];
        for (chunk, word) in seed.chunks_exact_mut(4).zip(key.words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(nonce);
        rng.set_word_pos(u128::from(block) * 16);
        rng
    }

    #[test]
    fn golden_draws_are_stable() {
        // If this fails, a dependency upgrade or a change here changed the random streams: every
        // report would change.
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        assert_eq!(rng.next_u64(), 12578764544318200737);
        let tree = SeedTree::new(7, 0);
        let first = tree.stream(Purpose::UpgradeDuration, [name_key("m1"), 0, 0]).next_u64();
        assert_eq!(first, 0x867d_7b99_4aef_21d3, "{first:#x}");
        let again = tree.stream(Purpose::UpgradeDuration, [name_key("m1"), 0, 0]).next_u64();
        assert_eq!(first, again);
        let unit: f64 = tree.stream(Purpose::UpgradeFailure, [1, 2, 3]).random();
        assert!((0.0..1.0).contains(&unit));
    }

    #[test]
    fn streams_are_rand_chacha_keystreams() {
        // Words, 64-bit draws, bytes and floats across block boundaries, at positions near the
        // counter's wrap too.
        for (seed, keys) in [(7, [1, 2, 3]), (8, [u64::MAX, 0, 5]), (9, [name_key("m1"), name_key("run"), 1])] {
            let key = SeedTree::new(seed, 3).key(Purpose::UpgradeDuration);
            let mut stream = key.stream(keys);
            let mut reference = reference(&key, stream.nonce, stream.block);
            for step in 0..200u32 {
                match step % 5 {
                    0 | 3 => assert_eq!(stream.next_u32(), reference.next_u32()),
                    1 => assert_eq!(stream.next_u64(), reference.next_u64()),
                    2 => assert_eq!(stream.random::<f64>(), reference.random::<f64>()),
                    _ => {
                        let (mut a, mut b) = ([0u8; 7], [0u8; 7]);
                        stream.fill_bytes(&mut a);
                        reference.fill_bytes(&mut b);
                        assert_eq!(a, b);
                    }
                }
            }
        }
        let key = SeedTree::new(1, 0).key(Purpose::Approval);
        let mut reference = reference(&key, 99, u64::MAX);
        let block = chacha8_block(&key.words, u64::MAX, 99);
        assert!(block.iter().all(|&w| w == reference.next_u32()));
        let next = chacha8_block(&key.words, 0, 99);
        assert!(next.iter().all(|&w| w == reference.next_u32()), "the counter wraps to 0");
    }

    #[test]
    fn streams_from_heads_computed_ahead_draw_what_streams_draw() {
        // Batches of every size around the eight lanes, and draws that go past the head.
        let key = SeedTree::new(5, 2).key(Purpose::UpgradeDuration);
        for count in [1, 7, 8, 9, 17] {
            let keys: Vec<[u64; 3]> = (0..count).map(|i| [name_key(&format!("m{i}")), 77, 1 + i % 3]).collect();
            let mut entries: Vec<(Position, Head)> =
                keys.iter().map(|&k| (StreamKey::position(k), [0; HEAD_WORDS])).collect();
            key.heads(&mut entries);
            for (keys, (position, head)) in keys.iter().zip(&entries) {
                let (mut ahead, mut plain) = (key.stream_from(*position, head), key.stream(*keys));
                for step in 0..40 {
                    if step % 3 == 1 {
                        assert_eq!(ahead.next_u32(), plain.next_u32());
                    } else {
                        assert_eq!(ahead.next_u64(), plain.next_u64());
                    }
                }
            }
        }
    }

    #[test]
    fn streams_differ_by_purpose_entity_and_replication() {
        let tree = SeedTree::new(7, 0);
        let draw = |t: SeedTree, p, k| t.stream(p, k).next_u64();
        let base = draw(tree, Purpose::UpgradeDuration, [1, 0, 0]);
        assert_ne!(base, draw(tree, Purpose::UpgradeFailure, [1, 0, 0]));
        assert_ne!(base, draw(tree, Purpose::UpgradeDuration, [2, 0, 0]));
        assert_ne!(base, draw(tree, Purpose::UpgradeDuration, [0, 1, 0]));
        assert_ne!(base, draw(tree, Purpose::UpgradeDuration, [0, 0, 1]));
        assert_ne!(base, draw(SeedTree::new(7, 1), Purpose::UpgradeDuration, [1, 0, 0]));
        assert_ne!(base, draw(SeedTree::new(8, 0), Purpose::UpgradeDuration, [1, 0, 0]));
        // Keys are not interchangeable: the entity (a, b) is not the entity (b, a).
        assert_ne!(draw(tree, Purpose::UpgradeDuration, [1, 2, 0]), draw(tree, Purpose::UpgradeDuration, [2, 1, 0]));
    }
}
