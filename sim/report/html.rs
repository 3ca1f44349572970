//! `index.html`: a self-contained page a reviewer opens in a browser (PRODUCT.md, issue 5).
//!
//! Self-contained means inline CSS and inline SVG charts, no script, no font, no image and no
//! address outside the folder; a Content-Security-Policy forbids loading anything, so a browser
//! would report any slip as an error. Every text that comes from a scenario or a simulation is
//! HTML-escaped. The page is deterministic: no generation time, only inputs.
//!
//! Large fleets stay usable: failures come first; the member table is folded in a `<details>` when it
//! has more than [`OPEN_MEMBER_ROWS`] rows and stops at [`MAX_MEMBER_ROWS`] (the rest is in
//! `members.csv`); the failure list stops at [`MAX_FAILURE_ROWS`] after a complete count by code.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::ReportContext;
use super::charts::Chart;
use super::charts::run::RunChart;
use super::summary::{RunSummary, Summary};
use super::tables::{self, MemberRow};
use crate::engine::Time;
use crate::fleet::KubernetesVersion;

/// Member tables up to this size are shown unfolded.
pub const OPEN_MEMBER_ROWS: usize = 100;
/// Rows of the member table; `members.csv` has them all.
pub const MAX_MEMBER_ROWS: usize = 10_000;
/// Rows of the failure list; the count by error code is always complete.
pub const MAX_FAILURE_ROWS: usize = 2_000;

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    Escaped(text).to_string()
}

/// Text escaped for HTML as it is written: the runs between special characters are written whole,
/// and nothing is allocated (a page has a few cells per member).
pub struct Escaped<'a>(pub &'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        escaped_pieces(self.0, |piece| f.write_str(piece))
    }
}

/// Hands `put` the pieces of `text` escaped: the runs between special characters whole, and each
/// special character's entity.
fn escaped_pieces<E>(text: &str, mut put: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = super::scan::first(&bytes[from..], special).map(|i| from + i) {
        let entity = match bytes[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => unreachable!("only the five special bytes are found"),
        };
        put(&text[from..i])?;
        put(entity)?;
        from = i + 1;
    }
    put(&text[from..])
}

/// Whether HTML text escapes byte `b` (found 16 bytes at a time: most cells of a member table have
/// nothing to escape).
#[inline(always)]
fn special(b: u8) -> bool {
    (b == b'&') | (b == b'<') | (b == b'>') | (b == b'"') | (b == b'\'')
}

/// Appends `text` to `out` escaped as [`Escaped`] writes it, without the formatting machinery: the
/// member tables push a dozen cells per row, most of them with nothing to escape.
pub fn push_escaped(out: &mut String, text: &str) {
    let Ok(()) = escaped_pieces(text, |piece| -> Result<(), std::convert::Infallible> {
        out.push_str(piece);
        Ok(())
    });
}

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #222;
  background: #fff; margin: 0 auto; max-width: 1480px; padding: 12px 24px 48px; }
h1 { font-size: 24px; margin: 10px 0 4px; }
h2 { font-size: 19px; margin: 30px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p { max-width: 1000px; }
.meta { color: #555; margin: 2px 0; }
nav { margin: 10px 0; }
nav a { margin-right: 16px; }
a { color: #0b5cad; }
.scroll { overflow-x: auto; max-width: 100%; }
.tall { max-height: 640px; overflow: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 8px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.time { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.name { white-space: nowrap; max-width: 36em; overflow: hidden; text-overflow: ellipsis; }
table.wide td.name { position: sticky; left: 0; background: #fff; box-shadow: 1px 0 0 #ddd; }
table.wide th:first-child { left: 0; z-index: 2; }
.s-Completed { color: #00795a; }
.s-Failed { color: #b34700; font-weight: 600; }
.s-Running, .s-Stopping { color: #00609a; }
.s-Pending { color: #8a5a00; }
.s-Skipped, .s-NotStarted, .s-NotSelected, .s-Stopped { color: #666; }
figure { margin: 14px 0 30px; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { color: #444; margin: 6px 0; max-width: 1000px; }
details > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
footer { color: #666; margin-top: 40px; font-size: 12px; }
.warnings { background: #fff6e0; border: 1px solid #e0b050; padding: 2px 16px; margin: 12px 0; }
.warnings h2 { border: none; margin: 8px 0 4px; color: #7a4b00; }
"#;

/// The page frame: head with inline CSS and a policy that forbids loading anything.
fn page(title: &str, body: &str) -> String {
    // Sized once: a run report's body holds its charts and up to ten thousand member rows.
    let mut page = String::with_capacity(body.len() + STYLE.len() + title.len() + 512);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style>\n</head>\n<body>\n",
        Escaped(title)
    );
    page.push_str(body);
    page.push_str("</body>\n</html>\n");
    page
}

/// A chart's SVG for inlining: an id and an accessible name on the root element, and without the
/// `xmlns` attribute, which HTML does not need (so the page names no address at all).
pub fn inline_svg(svg: &str, id: &str, label: &str) -> String {
    let mut out = String::new();
    push_inline_svg(&mut out, svg, id, label);
    out
}

/// Appends [`inline_svg`]'s text to `out`, with no string made in between (a page inlines charts
/// of megabytes).
fn push_inline_svg(out: &mut String, svg: &str, id: &str, label: &str) {
    const XMLNS: &str = " xmlns=\"http://www.w3.org/2000/svg\"";
    let svg = svg.trim();
    let (head, rest) = match svg.find(XMLNS) {
        Some(at) if at < svg.find('>').unwrap_or(0) => (&svg[..at], &svg[at + XMLNS.len()..]),
        _ => match svg.strip_prefix("<svg") {
            Some(rest) => ("<svg", rest),
            None => return,
        },
    };
    out.push_str(head);
    out.push_str(" id=\"");
    push_escaped(out, id);
    out.push_str("\" role=\"img\" aria-label=\"");
    push_escaped(out, label);
    out.push('"');
    out.push_str(rest);
}

/// An id-safe slug: lower-case letters, digits and dashes.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "chart".into() } else { out }
}

fn looks_numeric(text: &str) -> bool {
    !text.is_empty() && text.trim_end_matches([' ', 'h', '%']).parse::<f64>().is_ok()
}

/// A table; cells that look numeric are right-aligned.
fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    write_table(out, header, rows, TableLook::Plain);
}

/// How [`write_table`] sets a table's first column.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TableLook {
    Plain,
    /// The first column names the row (a run, a stage, a member): on one line, cut with "…" past
    /// about 60 characters with the full name on hover, so that a long generated run name does not
    /// wrap over five lines; times never wrap either.
    Names,
    /// As `Names`, and the first column stays in view while a table too wide for the page scrolls
    /// sideways (48 auto-upgrade runs, one row each).
    Wide,
}

fn looks_like_time(text: &str) -> bool {
    text.len() == 20 && text.ends_with('Z') && text.as_bytes().get(10) == Some(&b'T')
}

fn write_table(out: &mut String, header: &[String], rows: &[Vec<String>], look: TableLook) {
    let class = if look == TableLook::Wide { " class=\"wide\"" } else { "" };
    let _ = write!(out, "<div class=\"scroll\"><table{class}>\n<thead><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let cell_escaped = escape(cell);
            if i == 0 && look != TableLook::Plain && !cell.is_empty() {
                let _ = write!(out, "<td class=\"name\" title=\"{cell_escaped}\">{cell_escaped}</td>");
            } else if looks_numeric(cell) {
                let _ = write!(out, "<td class=\"num\">{cell_escaped}</td>");
            } else if look != TableLook::Plain && looks_like_time(cell) {
                let _ = write!(out, "<td class=\"time\">{cell_escaped}</td>");
            } else {
                let _ = write!(out, "<td>{cell_escaped}</td>");
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

/// A member-table cell that names something: on one line, the full text on hover.
fn push_name_cell(out: &mut String, text: &str) {
    if text.is_empty() {
        out.push_str("<td></td>");
    } else {
        out.push_str("<td class=\"name\" title=\"");
        push_escaped(out, text);
        out.push_str("\">");
        push_escaped(out, text);
        out.push_str("</td>");
    }
}

/// A chart with its caption (left out when empty) and links to its files.
fn figure(out: &mut String, id: &str, title: &str, svg: &str, caption: &str, files: Option<&str>) {
    out.push_str("<figure>\n");
    push_inline_svg(out, svg, id, title);
    out.push('\n');
    if !caption.is_empty() || files.is_some() {
        let _ = write!(out, "<figcaption>{}", escape(caption));
        if let Some(stem) = files {
            let stem = escape(stem);
            let _ = write!(out, " Files: <a href=\"{stem}.svg\">SVG</a>, <a href=\"{stem}.png\">PNG</a>.");
        }
        out.push_str("</figcaption>\n");
    }
    out.push_str("</figure>\n");
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn hours_text(h: f64) -> String {
    format!("{h:.2}")
}

/// The `index.html` of a run report folder: `charts` are the run charts, `profile_charts` the
/// auto-upgrade charts (shown with the profile summaries when the scenario has profiles).
/// `member_sections` is what [`member_sections`] gives (made apart, while the charts render).
pub fn run_index(
    ctx: &ReportContext,
    charts: &[RunChart],
    profile_charts: &[RunChart],
    member_sections: &str,
) -> String {
    let summary = ctx.summary();
    // Sized for what it is known to hold: the inlined charts and the member sections, plus the
    // summary tables.
    let inlined: usize = charts.iter().chain(profile_charts).map(|c| c.chart.svg.len()).sum();
    let mut body = String::with_capacity(member_sections.len() + inlined + (1 << 16));
    header_section(&mut body, ctx, summary);
    warnings_section(&mut body, summary);
    critical_section(&mut body, summary);
    // Profiles come first: with many generated runs, they are the roll-up a reviewer reads first.
    autoupgrade_section(&mut body, summary, profile_charts);
    summary_section(&mut body, summary);
    body.push_str("<h2 id=\"charts\">Charts</h2>\n");
    for chart in charts {
        let stem = format!("charts/{}", chart.name);
        figure(
            &mut body,
            &format!("chart-{}", chart.name),
            &chart.title,
            &chart.chart.svg,
            &chart.caption,
            Some(&stem),
        );
    }
    stages_section(&mut body, summary);
    body.push_str(member_sections);
    if !summary.notes.is_empty() {
        body.push_str("<h2 id=\"notes\">Notes</h2>\n<p>Actions that did nothing, and why.</p>\n<ul>\n");
        for note in &summary.notes {
            let _ = writeln!(body, "<li>{}</li>", escape(note));
        }
        body.push_str("</ul>\n");
    }
    let _ = writeln!(
        body,
        "<footer>Written by fleetsim {}. This page is self-contained: inline CSS and SVG, no scripts, nothing \
         loaded from elsewhere. The same data is in <a href=\"members.csv\">members.csv</a>, \
         <a href=\"timeline.csv\">timeline.csv</a>, <a href=\"summary.json\">summary.json</a> and \
         <code>status/</code>.</footer>",
        env!("CARGO_PKG_VERSION")
    );
    page(&format!("fleetsim report: {}", ctx.scenario.name), &body)
}

/// Runs whose critical path the page shows; `summary.json` has every run's.
const CRITICAL_RUNS_SHOWN: usize = 12;

/// "Where the time went": each run's critical path, in the words the console prints, above the charts.
fn critical_section(out: &mut String, summary: &Summary) {
    if summary.runs.is_empty() {
        return;
    }
    out.push_str("<section class=\"critical\" id=\"critical-path\">\n<h2>Where the time went</h2>\n");
    for run in summary.runs.iter().take(CRITICAL_RUNS_SHOWN) {
        let path = &run.critical_path;
        let makespan = run.makespan_hours.map_or("never started".to_string(), |h| format!("{h:.1} h"));
        let _ = writeln!(
            out,
            "<h3>Run {}: {} after {}</h3>\n<ul>",
            escape(&run.name),
            escape(run.state),
            escape(&makespan)
        );
        let mut lines = path.lines();
        if let Some(b) = &run.blocked_on {
            lines.push(b.text.clone());
        }
        for line in lines {
            let _ = writeln!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul>\n");
        for stage in &path.stages {
            if stage.last_to_finish.is_empty() {
                continue;
            }
            let _ = writeln!(out, "<details><summary>Last to finish in stage {}</summary>", escape(&stage.name));
            let header: Vec<String> =
                ["member", "region", "state", "start", "end", "started after h", "why late", "Pending h"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
            let rows: Vec<Vec<String>> = stage
                .last_to_finish
                .iter()
                .map(|m| {
                    vec![
                        m.member.clone(),
                        m.region.clone(),
                        m.state.to_string(),
                        m.start.clone(),
                        m.end.clone(),
                        hours_text(super::summary::hours(m.started_after.0)),
                        m.reason.to_string(),
                        hours_text(super::summary::hours(m.pending.0)),
                    ]
                })
                .collect();
            write_table(out, &header, &rows, TableLook::Names);
            out.push_str("</details>\n");
        }
    }
    if summary.runs.len() > CRITICAL_RUNS_SHOWN {
        let _ = writeln!(
            out,
            "<p class=\"meta\">… and {} more runs: <a href=\"summary.json\">summary.json</a> has the critical path \
             of every run (<code>criticalPath</code>).</p>",
            summary.runs.len() - CRITICAL_RUNS_SHOWN
        );
    }
    out.push_str(
        "<p class=\"meta\">Each stage's time from reached to done, split by what held it: members upgrading; when none \
         was, members Pending for a closed maintenance window or a release not yet in their region; then gates \
         and the after-stage wait.</p>\n</section>\n",
    );
}

/// Warnings first: a reviewer should not read a `Completed` run without knowing its canary stage
/// selected nobody.
fn warnings_section(out: &mut String, summary: &Summary) {
    if summary.warnings.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section class=\"warnings\" id=\"warnings\">\n<h2>{}</h2>\n<ul>",
        plural(summary.warnings.len(), "warning", "warnings")
    );
    for w in &summary.warnings {
        let pointer = if w.pointer.is_empty() { "/" } else { &w.pointer };
        let _ = writeln!(out, "<li><code>{}</code>: {}</li>", escape(pointer), escape(&w.message));
    }
    out.push_str("</ul>\n</section>\n");
}

fn header_section(out: &mut String, ctx: &ReportContext, summary: &Summary) {
    let _ = writeln!(out, "<h1>fleetsim report: {}</h1>", escape(&summary.scenario));
    if let Some(description) = &ctx.scenario.description {
        let _ = writeln!(out, "<p>{}</p>", escape(description));
    }
    let horizon = if summary.horizon_reached { " (the horizon cut it short)" } else { "" };
    let _ = writeln!(
        out,
        "<p class=\"meta\">Seed {} · simulated from {} to {}{horizon} · {} · {}</p>",
        summary.seed,
        escape(&summary.start),
        escape(&summary.end),
        plural(summary.members, "member", "members"),
        plural(summary.runs.len(), "update run", "update runs"),
    );
    let autoupgrade = if summary.profiles.is_empty() { "" } else { "<a href=\"#autoupgrade\">Auto-upgrade</a>" };
    let _ = writeln!(
        out,
        "<nav><a href=\"#critical-path\">Where the time went</a>{autoupgrade}<a href=\"#summary\">Summary</a><a href=\"#charts\">Charts</a><a href=\"#stages\">Stages</a>\
         <a href=\"#failures\">Failures</a><a href=\"#members\">Members</a></nav>",
    );
}

/// Auto-upgrade profiles: runs generated, final target and lag per profile, then their charts.
fn autoupgrade_section(out: &mut String, summary: &Summary, charts: &[RunChart]) {
    if summary.profiles.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"autoupgrade\">Auto-upgrade</h2>\n");
    let generated: usize = summary.profiles.iter().map(|p| p.runs_generated).sum();
    let _ = writeln!(
        out,
        "<p>{} generated {}.</p>",
        plural(summary.profiles.len(), "auto-upgrade profile", "auto-upgrade profiles"),
        plural(generated, "update run", "update runs")
    );
    let header: Vec<String> = [
        "profile",
        "channel",
        "runs generated",
        "final target",
        "members behind",
        "lag mean d",
        "lag p50 d",
        "lag p90 d",
        "lag max d",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = summary
        .profiles
        .iter()
        .map(|p| {
            let name = if p.disabled { format!("{} (disabled)", p.name) } else { p.name.clone() };
            let mut row = vec![
                name,
                p.channel.to_string(),
                p.runs_generated.to_string(),
                p.final_target.clone().unwrap_or_else(|| "n/a".into()),
            ];
            match &p.lag_days {
                Some(lag) => row.extend([
                    lag.members_behind.to_string(),
                    format!("{:.1}", lag.mean),
                    format!("{:.1}", lag.p50),
                    format!("{:.1}", lag.p90),
                    format!("{:.1}", lag.max),
                ]),
                None => row.extend(std::iter::repeat_n("n/a".to_string(), 5)),
            }
            row
        })
        .collect();
    table(out, &header, &rows);
    for p in &summary.profiles {
        if let Some(note) = &p.note {
            let _ = writeln!(out, "<p>Profile {}: {}.</p>", escape(&p.name), escape(note));
        }
    }
    out.push_str(
        "<p class=\"meta\">Lag: days since the channel's target first moved beyond the member's Kubernetes \
         version, at the end of the simulation (Kubernetes channels only; NodeImage and SecurityPatch channels \
         have no Kubernetes target). Details: <a href=\"runs.csv\">runs.csv</a>, \
         <a href=\"versions.csv\">versions.csv</a>, <a href=\"fleet-metrics.csv\">fleet-metrics.csv</a>, \
         <a href=\"kubernetes-versions.csv\">kubernetes-versions.csv</a>, \
         <a href=\"release-latency.csv\">release-latency.csv</a>.</p>\n",
    );
    for chart in charts {
        let stem = format!("charts/{}", chart.name);
        figure(out, &format!("chart-{}", chart.name), &chart.title, &chart.chart.svg, &chart.caption, Some(&stem));
    }
}

/// Up to this many runs, the summary table has one column per run.
const TRANSPOSED_SUMMARY_RUNS: usize = 6;

const STATES: [&str; 6] = ["Completed", "Failed", "Skipped", "Running", "Pending", "NotStarted"];

fn summary_section(out: &mut String, summary: &Summary) {
    out.push_str("<h2 id=\"summary\">Summary</h2>\n");
    if summary.runs.is_empty() {
        out.push_str("<p>The scenario has no update run.</p>\n");
        return;
    }
    let mut labels: Vec<&str> = vec!["run", "state", "start", "end", "makespan h", "members"];
    labels.extend(STATES);
    labels.extend([
        "not selected",
        "failureCount",
        "Pending h: window",
        "Pending h: availability",
        "Pending h: gates",
        "wait h",
        "blast radius",
        "peak Running",
    ]);
    let columns: Vec<Vec<String>> = summary.runs.iter().map(run_row).collect();
    if columns.len() <= TRANSPOSED_SUMMARY_RUNS {
        // Few runs: one column per run reads better than a very wide row.
        let header: Vec<String> = columns.iter().map(|c| c[0].clone()).collect();
        let header: Vec<String> = std::iter::once("run".to_string()).chain(header).collect();
        let rows: Vec<Vec<String>> = labels
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, label)| std::iter::once(label.to_string()).chain(columns.iter().map(|c| c[i].clone())).collect())
            .collect();
        table(out, &header, &rows);
    } else {
        let header: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        write_table(out, &header, &columns, TableLook::Wide);
    }
    out.push_str(
        "<p class=\"meta\">Makespan runs from a run's start to its completion (or the end of the simulation). \
         Pending hours are member-hours for a closed window or a release not yet in the member's region, \
         and gate-hours for gates. Blast radius: members that received a release marked bad before the run \
         stopped.</p>\n",
    );
}

fn stages_section(out: &mut String, summary: &Summary) {
    if summary.runs.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"stages\">Stages and groups</h2>\n");
    for run in &summary.runs {
        let _ = writeln!(out, "<h3>Run {}</h3>", escape(&run.name));
        let header: Vec<String> = [
            "stage",
            "group",
            "state",
            "members",
            "maxConcurrency",
            "peak Running",
            "maxAllowedFailures",
            "failureCount",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rows = Vec::new();
        for stage in &run.stages {
            rows.push(vec![
                stage.name.clone(),
                String::new(),
                stage.state.to_string(),
                stage.members.to_string(),
                stage.max_concurrency.to_string(),
                stage.peak_concurrency.to_string(),
                stage.max_allowed_failures.to_string(),
                stage.failure_count.to_string(),
            ]);
            for group in &stage.groups {
                rows.push(vec![
                    String::new(),
                    group.name.clone(),
                    group.state.to_string(),
                    group.members.to_string(),
                    group.max_concurrency.to_string(),
                    group.peak_concurrency.to_string(),
                    group.max_allowed_failures.to_string(),
                    group.failure_count.to_string(),
                ]);
            }
        }
        write_table(out, &header, &rows, TableLook::Names);
    }
}

fn run_row(run: &RunSummary) -> Vec<String> {
    let mut row = vec![
        run.name.clone(),
        run.state.to_string(),
        run.start.clone().unwrap_or_else(|| "not started".into()),
        run.end.clone().unwrap_or_default(),
        run.makespan_hours.map(hours_text).unwrap_or_default(),
        run.members.total.to_string(),
    ];
    row.extend(STATES.iter().map(|s| run.members.by_state.get(s).copied().unwrap_or(0).to_string()));
    row.extend([
        run.members.not_selected.to_string(),
        run.failure_count.to_string(),
        hours_text(run.hours_pending.window),
        hours_text(run.hours_pending.availability),
        hours_text(run.hours_pending.gate),
        hours_text(run.after_stage_wait_hours),
        run.blast_radius.to_string(),
        run.peak_concurrency.to_string(),
    ]);
    row
}

fn member_table(out: &mut String, rows: &[&MemberRow], with_versions: bool) {
    out.push_str("<div class=\"scroll tall\"><table>\n<thead><tr>");
    let mut header = vec!["run", "stage", "group", "member", "region", "state", "start", "end"];
    if with_versions {
        header.extend(["from", "to", "node images"]);
    }
    header.extend(["failure code", "message"]);
    for h in header {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    // Cells are pushed piece by piece (a page shows up to ten thousand rows of a dozen cells).
    let cell = |out: &mut String, class: &str, text: &str| {
        out.push_str(class);
        push_escaped(out, text);
        out.push_str("</td>");
    };
    let time = |t: Option<Time>| t.map(Time::rfc3339);
    let mut images = String::new();
    for row in rows {
        out.push_str("<tr>");
        push_name_cell(out, row.run);
        cell(out, "<td>", row.stage);
        cell(out, "<td>", row.group);
        push_name_cell(out, row.member);
        cell(out, "<td>", row.region);
        out.push_str("<td class=\"s-");
        push_escaped(out, row.state);
        cell(out, "\">", row.state);
        let (start, end) = (time(row.start), time(row.end));
        cell(out, "<td class=\"time\">", start.as_ref().map_or("", |t| t.as_str()));
        cell(out, "<td class=\"time\">", end.as_ref().map_or("", |t| t.as_str()));
        if with_versions {
            cell(out, "<td>", row.from_version.text().as_str());
            cell(out, "<td>", row.to_version.map(KubernetesVersion::text).as_ref().map_or("", |t| t.as_str()));
            images.clear();
            row.node_images.write_to(&mut images);
            cell(out, "<td>", &images);
        }
        cell(out, "<td>", row.failure_code);
        cell(out, "<td>", row.message);
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

/// The failure and member sections of a run report's `index.html`: the part of the page that grows
/// with the fleet, made apart from the charts so that a report can build both at once.
pub fn member_sections(ctx: &ReportContext) -> String {
    let rows = RowsShown::gather(ctx);
    let mut out = String::new();
    failures_section(&mut out, &rows);
    members_section(&mut out, &rows);
    out
}

/// What the page shows of the member rows, gathered in one pass over them: a report of a large
/// fleet does not hold every row (`members.csv` is written from the same pass, streamed).
#[derive(Default)]
struct RowsShown<'a> {
    total: usize,
    /// The first [`MAX_MEMBER_ROWS`] rows.
    first: Vec<MemberRow<'a>>,
    failed: usize,
    /// The first [`MAX_FAILURE_ROWS`] failed rows.
    first_failed: Vec<MemberRow<'a>>,
    /// Failed members by error code: how many, and the first one's message.
    by_code: BTreeMap<&'a str, (usize, &'a str)>,
}

impl<'a> RowsShown<'a> {
    fn gather(ctx: &ReportContext<'a>) -> RowsShown<'a> {
        let mut shown = RowsShown::default();
        let Ok(()) = tables::each_member_row(ctx, |row| -> Result<(), std::convert::Infallible> {
            shown.total += 1;
            if row.state == "Failed" {
                shown.failed += 1;
                let code = if row.failure_code.is_empty() { "(no code)" } else { row.failure_code };
                shown.by_code.entry(code).or_insert((0, row.message)).0 += 1;
                if shown.first_failed.len() < MAX_FAILURE_ROWS {
                    shown.first_failed.push(row.clone());
                }
            }
            if shown.first.len() < MAX_MEMBER_ROWS {
                shown.first.push(row);
            }
            Ok(())
        });
        shown
    }
}

fn failures_section(out: &mut String, rows: &RowsShown) {
    out.push_str("<h2 id=\"failures\">Failures</h2>\n");
    if rows.failed == 0 {
        out.push_str("<p>No member failed.</p>\n");
        return;
    }
    let header: Vec<String> = ["error code", "members", "first message"].iter().map(|s| s.to_string()).collect();
    let table_rows: Vec<Vec<String>> = rows
        .by_code
        .iter()
        .map(|(code, (count, message))| vec![code.to_string(), count.to_string(), message.to_string()])
        .collect();
    table(out, &header, &table_rows);
    let shown: Vec<&MemberRow> = rows.first_failed.iter().collect();
    let _ = writeln!(out, "<h3>Failed members ({})</h3>", rows.failed);
    member_table(out, &shown, false);
    if shown.len() < rows.failed {
        let _ = writeln!(
            out,
            "<p class=\"meta\">The first {} of {} failed members; members.csv lists them all.</p>",
            shown.len(),
            rows.failed
        );
    }
}

fn members_section(out: &mut String, rows: &RowsShown) {
    out.push_str("<h2 id=\"members\">Members</h2>\n");
    if rows.total == 0 {
        out.push_str("<p>No member is in any run.</p>\n");
        return;
    }
    let open = if rows.total <= OPEN_MEMBER_ROWS { " open" } else { "" };
    let shown: Vec<&MemberRow> = rows.first.iter().collect();
    let _ = writeln!(out, "<details{open}>\n<summary>All members of every run ({} rows)</summary>", rows.total);
    member_table(out, &shown, true);
    if shown.len() < rows.total {
        let _ = writeln!(
            out,
            "<p class=\"meta\">The first {} of {} rows; members.csv lists them all.</p>",
            shown.len(),
            rows.total
        );
    }
    out.push_str("</details>\n");
}

/// A self-contained sweep report page: a title, a summary table (one row per sweep point, say) and
/// named charts, each inlined as SVG under its name as a heading.
///
/// Everything is HTML-escaped; table cells that look numeric are right-aligned; chart ids are
/// `chart-<slug of the name>` (made unique). The page loads nothing and runs no script.
///
/// ```no_run
/// use fleetsim::report::{charts, html};
/// let line = charts::sweep_line("Makespan", "maxConcurrency", "hours", &[(1.0, 40.0, 36.0, 44.0)])?;
/// let header = vec!["maxConcurrency".to_string(), "makespan h".to_string()];
/// let rows = vec![vec!["1".to_string(), "40.0".to_string()]];
/// let page = html::sweep_index_html("Sweep: stage limits", &header, &rows, &[("Makespan", &line)]);
/// std::fs::write("index.html", page)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn sweep_index_html(title: &str, header: &[String], rows: &[Vec<String>], charts: &[(&str, &Chart)]) -> String {
    sweep_page(title, &[], header, rows, charts)
}

/// [`sweep_index_html`] with paragraphs under the title that say what was swept.
pub fn sweep_page(
    title: &str,
    intro: &[String],
    header: &[String],
    rows: &[Vec<String>],
    charts: &[(&str, &Chart)],
) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", escape(title));
    for paragraph in intro {
        let _ = writeln!(body, "<p>{}</p>", escape(paragraph));
    }
    body.push_str("<h2 id=\"summary\">Summary</h2>\n");
    if rows.is_empty() {
        body.push_str("<p>No sweep point has results.</p>\n");
    }
    if !header.is_empty() || !rows.is_empty() {
        table(&mut body, header, rows);
    }
    if !charts.is_empty() {
        body.push_str("<h2 id=\"charts\">Charts</h2>\n");
    }
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    for (name, chart) in charts {
        let base = slug(name);
        let n = used.entry(base.clone()).or_insert(0);
        *n += 1;
        let id = if *n == 1 { format!("chart-{base}") } else { format!("chart-{base}-{n}") };
        let _ = writeln!(body, "<h3>{}</h3>", escape(name));
        figure(&mut body, &id, name, &chart.svg, "", None);
    }
    let _ = writeln!(
        body,
        "<footer>Written by fleetsim {}. This page is self-contained: inline CSS and SVG, no scripts.</footer>",
        env!("CARGO_PKG_VERSION")
    );
    page(title, &body)
}

/// A titled table: heading, column names, rows.
pub type Table = (String, Vec<String>, Vec<Vec<String>>);

/// A page of paragraphs, titled tables and charts with captions (the `fleetsim forecast` page).
pub fn report_page(title: &str, intro: &[String], tables: &[Table], charts: &[(&str, &Chart, &str)]) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>{}</h1>", escape(title));
    for paragraph in intro {
        let _ = writeln!(body, "<p class=\"meta\">{}</p>", escape(paragraph));
    }
    for (name, chart, caption) in charts {
        let _ = writeln!(body, "<h2 id=\"chart-{}\">{}</h2>", slug(name), escape(name));
        figure(&mut body, &format!("chart-{}-svg", slug(name)), name, &chart.svg, caption, Some("charts/fan"));
    }
    for (name, header, rows) in tables {
        let _ = writeln!(body, "<h2 id=\"{}\">{}</h2>", slug(name), escape(name));
        write_table(&mut body, header, rows, TableLook::Names);
    }
    let _ = writeln!(
        body,
        "<footer>Written by fleetsim {}. This page is self-contained: inline CSS and SVG, no scripts.</footer>",
        env!("CARGO_PKG_VERSION")
    );
    page(title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        assert_eq!(escape("ünïcode && plain"), "ünïcode &amp;&amp; plain");
        assert_eq!(escape(""), "");
        for text in ["<a href=\"x\">'&'</a>", "ünïcode && plain", "", "plain", "&", "a<"] {
            let mut pushed = String::from("kept ");
            push_escaped(&mut pushed, text);
            assert_eq!(pushed, format!("kept {}", escape(text)), "{text}");
        }
    }

    /// Escaping as a character-by-character replacement.
    fn reference(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                '&' => "&amp;".to_string(),
                '<' => "&lt;".to_string(),
                '>' => "&gt;".to_string(),
                '"' => "&quot;".to_string(),
                '\'' => "&#39;".to_string(),
                c => c.to_string(),
            })
            .collect()
    }

    #[test]
    fn a_special_character_is_escaped_at_every_place_of_text_of_every_length() {
        // Text shorter than the 16 bytes passed over at once, of whole chunks and a tail, with each
        // special character (and bytes next to them, and characters of two to four bytes) at each
        // place, alone and twice.
        for len in 0..=40 {
            for at in 0..len {
                for c in ['&', '<', '>', '"', '\'', '%', '=', '?', '(', 'é', 'Ѐ', '€', '😀'] {
                    let text: String = (0..len).map(|i| if i == at { c } else { 'a' }).collect();
                    for text in [text.clone(), format!("{text}{text}")] {
                        let mut pushed = String::new();
                        push_escaped(&mut pushed, &text);
                        assert_eq!(pushed, reference(&text), "{text:?}");
                        assert_eq!(escape(&text), reference(&text), "{text:?}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn escaping_is_a_replacement_of_each_special_character(text in "[a-z&<>\"' é]{0,60}") {
            let mut pushed = String::new();
            push_escaped(&mut pushed, &text);
            proptest::prop_assert_eq!(&pushed, &reference(&text));
            proptest::prop_assert_eq!(escape(&text), reference(&text));
        }
    }

    #[test]
    fn inlined_svg_names_no_address() {
        let svg = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect/>\n</svg>\n";
        let inline = inline_svg(svg, "chart-x", "A <b> chart");
        assert_eq!(
            inline,
            "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" id=\"chart-x\" role=\"img\" aria-label=\"A &lt;b&gt; chart\">\n<rect/>\n</svg>"
        );
        assert!(inline_svg("not svg", "a", "b").is_empty());
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Makespan vs. blast radius"), "makespan-vs-blast-radius");
        assert_eq!(slug("!!"), "chart");
    }
}
