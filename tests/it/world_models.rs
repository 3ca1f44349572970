//! World models (issue "world models"): example scenarios and their observed effect, node image
//! selection, availability, durations, failures, bad releases, fleet generators, the rollout model
//! and maintenance windows seen through the world's answers.

use std::collections::{BTreeMap, BTreeSet};

use fleetsim::engine::{Duration, SeedTree, Time};
use fleetsim::fleet::{KubernetesVersion, MemberId, NodeImageVersion};
use fleetsim::orchestrator::run::MemberRt;
use fleetsim::orchestrator::{Entity, Facts, Outcome, UpdateRun, UpdateState};
use fleetsim::scenario::{Scenario, load_file, parse_str, parse_str_with_fleet};
use fleetsim::simulation::{SimOptions, SimResult, simulate};
use fleetsim::world::{ImageSelection, UpgradeSpec, UpgradeType, World};
use serde_json::{Value, json};

use crate::support::*;

use UpdateState::*;

fn example(name: &str) -> (Scenario, SimResult) {
    let path = root().join("scenarios").join(format!("{name}.json"));
    let scenario = load_file(&path, None).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let result = simulate(&scenario, SimOptions::default());
    (scenario, result)
}

fn all_members(run: &UpdateRun) -> impl Iterator<Item = &MemberRt> {
    run.stages.iter().flat_map(|s| s.groups.iter()).flat_map(|g| g.members.iter())
}

fn at(text: &str) -> Time {
    Time::parse_rfc3339(text).unwrap()
}

fn k8s(text: &str) -> KubernetesVersion {
    KubernetesVersion::parse(text).unwrap()
}

/// Rows of the timeline about one member of run 0, as (time, from, to, note text).
fn member_rows(s: &Scenario, r: &SimResult, member: &str) -> Vec<(Time, UpdateState, UpdateState, String)> {
    let run = &r.runs[0];
    r.timeline
        .iter()
        .filter(|row| row.run == 0)
        .filter_map(|row| match row.transition.entity {
            Entity::Member(slot) if s.fleet[run.member(slot).id.index()].name == member => {
                Some((row.time, row.transition.from, row.transition.to, row.transition.note.text()))
            }
            _ => None,
        })
        .collect()
}

/// The first poll instant at or after `t` (polls: the run's start plus multiples of the interval).
fn first_poll_at_or_after(s: &Scenario, run_start: Time, t: Time) -> Time {
    let interval = s.settings.run.window_poll_interval.as_seconds();
    let steps = (t - run_start).as_seconds().max(0);
    run_start + Duration((steps + interval - 1) / interval * interval)
}

// ----- the three examples ----------------------------------------------------------------------

#[test]
fn example_a_two_thousand_members_in_twenty_regions_start_only_inside_their_windows() {
    let (s, r) = example("regions-2000");
    assert_eq!(s.fleet.len(), 2000);
    let regions: BTreeSet<&str> = s.fleet.iter().map(|m| m.region.as_str()).collect();
    assert_eq!(regions.len(), 20);
    let run = &r.runs[0];
    assert_eq!(run.state, Completed, "{:?}", run.note);
    let mut started = 0;
    for member in all_members(run) {
        let m = &s.fleet[member.id.index()];
        if let (Some(start), Some(window)) = (member.start_time(), &m.auto_upgrade_window) {
            assert!(window.is_open(start), "{} started at {start} outside its window", m.name);
            started += 1;
        }
    }
    assert!(started > 1500, "{started}");

    // Consistent: per family, the newest image released in every region of the run's members
    // when the run started (SEMANTICS §8), recorded in the status.
    let run_start = run.start_time.unwrap();
    let selected = r.selected_images[0].as_ref().expect("a Consistent selection");
    let families: BTreeSet<&str> =
        s.fleet.iter().flat_map(|m| m.node_pools.iter().map(|p| p.image_family.as_ref())).collect();
    assert_eq!(selected.keys().map(String::as_str).collect::<BTreeSet<_>>(), families);
    let mut newer_somewhere = false;
    for (family, version) in selected {
        let releases = &s.releases.images[family];
        let everywhere = |v: &NodeImageVersion| {
            let release = releases.iter().find(|r| &r.version == v).unwrap();
            regions.iter().all(|region| release.availability.is_available(region, run_start))
        };
        assert!(everywhere(version), "{version} is not released in every region");
        for release in releases.iter().filter(|r| r.version.compare(version).is_some_and(|o| o.is_gt())) {
            assert!(!everywhere(&release.version), "{} is newer and released everywhere", release.version);
            newer_somewhere |= regions.iter().any(|region| release.availability.is_available(region, run_start));
        }
    }
    assert!(newer_somewhere, "some region had a newer image than the Consistent one");

    // members.csv shows the versions before and after, per pool where they differ.
    let csv = String::from_utf8(
        fleetsim::report::tables::members_csv(&fleetsim::report::ReportContext::new(&s, &r)).unwrap(),
    )
    .unwrap();
    let completed: Vec<&str> = csv.lines().filter(|l| l.contains(",Completed,")).collect();
    assert!(completed.iter().all(|l| l.contains(",1.34.2,")));
    assert!(completed.iter().any(|l| l.contains("system: AKS") && l.contains(" -> AKS")));
}

#[test]
fn example_b_a_canary_stage_keeps_the_blast_radius_of_a_bad_release_small() {
    let (canary_s, canary) = example("bad-release-canary");
    let (spread_s, spread) = example("bad-release-spread");
    assert_eq!(canary_s.fleet.len(), spread_s.fleet.len());
    let radius = |r: &SimResult| r.bad_release_members[0].len();
    assert_eq!(canary.runs[0].state, Failed);
    assert!(radius(&canary) <= 12, "only canaries receive it: {}", radius(&canary));
    assert!(radius(&spread) >= 5 * radius(&canary), "{} vs {}", radius(&spread), radius(&canary));
    for (s, r) in [(&canary_s, &canary), (&spread_s, &spread)] {
        // Every recipient started an upgrade to the bad version; the count reaches summary.json.
        for id in &r.bad_release_members[0] {
            let member = all_members(&r.runs[0]).find(|m| m.id == *id).unwrap();
            assert!(member.start_time().is_some());
        }
        let summary = fleetsim::report::summary::summary(&fleetsim::report::ReportContext::new(s, r));
        assert_eq!(summary.runs[0].blast_radius, radius(r));
        // Only stateful clusters break (the bad release's memberSelector).
        for member in all_members(&r.runs[0]).filter(|m| m.note.code.as_deref() == Some("UpgradeFailed")) {
            assert_eq!(s.fleet[member.id.index()].labels.get("workload").unwrap(), "stateful");
        }
    }
}

#[test]
fn example_c_members_wait_for_the_release_in_late_regions_then_start_at_the_next_poll() {
    let (s, r) = example("late-regions");
    let run = &r.runs[0];
    assert_eq!(run.state, Completed);
    let run_start = run.start_time.unwrap();
    let target = k8s("1.34.2");
    let mut waited = 0;
    for member in all_members(run) {
        let m = &s.fleet[member.id.index()];
        let arrives = s.releases.kubernetes_available_at(target, &m.region).unwrap();
        let rows = member_rows(&s, &r, &m.name);
        let start = member.start_time().unwrap();
        assert!(start >= arrives, "{} started at {start} before 1.34.2 reached {}", m.name, m.region);
        if arrives > run_start {
            let pending = &rows[0];
            assert_eq!((pending.1, pending.2), (NotStarted, Pending), "{}: {rows:?}", m.name);
            assert_eq!(
                pending.3,
                format!(
                    "KubernetesVersionNotAvailable: target Kubernetes version \"1.34.2\" is not available in region \"{}\"",
                    m.region
                )
            );
            assert_eq!(start, first_poll_at_or_after(&s, run_start, arrives), "{}", m.name);
            waited += 1;
        }
    }
    assert_eq!(waited, s.fleet.len(), "the release reaches every region after the run starts");
    // The paused wave: the heavy ring (westeurope, …) gets it at least 4 days after the medium ring.
    let heavy = s.releases.kubernetes_available_at(target, "westeurope").unwrap();
    let medium = s.releases.kubernetes_available_at(target, "northeurope").unwrap();
    assert!(heavy - medium >= Duration::days(4), "{medium} → {heavy}");
    assert!(run.stats.pending_availability_seconds > 0);
}

// ----- node image selection (SEMANTICS §8) -----------------------------------------------------

const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";

fn image(version: &str) -> String {
    format!("{UBUNTU}-{version}")
}

/// Two regions; image .2 reaches eastus at the start and westeurope 5 h later.
fn two_region_images() -> Value {
    json!({"releases": {"nodeImages": [
        {"version": image("202602.01.0"), "available": "-10d"},
        {"version": image("202602.08.0"), "available": {"regions": {"eastus": "+0s", "westeurope": "+5h"}}}
    ]}})
}

fn image_member(name: &str, region: &str) -> Value {
    json!({"name": name, "region": region, "group": "ga", "kubernetesVersion": "1.32.4",
        "nodePools": [{"name": "system", "nodeImageVersion": image("202601.01.0")}]})
}

fn node_image_run(selection: &str) -> Value {
    json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly", "kubernetesVersion": null},
        "nodeImageSelection": {"type": selection}}})
}

#[test]
fn latest_picks_the_newest_image_of_the_members_region_when_it_starts() {
    let fleet = vec![image_member("e1", "eastus"), image_member("w1", "westeurope"), image_member("w2", "westeurope")];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, node_image_run("Latest"), two_region_images()));
    let to = |name: &str| {
        r.records
            .iter()
            .find(|((_, slot), _)| s.fleet[r.runs[0].member(*slot).id.index()].name == name)
            .and_then(|(_, rec)| rec.pools[0].to.clone())
            .unwrap()
            .to_string()
    };
    // One at a time, 1 h each: e1 at 0 h, w1 at 1 h (westeurope has only .1), w2 at 2 h (.1 still).
    assert_eq!(to("e1"), image("202602.08.0"));
    assert_eq!(to("w1"), image("202602.01.0"));
    assert_eq!(to("w2"), image("202602.01.0"));
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "1"}]}]});
    let mut late = two_region_images();
    late["releases"]["nodeImages"][1]["available"]["regions"]["westeurope"] = json!("+90m");
    let (s2, r2) = run(&scenario_json(
        vec![image_member("e1", "eastus"), image_member("w1", "westeurope"), image_member("w2", "westeurope")],
        strategy,
        node_image_run("Latest"),
        late,
    ));
    let w2 = r2.records.iter().find(|((_, slot), _)| s2.fleet[r2.runs[0].member(*slot).id.index()].name == "w2");
    assert_eq!(w2.unwrap().1.pools[0].to.as_ref().unwrap().to_string(), image("202602.08.0"), "w2 starts at 2 h");
    assert!(r.selected_images[0].is_none(), "Latest records no selection");
}

#[test]
fn consistent_picks_the_newest_image_released_in_every_region_and_skips_pools_without_one() {
    let mut fleet = vec![image_member("e1", "eastus"), image_member("w1", "westeurope")];
    fleet.push(json!({"name": "x1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
        "nodePools": [{"name": "system", "nodeImageVersion": image("202601.01.0")},
                      {"name": "win1", "osSku": "Windows2022", "nodeImageVersion": "AKSWindows-2022-containerd-20348.3000.260101"}]}));
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "3"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, node_image_run("Consistent"), two_region_images()));
    let selected = r.selected_images[0].as_ref().unwrap();
    // .8 is in eastus only at the start: the selection is .1; Windows has no release at all.
    assert_eq!(selected.get(UBUNTU).map(|v| v.to_string()), Some(image("202602.01.0")));
    assert_eq!(selected.len(), 1);
    assert_eq!(member_state(&s, &r.runs[0], "e1"), Completed);
    assert_eq!(member_state(&s, &r.runs[0], "w1"), Completed);
    let x1 = all_members(&r.runs[0]).find(|m| s.fleet[m.id.index()].name == "x1").unwrap();
    assert_eq!(x1.state, Skipped);
    assert!(x1.note.text().contains("AKSWindows-2022-containerd"), "{}", x1.note.text());
    let status =
        serde_json::to_value(fleetsim::report::status::run_status(&fleetsim::report::ReportContext::new(&s, &r), 0))
            .unwrap();
    assert!(status.to_string().contains(&image("202602.01.0")), "selectedNodeImageVersions: {status}");
}

#[test]
fn custom_upgrades_listed_families_only_and_waits_for_them_in_each_region() {
    let mut fleet = vec![image_member("e1", "eastus"), image_member("w1", "westeurope")];
    for m in &mut fleet {
        m["nodePools"].as_array_mut().unwrap().push(
            json!({"name": "azl", "osSku": "AzureLinux", "nodeImageVersion": "AKSAzureLinux-V3gen2-202601.01.0"}),
        );
    }
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "2"}]}]});
    let custom = json!({"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly", "kubernetesVersion": null},
        "nodeImageSelection": {"type": "Custom", "customNodeImageVersions": [{"version": image("202602.08.0")}]}}});
    let (s, r) = run(&scenario_json(fleet, strategy, custom, two_region_images()));
    let rows = member_rows(&s, &r, "w1");
    assert_eq!((rows[0].1, rows[0].2), (NotStarted, Pending));
    assert!(rows[0].3.starts_with("NodeImageVersionNotAvailable: target upgrade node image version"), "{}", rows[0].3);
    assert!(rows[0].3.contains("\"westeurope\""), "{}", rows[0].3);
    let spans = spans(&s, &r);
    assert_eq!(spans["w1"].0, s.start + Duration::hours(5), "starts at the poll when .8 reaches westeurope");
    for record in r.records.values() {
        assert_eq!(record.pools.len(), 1, "the Azure Linux pool's family is not listed: {record:?}");
        assert_eq!(record.pools[0].to.as_ref().unwrap().to_string(), image("202602.08.0"));
    }
}

#[test]
fn images_older_than_ninety_days_fail_the_member() {
    let mut fleet = vec![image_member("a1", "eastus")];
    fleet[0]["nodePools"][0]["nodeImageVersion"] = json!(image("202510.01.0"));
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga"}]}]});
    let old = json!({"releases": {"nodeImages": [{"version": image("202511.01.0"), "published": "-91d", "available": "-91d"}]}});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), node_image_run("Latest"), old));
    let a1 = all_members(&r.runs[0]).next().unwrap();
    assert_eq!(a1.state, Failed);
    assert_eq!(a1.note.code.as_deref(), Some("NodeImageVersionExpired"));
    assert!(a1.note.text().contains(&image("202511.01.0")), "{}", a1.note.text());
    assert_eq!(r.records.values().next().unwrap().pools.len(), 0, "nothing was upgraded");
    assert_eq!(s.fleet[0].node_pools[0].node_image_version.as_ref().unwrap().to_string(), image("202510.01.0"));
    let fresh = json!({"releases": {"nodeImages": [{"version": image("202511.01.0"), "published": "-89d", "available": "-89d"}]}});
    let (_, r) = run(&scenario_json(fleet, strategy, node_image_run("Latest"), fresh));
    assert_eq!(all_members(&r.runs[0]).next().unwrap().state, Completed);
}

#[test]
fn non_lts_members_cannot_skip_a_minor_version() {
    let fleet = vec![
        json!({"name": "a1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.31.9"}),
        json!({"name": "b1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.31.9", "longTermSupport": true}),
        json!({"name": "c1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [{"name": "ga", "maxAllowedFailures": "100%"}]}]});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), json!({})));
    let run0 = &r.runs[0];
    let a1 = all_members(run0).find(|m| s.fleet[m.id.index()].name == "a1").unwrap();
    assert_eq!((a1.state, a1.note.code.as_deref()), (Failed, Some("UpgradeVersionSkipNotAllowed")));
    assert_eq!(member_state(&s, run0, "b1"), Completed, "LTS clusters may skip");
    assert_eq!(member_state(&s, run0, "c1"), Completed);
    // The setting turns it into a skip when examined.
    let (s, r) = run_with(&fleet, &strategy, json!({"settings": {"minorVersionSkip": "skip"}}));
    assert_eq!(member_state(&s, &r.runs[0], "a1"), Skipped);
    // LTS may skip only to an LTS-eligible release.
    let releases = json!({"releases": {"kubernetes": [{"version": "1.31.9"}, {"version": "1.32.4"}, {"version": "1.33.2", "ltsEligible": false}]}});
    let (s, r) = run_with(&fleet, &strategy, releases);
    let b1 = all_members(&r.runs[0]).find(|m| s.fleet[m.id.index()].name == "b1").unwrap();
    assert_eq!(b1.state, Failed);
    assert!(b1.note.text().contains("not LTS-eligible"), "{}", b1.note.text());
}

fn run_with(fleet: &[Value], strategy: &Value, extra: Value) -> (Scenario, SimResult) {
    run(&scenario_json(fleet.to_vec(), strategy.clone(), json!({}), extra))
}

#[test]
fn security_patch_runs_leave_windows_pools_alone() {
    let fleet = vec![json!({"name": "a1", "region": "eastus", "kubernetesVersion": "1.33.2",
        "nodePools": [{"name": "system", "nodeImageVersion": image("202601.01.0")},
                      {"name": "win1", "osSku": "Windows2022", "nodeImageVersion": "AKSWindows-2022-containerd-20348.3000.260101"}]})];
    let s = scenario(&scenario_json(
        fleet,
        Value::Null,
        json!({}),
        json!({"releases": {"nodeImages": [
            {"version": image("202602.01.0"), "available": "-1d"},
            {"version": "AKSWindows-2022-containerd-20348.3100.260201", "available": "-1d"}]}}),
    ));
    let mut world = World::new(&s.fleet, &s.releases, &s.models, s.settings.world, SeedTree::new(1, 0));
    let spec = UpgradeSpec {
        kind: UpgradeType::NodeImageOnly,
        kubernetes_version: None,
        images: ImageSelection::Latest,
        security_patch: true,
        auto_upgrade: false,
        lts_only: false,
    };
    let run = world.add_run("patch", spec, None);
    let member = MemberId(0);
    assert!(world.already_at_target(run, member, s.start).is_none());
    let attempt = world.start_upgrade(run, member, 1, s.start);
    let finished = world.finish_upgrade(attempt.flight, s.start + attempt.duration);
    assert_eq!((finished.run, finished.member), (run, member));
    let Outcome::Completed(note) = &finished.outcome else { panic!("{:?}", finished.outcome) };
    assert!(note.text().contains("win1: Windows node pools are not updated by SecurityPatch"), "{}", note.text());
    let record = finished.record;
    assert_eq!(record.pools.len(), 1);
    assert_eq!(record.pools[0].pool, 0, "the system pool");
    assert_eq!(
        world.current_images(member)[1].as_ref().unwrap().to_string(),
        "AKSWindows-2022-containerd-20348.3000.260101"
    );
    // Once the Linux pool is patched the member is at target even though Windows is behind.
    assert!(world.already_at_target(run, member, s.start + attempt.duration).is_some());
}

// ----- durations (aks-models.md §4.1–4.2) ------------------------------------------------------

/// (start, end) of each member of run 0, by name.
fn spans(s: &Scenario, r: &SimResult) -> BTreeMap<String, (Time, Time)> {
    all_members(&r.runs[0])
        .filter_map(|m| Some((s.fleet[m.id.index()].name.clone(), (m.start_time()?, m.end_time()?))))
        .collect()
}

fn minutes(span: (Time, Time)) -> i64 {
    (span.1 - span.0).as_seconds() / 60
}

#[test]
fn upgrades_take_the_control_plane_then_each_pool_in_surge_batches() {
    let pool = |name: &str, os: &str, nodes: u32, surge: Value| {
        let mut p = json!({"name": name, "osSku": os, "nodeCount": nodes});
        if !surge.is_null() {
            p["maxSurge"] = surge;
        }
        p
    };
    let member = |name: &str, version: &str, pools: Vec<Value>| json!({"name": name, "region": "eastus", "group": "ga", "kubernetesVersion": version, "nodePools": pools});
    let fleet = vec![
        // ≥ 1.32: default surge 10 % of 10 nodes = 1 node → 10 batches.
        member("a1", "1.32.4", vec![pool("system", "Ubuntu", 10, Value::Null)]),
        // 33 % of 10 = 3.3 → 4 nodes → 3 batches; "3" nodes → 4 batches.
        member(
            "b1",
            "1.32.4",
            vec![pool("system", "Ubuntu", 10, json!("33%")), pool("user1", "AzureLinux", 10, json!(3))],
        ),
        // Windows batches are slower.
        member(
            "c1",
            "1.32.4",
            vec![pool("system", "Ubuntu", 3, json!("1")), pool("win1", "Windows2022", 4, json!("2"))],
        ),
        // Its own duration model.
        json!({"name": "d1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
            "nodePools": [pool("system", "Ubuntu", 2, json!("1"))], "durations": {"controlPlane": "30m"}}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "4"}]}]});
    let full = json!({"managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.2"}}});
    let models = json!({"models": {"duration": {"member": null, "controlPlane": "10m", "linuxNodeBatch": "5m", "windowsNodeBatch": "20m"}}});
    let (s, r) = run(&scenario_json(fleet, strategy.clone(), full, models.clone()));
    let spans = spans(&s, &r);
    assert_eq!(minutes(spans["a1"]), 10 + 10 * 5);
    assert_eq!(minutes(spans["b1"]), 10 + 3 * 5 + 4 * 5);
    assert_eq!(minutes(spans["c1"]), 10 + 3 * 5 + 2 * 20);
    assert_eq!(minutes(spans["d1"]), 30 + 2 * 5);
    // Before 1.32 the default surge is one node: 4 nodes → 4 batches.
    let old = vec![member("e1", "1.30.5", vec![pool("system", "Ubuntu", 4, Value::Null)])];
    let to_131 = json!({"managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.31.10"}}});
    let (s, r) = run(&scenario_json(old, strategy.clone(), to_131, models.clone()));
    assert_eq!(minutes(self::spans(&s, &r)["e1"]), 10 + 4 * 5);
    // ControlPlaneOnly: the control plane only; NodeImageOnly: pools only, and only those behind.
    let fleet = vec![member("f1", "1.32.4", vec![pool("system", "Ubuntu", 10, json!("5"))])];
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), models.clone()));
    assert_eq!(minutes(self::spans(&s, &r)["f1"]), 10);
    let mut images = models.clone();
    merge(&mut images, json!({"releases": {"nodeImages": [{"version": image("202602.01.0")}]}}));
    let (s, r) = run(&scenario_json(fleet, strategy, node_image_run("Latest"), images));
    assert_eq!(minutes(self::spans(&s, &r)["f1"]), 2 * 5);
}

#[test]
fn default_durations_are_log_normal_around_the_aks_models_medians() {
    // 400 single-node-batch control-plane upgrades: median 8 min, p90 20 min (aks-models.md §4.2).
    let fleet: Vec<Value> = (0..400)
        .map(|i| json!({"name": format!("m{i:03}"), "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}))
        .collect();
    let strategy = json!({"stages": [{"name": "s1", "groups": [{"name": "ga", "maxConcurrency": "50"}]}]});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), json!({"models": {"duration": {"member": null}}})));
    let mut durations: Vec<i64> = spans(&s, &r).values().map(|span| (span.1 - span.0).as_seconds()).collect();
    durations.sort_unstable();
    let median = durations[200] as f64 / 60.0;
    let p90 = durations[360] as f64 / 60.0;
    assert!((7.0..9.2).contains(&median), "median {median}");
    assert!((16.5..24.0).contains(&p90), "p90 {p90}");
}

// ----- failures (aks-models.md §4.4) -----------------------------------------------------------

fn failing_with(code: &str, point: &str) -> Value {
    json!({"models": {"duration": {"member": null, "controlPlane": "10m", "linuxNodeBatch": "5m", "drainTimeout": "30m"},
        "failure": {"probability": 1.0, "codes": [{"code": code, "weight": 1, "point": point}]}}})
}

#[test]
fn each_error_code_fails_at_its_point_of_the_upgrade() {
    let fleet: Vec<Value> = (1..=20)
        .map(|i| {
            json!({"name": format!("m{i:02}"), "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
            "nodePools": [{"name": "system", "nodeCount": 4, "maxSurge": "1"}]})
        })
        .collect();
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%",
        "groups": [{"name": "ga", "maxConcurrency": "20", "maxAllowedFailures": "100%"}]}]});
    let full = json!({"managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.2"}}});
    let check = |code: &str, point: &str, ok: &dyn Fn(i64) -> bool| {
        let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), full.clone(), failing_with(code, point)));
        for member in all_members(&r.runs[0]) {
            assert_eq!(member.state, Failed);
            assert_eq!(member.note.code.as_deref(), Some(code));
            let seconds = (member.end_time().unwrap() - member.start_time().unwrap()).as_seconds();
            assert!(ok(seconds), "{code} at {seconds} s for {}", s.fleet[member.id.index()].name);
        }
    };
    // A quota or deprecated-API check fails early; surge allocation at the start of the pool
    // (control plane done at 10 min); a drain that times out late (≥ pool start + 30 min).
    check("UpgradeBlockedOnDeprecatedAPIUsage", "preCheck", &|t| t <= 60);
    check("QuotaExceeded", "surgeAllocation", &|t| (600 + 60..=600 + 300).contains(&t));
    check("PodDrainFailure", "drain", &|t| t >= 600 + 1800);
    check("AKSRequestsThrottled", "anywhere", &|t| (1..=600 + 4 * 300).contains(&t));
}

#[test]
fn minor_upgrades_fail_more_often_and_only_they_hit_deprecated_api_blocks() {
    let fleet = |version: &str| -> Vec<Value> {
        (0..300)
            .map(|i| json!({"name": format!("m{i:03}"), "region": "eastus", "group": "ga", "kubernetesVersion": version}))
            .collect()
    };
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [{"name": "ga", "maxConcurrency": "50", "maxAllowedFailures": "100%"}]}]});
    let failure = json!({"models": {"failure": {"patchProbability": 0.1, "minorProbability": 0.4}}});
    let failed = |version: &str| {
        let (_, r) = run(&scenario_json(fleet(version), strategy.clone(), json!({}), failure.clone()));
        let codes: Vec<String> = all_members(&r.runs[0])
            .filter(|m| m.state == Failed)
            .map(|m| m.note.code.clone().unwrap().to_string())
            .collect();
        codes
    };
    let patch = failed("1.33.0"); // 1.33.0 → 1.33.2
    let minor = failed("1.32.4"); // 1.32.4 → 1.33.2
    assert!((15..=50).contains(&patch.len()), "patch {}", patch.len());
    assert!((90..=150).contains(&minor.len()), "minor {}", minor.len());
    assert!(!patch.iter().any(|c| c == "UpgradeBlockedOnDeprecatedAPIUsage"));
    assert!(patch.iter().filter(|c| *c == "PodDrainFailure").count() * 3 > patch.len(), "PDB/drain leads the mix");
}

#[test]
fn regional_incidents_fail_or_stall_upgrades_in_their_region_and_interval() {
    let fleet = vec![
        json!({"name": "e1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}),
        json!({"name": "e2", "region": "eastus", "group": "gb", "kubernetesVersion": "1.32.4"}),
        json!({"name": "w1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [
        {"name": "ga", "maxConcurrency": "2", "maxAllowedFailures": "100%"},
        {"name": "gb", "beforeGates": [{"type": "ScheduledStart", "scheduledStartConfiguration": {"startDay": "Monday", "startTime": "03:00", "utcOffset": "+00:00"}}]}]}]});
    let incident = json!({"models": {"incidents": [
        {"region": "eastus", "from": "+0s", "to": "+2h", "failureProbability": 1.0, "errorCode": "InternalServerError"}]}});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), incident));
    let run0 = &r.runs[0];
    let e1 = all_members(run0).find(|m| s.fleet[m.id.index()].name == "e1").unwrap();
    assert_eq!((e1.state, e1.note.code.as_deref()), (Failed, Some("InternalServerError")));
    assert!(e1.note.text().contains("eastus"));
    assert_eq!(member_state(&s, run0, "e2"), Completed, "after the incident");
    assert_eq!(member_state(&s, run0, "w1"), Completed, "another region");
    let stall = json!({"models": {"incidents": [{"region": "westeurope", "from": "+0s", "to": "+1h", "stall": "3h"}]}});
    let (s, r) = run(&scenario_json(fleet, strategy, json!({}), stall));
    let spans = spans(&s, &r);
    assert_eq!(minutes(spans["w1"]), 4 * 60, "1 h upgrade + 3 h stall");
    assert_eq!(minutes(spans["e1"]), 60);
}

#[test]
fn a_bad_release_breaks_a_fraction_of_its_recipients_and_the_blast_radius_counts_those_at_risk() {
    let fleet: Vec<Value> = (1..=40)
        .map(|i| {
            let tier = if i % 2 == 0 { "db" } else { "web" };
            json!({"name": format!("m{i:02}"), "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4", "labels": {"tier": tier}})
        })
        .collect();
    let strategy = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [{"name": "ga", "maxConcurrency": "10", "maxAllowedFailures": "100%"}]}]});
    let bad = json!({"models": {"badReleases": [{"version": "1.33.2", "failureFraction": 0.5, "memberSelector": "tier=db"}]}});
    let (s, r) = run(&scenario_json(fleet.clone(), strategy.clone(), json!({}), bad));
    let failed: Vec<&MemberRt> = all_members(&r.runs[0]).filter(|m| m.state == Failed).collect();
    assert!(failed.iter().all(|m| s.fleet[m.id.index()].labels.get("tier").unwrap() == "db"));
    assert!((4..=16).contains(&failed.len()), "{}", failed.len());
    assert_eq!(r.bad_release_members[0].len(), 20, "every db member received 1.33.2 (web members are not at risk)");
    // The same members break whatever the strategy (streams keyed by member and release).
    let one_by_one = json!({"stages": [{"name": "s1", "maxAllowedFailures": "100%", "groups": [{"name": "ga", "maxAllowedFailures": "100%"}]}]});
    let bad = json!({"models": {"badReleases": [{"version": "1.33.2", "failureFraction": 0.5, "memberSelector": "tier=db"}]}});
    let (_, r2) = run(&scenario_json(fleet, one_by_one, json!({}), bad));
    let failed2: BTreeSet<MemberId> = all_members(&r2.runs[0]).filter(|m| m.state == Failed).map(|m| m.id).collect();
    assert_eq!(failed2, failed.iter().map(|m| m.id).collect());
}

// ----- the rollout model (aks-models.md §2.4) --------------------------------------------------

#[test]
fn releases_spread_over_rings_and_are_drawn_again_per_replication() {
    let fleet = vec![
        json!({"name": "a1", "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4"}),
        json!({"name": "b1", "region": "westeurope", "group": "ga", "kubernetesVersion": "1.32.4"}),
        json!({"name": "c1", "region": "brazilsouth", "group": "ga", "kubernetesVersion": "1.32.4"}),
    ];
    let rings = json!({"releases": {
        "rollout": {"rings": [{"name": "first", "regions": ["eastus"], "offset": "0s"},
                              {"name": "second", "regions": ["westeurope"], "offset": {"min": "2d", "max": "2d"}}],
                    "jitter": "0s", "pause": {"probability": 0}},
        "kubernetes": [{"version": "1.32.4", "released": "-30d"}, {"version": "1.33.2", "released": "+1h"}]}});
    let s = scenario(&scenario_json(fleet.clone(), Value::Null, json!({}), rings));
    let available = |region: &str| s.releases.kubernetes_available_at(k8s("1.33.2"), region).unwrap();
    assert_eq!(available("eastus"), s.start + Duration::hours(1));
    assert_eq!(available("westeurope"), s.start + Duration::hours(49));
    assert_eq!(available("brazilsouth"), s.start + Duration::hours(49), "regions no ring lists come last");

    // Default model: ring offsets and jitter are drawn per release, and per replication.
    let default = json!({"releases": {"kubernetes": [{"version": "1.32.4", "released": "-30d"}, {"version": "1.33.2", "released": "+0s"}]}});
    let mut fleet = fleet;
    for (name, region) in [("d1", "uksouth"), ("e1", "eastus2euap")] {
        fleet.push(json!({"name": name, "region": region, "group": "ga", "kubernetesVersion": "1.32.4"}));
    }
    let s = scenario(&scenario_json(fleet, Value::Null, json!({}), default));
    let zero = s.releases.for_replication(SeedTree::new(s.seed, 0));
    assert!(matches!(zero, std::borrow::Cow::Borrowed(_)), "replication 0 is the scenario's own draw");
    let times = |calendar: &fleetsim::world::ReleaseCalendar| -> Vec<Time> {
        ["eastus", "westeurope", "brazilsouth", "uksouth", "eastus2euap"]
            .iter()
            .map(|r| calendar.kubernetes_available_at(k8s("1.33.2"), r).unwrap())
            .collect()
    };
    let base = times(&s.releases);
    let lag = |t: Time| (t - s.start).as_hours_f64();
    // uksouth (pilot, day 1–2 + 0–2), eastus (early, day 3), westeurope (heavy, day 8–10), canary first.
    assert!(lag(base[4]) <= 48.0);
    assert!((24.0..=96.0).contains(&lag(base[3])));
    assert!((72.0..=120.0).contains(&lag(base[0])));
    assert!(lag(base[1]) >= 192.0);
    let other = s.releases.for_replication(SeedTree::new(s.seed, 1));
    assert_ne!(times(&other), base);
}

// ----- fleet generators (issue "world models" §6) ---------------------------------------------

fn generator_scenario(generators: Value, extra: Value) -> String {
    let mut doc = json!({
        "name": "generated",
        "seed": 5,
        "start": START,
        "releases": {
            "kubernetes": [
                {"version": "1.33.4", "available": "-30d"},
                {"version": "1.33.5", "available": {"regions": {"eastus": "-1d"}}},
                {"version": "1.34.1", "available": "-30d"}
            ],
            "nodeImages": [
                {"version": image("202602.01.0"), "available": "-20d"},
                {"version": image("202602.08.0"), "available": "-10d"},
                {"version": image("202602.15.0"), "available": {"regions": {"westeurope": "+1d"}, "default": "-1d"}}
            ]
        },
        "memberGenerators": generators,
        "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
        "updateRuns": [{"name": "r", "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.34.1"}}}]
    });
    merge(&mut doc, extra);
    serde_json::to_string(&doc).unwrap()
}

fn big_generator(count: u32) -> Value {
    json!({
        "count": count,
        "namePattern": "c-{region}-{index}",
        "regions": {"eastus": 3, "westeurope": 1},
        "groups": "{region}",
        "labels": {"env": {"prod": 8, "dev": 2}, "geo": "{geography}"},
        "kubernetesVersions": {"1.33": 1, "1.34.1": 1},
        "nodePools": {"count": {"1": 1, "3": 1}, "nodeCount": {"min": 2, "max": 10},
                      "osSku": {"Ubuntu": 1, "Windows2022": 1}, "maxSurge": {"10%": 1, "33%": 1}},
        "nodeImageAge": [1, 1],
        "aksManagedAutoUpgradeSchedule": [
            {"template": "localNight", "weight": 3, "startTime": {"22:00": 1, "23:00": 1}},
            {"template": "weekend", "weight": 1}
        ],
        "aksManagedNodeOSUpgradeSchedule": [{"template": "none", "weight": 1}, {"template": "weekend", "weight": 1, "utcOffset": "+00:00"}],
        "stopped": 0.1,
        "longTermSupport": 0.2
    })
}

/// `part / whole` is within `tolerance` of `expected`.
#[track_caller]
fn share(part: usize, whole: usize, expected: f64, tolerance: f64) {
    let got = part as f64 / whole as f64;
    assert!((got - expected).abs() <= tolerance, "{part}/{whole} = {got:.3}, expected {expected} ± {tolerance}");
}

#[test]
fn generated_fleets_follow_their_distributions() {
    let n = 6000;
    let (s, dtos) = parse_str_with_fleet(&generator_scenario(json!([big_generator(n)]), json!({})), None).unwrap();
    let fleet = &s.fleet;
    assert_eq!(fleet.len(), n as usize);
    assert_eq!(dtos.len(), fleet.len());
    let east: Vec<_> = fleet.iter().filter(|m| m.region == "eastus").collect();
    share(east.len(), fleet.len(), 0.75, 0.03);
    share(fleet.iter().filter(|m| m.labels.get("env").unwrap() == "prod").count(), fleet.len(), 0.8, 0.03);
    for m in fleet {
        assert_eq!(m.group.as_deref(), Some(m.region.as_str()));
        assert_eq!(m.labels.get("geo").unwrap(), if m.region == "eastus" { "americas" } else { "europe" });
        assert!(m.name.starts_with(&format!("c-{}-", m.region)));
        // "1.33" resolves to the newest 1.33 patch in the member's region at the start.
        let v = m.kubernetes_version.to_string();
        let expected_133 = if m.region == "eastus" { "1.33.5" } else { "1.33.4" };
        assert!(v == expected_133 || v == "1.34.1", "{} {v}", m.region);
        // The system pool is Linux; pool sizes within bounds.
        assert!(!m.node_pools[0].os_sku.is_windows());
        assert!(m.node_pools.iter().all(|p| (2..=10).contains(&p.node_count)));
    }
    share(fleet.iter().filter(|m| m.kubernetes_version.minor == 33).count(), fleet.len(), 0.5, 0.03);
    share(fleet.iter().filter(|m| m.node_pools.len() == 3).count(), fleet.len(), 0.5, 0.03);
    let user_pools: Vec<_> = fleet.iter().flat_map(|m| m.node_pools.iter().skip(1)).collect();
    share(user_pools.iter().filter(|p| p.os_sku.is_windows()).count(), user_pools.len(), 0.5, 0.03);
    let sizes: Vec<u32> = fleet.iter().flat_map(|m| m.node_pools.iter().map(|p| p.node_count)).collect();
    let mean = sizes.iter().map(|&c| f64::from(c)).sum::<f64>() / sizes.len() as f64;
    assert!((mean - 6.0).abs() < 0.15, "mean pool size {mean}");
    share(fleet.iter().filter(|m| m.stopped).count(), fleet.len(), 0.1, 0.02);
    share(fleet.iter().filter(|m| m.long_term_support).count(), fleet.len(), 0.2, 0.02);
    // Images: newest or second newest released in the region at the start (westeurope lacks .15).
    let linux: Vec<(&str, String)> = fleet
        .iter()
        .flat_map(|m| {
            m.node_pools
                .iter()
                .filter(|p| !p.os_sku.is_windows())
                .map(move |p| (m.region.as_str(), p.node_image_version.as_ref().unwrap().to_string()))
        })
        .collect();
    for (region, v) in &linux {
        let allowed = if *region == "eastus" { ["202602.15.0", "202602.08.0"] } else { ["202602.08.0", "202602.01.0"] };
        assert!(allowed.iter().any(|a| *v == image(a)), "{region} {v}");
    }
    share(
        linux.iter().filter(|(r, v)| *r == "eastus" && *v == image("202602.15.0")).count(),
        linux.iter().filter(|(r, _)| *r == "eastus").count(),
        0.5,
        0.03,
    );
    // Windows: 3:1 local nights to weekends, in the region's standard-time offset.
    let windows: Vec<_> = dtos.iter().map(|d| d.aks_managed_auto_upgrade_schedule.as_ref().unwrap()).collect();
    share(windows.iter().filter(|w| w.schedule.daily.is_some()).count(), windows.len(), 0.75, 0.03);
    for (d, w) in dtos.iter().zip(&windows) {
        let offset = if d.region == "eastus" { "-05:00" } else { "+01:00" };
        assert_eq!(w.utc_offset.as_deref(), Some(offset));
        if w.schedule.daily.is_some() {
            assert!(w.start_time == "22:00" || w.start_time == "23:00");
            assert_eq!(w.duration_hours, 6);
        } else {
            assert_eq!(w.schedule.weekly.as_ref().unwrap().day_of_week, "Saturday");
            assert_eq!((w.start_time.as_str(), w.duration_hours), ("00:00", 24));
        }
        if let Some(os) = &d.aks_managed_node_os_upgrade_schedule {
            assert_eq!(os.utc_offset.as_deref(), Some("+00:00"), "the template's own offset wins");
        }
    }
    share(dtos.iter().filter(|d| d.aks_managed_node_os_upgrade_schedule.is_none()).count(), dtos.len(), 0.5, 0.03);
}

#[test]
fn generators_are_deterministic_keyed_by_name_and_mix_with_explicit_members() {
    let small =
        |generators: Value, extra: Value| parse_str_with_fleet(&generator_scenario(generators, extra), None).unwrap().1;
    let base = small(json!([big_generator(200)]), json!({}));
    assert_eq!(base, small(json!([big_generator(200)]), json!({})), "same seed, same fleet");
    assert_ne!(base, small(json!([big_generator(200)]), json!({"seed": 6})), "another seed, another fleet");
    // Adding a label key or a generator leaves every other draw alone.
    let mut more_labels = big_generator(200);
    more_labels["labels"]["team"] = json!({"a": 1, "b": 1});
    let with_team = small(json!([more_labels]), json!({}));
    for (a, b) in base.iter().zip(&with_team) {
        assert_eq!((&a.name, &a.region, &a.node_pools), (&b.name, &b.region, &b.node_pools));
        assert_eq!(a.labels.get("env").unwrap(), b.labels.get("env").unwrap());
    }
    let other = json!({"count": 50, "namePattern": "x-{index}", "regions": {"westeurope": 1}, "kubernetesVersions": {"1.34.1": 1}});
    let two = small(json!([other, big_generator(200)]), json!({}));
    let without_x: Vec<_> = two.iter().filter(|m| !m.name.starts_with("x-")).cloned().collect();
    assert_eq!(without_x, base);
    // Explicit members mix in; a generator with its own seed ignores the scenario's.
    let explicit = json!({"members": [{"name": "zz-explicit", "region": "eastus", "kubernetesVersion": "1.33.4"}]});
    let mixed = small(json!([big_generator(200)]), explicit);
    assert_eq!(mixed.len(), 201);
    assert_eq!(mixed.last().unwrap().name, "zz-explicit");
    let mut pinned = big_generator(200);
    pinned["seed"] = json!(99);
    assert_eq!(small(json!([pinned.clone()]), json!({})), small(json!([pinned]), json!({"seed": 6})));
    // Names must not collide with explicit members.
    let clash = json!({"members": [{"name": "x-01", "region": "eastus", "kubernetesVersion": "1.33.4"}]});
    let p = parse_str(&generator_scenario(json!([{"count": 12, "namePattern": "x-{index}", "regions": {"eastus": 1}, "kubernetesVersions": {"1.34.1": 1}}]), clash), None)
        .unwrap_err();
    assert!(p.iter().any(|p| p.message.contains("defined twice")), "{p:?}");
}

#[test]
fn a_dumped_fleet_pasted_back_as_members_simulates_the_same() {
    let text = generator_scenario(
        json!([big_generator(120)]),
        // A failure budget keeps the run going, so that windows shape it (the first member's window
        // is open at the start and a failure would otherwise end the run there).
        json!({"updateRuns": [{"name": "r",
        "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.34.1"}, "nodeImageSelection": {"type": "Consistent"}},
        "strategy": {"stages": [{"name": "all", "maxAllowedFailures": "100%", "groups": [
            {"name": "eastus", "maxConcurrency": "5", "maxAllowedFailures": "100%"},
            {"name": "westeurope", "maxConcurrency": "5", "maxAllowedFailures": "100%"}]}]}}],
        "models": {"duration": {"member": null}, "failure": {"probability": 0.05}},
        "settings": {"horizon": "20d"}}),
    );
    let (s1, dtos) = parse_str_with_fleet(&text, None).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["memberGenerators"] = Value::Null;
    doc["members"] = serde_json::to_value(&dtos).unwrap();
    let pasted = serde_json::to_string(&doc).unwrap().replace("\"memberGenerators\":null,", "");
    let s2 = scenario(&pasted);
    assert_eq!(s1.fleet.len(), s2.fleet.len());
    let r1 = simulate(&s1, SimOptions::default());
    let r2 = simulate(&s2, SimOptions::default());
    let outline = |s: &Scenario, r: &SimResult| -> Vec<String> {
        all_members(&r.runs[0])
            .map(|m| {
                format!(
                    "{} {} {:?} {:?} {}",
                    s.fleet[m.id.index()].name,
                    m.state,
                    m.start_time(),
                    m.end_time(),
                    m.note.text()
                )
            })
            .collect()
    };
    assert_eq!(outline(&s1, &r1), outline(&s2, &r2));
    assert!(r1.runs[0].stats.pending_window_seconds > 0, "windows shaped the run");
}

#[test]
fn fleetsim_run_writes_the_fleet_with_dump_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("fleet.json");
    let output = std::process::Command::new(binary())
        .args(["run", "-q"])
        .arg(root().join("scenarios/late-regions.json"))
        .arg("--out")
        .arg(dir.path().join("report"))
        .arg("--dump-fleet")
        .arg(&dump)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let members: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(members.len(), 40);
    assert!(members.iter().all(|m| m["group"] == m["region"]));
    assert!(dir.path().join("report/summary.json").exists());
    // To standard output, without the run summary mixed in.
    let output = std::process::Command::new(binary())
        .arg("run")
        .arg(root().join("scenarios/late-regions.json"))
        .arg("--out")
        .arg(dir.path().join("report2"))
        .args(["--dump-fleet", "-"])
        .output()
        .unwrap();
    let members: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(members.len(), 40);
}

// ----- maintenance windows through the world's answers (SEMANTICS §5.4, §11) -------------------

#[test]
fn window_classes_and_next_openings_for_each_calendar_rule() {
    // (window, instant, class, next opening when closed)
    let cases: Vec<(Value, &str, &str, Option<&str>)> = vec![
        // Every 3 days from startDate, 22:00 for 6 h: crosses midnight.
        (
            json!({"schedule": {"daily": {"intervalDays": 3}}, "durationHours": 6, "startTime": "22:00", "startDate": "2026-03-02"}),
            "2026-03-03T02:00:00Z",
            "OpenNow",
            None,
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 3}}, "durationHours": 6, "startTime": "22:00", "startDate": "2026-03-02"}),
            "2026-03-04T12:00:00Z",
            "Closed",
            Some("2026-03-05T22:00:00Z"),
        ),
        // Crossing the UTC day boundary: 01:00 at +05:30 is 19:30 UTC the day before.
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "utcOffset": "+05:30"}),
            "2026-03-02T18:00:00Z",
            "OpensSoon",
            Some("2026-03-02T19:30:00Z"),
        ),
        // "Opens within 4 h" includes exactly 4 h.
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "utcOffset": "+05:30"}),
            "2026-03-02T15:30:00Z",
            "OpensSoon",
            Some("2026-03-02T19:30:00Z"),
        ),
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "utcOffset": "+05:30"}),
            "2026-03-02T15:29:59Z",
            "Closed",
            Some("2026-03-02T19:30:00Z"),
        ),
        // The API sample's Friday 18:00 −05:00 is 2026-04-03T23:00Z (SEMANTICS §11 erratum).
        (
            json!({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Friday"}}, "durationHours": 4, "startTime": "18:00", "utcOffset": "-05:00"}),
            "2026-03-30T00:00:00Z",
            "Closed",
            Some("2026-04-03T23:00:00Z"),
        ),
        // Every 2 weeks, anchored at startDate's week.
        (
            json!({"schedule": {"weekly": {"intervalWeeks": 2, "dayOfWeek": "Monday"}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-03-02"}),
            "2026-03-03T00:00:00Z",
            "Closed",
            Some("2026-03-16T00:00:00Z"),
        ),
        // Day 31: April has none, the next is May 31.
        (
            json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 31}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-03-02"}),
            "2026-04-01T00:00:00Z",
            "Closed",
            Some("2026-05-31T00:00:00Z"),
        ),
        // Day 29 of February: leap 2028 has it.
        (
            json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 29}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-03-02"}),
            "2028-02-01T00:00:00Z",
            "Closed",
            Some("2028-02-29T00:00:00Z"),
        ),
        (
            json!({"schedule": {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": 29}}, "durationHours": 4, "startTime": "00:00", "startDate": "2026-03-02"}),
            "2027-02-01T00:00:00Z",
            "Closed",
            Some("2027-03-29T00:00:00Z"),
        ),
        // Last Monday every 2 months from March: March 30, then May 25.
        (
            json!({"schedule": {"relativeMonthly": {"intervalMonths": 2, "dayOfWeek": "Monday", "weekIndex": "Last"}}, "durationHours": 8, "startTime": "00:00", "startDate": "2026-03-02"}),
            "2026-03-31T00:00:00Z",
            "Closed",
            Some("2026-05-25T00:00:00Z"),
        ),
        // A blackout across the year boundary (inclusive local dates).
        (
            json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "01:00", "utcOffset": "+02:00",
                "notAllowedDates": [{"start": "2026-12-23", "end": "2027-01-03"}]}),
            "2026-12-22T22:30:00Z",
            "Closed",
            Some("2027-01-03T23:00:00Z"),
        ),
    ];
    let fleet: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(i, (w, ..))| {
            json!({"name": format!("m{i:02}"), "region": "eastus", "group": "ga", "kubernetesVersion": "1.32.4",
            "aksManagedAutoUpgradeSchedule": w})
        })
        .collect();
    let s = scenario(&scenario_json(fleet, Value::Null, json!({}), json!({})));
    let mut world = World::new(&s.fleet, &s.releases, &s.models, s.settings.world, SeedTree::new(1, 0));
    let spec = UpgradeSpec {
        kind: UpgradeType::ControlPlaneOnly,
        kubernetes_version: Some(k8s("1.33.2")),
        images: ImageSelection::Latest,
        security_patch: false,
        auto_upgrade: false,
        lts_only: false,
    };
    let run = world.add_run("r", spec, None);
    for (i, (window, instant, class, next)) in cases.iter().enumerate() {
        let member = MemberId(i as u32);
        let t = at(instant);
        assert_eq!(format!("{:?}", world.window_class(run, member, t)), *class, "{window} at {instant}");
        let closed = world.window_closed(run, member, t);
        match next {
            None => assert!(closed.is_none(), "{window} at {instant}: open"),
            Some(next) => {
                let (note, opening) = closed.unwrap();
                assert_eq!(opening, Some(at(next)), "{window} at {instant}");
                assert!(note.text().contains(next), "{}", note.text());
            }
        }
    }
}

#[test]
fn cached_window_answers_equal_the_calendars_at_every_instant() {
    use fleetsim::fleet::window::{OPENS_SOON_LOOKAHEAD, class_of};
    let windows = [
        json!({"schedule": {"daily": {"intervalDays": 2}}, "durationHours": 5, "startTime": "23:30", "utcOffset": "-03:00"}),
        json!({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}}, "durationHours": 24, "startTime": "00:00"}),
        json!({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 24, "startTime": "06:00",
               "notAllowedDates": [{"start": "2026-03-10", "end": "2026-03-12"}]}),
        json!({"schedule": {"relativeMonthly": {"intervalMonths": 1, "dayOfWeek": "Tuesday", "weekIndex": "Second"}}, "durationHours": 12, "startTime": "12:00", "utcOffset": "+09:00"}),
    ];
    let fleet: Vec<Value> = windows
        .iter()
        .enumerate()
        .map(|(i, w)| json!({"name": format!("m{i}"), "region": "eastus", "kubernetesVersion": "1.32.4", "aksManagedNodeOSUpgradeSchedule": w}))
        .collect();
    let s = scenario(&scenario_json(fleet, Value::Null, json!({}), json!({})));
    let mut world = World::new(&s.fleet, &s.releases, &s.models, s.settings.world, SeedTree::new(1, 0));
    let spec = UpgradeSpec {
        kind: UpgradeType::NodeImageOnly,
        kubernetes_version: None,
        images: ImageSelection::Latest,
        security_patch: false,
        auto_upgrade: false,
        lts_only: false,
    };
    let run = world.add_run("r", spec, None);
    let mut t = s.start;
    let mut step = 0i64;
    while t < s.start + Duration::days(60) {
        for (i, m) in s.fleet.iter().enumerate() {
            let window = m.node_os_window.as_deref();
            let member = MemberId(i as u32);
            assert_eq!(world.window_class(run, member, t), class_of(window, t, OPENS_SOON_LOOKAHEAD), "m{i} at {t}");
            let (class, until) = world.window_class_until(run, member, t);
            assert!(until > t);
            let just_before = Time(until.0 - 1);
            assert_eq!(
                class_of(window, just_before, OPENS_SOON_LOOKAHEAD),
                class,
                "m{i}: the class holds until {until}"
            );
            let expected = window.unwrap().next_opening(t).filter(|&o| o > t || !window.unwrap().is_open(t));
            let got = world.window_closed(run, member, t).map(|(_, next)| next);
            if window.unwrap().is_open(t) {
                assert_eq!(got, None);
            } else {
                assert_eq!(got, Some(expected), "m{i} at {t}");
            }
        }
        step = (step * 7919 + 3571) % 20_000;
        t = t + Duration(step);
    }
}

// ----- validation: typed sections, JSON Pointers, no panics ------------------------------------

#[test]
fn invalid_world_sections_name_their_fields() {
    let generator = |patch: Value| {
        let mut g = json!({"count": 5, "regions": {"eastus": 1}, "kubernetesVersions": {"1.34.1": 1}});
        merge(&mut g, patch);
        json!({"memberGenerators": [g]})
    };
    let cases: Vec<(Value, &str)> = vec![
        (generator(json!({"count": 0})), "/memberGenerators/0/count"),
        (generator(json!({"regions": {"eastus": -1}})), "/memberGenerators/0/regions/eastus"),
        (generator(json!({"regions": {"East US": 1}})), "/memberGenerators/0/regions/East US"),
        (generator(json!({"namePattern": "fixed"})), "/memberGenerators/0/namePattern"),
        (generator(json!({"kubernetesVersions": {"1.99": 1}})), "/memberGenerators/0/kubernetesVersions/1.99"),
        (generator(json!({"kubernetesVersions": {"latest": 1}})), "/memberGenerators/0/kubernetesVersions/latest"),
        (
            generator(json!({"aksManagedAutoUpgradeSchedule": [{"template": "lunch"}]})),
            "/memberGenerators/0/aksManagedAutoUpgradeSchedule/0/template",
        ),
        (
            generator(json!({"aksManagedAutoUpgradeSchedule": [{"template": "localNight", "durationHours": 2}]})),
            "/memberGenerators/0/aksManagedAutoUpgradeSchedule/0/durationHours",
        ),
        (
            generator(json!({"aksManagedAutoUpgradeSchedule": [{"template": "weekend", "startTime": {"25:00": 1}}]})),
            "/memberGenerators/0/aksManagedAutoUpgradeSchedule/0/startTime/25:00",
        ),
        (
            generator(json!({"aksManagedAutoUpgradeSchedule": [{"template": "localNight", "dayOfWeek": "Monday"}]})),
            "/memberGenerators/0/aksManagedAutoUpgradeSchedule/0/dayOfWeek",
        ),
        (
            generator(
                json!({"aksManagedNodeOSUpgradeSchedule": [{"maintenanceWindow": {"schedule": {}, "durationHours": 4, "startTime": "00:00"}}]}),
            ),
            "/memberGenerators/0/aksManagedNodeOSUpgradeSchedule/0/maintenanceWindow/schedule",
        ),
        (generator(json!({"nodePools": {"osSku": {"Windows1": 1}}})), "/memberGenerators/0/nodePools/osSku/Windows1"),
        (
            generator(json!({"nodePools": {"nodeCount": {"min": 0, "max": 5}}})),
            "/memberGenerators/0/nodePools/nodeCount/min",
        ),
        (generator(json!({"nodePools": {"maxSurge": "200%"}})), "/memberGenerators/0/nodePools/maxSurge"),
        (generator(json!({"stopped": 1.5})), "/memberGenerators/0/stopped"),
        (generator(json!({"nodeImageAge": []})), "/memberGenerators/0/nodeImageAge"),
        (generator(json!({"durations": {"controlPlane": "soon"}})), "/memberGenerators/0/durations/controlPlane"),
        (
            json!({"releases": {"kubernetes": [{"version": "1.33.2", "released": "+1d", "available": "+1d"}]}}),
            "/releases/kubernetes/0/released",
        ),
        (
            json!({"releases": {"kubernetes": [{"version": "1.33.2", "released": "+1d", "pause": {"beforeRing": "late", "duration": "2d"}}]}}),
            "/releases/kubernetes/0/pause/beforeRing",
        ),
        (
            json!({"releases": {"kubernetes": [{"version": "1.33.2", "released": "tomorrow"}]}}),
            "/releases/kubernetes/0/released",
        ),
        (
            json!({"releases": {"rollout": {"rings": [{"name": "a", "regions": ["eastus"], "offset": "0s"}, {"name": "b", "regions": ["eastus"], "offset": "1d"}]}}}),
            "/releases/rollout/rings/1/regions/0",
        ),
        (json!({"releases": {"rollout": {"pause": {"probability": 2}}}}), "/releases/rollout/pause/probability"),
        (
            json!({"releases": {"nodeImageSeries": [{"family": UBUNTU, "first": "-7d", "every": "1h", "count": 3}]}}),
            "/releases/nodeImageSeries/0/every",
        ),
        (
            json!({"releases": {"nodeImageSeries": [{"family": "AKSWindows-nt4", "first": "-7d", "count": 3}]}}),
            "/releases/nodeImageSeries/0/family",
        ),
        (
            json!({"releases": {"nodeImages": [{"version": image("202602.01.0")}, {"version": image("202602.01.0")}]}}),
            "/releases",
        ),
        (
            json!({"members": [{"name": "a1", "region": "eastus", "kubernetesVersion": "1.32.4", "durations": {"linuxNodeBatch": {"median": "10m"}}}]}),
            "/members/0/durations/linuxNodeBatch/p90",
        ),
    ];
    for (extra, path) in cases {
        let mut doc = json!({"name": "bad", "start": START, "members": [{"name": "base", "region": "eastus", "kubernetesVersion": "1.32.4"}]});
        merge(&mut doc, extra.clone());
        let problems = match parse_str(&doc.to_string(), None) {
            Ok(_) => panic!("{extra} should be invalid"),
            Err(p) => p,
        };
        assert!(problems.iter().any(|p| p.path == path), "{extra}: expected a problem at {path}, got {problems:?}");
    }
    // Structure errors are caught by the typed DTOs, with the pointer of the field.
    let p = parse_str(
        &json!({"name": "bad", "start": START, "memberGenerators": [{"count": 5, "bogus": 1}]}).to_string(),
        None,
    )
    .unwrap_err();
    assert_eq!(p[0].path, "/memberGenerators/0/bogus");
    assert!(p[0].message.contains("unknown field"), "{}", p[0].message);
}

#[test]
fn the_schema_documents_generators_and_releases() {
    let schema = serde_json::to_string(&schemars::schema_for!(fleetsim::scenario::ScenarioDto)).unwrap();
    for field in [
        "namePattern",
        "nodeImageAge",
        "aksManagedNodeOSUpgradeSchedule",
        "localNight",
        "nodeImageSeries",
        "beforeRing",
        "ltsEligible",
        "jitter",
        "durations",
    ] {
        assert!(schema.contains(field), "{field} missing from the schema");
    }
}
