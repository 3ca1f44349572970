//! Helpers shared by the integration tests.

#![allow(dead_code)]

use fleetsim::scenario::{Problem, Scenario, parse_str};
use fleetsim::simulation::{SimOptions, SimResult, simulate};

/// Parses and validates a scenario, panicking with every problem if it is invalid.
#[track_caller]
pub fn scenario(json: &str) -> Scenario {
    match parse_str(json, None) {
        Ok(s) => s,
        Err(problems) => panic!("invalid scenario:\n{}", problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n")),
    }
}

/// The problems of an invalid scenario (panics if it is valid).
#[track_caller]
pub fn problems(json: &str) -> Vec<Problem> {
    match parse_str(json, None) {
        Ok(_) => panic!("expected the scenario to be invalid"),
        Err(problems) => problems,
    }
}

/// Simulates a scenario given as JSON text.
#[track_caller]
pub fn run(json: &str) -> (Scenario, SimResult) {
    let s = scenario(json);
    let r = simulate(&s, SimOptions::default());
    (s, r)
}

/// Path of the fleetsim binary built for the tests.
pub fn binary() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_fleetsim"))
}

/// The repository root.
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
