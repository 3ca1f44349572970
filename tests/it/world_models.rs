//! Tests: world_models.
