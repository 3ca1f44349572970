//! THE update-run logic: strategy, membership, limits, states, decisions (SEMANTICS §2–7, §11).
//!
//! Pure: given a run's state and "now", it says which members to start, which gates open and which
//! states change. No I/O, no randomness, no clock. Facts about the world (versions, availability,
//! windows) come in through the [`facts::Facts`] trait.

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
