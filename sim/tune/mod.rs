//! `fleetsim tune`: the fastest strategy within a risk budget (README, "Tuning a strategy").
//!
//! Data flows one way: tune file → [`plan`] (validate every candidate in every world through the
//! scenario path) → [`search`] (racing over common random numbers: replication r of every
//! candidate in every world shares its streams) → [`write`] (the folder, written whole).

pub mod dto;
pub mod plan;
pub mod search;
pub mod write;

pub use dto::TuneDto;
pub use plan::{TunePlan, load};
pub use search::{SearchResult, Status, search};
