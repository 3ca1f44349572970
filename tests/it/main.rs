//! One integration-test binary (one link step), with a module per behaviour.

mod support;

mod azure;
mod cli;
mod conformance;
mod critical;
mod determinism;
mod forecast;
mod fuzz;
mod invalid;
mod layering;
mod outputs;
mod properties;
mod scenarios;

mod autoupgrade;
mod world_models;

mod browser;
mod charts;
mod profile_charts;

mod sweeps;
mod tune;
mod warnings;
