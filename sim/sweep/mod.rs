//! Batch parameter sweeps: points × replications of a base scenario, run in parallel, with statistics,
//! resume after interruption and shards for many machines (README, "Sweeps").
//!
//! Data flows one way: sweep file → [`plan`] (validate every point through the scenario path) →
//! [`exec`] (rayon over (point, replication) jobs, one line per finished job in the [`journal`]) →
//! [`finish`] (sorted `results.csv`, `summary.csv`, made only from journal files) → [`report`]
//! (chart data). [`folder`] says what an output folder holds and whom it belongs to.
//!
//! Architecture invariant: a replication is one single-threaded [`crate::simulation::simulate`] call
//! whose streams depend only on (seed, replication) (SEMANTICS §10), so results do not depend on the
//! thread count, the order jobs finish in, interruptions or shards. Replication r of every point uses
//! the same streams: common random numbers.

pub mod dto;
pub mod exec;
pub mod finish;
pub mod folder;
pub mod journal;
pub mod metrics;
pub mod plan;
pub mod report;
pub mod sample;
pub mod stats;

pub use dto::SweepDto;
pub use exec::{ExecOptions, ExecReport, merge, run};
pub use folder::{FolderLock, Shard};
pub use metrics::Metric;
pub use plan::{FileKind, SweepPlan, SweepProblem, file_kind, from_text, is_scenario_text, is_sweep_text, load};

/// Why a sweep could not run or merge.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep file (or its scenario) is invalid: every problem found.
    #[error("invalid sweep")]
    Invalid(Vec<SweepProblem>),
    /// The output folder or the shard folders do not fit this command.
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// An output folder that is not fleetsim's to write, or an error naming the path.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
}
