//! Simulates a scenario many times and prints the time per replication: a quick way to profile the
//! core (`valgrind --tool=callgrind target/release/examples/replicate SCENARIO 20`).
//!
//! Usage: `cargo run --release --example replicate -- SCENARIO [REPLICATIONS] [--timeline]`

use std::time::Instant;

use fleetsim::scenario::load_file;
use fleetsim::simulation::{SimOptions, Simulator};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: replicate SCENARIO [REPLICATIONS] [--timeline]");
        std::process::exit(2);
    };
    let replications: u64 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(100);
    let record_timeline = args.iter().any(|a| a == "--timeline");
    let loading = Instant::now();
    let scenario = match load_file(std::path::Path::new(path), None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e:?}");
            std::process::exit(2);
        }
    };
    let load_ms = loading.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let mut events = 0;
    // As a sweep runs a point: one simulator reset for every replication.
    let mut simulator = Simulator::new(&scenario);
    for replication in 0..replications {
        events += simulator.run(SimOptions { record_timeline, replication }).events_processed;
    }
    if replications == 0 {
        println!("loaded in {load_ms:.1} ms; no replications");
        return;
    }
    let per = started.elapsed().as_secs_f64() / replications as f64;
    println!(
        "loaded in {load_ms:.1} ms; {replications} replications, {:.3} ms each, {} events each",
        per * 1e3,
        events / replications
    );
}
