//! Tests: determinism.
