//! What the orchestrator asks of the world when it examines a candidate member (SEMANTICS §5.4–5.5).
//!
//! The orchestrator owns the *order* of the checks and what each answer means for states; the world
//! owns the *facts* (versions, release availability, maintenance windows). This keeps the decision
//! loop pure and lets richer world models plug in without reshaping it.

use std::sync::Arc;

use crate::engine::Time;
use crate::fleet::MemberId;

use super::run::GateRef;
pub use crate::fleet::window::WindowClass;

/// Index of an update run in the simulation.
pub type RunId = u32;

/// An `error.code` and `message` pair, as members and gates show them in status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Note {
    pub code: Option<Arc<str>>,
    pub message: Option<Arc<str>>,
}

impl Note {
    pub fn message(message: impl Into<Arc<str>>) -> Note {
        Note { code: None, message: Some(message.into()) }
    }

    pub fn error(code: impl Into<Arc<str>>, message: impl Into<Arc<str>>) -> Note {
        Note { code: Some(code.into()), message: Some(message.into()) }
    }

    pub fn is_empty(&self) -> bool {
        self.code.is_none() && self.message.is_none()
    }

    /// `code: message`, or whichever of the two is present.
    pub fn text(&self) -> String {
        self.text_ref().into_owned()
    }

    /// [`text`](Self::text), borrowed unless it joins a code and a message.
    pub fn text_ref(&self) -> std::borrow::Cow<'_, str> {
        match (&self.code, &self.message) {
            (Some(c), Some(m)) => format!("{c}: {m}").into(),
            (Some(c), None) => (**c).into(),
            (None, Some(m)) => (**m).into(),
            (None, None) => "".into(),
        }
    }
}

/// Why a member is `Pending` (for statistics and charts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PendingKind {
    /// SEMANTICS §5.5c: target version not yet released in the member's region.
    Availability,
    /// SEMANTICS §5.5d: maintenance window not open.
    Window,
}

/// The answer to "may this candidate start now?" (SEMANTICS §5.5).
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// a (and validation skips): `Skipped`, no slot used.
    Skip(Note),
    /// b: already at the target: `Skipped`, no slot used.
    AtTarget(Note),
    /// c/d: `Pending`; `recheck_at` is the earliest instant the answer could change (`None`: never by
    /// itself), so polls before it can be skipped without changing any outcome.
    Pending { kind: PendingKind, note: Note, recheck_at: Option<Time> },
    /// e: `Running`.
    Start,
}

/// Facts about members at an instant, for one run. Implementations may cache (hence `&mut self`) but
/// must answer as pure functions of `(run, member, now)` and the world's state.
pub trait Facts {
    /// Does the member have a window of the kind this run consults (SEMANTICS §5.4)?
    fn has_window(&mut self, run: RunId, member: MemberId) -> bool;
    /// SEMANTICS §5.4 ordering class of the member at `now`.
    fn window_class(&mut self, run: RunId, member: MemberId, now: Time) -> WindowClass;
    /// The class at `now` and an instant after `now` until which it certainly stays the same (the
    /// scheduler re-ranks the member then). The default only vouches for `now` itself.
    fn window_class_until(&mut self, run: RunId, member: MemberId, now: Time) -> (WindowClass, Time) {
        (self.window_class(run, member, now), Time(now.0.saturating_add(1)))
    }
    /// §5.5a: `Consistent` selection without an image for one of the member's pools' families → the
    /// message naming that family.
    fn missing_consistent_image(&mut self, run: RunId, member: MemberId) -> Option<Note>;
    /// §5.5b: already at target → the message for `Skipped` (a pool without a target image is not
    /// at target; the message says why it has none).
    fn already_at_target(&mut self, run: RunId, member: MemberId, now: Time) -> Option<Note>;
    /// Between b and c: a member the run leaves alone although it is not at target is `Skipped`:
    /// auto-upgrade outside the support window or across more than one minor (SEMANTICS §9), or a
    /// member the run would reject at validation when a setting asks for that (SEMANTICS §8).
    fn validation_skip(&mut self, run: RunId, member: MemberId) -> Option<Note>;
    /// §5.5c: target not yet released in the member's region → note and when it will be.
    fn not_available(&mut self, run: RunId, member: MemberId, now: Time) -> Option<(Note, Option<Time>)>;
    /// §5.5d: window not open now → note naming the next opening and that opening.
    fn window_closed(&mut self, run: RunId, member: MemberId, now: Time) -> Option<(Note, Option<Time>)>;
    /// A shortcut for the common case: `true` only if every check of [`examine`] would answer "no",
    /// so the member starts. Answering `false` is always right (the checks then run one by one);
    /// the default is never sure.
    fn certainly_starts(&mut self, _run: RunId, _member: MemberId, _now: Time) -> bool {
        false
    }
    /// Does the run's approval policy approve this Approval gate with a delay of 0? Such a gate is
    /// `Completed` as it opens, before any member is scheduled in that instant (SEMANTICS §11
    /// "Approval policy"). The default: no policy.
    fn approves_at_open(&mut self, _run: RunId, _gate: GateRef) -> bool {
        false
    }
    /// Would the attempt of a member that starts now fail as it starts, changing nothing (another
    /// operation in progress, a stopped cluster, a version it may not take, an expired image)? Such
    /// a failure ends in the same instant; asked only where it would trip a threshold (SEMANTICS
    /// §6, §11 "Trips"). The default: never.
    fn fails_at_once(&mut self, _run: RunId, _member: MemberId, _now: Time) -> bool {
        false
    }
    /// A hint that `member` may start in `run` soon: what the world reads of it then may be
    /// fetched into the caches now. Changes no answer; the default does nothing.
    fn prefetch(&self, _run: RunId, _member: MemberId) {}
}

/// SEMANTICS §5.5: the checks a–e in their normative order.
#[inline(always)]
pub fn examine<F: Facts + ?Sized>(facts: &mut F, run: RunId, member: MemberId, now: Time) -> Verdict {
    if facts.certainly_starts(run, member, now) {
        // Tests and debug builds hold the shortcut to the checks it skips (answers are pure, so
        // asking them changes nothing).
        debug_assert_eq!(examine_in_order(facts, run, member, now), Verdict::Start, "certainly_starts was wrong");
        return Verdict::Start;
    }
    examine_in_order(facts, run, member, now)
}

/// The checks a–e one by one.
fn examine_in_order<F: Facts + ?Sized>(facts: &mut F, run: RunId, member: MemberId, now: Time) -> Verdict {
    if let Some(note) = facts.missing_consistent_image(run, member) {
        return Verdict::Skip(note);
    }
    if let Some(note) = facts.already_at_target(run, member, now) {
        return Verdict::AtTarget(note);
    }
    if let Some(note) = facts.validation_skip(run, member) {
        return Verdict::Skip(note);
    }
    if let Some((note, recheck_at)) = facts.not_available(run, member, now) {
        return Verdict::Pending { kind: PendingKind::Availability, note, recheck_at };
    }
    if let Some((note, recheck_at)) = facts.window_closed(run, member, now) {
        return Verdict::Pending { kind: PendingKind::Window, note, recheck_at };
    }
    Verdict::Start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_empty_only_without_code_and_message() {
        assert!(Note::default().is_empty());
        assert!(!Note::message("waiting").is_empty());
        assert!(!Note::error("E1", "boom").is_empty());
        assert!(!Note { code: Some("E1".into()), message: None }.is_empty());
    }

    #[test]
    fn a_note_reads_code_colon_message_or_whichever_it_has() {
        assert_eq!(Note::error("E1", "boom").text(), "E1: boom");
        assert_eq!(Note { code: Some("E1".into()), message: None }.text(), "E1");
        assert_eq!(Note::message("waiting").text(), "waiting");
        assert_eq!(Note::default().text(), "");
    }
}
