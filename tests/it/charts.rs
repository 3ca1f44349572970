//! Charts and the HTML report: identical bytes for identical input, legibility at 10 and 5,000
//! members, a self-contained and escaped `index.html`, odd inputs, and the sweep chart functions.

use std::collections::BTreeMap;

use fleetsim::report::charts::run::{GanttMode, gantt_mode};
use fleetsim::report::charts::{Chart, pareto_front, pareto_scatter, sweep_heatmap, sweep_line};
use fleetsim::report::{self, ReportContext, html};
use fleetsim::scenario::Scenario;
use fleetsim::simulation::SimResult;
use serde_json::json;

use crate::support::*;

/// Ten members, two stages, an approval gate, an after-stage wait, a maintenance window that keeps one
/// member Pending, and a forced failure whose message needs escaping.
pub const TEN: &str = r#"{
  "name": "ten",
  "seed": 7,
  "start": "2026-03-02T08:00:00Z",
  "members": [
    {"name": "canary-1", "region": "eastus", "group": "canary", "kubernetesVersion": "1.32.4"},
    {"name": "canary-2", "region": "westus", "group": "canary", "kubernetesVersion": "1.32.4"},
    {"name": "prod-eu-1", "region": "westeurope", "group": "eu", "kubernetesVersion": "1.32.4",
     "aksManagedAutoUpgradeSchedule": {"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 4, "startTime": "22:00"}},
    {"name": "prod-eu-2", "region": "westeurope", "group": "eu", "kubernetesVersion": "1.32.4"},
    {"name": "prod-eu-3", "region": "northeurope", "group": "eu", "kubernetesVersion": "1.32.4"},
    {"name": "prod-us-1", "region": "eastus", "group": "us", "kubernetesVersion": "1.32.4"},
    {"name": "prod-us-2", "region": "eastus2", "group": "us", "kubernetesVersion": "1.32.4"},
    {"name": "prod-us-3", "region": "centralus", "group": "us", "kubernetesVersion": "1.32.4"},
    {"name": "prod-us-4", "region": "westus", "group": "us", "kubernetesVersion": "1.32.4"},
    {"name": "prod-us-5", "region": "westus", "group": "us", "kubernetesVersion": "1.32.4"}
  ],
  "models": {
    "failure": {"probability": 0.0},
    "overrides": [{"member": "prod-us-3", "outcome": "Failed", "duration": "25m", "errorCode": "DrainTimeout",
                   "message": "pod <web-0> & 'friends' blocked the \"drain\""}],
    "approvals": "2h"
  },
  "updateStrategies": {
    "two-stage": {"stages": [
      {"name": "test", "groups": [{"name": "canary"}], "afterStageWaitInSeconds": 3600},
      {"name": "prod", "groups": [{"name": "eu"}, {"name": "us", "maxConcurrency": 2, "maxAllowedFailures": 1}],
       "maxConcurrency": 3, "maxAllowedFailures": 1,
       "beforeGates": [{"displayName": "Approve prod", "type": "Approval"}]}
    ]}
  },
  "updateRuns": [
    {"name": "patch", "updateStrategyId": "two-stage",
     "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.32.7"}}}
  ]
}"#;

/// 5,000 generated members in six groups over three stages.
fn five_thousand() -> String {
    let group = |name: &str, limit: i64| json!({"name": name, "maxConcurrency": limit, "maxAllowedFailures": "10%"});
    serde_json::to_string(&json!({
        "name": "five-thousand",
        "seed": 11,
        "start": "2026-03-02T08:00:00Z",
        "memberGenerators": [{
            "count": 5000, "namePattern": "aks-{index}",
            "regions": {"eastus": 3, "westeurope": 2, "southeastasia": 1},
            "groups": {"canary": 0.5, "eu-a": 2, "us-a": 2, "eu-b": 3, "us-b": 3, "asia": 2},
            "kubernetesVersions": {"1.32.4": 1}
        }],
        "models": {"failure": {"probability": 0.01}, "approvals": "3h"},
        "updateStrategies": {"rings": {"stages": [
            {"name": "canary", "groups": [group("canary", 20)], "maxAllowedFailures": "10%", "afterStageWaitInSeconds": 7200},
            {"name": "ring1", "groups": [group("eu-a", 20), group("us-a", 20)], "maxAllowedFailures": "10%",
             "beforeGates": [{"displayName": "Approve ring1", "type": "Approval"}]},
            {"name": "ring2", "groups": [group("eu-b", 15), group("us-b", 15), group("asia", 15)], "maxAllowedFailures": "10%"}
        ]}},
        "updateRuns": [{"name": "patch", "updateStrategyId": "rings",
            "managedClusterUpdate": {"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.32.7"}}}]
    }))
    .unwrap()
}

/// The report folder of a scenario, rendered in memory, by relative path.
pub fn report_files(json: &str) -> BTreeMap<String, Vec<u8>> {
    let (scenario, result) = run(json);
    render_files(&scenario, &result)
}

fn render_files(scenario: &Scenario, result: &SimResult) -> BTreeMap<String, Vec<u8>> {
    let files = report::render(&ReportContext::new(scenario, result)).expect("the report renders");
    files.into_iter().map(|(path, bytes)| (path.to_string_lossy().replace('\\', "/"), bytes)).collect()
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files.get(path).unwrap_or_else(|| panic!("{path} is missing")).clone()).unwrap()
}

const CHARTS: [&str; 4] = ["gantt", "completion", "concurrency", "pending"];

/// Width and height of a PNG, and whether it has more than one colour.
pub fn png_facts(bytes: &[u8]) -> (u32, u32, bool) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a PNG of a size that fits in memory")];
    let info = reader.next_frame(&mut pixels).expect("PNG pixels");
    let data = &pixels[..info.buffer_size()];
    let first = &data[..3];
    let varied = data.chunks(3).any(|p| p != first);
    (info.width, info.height, varied)
}

/// `width="…" height="…"` of an SVG root element.
pub fn svg_size(svg: &str) -> (u32, u32) {
    let attribute = |name: &str| -> u32 {
        let at = svg.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attribute("width"), attribute("height"))
}

#[test]
fn every_report_has_charts_as_svg_and_png_and_an_index() {
    let files = report_files(TEN);
    for name in CHARTS {
        let svg = text(&files, &format!("charts/{name}.svg"));
        assert!(svg.starts_with("<svg"), "{name}.svg: {}", &svg[..40.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"), "{name}.svg is closed");
        let (w, h, varied) = png_facts(&files[&format!("charts/{name}.png")]);
        assert_eq!((w, h), svg_size(&svg), "{name}: the PNG and the SVG are the same drawing");
        assert!(varied, "{name}.png is not blank");
    }
    assert!(files.contains_key("index.html"));
}

#[test]
fn charts_are_byte_identical_for_identical_input_across_renders_and_threads() {
    let a = report_files(TEN);
    let b = report_files(TEN);
    let c = std::thread::spawn(|| report_files(TEN)).join().unwrap();
    for (path, bytes) in &a {
        if path.starts_with("charts/") || path == "index.html" {
            assert!(bytes == &b[path], "{path} differs between two renders");
            assert!(bytes == &c[path], "{path} differs when rendered on another thread");
        }
    }
}

#[test]
fn ten_members_get_one_row_each_with_gates_waits_and_failure_codes() {
    let (scenario, result) = run(TEN);
    assert_eq!(gantt_mode(&ReportContext::new(&scenario, &result)), GanttMode::Members);
    let files = render_files(&scenario, &result);
    let gantt = text(&files, "charts/gantt.svg");
    for member in &scenario.fleet {
        assert!(gantt.contains(&format!(">\n{}\n</text>", member.name)), "{} has a row", member.name);
    }
    for label in
        ["stage test", "group canary", "stage prod", "group us", "Approve prod", "DrainTimeout", "one row per member"]
    {
        assert!(gantt.contains(label), "the Gantt chart shows {label:?}");
    }
    // Outcome colours: a completed and a failed attempt, Pending time, the gate and the wait.
    for color in ["#009E73", "#D55E00", "#E69F00", "#CC79A7", "#56B4E9"] {
        assert!(gantt.contains(&format!("fill=\"{color}\"")), "the Gantt chart uses {color}");
    }
    let concurrency = text(&files, "charts/concurrency.svg");
    assert!(concurrency.contains("prod: maxConcurrency 3"), "the resolved stage limit is drawn");
    let completion = text(&files, "charts/completion.svg");
    assert!(completion.contains("10 members") && completion.contains(">\nprod\n</text>"), "total and stage start");
    let pending = text(&files, "charts/pending.svg");
    assert!(pending.contains("Pending: window closed") && pending.contains("gates Pending"));
}

#[test]
fn five_thousand_members_are_aggregated_per_group_and_stay_small() {
    let json = five_thousand();
    let (scenario, result) = run(&json);
    assert_eq!(scenario.fleet.len(), 5000);
    assert_eq!(gantt_mode(&ReportContext::new(&scenario, &result)), GanttMode::Groups);
    let files = render_files(&scenario, &result);
    let gantt = text(&files, "charts/gantt.svg");
    assert!(gantt.contains("5000 members in 6 groups: one row per group"), "the subtitle names the mode");
    for group in ["canary (", "eu-a (", "us-b (", "asia (", "stage ring2", "Approve ring1"] {
        assert!(gantt.contains(group), "the Gantt chart shows {group:?}");
    }
    assert!(!gantt.contains("aks-0001"), "no member gets its own row");
    for name in CHARTS {
        let svg = &files[&format!("charts/{name}.svg")];
        let png = &files[&format!("charts/{name}.png")];
        assert!(svg.len() < 200_000 && png.len() < 200_000, "{name}: {} B SVG, {} B PNG", svg.len(), png.len());
    }
    let index = text(&files, "index.html");
    assert!(index.contains("<details>\n<summary>All members of every run (5000 rows)"), "the long table is folded");
    assert!(index.len() < 3_000_000, "index.html is {} B", index.len());
}

/// Tag balance of an HTML page with SVG inside: every non-void element closed in order.
pub fn check_well_formed(page: &str) {
    const VOID: [&str; 6] = ["meta", "link", "br", "hr", "img", "input"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = page;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let end = rest.find('>').expect("every tag ends");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        let name: String = tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        assert!(!name.is_empty(), "a bare '<' in the page: <{tag}>");
        if tag.starts_with('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.as_str()), "</{name}> closes the open element");
        } else if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            if name == "style" {
                let close = rest.find("</style>").expect("style is closed");
                rest = &rest[close + "</style>".len()..];
                continue;
            }
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
}

#[test]
fn index_html_is_self_contained_escaped_and_inlines_every_chart() {
    let files = report_files(TEN);
    let page = text(&files, "index.html");
    check_well_formed(&page);
    assert!(!page.contains("http://") && !page.contains("https://"), "no address outside the folder");
    assert!(!page.contains("<script") && !page.contains(" src="), "no scripts, no external resources");
    assert!(page.contains("default-src 'none'"), "the page forbids loading anything");
    assert_eq!(page.matches("<svg width=").count(), CHARTS.len(), "charts are inline SVG");
    for name in CHARTS {
        assert!(page.contains(&format!("id=\"chart-{name}\"")), "{name} is inlined");
        // The inlined drawing is the chart file itself, minus the namespace attribute.
        let svg = text(&files, &format!("charts/{name}.svg"));
        let body = &svg[svg.find('>').unwrap() + 1..];
        assert!(page.contains(body.trim_end()), "{name}: the inline SVG is the file's drawing");
        assert!(page.contains(&format!("href=\"charts/{name}.png\"")));
    }
    // The failure message appears escaped (by code, in the failures and in the members), never raw.
    let escaped = "pod &lt;web-0&gt; &amp; &#39;friends&#39; blocked the &quot;drain&quot;";
    assert_eq!(page.matches(escaped).count(), 3, "the message is in all three tables");
    assert!(!page.contains("<web-0>"));
    for expected in ["DrainTimeout", "prod-us-3", "failureCount", "blast radius", "Pending h: window", "makespan h"] {
        assert!(page.contains(expected), "index.html shows {expected:?}");
    }
    let failures = &page[page.find("id=\"failures\"").unwrap()..page.find("id=\"members\"").unwrap()];
    assert!(failures.contains("prod-us-3") && !failures.contains("prod-us-2"), "only failures in the failure list");
    assert!(page.contains("<details open>"), "ten members are shown unfolded");
}

#[test]
fn odd_runs_render_without_panicking() {
    let member = |name: &str, version: &str| json!({"name": name, "region": "eastus", "group": "g", "kubernetesVersion": version});
    let strategy = json!({"stages": [{"name": "s", "groups": [{"name": "g"}]}]});
    let upgrade = json!({"upgrade": {"type": "ControlPlaneOnly", "kubernetesVersion": "1.32.7"}});
    let base = |members: serde_json::Value, runs: serde_json::Value| {
        serde_json::to_string(&json!({"name": "odd", "start": START, "members": members, "updateRuns": runs})).unwrap()
    };
    let run_with = |extra: serde_json::Value| {
        let mut r = json!({"name": "r", "strategy": strategy, "managedClusterUpdate": upgrade});
        merge(&mut r, extra);
        json!([r])
    };
    // (case, scenario, the run's state in summary.json and runs.csv, or None without a run)
    let cases = [
        ("no update run", base(json!([member("a", "1.32.4")]), json!([])), None),
        ("no member", base(json!([]), run_with(json!({}))), Some("Skipped")),
        (
            "never started",
            base(json!([member("a", "1.32.4")]), run_with(json!({"start": "manual"}))),
            Some("NotStarted"),
        ),
        (
            "all skipped",
            base(json!([member("a", "1.32.7"), member("b", "1.32.7")]), run_with(json!({}))),
            Some("Skipped"),
        ),
    ];
    for (case, json, state) in cases {
        let files = report_files(&json);
        let summary: serde_json::Value = serde_json::from_str(&text(&files, "summary.json")).unwrap();
        assert_eq!(summary["runs"][0]["state"].as_str(), state, "{case}");
        let runs_csv = text(&files, "runs.csv");
        assert_eq!(runs_csv.lines().count(), 1 + usize::from(state.is_some()), "{case}: {runs_csv}");
        if let Some(state) = state {
            assert!(runs_csv.lines().nth(1).unwrap().contains(&format!(",{state},")), "{case}: {runs_csv}");
        }
        for name in CHARTS {
            let (_, _, varied) = png_facts(&files[&format!("charts/{name}.png")]);
            assert!(varied, "{case}: {name}.png has at least a title");
        }
        check_well_formed(&text(&files, "index.html"));
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn sweep_line_draws_mean_and_band_and_skips_non_finite_points() {
    let points =
        [(5.0, 10.0, 9.0, 11.5), (1.0, 40.0, 36.0, 44.0), (2.0, 22.0, f64::NAN, 23.5), (f64::NAN, 1.0, 0.0, 2.0)];
    let chart = sweep_line("Makespan by maxConcurrency", "maxConcurrency", "makespan (hours)", &points).unwrap();
    assert_eq!(chart, sweep_line("Makespan by maxConcurrency", "maxConcurrency", "makespan (hours)", &points).unwrap());
    assert!(chart.svg.contains("Makespan by maxConcurrency") && chart.svg.contains("makespan (hours)"));
    assert!(chart.svg.contains("3 points · 1 without a finite value left out"));
    assert!(chart.svg.contains("<polygon"), "the confidence band");
    assert!(png_facts(&chart.png).2);
    let empty = sweep_line("Nothing", "x", "y", &[]).unwrap();
    assert!(empty.svg.contains("no data"));
}

#[test]
fn sweep_heatmap_handles_missing_and_ragged_cells() {
    let xs = strings(&["1", "2", "5"]);
    let ys = strings(&["10%", "<20%>"]);
    let values = vec![vec![Some(3.0), None, Some(f64::INFINITY)], vec![Some(1.0)]];
    let chart = sweep_heatmap("Makespan", "maxConcurrency", "maxAllowedFailures", &xs, &ys, &values).unwrap();
    assert!(chart.svg.contains("4 without a value"), "None, infinite and the two missing cells");
    assert!(chart.svg.contains("&lt;20%&gt;"), "labels are escaped in SVG");
    assert!(chart.svg.contains("n/a"));
    assert_eq!(chart, sweep_heatmap("Makespan", "maxConcurrency", "maxAllowedFailures", &xs, &ys, &values).unwrap());
    assert!(sweep_heatmap("Empty", "x", "y", &[], &[], &[]).unwrap().svg.contains("no data"));
    let huge: Vec<String> = (0..9000).map(|i| i.to_string()).collect();
    assert!(sweep_heatmap("Huge", "x", "y", &huge, &ys, &[]).is_err(), "too large a grid is an error, not a panic");
}

#[test]
fn pareto_scatter_highlights_and_labels_the_front() {
    let points: Vec<(String, f64, f64)> =
        [("fast-risky", 10.0, 40.0), ("slow-safe", 50.0, 2.0), ("balanced", 20.0, 10.0), ("worse", 30.0, 30.0)]
            .iter()
            .map(|(l, x, y)| (l.to_string(), *x, *y))
            .collect();
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.2)).collect();
    assert_eq!(pareto_front(&xy), vec![0, 2, 1]);
    let chart = pareto_scatter("Makespan against blast radius", "makespan (hours)", "blast radius", &points).unwrap();
    assert!(chart.svg.contains("3 on the Pareto front"));
    for label in ["fast-risky", "balanced", "slow-safe"] {
        assert!(chart.svg.contains(label), "front point {label} is labelled");
    }
    assert!(!chart.svg.contains(">\nworse\n"), "dominated points are not labelled");
    assert!(pareto_scatter("Empty", "x", "y", &[]).unwrap().svg.contains("no data"));
}

#[test]
fn sweep_index_page_is_self_contained_and_escaped() {
    let line =
        sweep_line("Makespan", "maxConcurrency", "hours", &[(1.0, 4.0, 3.0, 5.0), (2.0, 2.0, 1.5, 2.5)]).unwrap();
    let chart = Chart { svg: line.svg.clone(), png: Vec::new() };
    let header = strings(&["point", "makespan h"]);
    let rows = vec![strings(&["<a>", "4.0"]), strings(&["b & c", "2.0"])];
    let page = html::sweep_index_html("Sweep <limits>", &header, &rows, &[("Makespan", &chart), ("Makespan", &line)]);
    check_well_formed(&page);
    assert!(page.contains("<title>Sweep &lt;limits&gt;</title>"));
    assert!(page.contains("<td>&lt;a&gt;</td>") && page.contains("<td class=\"num\">4.0</td>"));
    assert!(page.contains("id=\"chart-makespan\"") && page.contains("id=\"chart-makespan-2\""), "ids are unique");
    assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("<script"));
}

#[test]
fn the_curated_example_renders_the_files_committed_under_reports_example() {
    let json = std::fs::read_to_string(root().join("scenarios/example.json")).unwrap();
    let (scenario, result) = run(&json);
    let files = render_files(&scenario, &result);
    let committed = root().join("reports/example");
    let mut on_disk: Vec<String> = crate::support::folder_files(&committed).into_keys().collect();
    // The marker that lets the next `run --out reports/example` replace the folder.
    assert!(on_disk.contains(&report::MARKER.to_string()), "reports/example has no {}", report::MARKER);
    on_disk.retain(|f| f != report::MARKER);
    let stale =
        "reports/example is stale: regenerate it with `cargo run -- run scenarios/example.json --out reports/example`";
    assert_eq!(on_disk, files.keys().cloned().collect::<Vec<_>>(), "{stale}");
    // Every file byte for byte: data, status, page and charts (rendering is deterministic).
    for (name, bytes) in &files {
        let committed_bytes = std::fs::read(committed.join(name)).unwrap();
        assert!(committed_bytes == *bytes, "{name} differs from the committed copy: {stale}");
    }
    assert_eq!(gantt_mode(&ReportContext::new(&scenario, &result)), GanttMode::Members);
    let total: usize = files.values().map(|b| b.len()).sum();
    assert!(total < 1_000_000, "the example stays small: {total} B");
}

#[test]
fn each_pending_reason_has_its_own_colour_and_the_pending_chart_one_unit_per_axis() {
    let text = std::fs::read_to_string(crate::support::root().join("scenarios/example.json")).unwrap();
    let (s, r) = crate::support::run(&text);
    let charts = fleetsim::report::charts::run::run_charts(&fleetsim::report::ReportContext::new(&s, &r)).unwrap();
    let svg = |name: &str| charts.iter().find(|c| c.name == name).unwrap().chart.svg.clone();
    let gantt = svg("gantt");
    assert!(gantt.contains("Pending: window closed") && gantt.contains("Pending: release not in region"));
    // Amber for windows, violet for availability; the failure orange is not a Pending colour.
    assert!(gantt.contains("#E69F00") && gantt.contains("#8E6BC4"), "both Pending colours drawn");
    let pending = svg("pending");
    assert!(pending.contains("member-hours Pending (window closed, release not in region)"));
    assert!(pending.contains("hours (gates Pending, after-stage waits)"));
    assert!(!pending.contains("#D55E00"), "availability is not drawn in the failure colour");
}

#[test]
fn aggregated_timeline_rows_split_pending_by_reason_in_the_member_colours() {
    // late-regions with ten times the members: one row per group, Pending on availability.
    let file = std::fs::read_to_string(crate::support::root().join("scenarios/late-regions.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&file).unwrap();
    value["memberGenerators"][0]["count"] = json!(400);
    value["settings"]["groupAboveStageConcurrency"] = json!("throttle");
    let (scenario, result) = run(&value.to_string());
    assert_eq!(gantt_mode(&ReportContext::new(&scenario, &result)), GanttMode::Groups);
    let files = render_files(&scenario, &result);
    let gantt = text(&files, "charts/gantt.svg");
    assert!(gantt.contains("Pending: window closed") && gantt.contains("Pending: release not in region"));
    let bands =
        |color: &str| gantt.lines().any(|l| l.starts_with("<polygon") && l.contains(&format!("fill=\"{color}\"")));
    assert!(bands("#8E6BC4"), "availability Pending drawn in violet in the group rows");
}

#[test]
fn crowded_guide_labels_are_left_out_and_counted_rather_than_drawn_over_each_other() {
    // Twelve runs of the example at once: 36 stage starts in a few hours.
    let file = std::fs::read_to_string(crate::support::root().join("scenarios/example.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&file).unwrap();
    let template = value["updateRuns"][0].clone();
    value["updateRuns"] = (0..12)
        .map(|i| {
            let mut r = template.clone();
            r["name"] = json!(format!("upgrade-{i:02}"));
            r
        })
        .collect();
    let (scenario, result) = run(&value.to_string());
    let files = render_files(&scenario, &result);
    let completion = text(&files, "charts/completion.svg");
    let drawn = completion.matches(" canary\n</text>").count();
    assert!((1..12).contains(&drawn), "some, not all, stage-start labels of canary are drawn: {drawn}");
    assert!(completion.contains("guide labels left out for want of room"));
    let concurrency = text(&files, "charts/concurrency.svg");
    assert!(concurrency.contains("guide labels left out for want of room"));
    // Twelve runs: one summary row each, in a table that scrolls sideways with the run names kept
    // on one line (cut with the full name on hover) and in view.
    let index = text(&files, "index.html");
    assert!(index.contains("<div class=\"scroll\"><table class=\"wide\">"), "the wide summary table scrolls");
    assert!(index.contains("<td class=\"name\" title=\"upgrade-07\">upgrade-07</td>"));
    assert!(
        index.contains("td.name { white-space: nowrap;") && index.contains("table.wide td.name { position: sticky;")
    );
    assert!(index.contains("<td class=\"time\">2026-03-02T"), "times do not wrap at their dashes");
}
