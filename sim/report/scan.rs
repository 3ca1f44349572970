//! Finding the bytes a report's text must escape or quote (JSON strings in the status files, HTML
//! text in the page, CSV fields in the tables), 16 bytes at a time: a check over an array of fixed
//! length compiles to a few vector instructions, one over a slice of any length to a loop of bytes.
//! `special` should compare without branches (`|`, not `||`), so the compiler can make it wide.

/// Whether any of the 16 bytes is `special`.
#[inline(always)]
pub(crate) fn any_in_chunk(chunk: &[u8; 16], special: impl Fn(u8) -> bool) -> bool {
    chunk.iter().fold(0, |any, &b| any | u8::from(special(b))) != 0
}

/// Where the first `special` byte of `bytes` is: text without one is passed over 16 bytes at a
/// time, the chunk that has one (or the last bytes) searched one by one.
#[inline(always)]
pub(crate) fn first(bytes: &[u8], special: impl Fn(u8) -> bool + Copy) -> Option<usize> {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 16) {
        if any_in_chunk(chunk.try_into().expect("16 bytes"), special) {
            break;
        }
        at += 16;
    }
    bytes[at..].iter().position(|&b| special(b)).map(|i| at + i)
}
