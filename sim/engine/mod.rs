//! Simulated time, the event queue and seeded random streams. Knows nothing of Fleet.

pub mod cache;
pub mod queue;
pub mod rng;
pub mod time;

pub use queue::{EventKey, EventQueue, Phase};
pub use rng::{Head, Position, Purpose, SeedTree, Stream, StreamKey, name_key};
pub use time::{Duration, Rfc3339, Time};
