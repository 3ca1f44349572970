//! Criterion benchmarks of one replication (`cargo bench --bench simulate`).
//!
//! `world/example_a`: the issue "world models" §8 benchmark: `scenarios/regions-2000.json` (2,000
//! generated members in 20 regions, maintenance windows, a Consistent Full upgrade through three
//! stages), loaded once, then one `simulate` per iteration. Target: under 5 ms per replication.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};

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

criterion_group!(benches, world);
criterion_main!(benches);
