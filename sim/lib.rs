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

#[cfg(feature = "mimalloc")]
mod allocator;

/// Every binary built on the crate (the CLI, tests, benches, examples) allocates with mimalloc.
/// Loading a generated fleet is mostly small strings and lists made and freed per member, which
/// mimalloc's per-thread free lists serve at about half the system allocator's cost: loading the
/// 1,000,000-member speed workload went from 1.2–1.5 µs to 0.6–0.8 µs per member (README "Speed").
/// It is built not to ask for transparent huge pages (`no_thp` in Cargo.toml): a run's heap is
/// short-lived and sparsely touched, and a huge page is zeroed whole at its first touch.
/// Outputs do not depend on the allocator: nothing reads an address. (Feature `mimalloc`, on by
/// default; the fuzz targets turn it off for the sanitizer's allocator.) Small alignments are
/// asked of plain `mi_malloc` (`allocator`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: allocator::Allocator = allocator::Allocator;
