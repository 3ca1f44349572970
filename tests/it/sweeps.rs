//! Tests: sweeps.
