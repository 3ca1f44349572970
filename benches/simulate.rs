//! Criterion benchmarks of one replication (`cargo bench --bench simulate`).
//!
//! `world/example_a`: the issue "world models" §8 benchmark: `scenarios/regions-2000.json` (2,000
//! generated members in 20 regions, maintenance windows, a Consistent Full upgrade through three
//! stages), loaded once, then one `simulate` per iteration. Target: under 5 ms per replication.
//!
//! `autoupgrade/one_year_1000_members`: the issue "auto-upgrade profiles" benchmark:
//! `scenarios/autoupgrade-year.json` (one year, 1,000 members, Stable and NodeImage profiles and a
//! generated release stream), loaded once, then one `simulate` as `fleetsim run` does it (timeline
//! recorded, replication 0). Target: under 2 s. `one_year_1000_members_report` times the whole
//! report folder in memory (`report::render`: tables, status, summary, run and auto-upgrade charts,
//! `index.html`) of that result.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};

use fleetsim::report::{ReportContext, render};
use fleetsim::scenario::load_file;
use fleetsim::simulation::{SimOptions, simulate};

fn world(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/regions-2000.json");
    let scenario = match load_file(&path, None) {
        Ok(s) => s,
        Err(e) => panic!("{}: {e:?}", path.display()),
    };
    let mut group = c.benchmark_group("world");
    group.bench_function("example_a", |b| {
        b.iter(|| simulate(black_box(&scenario), SimOptions { record_timeline: true, replication: 0 }))
    });
    // Sweeps draw the rollout again per replication and keep no timeline.
    group.bench_function("example_a_replication_1_metrics_only", |b| {
        b.iter(|| simulate(black_box(&scenario), SimOptions { record_timeline: false, replication: 1 }))
    });
    group.finish();
}

fn autoupgrade(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/autoupgrade-year.json");
    let scenario = match load_file(&path, None) {
        Ok(s) => s,
        Err(e) => panic!("{}: {e:?}", path.display()),
    };
    let options = SimOptions { record_timeline: true, replication: 0 };
    let mut group = c.benchmark_group("autoupgrade");
    group.bench_function("one_year_1000_members", |b| b.iter(|| simulate(black_box(&scenario), options)));
    let result = simulate(&scenario, options);
    // A report takes more than half a second: ten samples keep the run short.
    group.sample_size(10).measurement_time(std::time::Duration::from_secs(10));
    group.bench_function("one_year_1000_members_report", |b| {
        b.iter(|| render(black_box(&ReportContext::new(&scenario, &result))).expect("the report renders"))
    });
    group.finish();
}

criterion_group!(benches, world, autoupgrade);
criterion_main!(benches);
