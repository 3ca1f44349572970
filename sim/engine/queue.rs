//! The pending-event set.
//!
//! A binary heap ordered by the explicit key `(time, phase, sequence)`:
//! - `time`: the simulated instant;
//! - `phase`: SEMANTICS §11 "Ties at one instant" — lower phases are handled first;
//! - `sequence`: a counter incremented on every push, so events with equal time and phase are popped in
//!   FIFO order (the SimPy / OMNeT++ / nexosim rule, des-anchors §0.3).
//!
//! Complexity: push and pop are O(log n). The key is total, so the pop order never depends on heap
//! internals. The heap holds keys only (16 bytes each); events wait in a list beside it.

use std::collections::BinaryHeap;

use super::Time;

/// The tie order of SEMANTICS §11 "Ties at one instant": member completions, then runs starting and
/// user actions (in file order), then timers. Scheduling runs after all events of the instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    MemberCompletion = 0,
    StartsAndActions = 1,
    Timers = 2,
    /// Maintenance-window polls: they only mark an instant as a poll for the scheduling that follows.
    Polls = 3,
}

/// Sorting key of one event. Ordered by `time`, then `phase`, then `sequence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    pub time: Time,
    pub phase: Phase,
    pub sequence: u64,
}

/// A heap entry: the key packed in 16 bytes, the event kept apart in the queue's slab. `order`
/// holds the phase in its top 2 bits, the sequence in the next 40 and the event's slab place in
/// the low 22: ordering by `(time, order)` is ordering by `(time, phase, sequence)` (sequences are
/// unique, so the place never decides). The pair is one 128-bit number, the time (its sign bit
/// flipped, so that unsigned order is the time's order) above `order`, stored complemented so
/// that `BinaryHeap`, a max-heap, pops the smallest key first: a comparison of two entries is one
/// comparison of two integers. Entries this small make the heap's moves cheap.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    complement: u128,
}

const PLACE_BITS: u32 = 22;
const SEQUENCE_BITS: u32 = 40;
const PLACE_MASK: u64 = (1 << PLACE_BITS) - 1;
const SIGN: u64 = 1 << 63;

impl Entry {
    fn new(time: Time, order: u64) -> Entry {
        let key = u128::from(time.0 as u64 ^ SIGN) << 64 | u128::from(order);
        Entry { complement: !key }
    }

    fn time(&self) -> Time {
        Time(((!self.complement >> 64) as u64 ^ SIGN) as i64)
    }

    fn order(&self) -> u64 {
        !self.complement as u64
    }

    fn key(&self) -> EventKey {
        let order = self.order();
        let phase = match order >> 62 {
            0 => Phase::MemberCompletion,
            1 => Phase::StartsAndActions,
            2 => Phase::Timers,
            _ => Phase::Polls,
        };
        EventKey { time: self.time(), phase, sequence: (order >> PLACE_BITS) & ((1 << SEQUENCE_BITS) - 1) }
    }

    fn place(&self) -> usize {
        (self.order() & PLACE_MASK) as usize
    }
}

/// Events ordered by `(time, phase, sequence)`; see the module docs for the tie rule.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    /// The events in the heap, by place; places of popped events are reused (`free`).
    events: Vec<Option<E>>,
    free: Vec<u32>,
    next_sequence: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), events: Vec::new(), free: Vec::new(), next_sequence: 0 }
    }
}

impl<E> EventQueue<E> {
    /// Limits: 2^40 events pushed, 2^22 queued at once (a simulation has a few per member under
    /// way and per run).
    pub fn push(&mut self, time: Time, phase: Phase, event: E) -> EventKey {
        let key = EventKey { time, phase, sequence: self.next_sequence };
        assert!(self.next_sequence < 1 << SEQUENCE_BITS, "more than 2^40 events");
        let place = match self.free.pop() {
            Some(place) => {
                self.events[place as usize] = Some(event);
                u64::from(place)
            }
            None => {
                self.events.push(Some(event));
                let place = (self.events.len() - 1) as u64;
                assert!(place <= PLACE_MASK, "more than 2^22 events queued at once");
                place
            }
        };
        self.heap.push(Entry::new(time, (phase as u64) << 62 | self.next_sequence << PLACE_BITS | place));
        self.next_sequence += 1;
        key
    }

    fn take(&mut self, entry: Entry) -> E {
        self.free.push(entry.place() as u32);
        self.events[entry.place()].take().expect("a queued event is in its place")
    }

    pub fn peek_key(&self) -> Option<EventKey> {
        self.heap.peek().map(Entry::key)
    }

    /// When the next event happens.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(Entry::time)
    }

    pub fn pop(&mut self) -> Option<(EventKey, E)> {
        let entry = self.heap.pop()?;
        Some((entry.key(), self.take(entry)))
    }

    /// Pops the next event only if it happens at `time`.
    pub fn pop_at(&mut self, time: Time) -> Option<E> {
        match self.heap.peek() {
            Some(e) if e.time() == time => {
                let entry = self.heap.pop().expect("peeked");
                Some(self.take(entry))
            }
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_phase_then_fifo() {
        let mut q = EventQueue::default();
        q.push(Time(10), Phase::Timers, "timer@10");
        q.push(Time(10), Phase::MemberCompletion, "done-a@10");
        q.push(Time(5), Phase::Polls, "poll@5");
        q.push(Time(10), Phase::MemberCompletion, "done-b@10");
        q.push(Time(10), Phase::StartsAndActions, "stop@10");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["poll@5", "done-a@10", "done-b@10", "stop@10", "timer@10"]);
    }

    #[test]
    fn an_entry_orders_as_its_time_then_its_order_reversed_and_gives_both_back() {
        let times = [i64::MIN, i64::MIN + 1, -86_400, -1, 0, 1, 86_400, i64::MAX - 1, i64::MAX];
        let orders = [0, 1, PLACE_MASK, 1 << 62, 3 << 62, u64::MAX - 1, u64::MAX];
        let keys: Vec<(i64, u64)> = times.iter().flat_map(|&t| orders.iter().map(move |&o| (t, o))).collect();
        for &(t, o) in &keys {
            let entry = Entry::new(Time(t), o);
            assert_eq!((entry.time(), entry.order()), (Time(t), o));
            for &(u, p) in &keys {
                // The max-heap pops the greatest entry: the smallest (time, order).
                assert_eq!(entry.cmp(&Entry::new(Time(u), p)), (u, p).cmp(&(t, o)), "({t}, {o}) against ({u}, {p})");
            }
        }
    }

    #[test]
    fn pop_at_only_takes_the_current_instant() {
        let mut q = EventQueue::default();
        q.push(Time(3), Phase::Timers, 1);
        q.push(Time(4), Phase::Timers, 2);
        assert_eq!(q.pop_at(Time(3)), Some(1));
        assert_eq!(q.pop_at(Time(3)), None);
        assert_eq!(q.len(), 1);
    }
}
