//! What writing a report adds to a run: `fleetsim run`'s three steps timed apart, in one process, for
//! each scenario given (default `scenarios/regions-2000.json` and `scenarios/autoupgrade-year.json`):
//! loading (parse, generate, build), the simulation with its timeline, and the report folder written
//! as `fleetsim run` writes it (tables and status files streamed, charts rendered in parallel). Prints
//! the medians over rounds and the run against its simulation alone, `(load + simulate + report) /
//! (load + simulate)` (the issue "speed" target: at most 2x).
//!
//! Usage: `cargo run --release --example report_ratio -- [SCENARIO...] [--rounds K]` (7 rounds). The
//! reports go to a fresh folder under the system's temporary folder, removed at the end. Measure on
//! an idle machine.

use std::path::{Path, PathBuf};
use std::time::Instant;

use fleetsim::report::{self, ReportContext};
use fleetsim::scenario::load_file;
use fleetsim::simulation::{SimOptions, simulate};

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 }
}

fn main() {
    let mut paths = Vec::new();
    let mut rounds = 7usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => rounds = args.next().and_then(|k| k.parse().ok()).filter(|&k| k > 0).unwrap_or(7),
            path => paths.push(PathBuf::from(path)),
        }
    }
    if paths.is_empty() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        paths = vec![root.join("scenarios/regions-2000.json"), root.join("scenarios/autoupgrade-year.json")];
    }
    let scratch = std::env::temp_dir().join(format!("fleetsim-report-ratio-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&scratch) {
        eprintln!("{}: {e}", scratch.display());
        std::process::exit(1);
    }
    println!(
        "{:<24}  {:>8}  {:>11}  {:>9}  {:>8}  {:>14}",
        "scenario", "load ms", "simulate ms", "report ms", "run ms", "run/simulation"
    );
    for path in &paths {
        let (mut load, mut sim, mut write, mut ratios) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let name = path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
        for _ in 0..rounds {
            let started = Instant::now();
            let scenario = match load_file(path, None) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{}: {e:?}", path.display());
                    std::process::exit(2);
                }
            };
            let loaded = started.elapsed().as_secs_f64() * 1e3;
            let started = Instant::now();
            let result = simulate(&scenario, SimOptions { record_timeline: true, replication: 0 });
            let simulated = started.elapsed().as_secs_f64() * 1e3;
            let started = Instant::now();
            let out = scratch.join(&name);
            let ctx = ReportContext::new(&scenario, &result);
            if let Err(e) = report::write_report(&ctx, &out, report::Replace::Reports) {
                eprintln!("{}: {e:?}", out.display());
                std::process::exit(1);
            }
            let written = started.elapsed().as_secs_f64() * 1e3;
            ratios.push((loaded + simulated + written) / (loaded + simulated));
            load.push(loaded);
            sim.push(simulated);
            write.push(written);
        }
        let (l, s, w) = (median(&mut load), median(&mut sim), median(&mut write));
        println!(
            "{:<24}  {:>8.1}  {:>11.1}  {:>9.1}  {:>8.1}  {:>13.2}x",
            name,
            l,
            s,
            w,
            l + s + w,
            median(&mut ratios)
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
