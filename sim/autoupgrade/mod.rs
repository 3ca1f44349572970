//! Auto-upgrade profiles: turn releases into generated update runs (SEMANTICS §9).

pub mod channels;

pub use channels::{Channel, kubernetes_target};
