//! Auto-upgrade profiles (SEMANTICS §9): channels, generated runs and their timing.

use fleetsim::orchestrator::UpdateState::*;
use serde_json::{Value, json};

use crate::support::*;

/// A fleet of `n` members on `version` in two regions, and a release calendar. Kubernetes releases are
/// `(version, first region time, late region time)` offsets from the start.
fn profile_scenario(fleet: Vec<Value>, kubernetes: &[(&str, &str, &str)], images: Value, profiles: Value) -> String {
    let releases: Vec<Value> = kubernetes
        .iter()
        .map(|(v, early, late)| json!({"version": v, "available": {"default": early, "regions": {"australiaeast": late}}}))
        .collect();
    serde_json::to_string(&json!({
        "name": "profiles",
        "seed": 5,
        "start": START,
        "settings": {"horizon": "120d"},
        "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
        "members": fleet,
        "releases": {"kubernetes": releases, "nodeImages": images},
        "autoUpgradeProfiles": profiles,
    }))
    .unwrap()
}

fn fleet(n: usize, version: &str) -> Vec<Value> {
    (1..=n)
        .map(|i| {
            let region = if i % 2 == 0 { "australiaeast" } else { "westeurope" };
            json!({"name": format!("m{i:02}"), "region": region, "kubernetesVersion": version,
                "nodePools": [{"name": "linux", "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202602.01.0"},
                              {"name": "win", "osSku": "Windows2022", "nodeImageVersion": "AKSWindows-2022-containerd-20348.3000.260210"}]})
        })
        .collect()
}

const BEFORE: &str = "2026-01-01T00:00:00Z";

fn names(result: &fleetsim::simulation::SimResult) -> Vec<String> {
    result.runs.iter().map(|r| r.name.clone()).collect()
}

#[test]
fn stable_follows_n_minus_one_and_moves_when_a_new_minor_ships() {
    let releases = [
        ("1.32.5", BEFORE, BEFORE),
        ("1.33.1", BEFORE, BEFORE),
        ("1.32.6", "+2d", "+4d"),   // a new patch of N−1: Stable moves
        ("1.33.2", "+5d", "+5d"),   // a patch of N: Stable does not move, Rapid does
        ("1.34.1", "+10d", "+10d"), // a new minor: Stable moves to 1.33.2, Rapid to 1.34.1
    ];
    let profiles = json!([{"name": "stable", "channel": "Stable"}, {"name": "rapid", "channel": "Rapid"}]);
    let (s, r) = run(&profile_scenario(fleet(2, "1.32.5"), &releases, json!([]), profiles));
    assert_eq!(names(&r), ["stable-1-32-6", "rapid-1-33-2", "stable-1-33-2", "rapid-1-34-1"]);
    // Generated when the release first reaches a region, and started at once.
    let stable = run_named(&r, "stable-1-32-6");
    assert_eq!(stable.start_time.unwrap().to_rfc3339(), "2026-03-04T00:00:00Z");
    // The Australian member waits for the release to reach its region, noticed at a poll.
    let m02 = &stable.stages[0].groups[0].members.iter().find(|m| s.fleet[m.id.index()].name == "m02").unwrap();
    assert_eq!(m02.start_time.unwrap().to_rfc3339(), "2026-03-06T00:00:00Z");
    assert_eq!(
        r.profiles[0].targets.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>(),
        ["1.32.5", "1.32.6", "1.33.2"]
    );
    // Runs are Full with the profile's node image selection, one member at a time without a strategy.
    assert_eq!(r.specs[0].upgrade.kind, fleetsim::world::UpgradeType::Full);
    assert_eq!(r.specs[0].auto_upgrade_profile.as_deref(), Some("stable"));
    // Rapid moved everyone to 1.33.2 on day 5, so Stable's later 1.33.2 run finds them at target.
    assert_eq!(member_state(&s, run_named(&r, "rapid-1-33-2"), "m01"), Completed);
    assert_eq!(member_state(&s, run_named(&r, "stable-1-33-2"), "m01"), Skipped);
    assert_eq!(member_state(&s, run_named(&r, "rapid-1-34-1"), "m01"), Completed);
}

#[test]
fn members_more_than_one_minor_behind_are_not_moved_and_are_reported() {
    let releases =
        [("1.31.5", BEFORE, BEFORE), ("1.32.5", BEFORE, BEFORE), ("1.33.1", BEFORE, BEFORE), ("1.33.2", "+1d", "+1d")];
    let mut members = fleet(2, "1.32.5");
    members[1]["kubernetesVersion"] = json!("1.31.5");
    let (s, r) = run(&profile_scenario(members, &releases, json!([]), json!([{"name": "rapid", "channel": "Rapid"}])));
    let generated = &r.runs[0];
    assert_eq!(member_state(&s, generated, "m01"), Completed);
    assert_eq!(member_state(&s, generated, "m02"), Skipped);
    let note = generated.stages[0].groups[0].members[1].note.message.as_deref().unwrap();
    assert!(note.contains("more than one minor version (1.31.5 to 1.33.2)"), "{note}");
    assert_eq!(generated.state, Completed);
}

#[test]
fn no_run_is_generated_retroactively_or_by_a_disabled_profile() {
    let releases = [("1.32.5", BEFORE, BEFORE), ("1.33.1", BEFORE, BEFORE), ("1.32.6", BEFORE, "+3d")];
    let profiles = json!([{"name": "stable", "channel": "Stable"}]);
    let (_, r) = run(&profile_scenario(fleet(2, "1.32.5"), &releases, json!([]), profiles));
    assert!(r.runs.is_empty(), "1.32.6 reached a region before the profile existed: {:?}", names(&r));
    let releases = [("1.32.5", BEFORE, BEFORE), ("1.33.1", BEFORE, BEFORE), ("1.32.6", "+1d", "+3d")];
    let disabled = json!([{"name": "stable", "channel": "Stable", "disabled": true}]);
    let (_, r) = run(&profile_scenario(fleet(2, "1.32.5"), &releases, json!([]), disabled));
    assert!(r.runs.is_empty());
}

#[test]
fn target_kubernetes_version_with_lts_fails_non_lts_members() {
    // Target 1.29 with the community at 1.33: a 1.29 patch keeps coming for LTS; non-LTS members fail
    // and fail the run (maxAllowedFailures 0 by default).
    let releases = [
        ("1.29.4", BEFORE, BEFORE),
        ("1.31.2", BEFORE, BEFORE),
        ("1.32.3", BEFORE, BEFORE),
        ("1.33.1", BEFORE, BEFORE),
        ("1.29.5", "+1d", "+1d"),
    ];
    let mut members = fleet(2, "1.29.4");
    members[0]["longTermSupport"] = json!(true);
    let lts = json!([{"name": "lts", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.29", "longTermSupport": true}]);
    let (s, r) = run(&profile_scenario(members.clone(), &releases, json!([]), lts));
    assert_eq!(names(&r), ["lts-1-29-5"]);
    let generated = &r.runs[0];
    assert_eq!(member_state(&s, generated, "m01"), Completed);
    assert_eq!(member_state(&s, generated, "m02"), Failed);
    assert_eq!(generated.stages[0].groups[0].members[1].note.code.as_deref(), Some("K8sVersionNotSupported"));
    assert_eq!(generated.state, Failed);
    // Without LTS the out-of-support minor generates nothing.
    let plain = json!([{"name": "plain", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.29"}]);
    let (_, r) = run(&profile_scenario(members, &releases, json!([]), plain));
    assert!(r.runs.is_empty());
}

#[test]
fn node_image_profile_makes_node_image_only_runs_and_security_patch_leaves_windows_alone() {
    let images = json!([
        {"version": "AKSUbuntu-2204gen2containerd-202602.01.0", "available": BEFORE},
        {"version": "AKSWindows-2022-containerd-20348.3000.260210", "available": BEFORE},
        {"version": "AKSUbuntu-2204gen2containerd-202603.05.0", "available": {"default": "+4d", "regions": {"australiaeast": "+6d"}}},
        {"version": "AKSWindows-2022-containerd-20348.3100.260311", "available": "+9d"}
    ]);
    let releases = [("1.32.5", BEFORE, BEFORE)];
    let profiles = json!([{"name": "images", "channel": "NodeImage"}, {"name": "patch", "channel": "SecurityPatch"}]);
    let (s, r) = run(&profile_scenario(fleet(2, "1.32.5"), &releases, images, profiles));
    assert_eq!(names(&r), ["images-202603-05-0", "patch-202603-05-0", "images-20348-3100-260311"]);
    assert_eq!(r.specs[0].upgrade.kind, fleetsim::world::UpgradeType::NodeImageOnly);
    // The SecurityPatch run overlaps the NodeImage run on the same members: AKS rejects concurrent
    // operations, so whichever starts second on a member fails with OperationNotAllowed.
    let patch = run_named(&r, "patch-202603-05-0");
    assert!(patch.stages[0].groups[0].members.iter().any(|m| m.note.code.as_deref() == Some("OperationNotAllowed")));
    // Windows pools only change through the NodeImage channel.
    let windows_changes: Vec<_> = r.version_changes.iter().filter(|c| c.pool_name(&s.fleet) == Some("win")).collect();
    assert!(windows_changes.iter().all(|c| r.runs[c.run as usize].name.starts_with("images-")), "{windows_changes:?}");
    assert_eq!(windows_changes.len(), 2);
    let _ = s;
}

#[test]
fn security_patch_alone_skips_windows_pools() {
    let images = json!([
        {"version": "AKSUbuntu-2204gen2containerd-202602.01.0", "available": BEFORE},
        {"version": "AKSUbuntu-2204gen2containerd-202603.05.0", "available": "+4d"},
        {"version": "AKSWindows-2022-containerd-20348.3100.260311", "available": "+2d"}
    ]);
    let profiles = json!([{"name": "patch", "channel": "SecurityPatch"}]);
    let (_s, r) = run(&profile_scenario(fleet(2, "1.32.5"), &[("1.32.5", BEFORE, BEFORE)], images, profiles));
    assert_eq!(names(&r), ["patch-202603-05-0"], "a Windows release does not trigger SecurityPatch");
    assert!(r.version_changes.iter().all(|c| c.pool_name(&_s.fleet) == Some("linux")));
    assert_eq!(r.version_changes.len(), 2);
    assert_eq!(r.runs[0].state, Completed);
}

#[test]
fn profile_outputs_are_written() {
    let releases = [("1.32.5", BEFORE, BEFORE), ("1.33.1", BEFORE, BEFORE), ("1.32.6", "+2d", "+4d")];
    let (s, r) = run(&profile_scenario(
        fleet(2, "1.32.5"),
        &releases,
        json!([]),
        json!([{"name": "stable", "channel": "Stable"}]),
    ));
    let files = fleetsim::report::render(&fleetsim::report::ReportContext::new(&s, &r)).unwrap();
    let file =
        |name: &str| String::from_utf8(files.iter().find(|(p, _)| p.ends_with(name)).unwrap().1.clone()).unwrap();
    assert!(file("runs.csv").contains("stable-1-32-6,stable,Full,1.32.6,"));
    assert!(file("versions.csv").contains(",m01,kubernetes,1.32.5,1.32.6,stable-1-32-6"));
    let metrics = file("fleet-metrics.csv");
    assert!(metrics.starts_with("date,members,supported_share,image_older_than_30d,mean_image_age_days,stable_members_behind,stable_mean_days_behind,stable_max_days_behind\n"));
    assert!(metrics.contains("\n2026-03-05,2,1,"), "{metrics}");
    assert!(file("release-latency.csv").contains("1.32.6,kubernetes,2026-03-04T00:00:00Z,2,"));
    let summary: Value = serde_json::from_str(&file("summary.json")).unwrap();
    assert_eq!(summary["profiles"][0]["runsGenerated"], 1);
    assert_eq!(summary["profiles"][0]["finalTarget"], "1.32.6");
}

#[test]
fn the_release_stream_follows_the_documented_cadences() {
    let doc = json!({
        "name": "stream", "seed": 3, "start": "2026-03-02T00:00:00Z", "settings": {"horizon": "365d"},
        "members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.33.5",
            "nodePools": [{"name": "linux", "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202602.23.0"},
                          {"name": "win", "osSku": "Windows2022", "nodeImageVersion": "AKSWindows-2022-containerd-20348.1878.260222"}]}],
        "releases": {"stream": {"kubernetes": {"current": ["1.32.9", "1.33.5", "1.34.2"]}, "linuxImages": {}, "windowsImages": {}}}
    });
    let s = scenario(&doc.to_string());
    let first = |t: Option<fleetsim::engine::Time>| t.unwrap().to_datetime();
    let linux: Vec<_> = s.releases.images["AKSUbuntu-2204gen2containerd"].iter().skip(1).map(|r| r.published).collect();
    let windows: Vec<_> = s.releases.images["AKSWindows-2022-containerd"].iter().skip(1).map(|r| r.published).collect();
    use chrono::Datelike;
    // No release inside the holiday freeze (25 October – 5 January).
    for t in linux.iter().chain(&windows) {
        let d = t.to_datetime();
        let frozen =
            (d.month() == 10 && d.day() >= 25) || d.month() == 11 || d.month() == 12 || (d.month() == 1 && d.day() < 6);
        assert!(!frozen, "{t} is inside the freeze");
    }
    // Linux builds: median gap about 11 days.
    let mut gaps: Vec<i64> = linux.windows(2).map(|w| (w[1] - w[0]).as_seconds() / 86_400).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    assert!((8..=14).contains(&median), "median Linux gap {median} days: {gaps:?}");
    // Windows: monthly, on the 10th–17th (or the freeze's end).
    assert!((8..=11).contains(&windows.len()), "{} Windows releases", windows.len());
    for t in &windows {
        let d = t.to_datetime();
        assert!((10..=17).contains(&d.day()) || (d.month() == 1 && d.day() == 6), "{t}");
    }
    // Kubernetes: new minors about every four months, patches about monthly per minor.
    let minors: std::collections::BTreeSet<_> =
        s.releases.kubernetes.iter().map(|r| r.version.minor_version()).collect();
    assert!(minors.len() >= 5 && minors.len() <= 7, "{minors:?}");
    let patches_133 = s
        .releases
        .kubernetes
        .iter()
        .filter(|r| r.version.minor == 33 && first(r.availability.first()).year() == 2026)
        .count();
    assert!(
        (6..=14).contains(&patches_133),
        "{patches_133} patches of 1.33 in a year (it goes LTS-only along the way)"
    );
    // Each stream release reaches regions through the rollout model.
    assert!(s.releases.kubernetes.iter().filter(|r| r.version.minor >= 35).all(|r| r.rollout.is_some()));
}

#[test]
fn the_one_year_example_generates_runs_from_both_profiles() {
    let s = fleetsim::scenario::load_file(&root().join("scenarios/autoupgrade-year.json"), None).unwrap();
    let r = fleetsim::simulation::simulate(&s, fleetsim::simulation::SimOptions::default());
    let by_profile =
        |name: &str| r.specs.iter().filter(|spec| spec.auto_upgrade_profile.as_deref() == Some(name)).count();
    assert!(by_profile("stable") >= 8, "{}", by_profile("stable"));
    assert!(by_profile("node-image") >= 25, "{}", by_profile("node-image"));
    assert!(
        r.specs
            .iter()
            .filter(|spec| spec.auto_upgrade_profile.as_deref() == Some("node-image"))
            .all(|spec| spec.upgrade.kind == fleetsim::world::UpgradeType::NodeImageOnly)
    );
    // Overlapping runs of the two profiles collide on members (AKS rejects concurrent operations).
    let conflicts = r
        .runs
        .iter()
        .flat_map(|run| run.stages.iter().flat_map(|st| st.groups.iter().flat_map(|g| g.members.iter())))
        .filter(|m| m.note.code.as_deref() == Some("OperationNotAllowed"))
        .count();
    assert!(conflicts > 0);
    assert!(r.version_changes.len() > 5_000, "{}", r.version_changes.len());
}
