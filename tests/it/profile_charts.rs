//! Auto-upgrade charts (issue "Auto-upgrade profiles" §3): Kubernetes versions over time, days
//! behind at the end and over time; drawn from the data of the CSV files and `summary.json`, shown
//! in `index.html`, byte-identical for identical input, and never panicking on odd input.

use std::collections::BTreeMap;

use fleetsim::report::charts::profiles::{MAX_LAG_PROFILES, histogram, profile_charts};
use fleetsim::report::profiles::{end_state, fleet_days};
use fleetsim::report::{self, ReportContext};
use serde_json::{Value, json};

use crate::charts::{TEN, check_well_formed, png_facts, report_files, svg_size};
use crate::support::*;

const BEFORE: &str = "2026-01-01T00:00:00Z";
const LINUX: &str = "AKSUbuntu-2204gen2containerd-202602.01.0";
const WINDOWS: &str = "AKSWindows-2022-containerd-20348.3000.260210";
pub const PROFILE_CHARTS: [&str; 3] = ["kubernetes-versions", "lag-distribution", "lag-over-time"];

/// `n` members on the given Kubernetes versions (cycled), each with a Linux pool and every third with a
/// Windows pool too (with `pools`), alternating between two regions.
fn fleet(n: usize, versions: &[&str], pools: bool) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let region = if i % 2 == 0 { "westeurope" } else { "australiaeast" };
            let mut member = json!({"name": format!("m{:03}", i + 1), "region": region,
                "kubernetesVersion": versions[i % versions.len()]});
            if pools {
                let mut node_pools = vec![json!({"name": "linux", "nodeImageVersion": LINUX})];
                if i % 3 == 2 {
                    node_pools.push(json!({"name": "win", "osSku": "Windows2022", "nodeImageVersion": WINDOWS}));
                }
                member["nodePools"] = json!(node_pools);
            }
            member
        })
        .collect()
}

/// A scenario of `members`, Kubernetes releases `(version, first available)`, node images and
/// profiles, simulated for `horizon`.
fn profile_scenario(
    members: Vec<Value>,
    kubernetes: &[(&str, &str)],
    images: Value,
    profiles: Value,
    horizon: &str,
) -> String {
    let releases: Vec<Value> = kubernetes.iter().map(|(v, at)| json!({"version": v, "available": at})).collect();
    serde_json::to_string(&json!({
        "name": "profile-charts",
        "seed": 5,
        "start": START,
        "settings": {"horizon": horizon},
        "models": {"duration": {"member": "1h"}, "failure": {"probability": 0.0}},
        "members": members,
        "releases": {"kubernetes": releases, "nodeImages": images},
        "autoUpgradeProfiles": profiles,
    }))
    .unwrap()
}

fn images() -> Value {
    json!([
        {"version": LINUX, "available": BEFORE, "published": "2026-01-20T00:00:00Z"},
        {"version": WINDOWS, "available": BEFORE, "published": "2026-01-10T00:00:00Z"},
        {"version": "AKSUbuntu-2204gen2containerd-202603.05.0", "available": "+4d"},
        {"version": "AKSUbuntu-2204gen2containerd-202603.20.0", "available": "+19d"}
    ])
}

const K8S: [(&str, &str); 6] = [
    ("1.31.9", BEFORE),
    ("1.32.5", BEFORE),
    ("1.33.1", BEFORE),
    ("1.32.6", "+2d"),
    ("1.34.1", "+10d"),
    ("1.33.2", "+11d"),
];

/// Eight members on 1.32 and 1.33 under a Stable and a NodeImage profile for 40 days; a new minor
/// (1.34) ships on day 10 and moves Stable to 1.33.
pub fn small_profile_report() -> String {
    profile_scenario(
        fleet(8, &["1.32.5", "1.32.5", "1.33.1"], true),
        &K8S,
        images(),
        json!([{"name": "stable", "channel": "Stable"}, {"name": "node-image", "channel": "NodeImage"}]),
        "40d",
    )
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files.get(path).unwrap_or_else(|| panic!("{path} is missing")).clone()).unwrap()
}

/// Every profile chart is there as SVG and PNG of the same size, not blank, and inlined in the page.
fn assert_profile_charts(case: &str, files: &BTreeMap<String, Vec<u8>>) {
    let page = text(files, "index.html");
    check_well_formed(&page);
    assert!(page.contains("<h2 id=\"autoupgrade\">Auto-upgrade</h2>"), "{case}: the section is there");
    for name in PROFILE_CHARTS {
        let svg = text(files, &format!("charts/{name}.svg"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{case}: {name}.svg");
        let (w, h, varied) = png_facts(&files[&format!("charts/{name}.png")]);
        assert_eq!((w, h), svg_size(&svg), "{case}: {name}: the PNG and the SVG are the same drawing");
        assert!(varied, "{case}: {name}.png is not blank");
        assert!(page.contains(&format!("id=\"chart-{name}\"")), "{case}: {name} is inlined");
        assert!(page.contains(&format!("href=\"charts/{name}.png\"")), "{case}: {name} is linked");
    }
}

#[test]
fn profile_reports_get_version_and_lag_charts_in_an_auto_upgrade_section() {
    let (scenario, result) = run(&small_profile_report());
    let ctx = ReportContext::new(&scenario, &result);
    let files: BTreeMap<String, Vec<u8>> =
        report::render(&ctx).unwrap().into_iter().map(|(p, b)| (p.to_string_lossy().replace('\\', "/"), b)).collect();
    assert_profile_charts("two profiles", &files);

    let versions = text(&files, "charts/kubernetes-versions.svg");
    for label in ["1.32", "1.33", "1.34 released", "8 members", "sampled daily at 00:00 UTC", ">\n2026-03-1"] {
        assert!(versions.contains(label), "the versions chart shows {label:?}");
    }
    assert!(!versions.contains("1.31"), "a minor no member was on has no band");
    // Bands ramp from dark (oldest) to light (newest): the two-minor fleet gets both ends of viridis.
    assert!(versions.contains("fill=\"#440154\"") && versions.contains("fill=\"#FDE725\""), "oldest and newest");

    let lag = text(&files, "charts/lag-distribution.svg");
    for label in ["stable · Stable channel", "Node image age", "at target", "days behind the channel", "30 days"] {
        assert!(lag.contains(label), "the lag chart shows {label:?}");
    }
    let over_time = text(&files, "charts/lag-over-time.svg");
    for label in ["stable: mean", "stable: max", "mean node image age"] {
        assert!(over_time.contains(label), "the lag-over-time chart shows {label:?}");
    }

    // The charts draw the same numbers the CSV and summary.json give.
    let summary: Value = serde_json::from_slice(&files["summary.json"]).unwrap();
    let stable = &summary["profiles"][0];
    let behind = stable["lagDays"]["membersBehind"].as_u64().unwrap() as usize;
    let end = end_state(&ctx);
    let lags = end.lags[0].as_ref().unwrap();
    let (at_target, bins) = histogram(lags, 1.0, true);
    assert_eq!(at_target, scenario.fleet.len() - behind);
    assert_eq!(bins.iter().sum::<usize>(), behind);
    assert!(
        lag.contains(&format!("target {} · {behind} of 8 members behind", stable["finalTarget"].as_str().unwrap()))
    );
    let days = fleet_days(&ctx);
    let csv = text(&files, "kubernetes-versions.csv");
    let rows: usize = days.days.iter().map(|d| d.per_minor.len()).sum();
    assert_eq!(csv.lines().count(), rows + 1, "one CSV row per day and minor");
    let last = days.days.last().unwrap();
    for (minor, n) in &last.per_minor {
        assert!(csv.contains(&format!("{},{minor},{n}\n", &last.time.to_rfc3339()[..10])));
    }

    let page = text(&files, "index.html");
    let section = &page[page.find("id=\"autoupgrade\"").unwrap()..page.find("id=\"summary\"").unwrap()];
    for expected in ["2 auto-upgrade profiles generated", "node-image", "runs generated", "lag p90 d", "n/a"] {
        assert!(section.contains(expected), "the section shows {expected:?}");
    }
    assert!(page.contains("<a href=\"#autoupgrade\">Auto-upgrade</a>"), "the nav links the section");
}

#[test]
fn profile_charts_are_byte_identical_across_renders_and_threads() {
    let json = small_profile_report();
    let a = report_files(&json);
    let b = report_files(&json);
    let c = std::thread::spawn(move || report_files(&small_profile_report())).join().unwrap();
    for name in PROFILE_CHARTS {
        for ext in ["svg", "png"] {
            let path = format!("charts/{name}.{ext}");
            assert!(a[&path] == b[&path], "{path} differs between two renders");
            assert!(a[&path] == c[&path], "{path} differs when rendered on another thread");
        }
    }
    assert!(a["index.html"] == b["index.html"] && a["index.html"] == c["index.html"]);
}

#[test]
fn reports_without_profiles_have_no_profile_charts() {
    let files = report_files(TEN);
    for name in PROFILE_CHARTS {
        assert!(!files.contains_key(&format!("charts/{name}.svg")), "{name} is not drawn");
    }
    assert!(!text(&files, "index.html").contains("autoupgrade"));
    let (scenario, result) = run(TEN);
    let ctx = ReportContext::new(&scenario, &result);
    assert!(profile_charts(&ctx, &fleet_days(&ctx), &end_state(&ctx)).unwrap().is_empty());
}

#[test]
fn odd_profile_scenarios_render_without_panicking() {
    let stable = json!([{"name": "stable", "channel": "Stable"}]);
    let many: Vec<Value> = (0..MAX_LAG_PROFILES + 1)
        .map(|i| json!({"name": format!("p{i}"), "channel": if i % 2 == 0 { "Stable" } else { "Rapid" }}))
        .collect();
    let cases = [
        (
            "a profile that generated nothing",
            profile_scenario(fleet(3, &["1.32.5"], true), &K8S[..3], images(), stable.clone(), "20d"),
        ),
        ("a fleet of one", profile_scenario(fleet(1, &["1.32.5"], true), &K8S, images(), stable.clone(), "40d")),
        ("all on one minor", profile_scenario(fleet(4, &["1.33.1"], true), &K8S, json!([]), stable.clone(), "20d")),
        (
            "a NodeImage profile only",
            profile_scenario(
                fleet(4, &["1.33.1"], true),
                &K8S,
                images(),
                json!([{"name": "images", "channel": "NodeImage"}]),
                "30d",
            ),
        ),
        (
            "no node pools",
            profile_scenario(fleet(4, &["1.32.5", "1.33.1"], false), &K8S, json!([]), stable.clone(), "30d"),
        ),
        (
            "a disabled profile",
            profile_scenario(
                fleet(4, &["1.32.5"], true),
                &K8S,
                images(),
                json!([{"name": "off", "channel": "Stable", "disabled": true}]),
                "30d",
            ),
        ),
        (
            "more profiles than panels",
            profile_scenario(fleet(4, &["1.32.5"], true), &K8S, images(), json!(many), "20d"),
        ),
        (
            "a horizon within one day",
            profile_scenario(fleet(2, &["1.32.5"], true), &K8S, images(), stable.clone(), "2h"),
        ),
        ("no member", profile_scenario(Vec::new(), &K8S, images(), stable, "20d")),
    ];
    for (case, json) in cases {
        let files = report_files(&json);
        assert_profile_charts(case, &files);
        if case == "more profiles than panels" {
            let lag = text(&files, "charts/lag-distribution.svg");
            assert!(lag.contains(&format!(
                "first {MAX_LAG_PROFILES} of {} Kubernetes-channel profiles",
                MAX_LAG_PROFILES + 1
            )));
        }
        if case == "a NodeImage profile only" {
            assert!(!text(&files, "charts/lag-distribution.svg").contains("at target"), "no Kubernetes panel");
        }
        if case == "no member" {
            assert!(text(&files, "charts/kubernetes-versions.svg").contains("no member"));
        }
    }
}

#[test]
fn ten_thousand_members_give_charts_of_the_same_size() {
    let doc = json!({
        "name": "ten-thousand",
        "seed": 3,
        "start": START,
        "settings": {"horizon": "15d"},
        "models": {"duration": {"member": "20m"}, "failure": {"probability": 0.0}},
        "memberGenerators": [{
            "count": 10_000, "namePattern": "aks-{index}",
            "regions": {"westeurope": 3, "eastus": 2},
            "kubernetesVersions": {"1.32.5": 1, "1.33.1": 3}
        }],
        "releases": {"kubernetes": [
            {"version": "1.32.5", "available": BEFORE}, {"version": "1.33.1", "available": BEFORE},
            {"version": "1.33.2", "available": "+2d"}, {"version": "1.34.1", "available": "+5d"}
        ]},
        "updateStrategies": {"wide": {"stages": [{"name": "all", "groups": [{"name": "all"}], "maxConcurrency": "25%"}]}},
        "autoUpgradeProfiles": [{"name": "stable", "channel": "Stable", "updateStrategyId": "wide"}]
    });
    let (scenario, result) = run(&doc.to_string());
    assert_eq!(scenario.fleet.len(), 10_000);
    let ctx = ReportContext::new(&scenario, &result);
    let charts = profile_charts(&ctx, &fleet_days(&ctx), &end_state(&ctx)).unwrap();
    assert_eq!(charts.iter().map(|c| c.name).collect::<Vec<_>>(), PROFILE_CHARTS);
    for chart in &charts {
        assert!(
            chart.chart.svg.len() < 100_000 && chart.chart.png.len() < 150_000,
            "{}: {} B SVG, {} B PNG",
            chart.name,
            chart.chart.svg.len(),
            chart.chart.png.len()
        );
    }
    let versions = &charts[0].chart.svg;
    assert!(versions.contains("10000 members") && versions.contains("1.34 released"));
}

/// The image ages at the end are each member's oldest pool image's, with every pool on the image
/// its last change gave it (or its own): worked out here from the changes and the calendar, where
/// the report replays them (and looks an image up once for the members a run gives it in a row).
#[test]
fn image_ages_at_the_end_follow_every_image_change() {
    use fleetsim::simulation::{SimOptions, VersionValue, simulate};
    let scenario = fleetsim::scenario::load_file(&root().join("scenarios/autoupgrade-year.json"), None).unwrap();
    let result = simulate(&scenario, SimOptions::default());
    let mut images: Vec<Vec<Option<fleetsim::fleet::NodeImageVersion>>> =
        scenario.fleet.iter().map(|m| m.node_pools.iter().map(|p| p.node_image_version.clone()).collect()).collect();
    let mut changed = 0;
    for change in result.version_changes.iter().filter(|c| c.time <= result.end) {
        if let (Some(pool), VersionValue::NodeImage(image)) = (change.pool, &change.to) {
            images[change.member.index()][pool] = Some(image.clone());
            changed += 1;
        }
    }
    assert!(changed > 10_000, "{changed} image changes");
    let published =
        |image: &fleetsim::fleet::NodeImageVersion| scenario.releases.image_release(image).map(|r| r.published);
    let mut expected: Vec<f64> = images
        .iter()
        .filter_map(|pools| pools.iter().flatten().filter_map(published).min())
        .map(|oldest| (result.end - oldest).as_seconds() as f64 / 86_400.0)
        .collect();
    expected.sort_by(f64::total_cmp);
    let ctx = ReportContext::new(&scenario, &result);
    let ages = end_state(&ctx).image_ages;
    assert_eq!(ages, expected);
    let distinct: std::collections::BTreeSet<String> = ages.iter().map(|a| format!("{a}")).collect();
    assert!(distinct.len() > 5, "ages {distinct:?}");
}
