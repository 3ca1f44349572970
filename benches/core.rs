//! Core simulation speed (PRODUCT.md "Fast"): a 1,000-member fleet through a three-stage strategy, and
//! 100,000 members, per replication.

use criterion::{Criterion, criterion_group, criterion_main};
use fleetsim::scenario::{Scenario, parse_str};
use fleetsim::simulation::{SimOptions, simulate};
use serde_json::json;

/// `members` generated members, canary → early → broad by label, Full upgrade with the default
/// per-component duration model and default failure rates.
fn three_stage(members: usize) -> Scenario {
    let doc = json!({
        "name": format!("bench-{members}"),
        "seed": 11,
        "start": "2026-03-02T00:00:00Z",
        "settings": {"horizon": "365d", "limits": {"stageMaxConcurrency": 10000}},
        "memberGenerators": [{
            "count": members,
            "namePattern": "aks-{index}",
            "regions": {"westeurope": 3, "eastus": 3, "westus2": 2, "southeastasia": 2},
            "labels": {"ring": {"canary": 2, "early": 18, "broad": 80}, "env": {"prod": 4, "staging": 1}},
            "kubernetesVersions": {"1.32.6": 9, "1.32.5": 1},
            "nodePools": [{"name": "system", "nodeCount": 3}, {"name": "user", "nodeCount": 8, "maxSurge": "33%"}]
        }],
        "models": {"failure": {"patchProbability": 0.01, "minorProbability": 0.01}},
        "updateStrategies": {"prod": {"stages": [
            {"name": "canary", "memberSelector": {"byLabel": "ring=canary"}, "maxConcurrency": "5", "maxAllowedFailures": "100%"},
            {"name": "early", "memberSelector": {"byLabel": "ring=early"}, "maxConcurrency": "10%", "maxAllowedFailures": "100%",
             "groups": [{"name": "early-prod", "memberSelector": {"byLabel": "env=prod"}, "maxConcurrency": "10%", "maxAllowedFailures": "100%"},
                        {"name": "early-staging", "memberSelector": {"byLabel": "env=staging"}, "maxConcurrency": "10%", "maxAllowedFailures": "100%"}]},
            {"name": "broad", "memberSelector": {"byLabel": "ring=broad"}, "maxConcurrency": "5%", "maxAllowedFailures": "100%",
             "groups": [{"name": "broad-prod", "memberSelector": {"byLabel": "env=prod"}, "maxConcurrency": "5%", "maxAllowedFailures": "100%"},
                        {"name": "broad-staging", "memberSelector": {"byLabel": "env=staging"}, "maxConcurrency": "5%", "maxAllowedFailures": "100%"}]}
        ]}},
        "updateRuns": [{"name": "upgrade", "updateStrategyId": "prod",
            "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.2"}}}]
    });
    parse_str(&doc.to_string(), None).expect("benchmark scenario is valid")
}

fn bench(c: &mut Criterion) {
    let lean = SimOptions { record_timeline: false, replication: 0 };
    let s1k = three_stage(1_000);
    let mut group = c.benchmark_group("core");
    group.bench_function("three_stage_1k_members", |b| b.iter(|| simulate(&s1k, lean)));
    group.bench_function("three_stage_1k_members_with_timeline", |b| b.iter(|| simulate(&s1k, SimOptions::default())));
    let s100k = three_stage(100_000);
    group.sample_size(10);
    group.bench_function("three_stage_100k_members", |b| b.iter(|| simulate(&s100k, lean)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
