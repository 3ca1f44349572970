//! The speed workload (`cargo bench --bench rollout`): one replication of the performance anchors'
//! rollout (see `benches/workload/mod.rs`) at 1,000, 10,000 and 100,000 members, by the minimal
//! hand-written loop and by fleetsim with and without a timeline, measured in the same run so the
//! ratio can be read off; and loading (shape check, reading, generating, building, from the JSON
//! document as `fleetsim run` has it once parsed) per member. fleetsim's replications
//! run as a sweep runs them, one `Simulator` reset for each (`fleetsim_fresh`: a `simulate` that
//! builds everything for its one replication, as `fleetsim run` does).
//!
//! `cargo run --release --example ratio` prints the ratios directly, alternating the two programs.

#[path = "workload/mod.rs"]
mod workload;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use fleetsim::simulation::{SimOptions, Simulator, simulate};
use fleetsim::sweep::plan::build_value;

fn replication(c: &mut Criterion) {
    let mut group = c.benchmark_group("rollout");
    group.sampling_mode(SamplingMode::Flat);
    for n in [1_000usize, 10_000, 100_000] {
        let doc = workload::scenario(n, false);
        let scenario = build_value(doc.clone(), None).expect("the workload scenario is valid");
        let (samples, time) = if n >= 100_000 { (10, 20) } else { (20, 8) };
        group.sample_size(samples).measurement_time(Duration::from_secs(time));
        group.throughput(Throughput::Elements(n as u64));
        let mut seed = 0u64;
        group.bench_function(BenchmarkId::new("minimal", n), |b| {
            b.iter(|| {
                seed += 1;
                workload::minimal_rollout(black_box(n), seed)
            })
        });
        for (name, record_timeline) in [("fleetsim", false), ("fleetsim_timeline", true)] {
            let mut replication = 0u64;
            let mut simulator = Simulator::new(&scenario);
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| {
                    replication += 1;
                    black_box(simulator.run(SimOptions { record_timeline, replication }).end)
                })
            });
        }
        let mut replication = 0u64;
        group.bench_function(BenchmarkId::new("fleetsim_fresh", n), |b| {
            b.iter(|| {
                replication += 1;
                simulate(black_box(&scenario), SimOptions { record_timeline: false, replication })
            })
        });
        group.bench_function(BenchmarkId::new("load", n), |b| {
            // From a document of its own, as `fleetsim run` builds the one it parsed; the copy is
            // made, and the scenario dropped, outside the timing (as `examples/ratio.rs` times it).
            b.iter_batched(
                || doc.clone(),
                |doc| build_value(black_box(doc), None).expect("the workload scenario is valid"),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, replication);
criterion_main!(benches);
