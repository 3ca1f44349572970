//! Upgrades and approvals already under way when a simulation starts from a run's status
//! (`fleetsim forecast`): what is left of them is drawn conditioned on the time already spent.
//!
//! A member that has been upgrading for `e` seconds has not finished (nor failed) in those `e`
//! seconds, so its attempt is drawn from the attempt distribution conditioned on lasting at least
//! `e`: whole attempts (failure decision, durations, failure time) are drawn from streams of their
//! own, one per try, until one lasts that long (rejection sampling). That keeps every model the
//! scenario has (per-pool batches, incidents, bad releases, overrides) without a closed form for
//! each. An Approval gate's policy delay is conditioned the same way on the time the gate has
//! been open.

use crate::engine::{Duration, Time};
use crate::fleet::MemberId;
use crate::orchestrator::{GateRef, RunId};

use super::{Started, World};

/// Tries before a conditioned draw gives up: the elapsed time then lies beyond what the model
/// practically ever gives (the member is "overdue").
pub const CONDITIONED_DRAWS: u64 = 1000;

/// Keeps the resumed attempts' streams apart from those of attempts started in the simulation.
const RESUMED: u64 = 0x7265_7375_6d65_6421;

/// A resumed attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Resumed {
    /// The whole attempt, its duration counted from its start (not from now).
    pub started: Started,
    /// No try lasted as long as the time already spent: the longest try's outcome is taken, and the
    /// member finishes at once.
    pub overdue: bool,
}

impl<'a> World<'a> {
    /// `member` has been upgrading in `run` since `started`; at `now` it is still upgrading. Draws
    /// how its attempt goes, conditioned on lasting at least `now − started`, and begins it as of
    /// `started` (components finish at their offsets from then).
    pub fn resume_upgrade(&mut self, run: RunId, member: MemberId, started: Time, now: Time) -> Resumed {
        let elapsed = now - started;
        let key = |k: u64| [self.fleet[member.index()].name_key, self.runs[run as usize].name_key ^ RESUMED, k];
        let mut longest = None;
        for k in 0..CONDITIONED_DRAWS {
            let drawn = self.draw_attempt(run, member, started, key(k), None);
            if drawn.duration >= elapsed {
                let started = self.begin(run, member, drawn);
                return Resumed { started, overdue: false };
            }
            if longest.as_ref().is_none_or(|l: &super::Drawn| drawn.duration > l.duration) {
                longest = Some(drawn);
            }
        }
        let mut drawn = longest.expect("at least one try");
        drawn.duration = elapsed;
        let started = self.begin(run, member, drawn);
        Resumed { started, overdue: true }
    }

    /// The approval policy's delay for an Approval gate `Pending` since `opened`, conditioned on
    /// not having approved it by `now`: at least `now − opened`. `None` without a policy; the
    /// elapsed time itself (approval at `now`) when no try lasts that long.
    pub fn approval_delay_after(&self, run: RunId, gate: GateRef, opened: Time, now: Time) -> Option<Duration> {
        let elapsed = now - opened;
        for k in 0..CONDITIONED_DRAWS {
            let delay = self.approval_draw(run, gate, k)?;
            if delay >= elapsed {
                return Some(delay);
            }
        }
        Some(elapsed)
    }
}
