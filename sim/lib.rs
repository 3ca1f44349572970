//! fleetsim: a deterministic discrete-event simulator of Azure Kubernetes Fleet Manager update runs.
//!
//! See `ARCHITECTURE.md` for the codemap and the invariants each module keeps.

pub mod autoupgrade;
pub mod azure;
pub mod engine;
pub mod fleet;
pub mod forecast;
pub mod orchestrator;
pub mod output;
pub mod report;
pub mod scenario;
pub mod simulation;
pub mod sweep;
pub mod text;
pub mod tune;
pub mod world;
