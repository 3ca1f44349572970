//! Tests: invalid.
