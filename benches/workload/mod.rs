//! The performance workload of issue "speed", shared by `benches/rollout.rs` and `examples/ratio.rs`:
//! the same rollout as a fleetsim scenario and as a minimal hand-written loop, so that the cost of
//! fleetsim's generality can be measured as a ratio in one run.
//!
//! Workload: N clusters over 20 regions (cluster `cl` in region `cl % 20`); three sequential stages
//! with the cut points `cut1 = max(1, N / 100)` and `cut2 = cut1 + 19 N / 100`; one group per
//! (stage, region) that has members, groups in parallel with `maxConcurrency` 5; stage
//! `maxAllowedFailures` 5 % (rounded up); a 1 h wait after every stage; log-normal upgrade durations
//! (median 40 min, σ 0.4, so p90 = 4,007 s); failure probability 0.2 %. In the scenario the stage cap is
//! 100 (20 groups × 5) and group `maxAllowedFailures` is 100 %, so only the stage budget counts, as in
//! the minimal loop. [`scenario`] writes exactly what the project's reference generator
//! (`gen_scenarios.py` of the performance anchors) writes; [`minimal_rollout`] is the anchors' minimal
//! loop, unchanged but for its signature.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use serde_json::{Value, json};

const REGIONS: [&str; 20] = [
    "eastus",
    "eastus2",
    "westus2",
    "westus3",
    "centralus",
    "northcentralus",
    "southcentralus",
    "westeurope",
    "northeurope",
    "uksouth",
    "francecentral",
    "germanywestcentral",
    "swedencentral",
    "southeastasia",
    "eastasia",
    "japaneast",
    "australiaeast",
    "koreacentral",
    "centralindia",
    "brazilsouth",
];

/// The workload with `n` members as a fleetsim scenario document; `full` upgrades node images too
/// (`Full`) instead of the control plane only.
pub fn scenario(n: usize, full: bool) -> Value {
    let r = REGIONS.len();
    let cut1 = (n / 100).max(1);
    let cut2 = cut1 + n * 19 / 100;
    let mut generators = Vec::new();
    let mut stages = Vec::new();
    for (s, (lo, hi)) in [(0, cut1), (cut1, cut2), (cut2, n)].into_iter().enumerate() {
        let s = s + 1;
        let mut groups = Vec::new();
        for (index, region) in REGIONS.iter().enumerate() {
            let count = (lo..hi).filter(|cl| cl % r == index).count();
            if count == 0 {
                continue;
            }
            let group = format!("s{s}-{region}");
            generators.push(json!({
                "count": count,
                "namePattern": format!("m{s}-{region}-{{index}}"),
                "regions": {*region: 1},
                "groups": group,
                "labels": {"stage": format!("s{s}")},
                "kubernetesVersions": {"1.33.1": 1},
            }));
            groups.push(json!({"name": group, "maxConcurrency": 5, "maxAllowedFailures": "100%"}));
        }
        stages.push(json!({
            "name": format!("s{s}"),
            "memberSelector": {"byLabel": format!("stage=s{s}")},
            "maxConcurrency": 100,
            "maxAllowedFailures": "5%",
            "afterStageWaitInSeconds": 3600,
            "groups": groups,
        }));
    }
    let name = if full { format!("rollout-{n}-full") } else { format!("rollout-{n}") };
    json!({
        "name": name,
        "description": format!("Baseline workload (simpy_rollout.py / minimal_rust) with {n} members"),
        "seed": 1,
        "start": "2026-03-02T00:00:00Z",
        "settings": {"horizon": "3650d", "limits": {"stageMaxConcurrency": 100}},
        "memberGenerators": generators,
        "models": {
            "duration": {"member": {"median": "40m", "p90": "1h6m47s"}},
            "failure": {
                "patchProbability": 0.002,
                "minorProbability": 0.002,
                "codes": [{"code": "UpgradeFailed", "weight": 1, "point": "anywhere"}],
            },
        },
        "updateStrategies": {"rollout": {"stages": stages}},
        "updateRuns": [{
            "name": "rollout",
            "updateStrategyId": "rollout",
            "start": "+0s",
            "managedClusterUpdate": {
                "upgrade": {"type": if full { "Full" } else { "ControlPlaneOnly" }, "kubernetesVersion": "1.33.2"},
            },
        }],
    })
}

/// One replication of the workload as a minimal loop: one binary heap of completion events per
/// stage, nothing else. Returns (end time in seconds, failed, done, halted).
pub fn minimal_rollout(n: usize, seed: u64) -> (u64, usize, usize, bool) {
    let (regions, conc, p_fail, fail_pct) = (20usize, 5usize, 0.002f64, 5usize);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dur = LogNormal::new((40.0f64 * 60.0).ln(), 0.4).expect("valid log-normal parameters");
    let cut1 = (n / 100).max(1);
    let cut2 = cut1 + n * 19 / 100;
    let stages = [(0, cut1), (cut1, cut2), (cut2, n)];
    let (mut now, mut failed, mut done) = (0u64, 0usize, 0usize);
    for &(lo, hi) in &stages {
        let allowed = ((hi - lo) * fail_pct).div_ceil(100);
        let mut queues: Vec<Vec<usize>> = vec![Vec::new(); regions];
        for cl in (lo..hi).rev() {
            queues[cl % regions].push(cl);
        }
        let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        let mut stage_fail = 0usize;
        let start_member = |g: usize, t: u64, heap: &mut BinaryHeap<Reverse<(u64, usize)>>, rng: &mut ChaCha8Rng| {
            let d = dur.sample(rng) as u64;
            heap.push(Reverse((t + d, g)));
        };
        for (g, queue) in queues.iter_mut().enumerate() {
            for _ in 0..conc {
                if queue.pop().is_some() {
                    start_member(g, now, &mut heap, &mut rng);
                }
            }
        }
        while let Some(Reverse((t, g))) = heap.pop() {
            now = t;
            if rng.random::<f64>() < p_fail {
                stage_fail += 1;
                failed += 1;
            } else {
                done += 1;
            }
            if stage_fail <= allowed && queues[g].pop().is_some() {
                start_member(g, now, &mut heap, &mut rng);
            }
        }
        if stage_fail > allowed {
            return (now, failed, done, true);
        }
        now += 3600;
    }
    (now, failed, done, false)
}
