//! fleetsim against the minimal hand-written loop on the speed workload, side by side, printing the
//! ratio per replication (the issue "speed" target: at most 3x at every size).
//!
//! Usage: `cargo run --release --example ratio -- [SIZE...] [--rounds K] [--timeline]
//! [--anchor BIN]` (default sizes 1000 10000 100000, 7 rounds). Each round times a batch of
//! replications of the minimal loop and then of fleetsim (no timeline unless `--timeline`),
//! alternating so that a noisy machine slows both alike; the medians over rounds and the median of
//! the per-round ratios are printed. The minimal loop here is the anchor's code built with this
//! crate's settings (and its allocator, mimalloc); with `--anchor BIN` (the anchor's own binary,
//! `minimal_rollout`, built with its own settings as its README says) each round also runs
//! `BIN SIZE BATCH`, which times its replications itself and prints `wall_s`, and the medians of its
//! milliseconds per replication and of the per-round ratios of fleetsim to it are printed too. It
//! runs seeds 0 to BATCH − 1 every round: the same workload, not the same replications. Loading
//! (the shape check, reading the document, generating and building the fleet, from the JSON
//! document as `fleetsim run` has it once parsed) is timed apart, per member, the median of as many
//! loads. Measure on an idle machine.

#[path = "../benches/workload/mod.rs"]
mod workload;

use std::hint::black_box;
use std::time::Instant;

use fleetsim::simulation::{SimOptions, Simulator};
use fleetsim::sweep::plan::build_value;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 }
}

fn main() {
    let mut sizes = Vec::new();
    let mut rounds = 7usize;
    let mut record_timeline = false;
    let mut anchor = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().and_then(|k| k.parse().ok()).filter(|&k| k > 0).unwrap_or(7),
            "--timeline" => record_timeline = true,
            "--anchor" => match args.next() {
                Some(bin) => anchor = Some(bin),
                None => usage(),
            },
            size => match size.parse::<usize>() {
                Ok(n) if n > 0 => sizes.push(n),
                _ => usage(),
            },
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    print!("{:>9}  {:>12}  {:>12}  {:>7}  {:>14}", "members", "minimal ms", "fleetsim ms", "ratio", "load µs/member");
    if anchor.is_some() {
        print!("  {:>10}  {:>9}", "anchor ms", "vs anchor");
    }
    println!();
    for n in sizes {
        let doc = workload::scenario(n, false);
        // Loading is timed `rounds` times too (one load is at the mercy of the machine's neighbours);
        // each scenario but the last is dropped outside the timing, and each load is given a
        // document of its own made outside it, as `fleetsim run` builds the one it parsed.
        let mut loads = Vec::new();
        let mut scenario = None;
        for _ in 0..rounds {
            drop(scenario.take());
            let own = doc.clone();
            let loaded = Instant::now();
            scenario = Some(build_value(own, None).expect("the workload scenario is valid"));
            loads.push(loaded.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
        let scenario = scenario.expect("at least one round");
        let load_us = median(&mut loads);
        // About a fifth of a second of the minimal loop per batch, at least one replication.
        let batch = (3_000_000 / n).max(1) as u64;
        let (mut minimal, mut fleet, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let (mut anchored, mut anchor_ratios) = (Vec::new(), Vec::new());
        let mut replication = 0u64;
        // As a sweep runs a point: one simulator reset for every replication.
        let mut simulator = Simulator::new(&scenario);
        for _ in 0..rounds {
            let started = Instant::now();
            for seed in replication..replication + batch {
                black_box(workload::minimal_rollout(n, seed));
            }
            let m = started.elapsed().as_secs_f64() * 1e3 / batch as f64;
            let started = Instant::now();
            for r in replication..replication + batch {
                black_box(simulator.run(SimOptions { record_timeline, replication: r }));
            }
            let f = started.elapsed().as_secs_f64() * 1e3 / batch as f64;
            if let Some(bin) = &anchor {
                let a = anchor_per_replication(bin, n, batch);
                anchored.push(a);
                anchor_ratios.push(f / a);
            }
            replication += batch;
            minimal.push(m);
            fleet.push(f);
            ratios.push(f / m);
        }
        print!(
            "{n:>9}  {:>12.4}  {:>12.4}  {:>6.1}x  {load_us:>14.2}",
            median(&mut minimal),
            median(&mut fleet),
            median(&mut ratios)
        );
        if anchor.is_some() {
            print!("  {:>10.4}  {:>8.1}x", median(&mut anchored), median(&mut anchor_ratios));
        }
        println!();
    }
}

fn usage() -> ! {
    eprintln!("usage: ratio [SIZE...] [--rounds K] [--timeline] [--anchor BIN]");
    std::process::exit(2);
}

/// The anchor binary's milliseconds per replication over `batch` replications of `n` members: the
/// `wall_s` it prints, timed inside it (its start and exit are not counted), over `batch` (its
/// `per_rep_ms` has four decimals, too few for small fleets).
fn anchor_per_replication(bin: &str, n: usize, batch: u64) -> f64 {
    let output = std::process::Command::new(bin).arg(n.to_string()).arg(batch.to_string()).output();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => fail(&format!(
            "{bin} {n} {batch} exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(e) => fail(&format!("cannot run {bin}: {e}")),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let wall = text.split_whitespace().find_map(|word| word.strip_prefix("wall_s="));
    match wall.map(str::parse::<f64>) {
        Some(Ok(seconds)) if seconds > 0.0 => seconds * 1e3 / batch as f64,
        Some(_) => fail(&format!("{bin} printed a wall_s that is not a positive number: {}", text.trim())),
        None => fail(&format!("{bin} printed no wall_s: {}", text.trim())),
    }
}

fn fail(message: &str) -> ! {
    eprintln!("ratio: {message}");
    std::process::exit(1);
}
