//! THE update-run logic: strategy, membership, limits, states, decisions (SEMANTICS §2–7, §11).
//!
//! Pure: given a run's state and "now", it says which members to start, which gates open and which
//! states change. No I/O, no randomness, no clock. Facts about the world (versions, availability,
//! windows) come in through the [`facts::Facts`] trait.

/// `Clone` whose `clone_from` clones field by field into the allocations already there: a
/// replication resets its runs from their initial state with it, reusing every list instead of
/// allocating the run again. The field list must be complete: one left out does not compile.
macro_rules! clone_reusing {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Clone for $ty {
            fn clone(&self) -> Self {
                let $ty { $($field),* } = self;
                $ty { $($field: $field.clone()),* }
            }

            fn clone_from(&mut self, source: &Self) {
                let $ty { $($field),* } = source;
                $(self.$field.clone_from($field);)*
            }
        }
    };
}

pub mod facts;
pub mod plan;
mod ranking;
pub mod run;
pub mod state;
pub mod strategy;

pub use facts::{Facts, Note, PendingKind, RunId, Verdict};
pub use plan::{GroupAboveStage, PlanProblem, PlanSettings, RunPlan, plan_run};
pub use run::{
    BlockedOn, Command, Entity, FailureScope, GateRef, GateSnapshot, GroupSnapshot, MemberSnapshot, Outcome,
    RestoreProblem, Restored, RunSettings, RunSnapshot, SkipTarget, Slot, StageSnapshot, Timer, Transition, UpdateRun,
    WaitSnapshot,
};
pub use state::UpdateState;
pub use strategy::{GateConfig, GateKind, Group, Limit, ScheduledStart, Stage, Strategy, Timing};
