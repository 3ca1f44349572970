//! Sweep throughput (issue 4, PRODUCT.md "sweeps scale with cores"): replications per second of the
//! example's base scenario (`scenarios/sweep-base.json`, 1,000 members, canary → early → broad) on 1
//! and 2 threads, as `fleetsim sweep` runs them: a local rayon pool, pieces of replications each run
//! by one `Simulator` (reset per replication, no timeline) plus metric collection. Criterion's
//! throughput line gives replications/s.
//!
//! Two workloads: `bad-release` is the example as written (a bad release usually stops the run in the
//! early stage), `full-rollout` drops the bad release so every run upgrades all 1,000 members — the
//! harder case for the "1,000 replications per second per core" target.

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use fleetsim::scenario::Scenario;
use fleetsim::simulation::Simulator;
use fleetsim::sweep::Metric;
use fleetsim::sweep::exec::{replications_per_piece, run_replication};
use fleetsim::sweep::plan::build_value;
use rayon::prelude::*;
use serde_json::Value;

/// Replications per measured iteration: replications differ in cost (a run stopped early is cheap), so
/// a batch this size keeps both threads busy to the end, as the thousands of jobs of a sweep do.
const REPLICATIONS: u64 = 512;

fn base(full_rollout: bool) -> Scenario {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/sweep-base.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the example exists")).unwrap();
    if full_rollout {
        doc["models"].as_object_mut().unwrap().remove("badReleases");
    }
    build_value(doc, None).expect("the example's base scenario is valid")
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep");
    group.throughput(Throughput::Elements(REPLICATIONS));
    // Iterations take a tenth of a second or more: equal-sized samples, as criterion advises.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(10));
    for (name, scenario) in [("bad-release", base(false)), ("full-rollout", base(true))] {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            group.bench_with_input(BenchmarkId::new(name, format!("{threads}-threads")), &scenario, |b, s| {
                b.iter(|| {
                    pool.install(|| {
                        let replications: Vec<u64> = (0..REPLICATIONS).collect();
                        replications
                            .par_chunks(replications_per_piece(replications.len()))
                            .map(|piece| {
                                let mut simulator = Simulator::new(s);
                                piece.iter().map(|&r| run_replication(&mut simulator, r, &Metric::ALL)).collect()
                            })
                            .collect::<Vec<Vec<_>>>()
                    })
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
