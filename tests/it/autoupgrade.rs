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
    assert_eq!(m02.start_time().unwrap().to_rfc3339(), "2026-03-06T00:00:00Z");
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

/// SEMANTICS §9: a release is out when it first reaches any region, not only one of the fleet's.
/// Spread by the rollout model (no pause, ring 0 within two days of the release), a release made
/// three days before the start had reached the first ring's regions before it, so it generates no
/// run for a fleet in a later region; one made a day after the start generates its run when the
/// first ring has it, and the member waits `Pending` until its own region has it.
#[test]
fn a_rolled_out_release_is_out_when_it_reaches_any_region_not_only_the_fleets() {
    let scenario = |released: &str| {
        serde_json::to_string(&json!({
            "name": "rollout-trigger", "seed": 5, "start": START, "settings": {"horizon": "60d"},
            "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
            "members": [{"name": "m1", "region": "westeurope", "kubernetesVersion": "1.33.1",
                "nodePools": [{"name": "linux", "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202602.01.0"}]}],
            "releases": {"kubernetes": [{"version": "1.32.5", "available": BEFORE}, {"version": "1.33.1", "available": BEFORE},
                {"version": "1.33.2", "released": released}], "rollout": {"pause": {"probability": 0}}},
            "autoUpgradeProfiles": [{"name": "rapid", "channel": "Rapid"}],
        }))
        .unwrap()
    };
    let (_, r) = run(&scenario("-3d"));
    assert!(r.runs.is_empty(), "1.33.2 reached the first ring before the start: {:?}", names(&r));

    let (s, r) = run(&scenario("+1d"));
    assert_eq!(names(&r), ["rapid-1-33-2"]);
    let release = s.releases.kubernetes.iter().find(|k| k.version.to_string() == "1.33.2").unwrap();
    let first = release.availability.first().unwrap();
    let in_westeurope = release.availability.at("westeurope").unwrap();
    assert!(first < in_westeurope, "a ring before westeurope's has it first: {first} vs {in_westeurope}");
    let rapid = run_named(&r, "rapid-1-33-2");
    assert_eq!(rapid.start_time, Some(first));
    assert!(rapid.stages[0].groups[0].members[0].start_time().is_some_and(|t| t >= in_westeurope));
    assert_eq!(rapid.state, Completed);
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
    assert_eq!(
        names(&r),
        [
            "images-ubuntu2204gen2containerd-202603-05-0",
            "patch-ubuntu2204gen2containerd-202603-05-0",
            "images-windows2022containerd-20348-3100-260311"
        ]
    );
    assert_eq!(r.specs[0].upgrade.kind, fleetsim::world::UpgradeType::NodeImageOnly);
    // The SecurityPatch run overlaps the NodeImage run on the same members: AKS rejects concurrent
    // operations, so whichever starts second on a member fails with OperationNotAllowed.
    let patch = run_named(&r, "patch-ubuntu2204gen2containerd-202603-05-0");
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
    assert_eq!(
        names(&r),
        ["patch-ubuntu2204gen2containerd-202603-05-0"],
        "a Windows release does not trigger SecurityPatch"
    );
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

/// A member's image age is its oldest pool's: pools on images published 40 and 10 days before the
/// start make a member 40 days old, over the 30 days of `image_older_than_30d`, whichever pool
/// comes first; once a NodeImage run has moved every pool to the image released an hour after the
/// start, every member is as old as that image.
#[test]
fn fleet_metrics_age_a_member_by_its_oldest_pool() {
    let old = "AKSUbuntu-2204gen2containerd-202601.20.0";
    let new = "AKSUbuntu-2204gen2containerd-202602.19.0";
    let images = json!([{"version": old, "published": "2026-01-21T00:00:00Z"},
                        {"version": new, "published": "2026-02-20T00:00:00Z"},
                        {"version": "AKSUbuntu-2204gen2containerd-202603.02.0", "published": "2026-03-02T01:00:00Z", "available": "+1h"},
                        {"version": "AKSUbuntu-2204gen2containerd-202603.04.0", "published": "2026-03-04T00:00:00Z", "available": "+2d"}]);
    let members = vec![
        member("m01", "westeurope", "1.33.1", &[("a", "Ubuntu", new), ("b", "Ubuntu", old)]),
        member("m02", "westeurope", "1.33.1", &[("a", "Ubuntu", old), ("b", "Ubuntu", new)]),
        member("m03", "westeurope", "1.33.1", &[("a", "Ubuntu", new), ("b", "Ubuntu", new)]),
    ];
    let releases = json!({"kubernetes": [{"version": "1.33.1", "available": BEFORE}], "nodeImages": images});
    let (s, r) = run(&review_scenario("ages", members, releases, json!([{"name": "images", "channel": "NodeImage"}])));
    let files = fleetsim::report::render(&fleetsim::report::ReportContext::new(&s, &r)).unwrap();
    let metrics = String::from_utf8(files.iter().find(|(p, _)| p.ends_with("fleet-metrics.csv")).unwrap().1.clone());
    let metrics = metrics.unwrap();
    // Ages 40, 40 and 10 days: a mean of 30, two members past 30 days.
    assert!(metrics.contains("\n2026-03-02,3,1,2,30\n"), "{metrics}");
    // A day later every pool has the image published at 01:00: 23 hours old.
    assert!(metrics.contains("\n2026-03-03,3,1,0,0.958\n"), "{metrics}");
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
    // The counts README states: they follow from the release stream alone (one NodeImage run per
    // image release of each family).
    assert_eq!(by_profile("stable"), 12);
    assert_eq!(by_profile("node-image"), 58);
    let family_runs =
        |tag: &str| r.specs.iter().filter(|spec| spec.name.starts_with(&format!("node-image-{tag}"))).count();
    assert_eq!([family_runs("ubuntu"), family_runs("azurelinux"), family_runs("windows")], [24, 23, 11]);
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

// The cases of the rule-by-rule review of auto-upgrade and node images against the docs
// (SEMANTICS §5.5, §9), each with its outcome worked out by hand.

const UBUNTU: &str = "AKSUbuntu-2204gen2containerd";
const AZURE_LINUX: &str = "AKSAzureLinux-V3gen2";

/// A member in `region` on `version` with one pool per `(name, osSku, image)`.
fn member(name: &str, region: &str, version: &str, pools: &[(&str, &str, &str)]) -> Value {
    let pools: Vec<Value> = pools
        .iter()
        .map(|(pool, os, image)| json!({"name": pool, "osSku": os, "nodeCount": 1, "nodeImageVersion": image}))
        .collect();
    json!({"name": name, "region": region, "kubernetesVersion": version, "nodePools": pools})
}

/// A one-hour-per-member, never-failing scenario starting on Monday 2026-03-02.
fn review_scenario(name: &str, members: Vec<Value>, releases: Value, profiles: Value) -> String {
    serde_json::to_string(&json!({
        "name": name, "seed": 1, "start": START, "settings": {"horizon": "10d"},
        "releases": releases, "members": members,
        "models": {"failure": {"probability": 0}, "duration": {"member": {"fixed": "1h"}}},
        "autoUpgradeProfiles": profiles,
    }))
    .unwrap()
}

fn member_note<'r>(
    s: &fleetsim::scenario::Scenario,
    run: &'r fleetsim::orchestrator::UpdateRun,
    name: &str,
) -> &'r str {
    run.stages
        .iter()
        .flat_map(|st| st.groups.iter().flat_map(|g| g.members.iter()))
        .find(|m| s.fleet[m.id.index()].name == name)
        .and_then(|m| m.note.message.as_deref())
        .unwrap_or("")
}

/// Problems of an invalid scenario as `pointer: message` lines.
fn problem_lines(json: &str) -> Vec<String> {
    problems(json).iter().map(|p| p.to_string()).collect()
}

/// Issue case 1: the image reaches australiaeast 4 days 30 minutes after westeurope. The run targets
/// the released image itself, so `a-aus` waits `Pending` (NodeImageVersionNotAvailable) instead of
/// being Skipped as "at target" under Latest (the newest image in its region is the one it has).
#[test]
fn node_image_runs_target_the_released_image_and_late_regions_wait_for_it() {
    let doc = json!({"name": "nodeimage-regional", "seed": 1, "start": "2026-03-02T00:00:00Z", "settings": {"horizon": "10d"},
        "releases": {"kubernetes": [{"version": "1.33.5", "available": "-60d"}, {"version": "1.34.2", "available": "-30d"}],
            "nodeImages": [{"version": "AKSUbuntu-2204gen2containerd-202602.10.0", "available": "-20d"},
                {"version": "AKSUbuntu-2204gen2containerd-202603.01.0", "available": {"default": "+1d", "regions": {"australiaeast": "+120h30m"}}}]},
        "members": [
            {"name": "a-aus", "region": "australiaeast", "kubernetesVersion": "1.33.5", "nodePools": [{"name": "system", "osSku": "Ubuntu", "nodeCount": 1, "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202602.10.0"}]},
            {"name": "b-weu", "region": "westeurope", "kubernetesVersion": "1.33.5", "nodePools": [{"name": "system", "osSku": "Ubuntu", "nodeCount": 1, "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202602.10.0"}]}],
        "models": {"failure": {"probability": 0}, "duration": {"member": {"fixed": "1h"}}},
        "autoUpgradeProfiles": [{"name": "node-image", "channel": "NodeImage"}]});
    let (s, r) = run(&doc.to_string());
    assert_eq!(names(&r), ["node-image-ubuntu2204gen2containerd-202603-01-0"]);
    let spec = &r.specs[0].upgrade;
    assert_eq!(spec.images.api_name(), "Custom");
    // 03-03 00:00 is +24:00; the image reaches australiaeast at 03-07 00:30 (+120:30), noticed at
    // the 01:00 poll (+121:00); about 97 hours pending on availability.
    assert_eq!(
        member_trace(&s, &r, "node-image-ubuntu2204gen2containerd-202603-01-0"),
        "+24:00 member a-aus NotStarted->Pending\n\
         +24:00 member b-weu NotStarted->Running\n\
         +25:00 member b-weu Running->Completed\n\
         +121:00 member a-aus Pending->Running\n\
         +122:00 member a-aus Running->Completed\n"
    );
    let generated = &r.runs[0];
    let pending = generated.stages[0].groups[0].members.iter().find(|m| s.fleet[m.id.index()].name == "a-aus").unwrap();
    assert_eq!(pending.state, Completed);
    assert_eq!(generated.state, Completed);
    assert_eq!(generated.completed_time.unwrap().to_rfc3339(), "2026-03-07T02:00:00Z");
    // 03-03 00:00 to 03-07 01:00: 97 member-hours pending on availability.
    assert_eq!(generated.stats.pending_availability_seconds, 97 * 3600);
    let changes: Vec<String> = r
        .version_changes
        .iter()
        .map(|c| format!("{} {} {}", c.time.to_rfc3339(), s.fleet[c.member.index()].name, c.to))
        .collect();
    assert_eq!(
        changes,
        [
            "2026-03-03T01:00:00Z b-weu AKSUbuntu-2204gen2containerd-202603.01.0",
            "2026-03-07T02:00:00Z a-aus AKSUbuntu-2204gen2containerd-202603.01.0"
        ]
    );
}

/// While `a-aus` waits, its status says why: the image is not in its region yet.
#[test]
fn a_member_waiting_for_the_released_image_says_so() {
    let images = json!([
        {"version": format!("{UBUNTU}-202602.10.0"), "available": "-20d"},
        {"version": format!("{UBUNTU}-202603.01.0"), "available": {"default": "+1d", "regions": {"australiaeast": "+30d"}}}
    ]);
    let members =
        vec![member("a-aus", "australiaeast", "1.33.5", &[("system", "Ubuntu", &format!("{UBUNTU}-202602.10.0"))])];
    let releases = json!({"kubernetes": [{"version": "1.33.5", "available": "-60d"}], "nodeImages": images});
    let (_, r) =
        run(&review_scenario("waiting", members, releases, json!([{"name": "node-image", "channel": "NodeImage"}])));
    let m = &r.runs[0].stages[0].groups[0].members[0];
    assert_eq!(m.state, Pending);
    assert_eq!(m.note.code.as_deref(), Some("NodeImageVersionNotAvailable"));
    assert_eq!(
        m.note.message.as_deref(),
        Some(
            "target upgrade node image version \"AKSUbuntu-2204gen2containerd-202603.01.0\" for agent pool system is not available in region \"australiaeast\""
        )
    );
}

/// Issue case 1, second half: NodeImage and SecurityPatch profiles take no nodeImageSelection.
#[test]
fn image_channel_profiles_reject_a_node_image_selection() {
    let members = vec![member("m", "westeurope", "1.33.5", &[("system", "Ubuntu", &format!("{UBUNTU}-202602.10.0"))])];
    let profiles = json!([
        {"name": "images", "channel": "NodeImage", "nodeImageSelection": {"type": "Consistent"}},
        {"name": "patch", "channel": "SecurityPatch", "nodeImageSelection": {"type": "Latest"}},
        {"name": "stable", "channel": "Stable", "nodeImageSelection": {"type": "Consistent"}}
    ]);
    assert_eq!(
        problem_lines(&review_scenario("selection", members, json!({}), profiles)),
        [
            "/autoUpgradeProfiles/0/nodeImageSelection: nodeImageSelection is not allowed with channel NodeImage: its runs target the released node image itself",
            "/autoUpgradeProfiles/1/nodeImageSelection: nodeImageSelection is not allowed with channel SecurityPatch: its runs target the released node image itself"
        ]
    );
}

/// Issue case 2: the Ubuntu and AzureLinux builds share the version suffix 202603.01.0. Each family's
/// release is its own trigger and a run's identity is its whole target: two runs, both pools upgraded.
#[test]
fn each_image_familys_release_makes_its_own_run() {
    let images = json!([
        {"version": format!("{UBUNTU}-202602.10.0"), "available": "-20d"},
        {"version": format!("{AZURE_LINUX}-202602.10.0"), "available": "-20d"},
        {"version": format!("{UBUNTU}-202603.01.0"), "available": "+1d"},
        {"version": format!("{AZURE_LINUX}-202603.01.0"), "available": "+3d"}
    ]);
    let members = vec![member(
        "m",
        "westeurope",
        "1.33.5",
        &[
            ("ubuntu", "Ubuntu", &format!("{UBUNTU}-202602.10.0")),
            ("azl", "AzureLinux", &format!("{AZURE_LINUX}-202602.10.0")),
        ],
    )];
    let releases = json!({"kubernetes": [{"version": "1.33.5", "available": "-60d"}], "nodeImages": images});
    let (s, r) =
        run(&review_scenario("families", members, releases, json!([{"name": "node-image", "channel": "NodeImage"}])));
    assert_eq!(
        names(&r),
        ["node-image-ubuntu2204gen2containerd-202603-01-0", "node-image-azurelinuxv3gen2-202603-01-0"]
    );
    assert!(r.runs.iter().all(|run| run.state == Completed));
    let changes: Vec<String> = r
        .version_changes
        .iter()
        .map(|c| format!("{} {} {}->{}", c.time.to_rfc3339(), c.pool_name(&s.fleet).unwrap(), c.from, c.to))
        .collect();
    assert_eq!(
        changes,
        [
            "2026-03-03T01:00:00Z ubuntu AKSUbuntu-2204gen2containerd-202602.10.0->AKSUbuntu-2204gen2containerd-202603.01.0",
            "2026-03-05T01:00:00Z azl AKSAzureLinux-V3gen2-202602.10.0->AKSAzureLinux-V3gen2-202603.01.0"
        ]
    );
}

/// Issue case 3: LTS does not exempt from the one-minor rule of auto-upgrade.
#[test]
fn auto_upgrade_never_moves_an_lts_cluster_more_than_one_minor() {
    let image = format!("{UBUNTU}-202602.10.0");
    let mut lts = member("lts", "westeurope", "1.17.9", &[("system", "Ubuntu", &image)]);
    lts["longTermSupport"] = json!(true);
    let plain = member("plain", "westeurope", "1.17.9", &[("system", "Ubuntu", &image)]);
    let releases = json!({"kubernetes": [
        {"version": "1.17.9", "available": "-90d"}, {"version": "1.18.6", "available": "-60d"},
        {"version": "1.19.3", "available": "+1d"}]});
    let (s, r) =
        run(&review_scenario("lts-skip", vec![lts, plain], releases, json!([{"name": "rapid", "channel": "Rapid"}])));
    assert_eq!(names(&r), ["rapid-1-19-3"]);
    let generated = &r.runs[0];
    let message = "auto-upgrade does not move a cluster more than one minor version (1.17.9 to 1.19.3); upgrade it with a manual run first";
    for name in ["lts", "plain"] {
        assert_eq!(member_state(&s, generated, name), Skipped, "{name}");
        assert_eq!(member_note(&s, generated, name), message, "{name}");
    }
    assert_eq!(
        member_trace(&s, &r, "rapid-1-19-3"),
        "+24:00 member lts NotStarted->Skipped\n+24:00 member plain NotStarted->Skipped\n"
    );
    // Every member Skipped: the run is Skipped (SEMANTICS §5.8).
    assert_eq!(generated.state, Skipped);
    assert!(r.version_changes.is_empty());
}

/// Issue case 4: auto-upgrade of every channel only touches members inside the support window
/// N−2 … N, or LTS members on an LTS minor. Newest minor 1.34: a member on 1.30.4 is Skipped by a
/// NodeImage run, the same member with LTS gets the image. (One member at a time: `plain` is
/// examined when the slot frees at +25:00.)
#[test]
fn auto_upgrade_only_touches_members_inside_the_support_window() {
    let old = format!("{UBUNTU}-202602.10.0");
    let mut lts = member("lts", "westeurope", "1.30.4", &[("system", "Ubuntu", &old)]);
    lts["longTermSupport"] = json!(true);
    let members = vec![
        lts,
        member("plain", "westeurope", "1.30.4", &[("system", "Ubuntu", &old)]),
        member("supported", "westeurope", "1.32.7", &[("system", "Ubuntu", &old)]),
    ];
    let releases = json!({
        "kubernetes": [{"version": "1.30.4", "available": "-400d"}, {"version": "1.32.7", "available": "-90d"},
            {"version": "1.33.5", "available": "-60d"}, {"version": "1.34.2", "available": "-30d"}],
        "nodeImages": [{"version": old, "available": "-20d"}, {"version": format!("{UBUNTU}-202603.01.0"), "available": "+1d"}]});
    let (s, r) =
        run(&review_scenario("window", members, releases, json!([{"name": "node-image", "channel": "NodeImage"}])));
    let name = "node-image-ubuntu2204gen2containerd-202603-01-0";
    let generated = run_named(&r, name);
    assert_eq!(member_state(&s, generated, "plain"), Skipped);
    assert_eq!(
        member_note(&s, generated, "plain"),
        "Kubernetes 1.30.4 is outside the AKS support window (1.32 to 1.34) and auto-upgrade only touches clusters inside it; the cluster needs a manual upgrade"
    );
    assert_eq!(
        member_trace(&s, &r, name),
        "+24:00 member lts NotStarted->Running\n\
         +25:00 member lts Running->Completed\n\
         +25:00 member plain NotStarted->Skipped\n\
         +25:00 member supported NotStarted->Running\n\
         +26:00 member supported Running->Completed\n"
    );
}

/// The support window applies to Kubernetes channels too, before the one-minor rule.
#[test]
fn a_kubernetes_channel_skips_members_outside_the_support_window() {
    let image = format!("{UBUNTU}-202602.10.0");
    let members = vec![
        member("old", "westeurope", "1.30.4", &[("system", "Ubuntu", &image)]),
        member("ok", "westeurope", "1.33.5", &[("system", "Ubuntu", &image)]),
    ];
    let releases = json!({"kubernetes": [{"version": "1.30.4", "available": "-400d"}, {"version": "1.32.7", "available": "-90d"},
        {"version": "1.33.5", "available": "-60d"}, {"version": "1.34.2", "available": "-30d"}, {"version": "1.34.3", "available": "+1d"}]});
    let (s, r) = run(&review_scenario("window-k8s", members, releases, json!([{"name": "rapid", "channel": "Rapid"}])));
    let generated = run_named(&r, "rapid-1-34-3");
    assert_eq!(member_state(&s, generated, "old"), Skipped);
    assert!(
        member_note(&s, generated, "old")
            .starts_with("Kubernetes 1.30.4 is outside the AKS support window (1.32 to 1.34)")
    );
    assert_eq!(member_state(&s, generated, "ok"), Completed);
}

/// Issue case 5: a profile cannot target a minor AKS has not released by the scenario start.
#[test]
fn target_kubernetes_version_must_be_released_by_the_start() {
    let image = format!("{UBUNTU}-202602.10.0");
    let members = vec![member("m", "westeurope", "1.34.2", &[("system", "Ubuntu", &image)])];
    let releases = json!({"kubernetes": [{"version": "1.33.5", "available": "-60d"}, {"version": "1.34.2", "available": "-30d"},
        {"version": "1.36.0", "available": "+5d"}]});
    let profiles = json!([{"name": "next", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.36"}]);
    let doc = review_scenario("unreleased", members, releases, profiles);
    assert_eq!(
        problem_lines(&doc),
        [
            "/autoUpgradeProfiles/0/targetKubernetesVersion: Kubernetes 1.36 is not released by the scenario start (the newest released minor is 1.34); a profile can only target a version AKS has released"
        ]
    );
    // The command line says so with exit code 2.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unreleased.json");
    std::fs::write(&path, &doc).unwrap();
    let out = std::process::Command::new(binary()).arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/autoUpgradeProfiles/0/targetKubernetesVersion"));
}

/// Issue case 6a: `Consistent` finds no AzureLinux version released in both members' regions. The
/// members are Skipped with a message naming the family, not as "already at target" (a pool without
/// a target image is not at target, SEMANTICS §5.5a before b).
#[test]
fn consistent_without_a_common_version_names_the_family() {
    let images = json!([
        {"version": format!("{AZURE_LINUX}-202602.10.0"), "available": {"regions": {"westeurope": "-20d"}}},
        {"version": format!("{AZURE_LINUX}-202603.01.0"), "available": {"regions": {"westeurope": "-1d"}}}
    ]);
    let pool = [("azl", "AzureLinux", &*format!("{AZURE_LINUX}-202602.10.0"))];
    let members =
        vec![member("a-aus", "australiaeast", "1.33.5", &pool), member("b-weu", "westeurope", "1.33.5", &pool)];
    let mut doc: Value =
        serde_json::from_str(&review_scenario("consistent", members, json!({"nodeImages": images}), json!([])))
            .unwrap();
    doc["updateRuns"] = json!([{"name": "images", "managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"}, "nodeImageSelection": {"type": "Consistent"}}}]);
    let (s, r) = run(&doc.to_string());
    let images = run_named(&r, "images");
    for name in ["a-aus", "b-weu"] {
        assert_eq!(member_state(&s, images, name), Skipped);
        assert_eq!(
            member_note(&s, images, name),
            "no version of image family \"AKSAzureLinux-V3gen2\" (agent pool azl) is available in every region of the run's members, so Consistent selected none"
        );
    }
}

/// Issue case 6b: SecurityPatch does not patch Windows pools; a Windows-only member says so.
#[test]
fn security_patch_says_windows_pools_are_not_patched() {
    let windows = "AKSWindows-2022-containerd-20348.3000.260210";
    let images = json!([
        {"version": format!("{UBUNTU}-202602.10.0"), "available": "-20d"},
        {"version": windows, "available": "-20d"},
        {"version": "AKSWindows-2022-containerd-20348.3100.260302", "available": "-1d"},
        {"version": format!("{UBUNTU}-202603.01.0"), "available": "+1d"}
    ]);
    let members = vec![
        member("linux", "westeurope", "1.33.5", &[("system", "Ubuntu", &format!("{UBUNTU}-202602.10.0"))]),
        member("win", "westeurope", "1.33.5", &[("win1", "Windows2022", windows)]),
    ];
    let releases = json!({"kubernetes": [{"version": "1.33.5", "available": "-60d"}], "nodeImages": images});
    let (s, r) =
        run(&review_scenario("patch", members, releases, json!([{"name": "patch", "channel": "SecurityPatch"}])));
    let generated = run_named(&r, "patch-ubuntu2204gen2containerd-202603-01-0");
    assert_eq!(member_state(&s, generated, "win"), Skipped);
    assert_eq!(
        member_note(&s, generated, "win"),
        "nothing to upgrade: win1: Windows node pools are not patched by the SecurityPatch channel"
    );
    assert_eq!(member_state(&s, generated, "linux"), Completed);
}

/// Issue case 6c: TargetKubernetesVersion 1.29 without longTermSupport while the newest minor is
/// 1.33 generates nothing; its summary says why.
#[test]
fn an_lts_only_target_without_long_term_support_says_why_it_generates_nothing() {
    let image = format!("{UBUNTU}-202602.10.0");
    let members = vec![member("m", "westeurope", "1.29.4", &[("system", "Ubuntu", &image)])];
    let releases = json!({"kubernetes": [{"version": "1.29.4", "available": "-400d"}, {"version": "1.31.2", "available": "-200d"},
        {"version": "1.32.3", "available": "-100d"}, {"version": "1.33.1", "available": "-30d"}, {"version": "1.29.5", "available": "+1d"}]});
    let profiles = json!([{"name": "lts", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.29"}]);
    let (s, r) = run(&review_scenario("lts-only", members, releases, profiles));
    assert!(r.runs.is_empty());
    let files = fleetsim::report::render(&fleetsim::report::ReportContext::new(&s, &r)).unwrap();
    let summary = files.iter().find(|(p, _)| p.ends_with("summary.json")).unwrap();
    let summary: Value = serde_json::from_slice(&summary.1).unwrap();
    assert_eq!(summary["profiles"][0]["runsGenerated"], 0);
    assert_eq!(
        summary["profiles"][0]["note"],
        "from 2026-03-02T00:00:00Z: targetKubernetesVersion 1.29 is older than N-2 (the newest minor is 1.33), so AKS supports it only with long-term support; longTermSupport is false, so the profile generates no runs"
    );
    // With longTermSupport the profile follows the patch and has nothing to explain.
    let profiles = json!([{"name": "lts", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.29", "longTermSupport": true}]);
    let members = vec![member("m", "westeurope", "1.29.4", &[("system", "Ubuntu", &image)])];
    let releases = json!({"kubernetes": [{"version": "1.29.4", "available": "-400d"}, {"version": "1.31.2", "available": "-200d"},
        {"version": "1.32.3", "available": "-100d"}, {"version": "1.33.1", "available": "-30d"}, {"version": "1.29.5", "available": "+1d"}]});
    let (_, r) = run(&review_scenario("lts-only", members, releases, profiles));
    assert_eq!(names(&r), ["lts-1-29-5"]);
    assert!(r.profiles[0].idle.is_none());
}

/// A target that falls out of the support window during the simulation: from that instant the
/// profile generates nothing, and its summary says so from then.
#[test]
fn a_target_that_becomes_lts_only_stops_generating_from_that_instant() {
    let image = format!("{UBUNTU}-202602.10.0");
    let members = vec![member("m", "westeurope", "1.31.2", &[("system", "Ubuntu", &image)])];
    let releases = json!({"kubernetes": [{"version": "1.31.2", "available": "-200d"}, {"version": "1.32.3", "available": "-100d"},
        {"version": "1.33.1", "available": "-30d"}, {"version": "1.31.3", "available": "+1d"},
        {"version": "1.34.1", "available": "+5d"}, {"version": "1.31.4", "available": "+7d"}]});
    let profiles = json!([{"name": "pin", "channel": "TargetKubernetesVersion", "targetKubernetesVersion": "1.31"}]);
    let (_, r) = run(&review_scenario("falls-out", members, releases, profiles));
    assert_eq!(names(&r), ["pin-1-31-3"], "1.31.4 ships after 1.34 made 1.31 LTS-only");
    let (at, why) = r.profiles[0].idle.as_ref().expect("the profile says why it stopped");
    assert_eq!(at.to_rfc3339(), "2026-03-07T00:00:00Z");
    assert!(why.starts_with("targetKubernetesVersion 1.31 is older than N-2 (the newest minor is 1.34)"), "{why}");
}

/// Generated names stay unique: a scenario run that already has the name a profile would give its
/// run leaves the generated one with a `-2` suffix (both runs exist).
#[test]
fn a_generated_run_never_takes_an_existing_runs_name() {
    let image = format!("{UBUNTU}-202602.10.0");
    let members = vec![member("m", "westeurope", "1.32.5", &[("system", "Ubuntu", &image)])];
    let releases = json!({"kubernetes": [{"version": "1.32.5", "available": "-60d"}, {"version": "1.33.1", "available": "-30d"},
        {"version": "1.32.6", "available": "+1d"}]});
    let mut doc: Value = serde_json::from_str(&review_scenario(
        "names",
        members,
        releases,
        json!([{"name": "stable", "channel": "Stable"}]),
    ))
    .unwrap();
    doc["updateRuns"] = json!([{"name": "stable-1-32-6", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.1"}}}]);
    let (_, r) = run(&doc.to_string());
    assert_eq!(names(&r), ["stable-1-32-6", "stable-1-32-6-2"]);
    assert_eq!(r.specs[1].auto_upgrade_profile.as_deref(), Some("stable"));
}

/// SEMANTICS §5.5: a member with nothing to upgrade is Skipped with a message that says, per part
/// the run touches, why: the Kubernetes version at or ahead of the target, each pool's image at or
/// ahead of its target, or why a pool has no target (no image of its family in the member's region
/// under Latest, a snapshot pool under Latest, a family the Custom selection does not name). Pools
/// are told in their order, joined by "; ".
#[test]
fn members_with_nothing_to_upgrade_say_why() {
    let ubuntu = format!("{UBUNTU}-202602.10.0");
    let azure_linux = format!("{AZURE_LINUX}-202602.10.0");
    let images = json!([
        {"version": ubuntu, "available": "-20d"},
        {"version": azure_linux, "available": {"regions": {"australiaeast": "-20d"}}}
    ]);
    let mut snapshot =
        member("snap", "westeurope", "1.33.5", &[("system", "Ubuntu", &ubuntu), ("old", "Ubuntu", &ubuntu)]);
    snapshot["nodePools"][1]["fromSnapshot"] = json!(true);
    let members = vec![
        member("ubuntu", "westeurope", "1.33.5", &[("system", "Ubuntu", &ubuntu)]),
        member("mixed", "westeurope", "1.33.5", &[("system", "Ubuntu", &ubuntu), ("azl", "AzureLinux", &azure_linux)]),
        snapshot,
    ];
    let kubernetes = json!([{"version": "1.33.4", "available": "-90d"}, {"version": "1.33.5", "available": "-60d"}]);
    let releases = json!({"kubernetes": kubernetes, "nodeImages": images});
    let mut doc: Value = serde_json::from_str(&review_scenario("nothing", members, releases, json!([]))).unwrap();
    let custom = json!({"type": "Custom", "customNodeImageVersions": [{"version": ubuntu}]});
    doc["updateRuns"] = json!([
        {"name": "control-plane", "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.33.5"}}},
        {"name": "full", "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.5"}}},
        {"name": "images", "managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"}}},
        {"name": "custom", "managedClusterUpdate": {"upgrade": {"type": "Full", "kubernetesVersion": "1.33.4"}, "nodeImageSelection": custom}},
    ]);
    let (s, r) = run(&doc.to_string());
    let at_target = |pool: &str| {
        format!("{pool}: current node image version \"{ubuntu}\" is already at or ahead of target \"{ubuntu}\"")
    };
    let k8s = "Kubernetes version 1.33.5 is already at or ahead of target";
    let expected = [
        ("control-plane", "ubuntu", format!("{k8s} 1.33.5")),
        ("control-plane", "mixed", format!("{k8s} 1.33.5")),
        ("full", "ubuntu", format!("{k8s} 1.33.5 and every agent pool's node image is already at or ahead of target")),
        (
            "full",
            "mixed",
            format!(
                "nothing to upgrade: {k8s} 1.33.5; {}; azl: no node image of family \"{AZURE_LINUX}\" is released in region \"westeurope\"",
                at_target("system")
            ),
        ),
        ("images", "ubuntu", "every agent pool's node image is already at or ahead of target".to_string()),
        (
            "images",
            "snap",
            format!(
                "nothing to upgrade: {}; old: the pool keeps the node image of its snapshot under Latest",
                at_target("system")
            ),
        ),
        (
            "custom",
            "mixed",
            format!(
                "nothing to upgrade: {k8s} 1.33.4; {}; azl: the run targets no node image of family \"{AZURE_LINUX}\"",
                at_target("system")
            ),
        ),
    ];
    for (run_name, member_name, message) in expected {
        let run = run_named(&r, run_name);
        assert_eq!(member_state(&s, run, member_name), Skipped, "{run_name} {member_name}");
        assert_eq!(member_note(&s, run, member_name), message, "{run_name} {member_name}");
    }
}
