//! `fleetsim tune`: the fastest strategy within a risk budget (README, "Tuning a strategy").
//!
//! Data flows one way: tune file → [`plan`] (validate every candidate in every world through the
//! scenario path; [`labels`] assigns the labels a space field names) → [`search`] (racing over
//! common random numbers: replication r of every candidate in every world shares its streams; a
//! large space is sampled and refined around the best) → [`write`] (the folder's files, with the
//! recommendation in [`words`]). [`folder`] keeps every simulation in a journal, so that a tune
//! resumes, and runs rounds in shards.

pub mod dto;
pub mod folder;
pub mod labels;
pub mod plan;
pub mod search;
pub mod words;
pub mod write;

pub use dto::TuneDto;
pub use plan::{Candidate, TunePlan, load};
pub use search::{Outcome, SearchResult, Status, search};
