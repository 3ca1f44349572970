//! The candidate order of a group with maintenance windows: by window class, then member name
//! (SEMANTICS §5.4), kept ranked across instants.
//!
//! Why not sort at every instant: a group of a thousand waiting members would be re-sorted at every
//! completion. Instead each member's class is kept with the instant until which the world
//! guarantees it ([`Facts::window_class_until`]); only members whose class may have changed are
//! re-ranked. Candidates live in one bit set per (state, class), so ranking is O(1) per change and
//! finding the next candidate is a short word scan.
//!
//! Equivalence with "sort the eligible members by (class, index) at each instant and take them in
//! order": within an instant the eligible set only shrinks (examined members stop being eligible)
//! except when members become candidates again (a retry), which restarts the walk; so "the next in
//! the sorted list" is always "the smallest eligible key", which is what [`Ranking::next`] returns.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::Time;

use super::facts::{Facts, RunId, WindowClass};
use super::run::MemberRt;
use super::state::UpdateState;

const CLASSES: [WindowClass; 4] =
    [WindowClass::OpenNow, WindowClass::OpensSoon, WindowClass::NoWindow, WindowClass::Closed];

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
#[derive(Clone, Debug, Default)]
struct Bits {
    words: Vec<u64>,
    count: u32,
    low: usize,
}

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

    /// The smallest index ≥ `from`.
    fn first_from(&mut self, from: u32) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        // Non-empty: some word at or after `low` holds a member.
        while self.words[self.low] == 0 {
            self.low += 1;
        }
        let w = ((from / 64) as usize).max(self.low);
        let mask = if w == (from / 64) as usize { u64::MAX << (from % 64) } else { u64::MAX };
        let (mut w, mut word) = (w, *self.words.get(w)? & mask);
        loop {
            if word != 0 {
                return Some(w as u32 * 64 + word.trailing_zeros());
            }
            w += 1;
            word = *self.words.get(w)?;
        }
    }
}

/// Candidates (`NotStarted` and `Pending` members) ranked by (class, index).
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// `NotStarted` members by class: all eligible whenever a start is possible.
    not_started: [Bits; 4],
    /// `Pending` members by class: eligible at polls, once per instant.
    pending: [Bits; 4],
    /// Per member index: its ranked class (`None`: not a candidate, or not ranked yet).
    class: Vec<Option<WindowClass>>,
    /// Per member index: until when its class holds.
    valid_until: Vec<Time>,
    /// (valid until, index), earliest first; entries whose time no longer matches `valid_until`
    /// are stale and skipped.
    expiry: BinaryHeap<Reverse<(Time, u32)>>,
    /// Members that became candidates and still need a class.
    unranked: Vec<u32>,
    /// At a poll: every `Pending` key up to this one was handed out or examined at that instant.
    pending_walk: Option<(Time, (usize, u32))>,
}

impl Ranking {
    /// A group whose members are all `NotStarted` and not ranked yet.
    pub fn new(members: usize) -> Ranking {
        Ranking {
            not_started: std::array::from_fn(|_| Bits::with_len(members)),
            pending: std::array::from_fn(|_| Bits::with_len(members)),
            class: vec![None; members],
            valid_until: vec![Time(i64::MIN); members],
            expiry: BinaryHeap::new(),
            unranked: (0..members as u32).rev().collect(),
            pending_walk: None,
        }
    }

    fn set(&mut self, state: UpdateState, class: WindowClass) -> Option<&mut Bits> {
        match state {
            UpdateState::NotStarted => Some(&mut self.not_started[class_index(class)]),
            UpdateState::Pending => Some(&mut self.pending[class_index(class)]),
            _ => None,
        }
    }

    /// Member `index` changed state: move it between the sets.
    pub fn on_state_change(&mut self, index: u32, old: UpdateState, new: UpdateState) {
        if old == new {
            return;
        }
        let i = index as usize;
        let Some(class) = self.class[i] else {
            if is_candidate(new) && !is_candidate(old) {
                self.unranked.push(index);
            }
            return;
        };
        if let Some(set) = self.set(old, class) {
            set.remove(index);
        }
        match self.set(new, class) {
            Some(set) => set.insert(index),
            None => self.class[i] = None,
        }
    }

    /// Brings every candidate's class up to `now`: ranks new candidates and re-ranks those whose
    /// class may have changed. Returns whether any member appeared or moved.
    fn refresh(&mut self, run: RunId, members: &[MemberRt], now: Time, facts: &mut dyn Facts) -> bool {
        let mut changed = false;
        while let Some(index) = self.unranked.pop() {
            let i = index as usize;
            if self.class[i].is_some() || !is_candidate(members[i].state) {
                continue;
            }
            let (class, until) = class_until(run, members, index, now, facts);
            self.class[i] = Some(class);
            self.valid_until[i] = until;
            self.expiry.push(Reverse((until, index)));
            if let Some(set) = self.set(members[i].state, class) {
                set.insert(index);
            }
            changed = true;
        }
        while let Some(&Reverse((until, index))) = self.expiry.peek()
            && until <= now
        {
            self.expiry.pop();
            let i = index as usize;
            let Some(old) = self.class[i] else { continue };
            if self.valid_until[i] != until {
                continue;
            }
            let (class, until) = class_until(run, members, index, now, facts);
            self.valid_until[i] = until;
            self.expiry.push(Reverse((until, index)));
            if class != old {
                let state = members[i].state;
                if let Some(set) = self.set(state, old) {
                    set.remove(index);
                }
                if let Some(set) = self.set(state, class) {
                    set.insert(index);
                }
                self.class[i] = Some(class);
                changed = true;
            }
        }
        changed
    }

    /// The first eligible candidate by (class, index) (SEMANTICS §5.4): `NotStarted` members always,
    /// `Pending` ones only at a poll and once per instant (§11 "Polls").
    pub fn next(
        &mut self,
        run: RunId,
        members: &[MemberRt],
        now: Time,
        poll: bool,
        facts: &mut dyn Facts,
    ) -> Option<u32> {
        if self.refresh(run, members, now, facts) {
            self.pending_walk = None;
        }
        let first_not_started = (0..4).find_map(|c| self.not_started[c].first_from(0).map(|i| (c, i)));
        let first_pending = if poll { self.first_pending(members, now) } else { None };
        let chosen = match (first_not_started, first_pending) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        if Some(chosen) == first_pending {
            self.pending_walk = Some((now, chosen));
        }
        Some(chosen.1)
    }

    /// The first `Pending` key due at `now`, after the walk of this instant.
    fn first_pending(&mut self, members: &[MemberRt], now: Time) -> Option<(usize, u32)> {
        let (mut class, mut from) = match self.pending_walk {
            Some((t, (c, i))) if t == now => (c, i + 1),
            _ => (0, 0),
        };
        while class < CLASSES.len() {
            match self.pending[class].first_from(from) {
                Some(i) if !members[i as usize].due_at_poll(now) => {
                    // Examined at this instant, or its answer cannot have changed yet: it stays
                    // ineligible for the rest of this instant.
                    self.pending_walk = Some((now, (class, i)));
                    from = i + 1;
                }
                Some(i) => return Some((class, i)),
                None => {
                    class += 1;
                    from = 0;
                }
            }
        }
        None
    }
}

fn class_until(run: RunId, members: &[MemberRt], index: u32, now: Time, facts: &mut dyn Facts) -> (WindowClass, Time) {
    let (class, until) = facts.window_class_until(run, members[index as usize].id, now);
    // A world that cannot say how long a class holds is asked again at the next instant.
    (class, until.max(Time(now.0.saturating_add(1))))
}

fn is_candidate(state: UpdateState) -> bool {
    matches!(state, UpdateState::NotStarted | UpdateState::Pending)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fleet::MemberId;
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
    fn reference(windows: &Windows, members: &[MemberRt], now: Time, poll: bool) -> Option<u32> {
        members
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.state == UpdateState::NotStarted || (poll && m.state == UpdateState::Pending && m.due_at_poll(now))
            })
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
            let mut members: Vec<MemberRt> = (0..n).map(|i| MemberRt::for_test(MemberId(i as u32))).collect();
            let mut ranking = Ranking::new(n);
            let mut now = 0i64;
            for (dt, poll, action, pick) in steps {
                now += dt;
                let t = Time(now);
                let expected = reference(&windows, &members, t, poll);
                let got = ranking.next(0, &members, t, poll, &mut windows);
                prop_assert_eq!(got, expected);
                // The scheduler examines the candidate it was handed at once: it starts, is
                // skipped or waits. Sometimes another member also changes (a user skip, a retry).
                if let Some(i) = got {
                    let i = i as usize;
                    let new = [UpdateState::Pending, UpdateState::Pending, UpdateState::Running, UpdateState::Skipped]
                        [usize::from(action % 4)];
                    members[i].last_examined = Some(t);
                    members[i].recheck_at = Some(Time(now + i64::from(pick % 5)));
                    ranking.on_state_change(i as u32, members[i].state, new);
                    members[i].state = new;
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
                }
            }
        }
    }
}
