//! Simulated time, the event queue and seeded random streams. Knows nothing of Fleet.

pub mod time;

pub use time::{Duration, Time};
