//! The HTML report in a real browser: headless Chromium opens `index.html`, takes a screenshot and
//! dumps the DOM; the page must render (not blank, every chart present) with no console message.
//!
//! Without Chromium these tests pass and say plainly on stderr that the browser check was skipped.
//! With `FLEETSIM_REQUIRE_BROWSER=1` (set by `.ci/run` after `.ci/install-browser`) a missing browser
//! is a failure, so CI cannot pass without the check. `FLEETSIM_CHROMIUM` may name the binary.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetsim::report::{self, ReportContext};

use crate::charts::TEN;
use crate::support::run;

/// A cold start takes one to three seconds; this bounds a hung browser.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);
const WINDOW: (u32, u32) = (1280, 2000);

fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FLEETSIM_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let dirs = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&dirs) {
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The browser, or `None` after saying that the check is skipped (a failure when it is required).
fn browser(test: &str) -> Option<PathBuf> {
    if let Some(path) = find_chromium() {
        return Some(path);
    }
    let required = std::env::var("FLEETSIM_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "FLEETSIM_REQUIRE_BROWSER=1 but no Chromium was found (chromium, chromium-browser or google-chrome in \
         PATH, or FLEETSIM_CHROMIUM); install it with .ci/install-browser"
    );
    // Written to the process's stderr directly, past the test harness's capture, so it is always seen.
    let _ = writeln!(
        std::io::stderr(),
        "browser check SKIPPED in {test}: no Chromium found (install Debian's chromium, e.g. with \
         .ci/install-browser; FLEETSIM_REQUIRE_BROWSER=1 makes this a failure)"
    );
    None
}

/// What the browser made of a page.
struct Rendered {
    dom: String,
    /// Console messages (errors, warnings, policy violations, logs) the page produced.
    console: Vec<String>,
    screenshot: Vec<u8>,
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}

/// Opens `page` in headless Chromium with a fresh profile under `work`.
fn open(chromium: &Path, page: &Path, work: &Path) -> Rendered {
    let shot = work.join("screenshot.png");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", work.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(file_url(page))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + BROWSER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (dom, log) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "Chromium failed ({status}):\n{log}");
    // Chromium logs every console message of the page as `…:CONSOLE:<line>] "<message>", source: …`.
    let console = log.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    let screenshot = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}):\n{log}"));
    Rendered { dom, console, screenshot }
}

/// Width, height and RGB pixels of a PNG.
fn pixels(png_bytes: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG screenshot");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a PNG screenshot of a size that fits in memory")];
    let info = reader.next_frame(&mut buffer).expect("PNG pixels");
    let channels = info.color_type.samples();
    let rgb = buffer[..info.buffer_size()]
        .chunks(channels)
        .map(|p| if channels >= 3 { [p[0], p[1], p[2]] } else { [p[0]; 3] })
        .collect();
    (info.width, info.height, rgb)
}

fn near(p: [u8; 3], q: [u8; 3], tolerance: u8) -> bool {
    p.iter().zip(q).all(|(a, b)| a.abs_diff(b) <= tolerance)
}

#[test]
fn console_messages_are_detected() {
    // A control: if Chromium stopped logging console messages this way, the report test below could
    // pass without checking anything. This page must produce an error and a policy violation.
    let Some(chromium) = browser("console_messages_are_detected") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; script-src 'unsafe-inline'\"><title>broken</title></head><body>\
         <p>broken</p><img src=\"missing.png\" alt=\"\"><script>notDefined();</script></body></html>",
    )
    .unwrap();
    let rendered = open(&chromium, &page, work.path());
    let console = rendered.console.join("\n");
    assert!(console.contains("Uncaught ReferenceError"), "the script error is seen:\n{console}");
    assert!(console.contains("Content Security Policy"), "the blocked image is seen:\n{console}");
}

#[test]
fn the_report_renders_in_chromium_with_its_charts_and_no_console_message() {
    let Some(chromium) = browser("the_report_renders_in_chromium_with_its_charts_and_no_console_message") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (scenario, result) = run(TEN);
    let files = report::render(&ReportContext::new(&scenario, &result)).unwrap();
    let folder = work.path().join("report");
    report::write_folder(&folder, &files, report::Replace::Reports).unwrap();
    let rendered = open(&chromium, &folder.join("index.html"), work.path());

    assert!(rendered.console.is_empty(), "console messages:\n{}", rendered.console.join("\n"));
    for name in ["gantt", "completion", "concurrency", "pending"] {
        assert!(rendered.dom.contains(&format!("id=\"chart-{name}\"")), "chart {name} is in the DOM");
    }
    assert_eq!(rendered.dom.matches("<svg").count(), 4, "four inline charts");
    assert!(rendered.dom.contains("prod-us-3") && rendered.dom.contains("DrainTimeout"));

    let (w, h, rgb) = pixels(&rendered.screenshot);
    assert_eq!((w, h), WINDOW);
    let white = [255, 255, 255];
    let inked = rgb.iter().filter(|p| !near(**p, white, 8)).count();
    assert!(inked * 50 > rgb.len(), "the page is not blank: {inked} of {} pixels are not white", rgb.len());
    // The Gantt chart's Completed bars and the failed attempt are drawn, not just the tables.
    for (what, color) in [("Completed", [0x00, 0x9E, 0x73]), ("Failed", [0xD5, 0x5E, 0x00])] {
        let count = rgb.iter().filter(|p| near(**p, color, 16)).count();
        assert!(count > 200, "{what} bars are visible in the screenshot ({count} pixels)");
    }
}

#[test]
fn the_sweep_index_renders_in_chromium_with_its_charts_and_no_console_message() {
    let Some(chromium) = browser("the_sweep_index_renders_in_chromium_with_its_charts_and_no_console_message") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let sweep = work.path().join("sweep.json");
    let base = crate::support::root().join("scenarios/sweep-base.json");
    std::fs::write(
        &sweep,
        serde_json::json!({
            "name": "browser-sweep",
            "scenario": base,
            "parameters": [{"name": "earlyConcurrency", "pointer": "/updateStrategies/prod/stages/1/maxConcurrency", "values": ["2", "10"]}],
            "replications": 3
        })
        .to_string(),
    )
    .unwrap();
    let out = work.path().join("out");
    let status = Command::new(crate::support::binary())
        .args(["sweep", sweep.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
        .status()
        .unwrap();
    assert!(status.success());
    let rendered = open(&chromium, &out.join("index.html"), work.path());
    assert!(rendered.console.is_empty(), "console messages:\n{}", rendered.console.join("\n"));
    assert!(rendered.dom.matches("<svg").count() >= 3, "the sweep charts are inline");
    assert!(rendered.dom.contains("earlyConcurrency"));
    let (_, _, rgb) = pixels(&rendered.screenshot);
    let inked = rgb.iter().filter(|p| !near(**p, [255, 255, 255], 8)).count();
    assert!(inked * 50 > rgb.len(), "the page is not blank");
}

#[test]
fn a_profile_report_renders_in_chromium_with_its_auto_upgrade_charts_and_no_console_message() {
    let Some(chromium) =
        browser("a_profile_report_renders_in_chromium_with_its_auto_upgrade_charts_and_no_console_message")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (scenario, result) = run(&crate::profile_charts::small_profile_report());
    let files = report::render(&ReportContext::new(&scenario, &result)).unwrap();
    let folder = work.path().join("report");
    report::write_folder(&folder, &files, report::Replace::Reports).unwrap();
    let rendered = open(&chromium, &folder.join("index.html"), work.path());

    assert!(rendered.console.is_empty(), "console messages:\n{}", rendered.console.join("\n"));
    let profile_charts = crate::profile_charts::PROFILE_CHARTS;
    for name in ["gantt", "completion", "concurrency", "pending"].iter().chain(&profile_charts) {
        assert!(rendered.dom.contains(&format!("id=\"chart-{name}\"")), "chart {name} is in the DOM");
    }
    assert_eq!(rendered.dom.matches("<svg").count(), 4 + profile_charts.len(), "every chart is inline");
    assert!(rendered.dom.contains("id=\"autoupgrade\"") && rendered.dom.contains("lag p90 d"));

    let (_, _, rgb) = pixels(&rendered.screenshot);
    // The oldest minor's band (the dark end of viridis) is drawn on the page.
    let band = rgb.iter().filter(|p| near(**p, [0x44, 0x01, 0x54], 16)).count();
    assert!(band > 2_000, "the Kubernetes versions chart is visible in the screenshot ({band} pixels)");
}

/// The example report in Chromium: "Where the time went" is on the page above the charts, its
/// stage lines rendered, with no console message.
#[test]
fn the_critical_path_section_renders_above_the_charts() {
    let Some(chromium) = browser("the_critical_path_section_renders_above_the_charts") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(crate::support::root().join("scenarios/example.json")).unwrap();
    let (scenario, result) = run(&json);
    let files = report::render(&ReportContext::new(&scenario, &result)).unwrap();
    let folder = work.path().join("report");
    report::write_folder(&folder, &files, report::Replace::Reports).unwrap();
    let rendered = open(&chromium, &folder.join("index.html"), work.path());
    assert!(rendered.console.is_empty(), "console messages:\n{}", rendered.console.join("\n"));
    let section = rendered.dom.find("id=\"critical-path\"").expect("the section is in the DOM");
    let first_chart = rendered.dom.find("id=\"chart-").expect("charts are in the DOM");
    assert!(section < first_chart, "the critical path comes before the charts");
    let paths = fleetsim::report::critical::critical_paths(&scenario, &result);
    let first_line = &paths[0].stages[0].text;
    let escaped = first_line.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;");
    assert!(
        rendered.dom.contains(first_line.as_str()) || rendered.dom.contains(&escaped),
        "the stage line {first_line:?} is on the page"
    );
}

#[test]
fn the_tune_index_renders_in_chromium_with_the_recommendation_first() {
    let Some(chromium) = browser("the_tune_index_renders_in_chromium_with_the_recommendation_first") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let tune = work.path().join("tune.json");
    let base = crate::support::root().join("scenarios/tune-base.json");
    std::fs::write(
        &tune,
        serde_json::json!({
            "name": "browser-tune",
            "scenario": base,
            "run": "patch-1-33-2",
            "worlds": [
                {"name": "good", "overrides": [{"pointer": "/models/badReleases", "value": []}]},
                {"name": "bad"}
            ],
            "space": [{"name": "broadConcurrency", "pointer": "/updateStrategies/prod/stages/2/maxConcurrency", "values": [35, 50]}],
            "objective": {"metric": "hoursTo90PctUpgraded", "statistic": "p90", "world": "good"},
            "constraints": [{"metric": "blastRadius", "statistic": "p95", "world": "bad", "max": 40}],
            "budget": {"replications": 100, "initial": 3, "maxPerCandidate": 6}
        })
        .to_string(),
    )
    .unwrap();
    let out = work.path().join("out");
    let status = Command::new(crate::support::binary())
        .args(["tune", tune.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
        .status()
        .unwrap();
    assert!(status.success());
    let rendered = open(&chromium, &out.join("index.html"), work.path());
    assert!(rendered.console.is_empty(), "console messages:\n{}", rendered.console.join("\n"));
    let words = rendered.dom.find("id=\"recommendation\"").expect("the recommendation in words");
    assert!(words < rendered.dom.find("<svg").expect("the speed-against-risk chart"), "words come first");
    assert!(rendered.dom.contains("How the search converged"));
    let (_, _, rgb) = pixels(&rendered.screenshot);
    let inked = rgb.iter().filter(|p| !near(**p, [255, 255, 255], 8)).count();
    assert!(inked * 50 > rgb.len(), "the page is not blank");
}
