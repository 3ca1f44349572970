//! The candidate order of a group with maintenance windows: by window class, then member name
//! (SEMANTICS §5.4), kept ranked across instants.
//!
//! Why not sort at every instant: a group of a thousand waiting members would be re-sorted at every
//! completion. Instead each `NotStarted` member's class is kept with the instant until which the
//! world guarantees it ([`Facts::window_class_until`]) and re-ranked only then; they live in one bit
//! set per class, so ranking is O(1) per change and finding the next one is a short word scan.
//! `Pending` members matter only at a poll once their recheck time has come: they wait in a queue
//! by that time, join a second ranked set at the first poll after it, and leave it when examined.
//!
//! Equivalence with "sort the eligible members by (class, index) at each instant and take them in
//! order": within an instant the eligible set only shrinks (examined members stop being eligible)
//! except when members become candidates again (a retry), which restarts the walk; so "the next in
//! the sorted list" is always "the smallest eligible key", which is what [`Ranking::next`] returns.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::Time;

use super::facts::{Facts, RunId, WindowClass};
use std::collections::BTreeMap;

use super::run::{MemberRt, Waiting};
use super::state::UpdateState;

fn class_index(class: WindowClass) -> usize {
    match class {
        WindowClass::OpenNow => 0,
        WindowClass::OpensSoon => 1,
        WindowClass::NoWindow => 2,
        WindowClass::Closed => 3,
    }
}

/// Member indices of one (state, class), with a count to skip empty classes at once and the first
/// word that may hold a member.
#[derive(Debug, Default)]
struct Bits {
    words: Vec<u64>,
    count: u32,
    low: usize,
}

clone_reusing!(Bits { words, count, low });

impl Bits {
    fn with_len(members: usize) -> Bits {
        Bits { words: vec![0; members.div_ceil(64)], count: 0, low: 0 }
    }

    fn insert(&mut self, i: u32) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w] & (1 << b) == 0 {
            self.words[w] |= 1 << b;
            self.count += 1;
            self.low = self.low.min(w);
        }
    }

    fn remove(&mut self, i: u32) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if self.words[w] & (1 << b) != 0 {
            self.words[w] &= !(1 << b);
            self.count -= 1;
        }
    }

    /// The smallest index in the set.
    fn first(&mut self) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        // Non-empty: some word at or after `low` holds a member.
        while self.words[self.low] == 0 {
            self.low += 1;
        }
        Some(self.low as u32 * 64 + self.words[self.low].trailing_zeros())
    }
}

/// Which ranked set a member is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    NotStarted,
    /// `Pending` and due: its recheck time has come (eligible at polls).
    Due,
}

/// Candidates of one group ranked by (class, index): `NotStarted` members, and `Pending` members
/// whose recheck time has come.
#[derive(Debug, Default)]
pub struct Ranking {
    /// Ranked members by class, per set.
    not_started: [Bits; 4],
    due: [Bits; 4],
    /// Per member index: its set and class while ranked.
    ranked: Vec<Option<(Set, WindowClass)>>,
    /// Per member index: until when its class holds.
    valid_until: Vec<Time>,
    /// (valid until, index) of ranked members, earliest first; entries that no longer match
    /// `valid_until` are stale and skipped.
    expiry: BinaryHeap<Reverse<(Time, u32)>>,
    /// Members that became `NotStarted` and still need a class.
    unranked: Vec<u32>,
    /// (recheck time, index) of `Pending` members not yet due; stale entries are skipped.
    waiting: BinaryHeap<Reverse<(Time, u32)>>,
}

clone_reusing!(Ranking { not_started, due, ranked, valid_until, expiry, unranked, waiting });

impl Ranking {
    /// A group whose members are all `NotStarted` and not ranked yet.
    pub fn new(members: usize) -> Ranking {
        Ranking {
            not_started: std::array::from_fn(|_| Bits::with_len(members)),
            due: std::array::from_fn(|_| Bits::with_len(members)),
            ranked: vec![None; members],
            valid_until: vec![Time(i64::MIN); members],
            unranked: (0..members as u32).rev().collect(),
            ..Ranking::default()
        }
    }

    fn bits(&mut self, set: Set, class: WindowClass) -> &mut Bits {
        match set {
            Set::NotStarted => &mut self.not_started[class_index(class)],
            Set::Due => &mut self.due[class_index(class)],
        }
    }

    fn unrank(&mut self, index: u32) {
        if let Some((set, class)) = self.ranked[index as usize].take() {
            self.bits(set, class).remove(index);
        }
    }

    fn rank<F: Facts + ?Sized>(
        &mut self,
        set: Set,
        run: RunId,
        members: &[MemberRt],
        index: u32,
        now: Time,
        facts: &mut F,
    ) {
        let (class, until) = class_until(run, members, index, now, facts);
        let i = index as usize;
        self.ranked[i] = Some((set, class));
        self.valid_until[i] = until;
        self.expiry.push(Reverse((until, index)));
        self.bits(set, class).insert(index);
    }

    /// Member `index` changed state.
    pub fn on_state_change(&mut self, index: u32, old: UpdateState, new: UpdateState) {
        if old == new {
            return;
        }
        self.unrank(index);
        if new == UpdateState::NotStarted {
            self.unranked.push(index);
        }
    }

    /// Member `index` was examined and is `Pending` until `recheck_at` (`None`: its answer never
    /// changes by itself): it leaves the due set until then.
    pub fn on_pending(&mut self, index: u32, recheck_at: Option<Time>) {
        self.unrank(index);
        if let Some(t) = recheck_at {
            self.waiting.push(Reverse((t, index)));
        }
    }

    /// Brings the ranking up to `now`: ranks new `NotStarted` members and re-ranks those whose
    /// class may have changed; at a poll, ranks the `Pending` members that came due.
    fn refresh<F: Facts + ?Sized>(
        &mut self,
        run: RunId,
        members: &[MemberRt],
        pending: &BTreeMap<u32, Waiting>,
        now: Time,
        poll: bool,
        facts: &mut F,
    ) {
        while let Some(index) = self.unranked.pop() {
            if self.ranked[index as usize].is_none() && members[index as usize].state == UpdateState::NotStarted {
                self.rank(Set::NotStarted, run, members, index, now, facts);
            }
        }
        if poll {
            let mut later = Vec::new();
            while let Some(&Reverse((t, index))) = self.waiting.peek()
                && t <= now
            {
                self.waiting.pop();
                let m = &members[index as usize];
                let waiting = pending.get(&index);
                if self.ranked[index as usize].is_some()
                    || m.state != UpdateState::Pending
                    || waiting.and_then(|w| w.recheck_at) != Some(t)
                {
                    continue;
                }
                if waiting.and_then(|w| w.last_examined) == Some(now) {
                    // Examined at this very instant: due from the next poll on.
                    later.push(Reverse((t, index)));
                } else {
                    self.rank(Set::Due, run, members, index, now, facts);
                }
            }
            self.waiting.extend(later);
        }
        while let Some(&Reverse((until, index))) = self.expiry.peek()
            && until <= now
        {
            self.expiry.pop();
            let i = index as usize;
            let Some((set, old)) = self.ranked[i] else { continue };
            if self.valid_until[i] != until {
                continue;
            }
            let (class, until) = class_until(run, members, index, now, facts);
            self.valid_until[i] = until;
            self.expiry.push(Reverse((until, index)));
            if class != old {
                self.bits(set, old).remove(index);
                self.bits(set, class).insert(index);
                self.ranked[i] = Some((set, class));
            }
        }
    }

    /// The first eligible candidate by (class, index) (SEMANTICS §5.4): `NotStarted` members always,
    /// `Pending` ones only at a poll, once due and once per instant (§11 "Polls").
    pub fn next<F: Facts + ?Sized>(
        &mut self,
        run: RunId,
        members: &[MemberRt],
        pending: &BTreeMap<u32, Waiting>,
        now: Time,
        poll: bool,
        facts: &mut F,
    ) -> Option<u32> {
        self.refresh(run, members, pending, now, poll, facts);
        let first = |bits: &mut [Bits; 4]| (0..4).find_map(|c| bits[c].first().map(|i| (c, i)));
        let not_started = first(&mut self.not_started);
        // Due members leave the set when examined, so every one left is eligible.
        let due = if poll { first(&mut self.due) } else { None };
        match (not_started, due) {
            (Some(a), Some(b)) => Some(a.min(b).1),
            (a, b) => a.or(b).map(|(_, i)| i),
        }
    }
}

fn class_until<F: Facts + ?Sized>(
    run: RunId,
    members: &[MemberRt],
    index: u32,
    now: Time,
    facts: &mut F,
) -> (WindowClass, Time) {
    let (class, until) = facts.window_class_until(run, members[index as usize].id, now);
    // A world that cannot say how long a class holds is asked again at the next instant.
    (class, until.max(Time(now.0.saturating_add(1))))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fleet::MemberId;

    #[test]
    fn bits_find_the_smallest_member_across_words() {
        let mut bits = Bits::with_len(200);
        assert_eq!(bits.first(), None);
        for i in [130, 70, 199] {
            bits.insert(i);
        }
        assert_eq!((bits.first(), bits.count), (Some(70), 3));
        bits.insert(70);
        assert_eq!(bits.count, 3);
        bits.remove(70);
        assert_eq!(bits.first(), Some(130));
        bits.insert(3);
        assert_eq!(bits.first(), Some(3));
        for i in [3, 130, 199] {
            bits.remove(i);
        }
        bits.remove(199);
        assert_eq!((bits.first(), bits.count), (None, 0));
        bits.insert(64);
        assert_eq!(bits.first(), Some(64));
    }

    const CLASSES: [WindowClass; 4] =
        [WindowClass::OpenNow, WindowClass::OpensSoon, WindowClass::NoWindow, WindowClass::Closed];
    use crate::orchestrator::facts::Note;

    /// Classes that change on a per-member period; `honest` says how long they hold, otherwise the
    /// default (one second) is used, which is what a re-sort at every instant amounts to.
    struct Windows {
        period: Vec<i64>,
        honest: bool,
    }

    impl Windows {
        fn class(&self, m: usize, t: i64) -> WindowClass {
            if self.period[m] == 0 {
                return WindowClass::NoWindow;
            }
            CLASSES[((t / self.period[m]) as usize + m) % 4]
        }
    }

    impl Facts for Windows {
        fn has_window(&mut self, _: RunId, _: MemberId) -> bool {
            true
        }
        fn window_class(&mut self, _: RunId, m: MemberId, now: Time) -> WindowClass {
            self.class(m.index(), now.0)
        }
        fn window_class_until(&mut self, run: RunId, m: MemberId, now: Time) -> (WindowClass, Time) {
            let class = self.window_class(run, m, now);
            let p = self.period[m.index()];
            if !self.honest || p == 0 {
                return (class, if p == 0 { Time(i64::MAX) } else { Time(now.0 + 1) });
            }
            (class, Time((now.0 / p + 1) * p))
        }
        fn already_at_target(&mut self, _: RunId, _: MemberId, _: Time) -> Option<Note> {
            None
        }
        fn validation_skip(&mut self, _: RunId, _: MemberId) -> Option<Note> {
            None
        }
        fn missing_consistent_image(&mut self, _: RunId, _: MemberId) -> Option<Note> {
            None
        }
        fn not_available(&mut self, _: RunId, _: MemberId, _: Time) -> Option<(Note, Option<Time>)> {
            None
        }
        fn window_closed(&mut self, _: RunId, _: MemberId, _: Time) -> Option<(Note, Option<Time>)> {
            None
        }
    }

    /// The definition: the smallest (class at `now`, index) among eligible members.
    fn reference(
        windows: &Windows,
        members: &[MemberRt],
        waiting: &BTreeMap<u32, Waiting>,
        now: Time,
        poll: bool,
    ) -> Option<u32> {
        let due = |i: usize| waiting.get(&(i as u32)).is_some_and(|w| w.due_at_poll(now));
        members
            .iter()
            .enumerate()
            .filter(|(i, m)| m.state == UpdateState::NotStarted || (poll && m.state == UpdateState::Pending && due(*i)))
            .map(|(i, _)| (windows.class(i, now.0), i as u32))
            .min()
            .map(|(_, i)| i)
    }

    proptest! {
        #[test]
        fn the_ranking_hands_out_the_smallest_eligible_key(
            periods in prop::collection::vec(prop::sample::select(vec![0i64, 3, 5, 7, 11]), 1..40),
            steps in prop::collection::vec((0i64..4, any::<bool>(), 0u8..6, any::<u16>()), 1..60),
            honest in any::<bool>(),
        ) {
            let n = periods.len();
            let mut windows = Windows { period: periods, honest };
            let mut members: Vec<MemberRt> = (0..n).map(|i| MemberRt::new(MemberId(i as u32))).collect();
            let mut waiting: BTreeMap<u32, Waiting> = BTreeMap::new();
            let mut ranking = Ranking::new(n);
            let mut now = 0i64;
            for (dt, poll, action, pick) in steps {
                now += dt;
                let t = Time(now);
                let expected = reference(&windows, &members, &waiting, t, poll);
                let got = ranking.next(0, &members, &waiting, t, poll, &mut windows);
                prop_assert_eq!(got, expected);
                // The scheduler examines the candidate it was handed at once: it starts, is
                // skipped or waits. Sometimes another member also changes (a user skip, a retry).
                if let Some(i) = got {
                    let i = i as usize;
                    let new = [UpdateState::Pending, UpdateState::Pending, UpdateState::Running, UpdateState::Skipped]
                        [usize::from(action % 4)];
                    let recheck_at = Some(Time(now + i64::from(pick % 5)));
                    ranking.on_state_change(i as u32, members[i].state, new);
                    members[i].state = new;
                    if new == UpdateState::Pending {
                        waiting.insert(i as u32, Waiting { since: t, recheck_at, last_examined: Some(t) });
                        ranking.on_pending(i as u32, recheck_at);
                    } else {
                        waiting.remove(&(i as u32));
                    }
                }
                if action >= 4 {
                    let j = pick as usize % n;
                    let old = members[j].state;
                    let new = match old {
                        UpdateState::NotStarted | UpdateState::Pending => UpdateState::Skipped,
                        _ => UpdateState::NotStarted,
                    };
                    ranking.on_state_change(j as u32, old, new);
                    members[j].state = new;
                    waiting.remove(&(j as u32));
                }
            }
        }
    }
}
