//! Scenario files: serde DTOs, validation with JSON paths, conversion into validated types.

pub mod problem;
pub mod window_dto;

pub use problem::Problem;
