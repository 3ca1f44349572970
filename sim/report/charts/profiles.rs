//! The auto-upgrade charts of a report folder whose scenario has profiles (SEMANTICS §9):
//!
//! - `kubernetes-versions`: members on each Kubernetes minor version, day by day, as stacked bands
//!   (oldest minor at the bottom, coloured from dark to light along the viridis ramp), with the day
//!   each new minor first reached a region marked;
//! - `lag-distribution`: small multiples of histograms at the end of the simulation: per
//!   Kubernetes-channel profile, the days each member is behind the channel's target (the data of
//!   `lagDays` in `summary.json`), and the age of each member's oldest node image;
//! - `lag-over-time`: mean and longest days behind each Kubernetes channel's target, and the mean
//!   node image age, day by day (the columns of `fleet-metrics.csv`).
//!
//! Every chart is drawn from [`FleetDays`] and [`EndState`], the same values the CSV files and
//! `summary.json` are written from. Their size depends on the number of days, minors and profiles,
//! never on the number of members.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Axis, DateAxis, Mark};
use super::run::RunChart;
use super::{DrawResult, Figure, render};
use crate::fleet::MinorVersion;
use crate::report::ReportContext;
use crate::report::profiles::{EndState, FleetDays, LagSummary, OLD_IMAGE_DAYS};

const WIDTH: u32 = 1400;
const DAY: f64 = 86_400.0;
/// Kubernetes-channel profiles drawn in the lag charts; more are named in the subtitle.
pub const MAX_LAG_PROFILES: usize = 7;
/// Most bins of a histogram.
pub const MAX_BINS: usize = 30;
/// Round bin widths in days, from which [`bin_width`] picks.
const BIN_WIDTHS: [f64; 12] = [0.25, 0.5, 1.0, 2.0, 5.0, 7.0, 14.0, 30.0, 60.0, 90.0, 180.0, 365.0];
const PANEL_HEIGHT: u32 = 380;
/// The days axis of lag histograms spans at least this many days (a week), and that of image ages
/// a little more than [`OLD_IMAGE_DAYS`], so that its mark shows.
const MIN_LAG_EXTENT: f64 = 7.0;
const MIN_AGE_EXTENT: f64 = OLD_IMAGE_DAYS as f64 + 5.0;
/// Header and legend above the small multiples.
const PANELS_TOP: u32 = 100;

/// The auto-upgrade charts, or none when the scenario has no profile.
pub fn profile_charts(ctx: &ReportContext, fleet: &FleetDays, end: &EndState) -> anyhow::Result<Vec<RunChart>> {
    if ctx.scenario.profiles.is_empty() {
        return Ok(Vec::new());
    }
    let versions = Versions::new(ctx, fleet);
    let lag = LagPanels::new(ctx, end);
    let over_time = LagOverTime::new(ctx, fleet);
    // Independent drawings, rendered in parallel and listed in a fixed order.
    let (versions_chart, (lag_chart, over_time_chart)) =
        rayon::join(|| render(&versions), || rayon::join(|| render(&lag), || render(&over_time)));
    Ok(vec![
        RunChart {
            name: "kubernetes-versions",
            title: "Kubernetes versions across the fleet".into(),
            caption: "Members on each Kubernetes minor version, day by day (kubernetes-versions.csv), the oldest \
                      minor at the bottom and darkest; dashed lines mark the day a new minor first reached a region."
                .into(),
            chart: versions_chart?,
        },
        RunChart {
            name: "lag-distribution",
            title: "Days behind at the end of the simulation".into(),
            caption: "At the end of the simulation: per Kubernetes-channel profile, the days each member had been \
                      behind the channel's target (lagDays in summary.json; the green bar counts members at the \
                      target), and the age of each member's oldest node image, which the NodeImage channel keeps \
                      down."
                .into(),
            chart: lag_chart?,
        },
        RunChart {
            name: "lag-over-time",
            title: "Days behind over time".into(),
            caption: "Mean (solid) and longest (dashed) days members were behind each Kubernetes channel's target, \
                      and the mean age of the members' oldest node image, day by day (fleet-metrics.csv)."
                .into(),
            chart: over_time_chart?,
        },
    ])
}

/// The x positions of the daily samples and the day each one shows: a single day is drawn over one
/// day's width so that it is visible.
fn day_points(fleet: &FleetDays) -> Vec<(f64, usize)> {
    match fleet.days.as_slice() {
        [] => Vec::new(),
        [only] => vec![(only.time.0 as f64, 0), (only.time.0 as f64 + DAY, 0)],
        days => days.iter().enumerate().map(|(k, d)| (d.time.0 as f64, k)).collect(),
    }
}

/// The x range and date axis over the sample positions.
fn date_frame(points: &[(f64, usize)]) -> (f64, f64, DateAxis) {
    let (first, last) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.0, b.0),
        _ => (0.0, DAY),
    };
    let pad = ((last - first) * 0.01).max(DAY / 4.0);
    (first - pad, last + pad, draw::date_axis(first as i64, last as i64, 13))
}

/// Drops the inner points of flat stretches: a linear outline with the same shape and fewer points.
fn outline(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let n = points.len();
    points
        .iter()
        .enumerate()
        .filter(|(k, p)| *k == 0 || *k + 1 == n || points[k - 1].1 != p.1 || points[k + 1].1 != p.1)
        .map(|(_, p)| *p)
        .collect()
}

/// Whether some member has a node pool with a known node image version.
fn known_images(ctx: &ReportContext) -> bool {
    ctx.scenario.fleet.iter().flat_map(|m| &m.node_pools).any(|p| p.node_image_version.is_some())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ----- Kubernetes versions ------------------------------------------------------------------------

struct Versions {
    subtitle: String,
    members: usize,
    points: Vec<(f64, usize)>,
    minors: Vec<MinorVersion>,
    /// `counts[i][k]`: members on `minors[i]` on day `k`.
    counts: Vec<Vec<usize>>,
    /// Minors first available in a region during the simulation, with that time.
    releases: Vec<(MinorVersion, i64)>,
}

impl Versions {
    fn new(ctx: &ReportContext, fleet: &FleetDays) -> Versions {
        let minors = fleet.minors();
        let counts = minors
            .iter()
            .map(|m| {
                fleet.days.iter().map(|d| d.per_minor.iter().find(|(x, _)| x == m).map_or(0, |(_, n)| *n)).collect()
            })
            .collect();
        let points = day_points(fleet);
        let (first, last) = (fleet.days.first().map(|d| d.time.0), fleet.days.last().map(|d| d.time.0));
        let mut first_seen: std::collections::BTreeMap<MinorVersion, i64> = std::collections::BTreeMap::new();
        for release in &ctx.scenario.releases.kubernetes {
            if let Some(t) = release.availability.first() {
                let entry = first_seen.entry(release.version.minor_version()).or_insert(t.0);
                *entry = (*entry).min(t.0);
            }
        }
        let mut releases: Vec<(MinorVersion, i64)> = first_seen
            .into_iter()
            .filter(|(_, t)| first.is_some_and(|f| *t > f) && last.is_some_and(|l| *t <= l))
            .collect();
        releases.sort_by_key(|(m, t)| (*t, *m));
        let time_of_day = ctx.scenario.start.to_rfc3339()[11..16].to_string();
        let subtitle = format!(
            "{} · {} · members per minor version, sampled daily at {time_of_day} UTC",
            ctx.scenario.name,
            plural(fleet.members, "member", "members")
        );
        Versions { subtitle, members: fleet.members, points, minors, counts, releases }
    }

    /// The band colour of the `i`-th minor, oldest dark, newest light.
    fn color(&self, i: usize) -> (RGBColor, RGBColor) {
        let t = if self.minors.len() <= 1 { 0.5 } else { i as f64 / (self.minors.len() - 1) as f64 };
        // Text on the band: white on the dark half of the ramp.
        let ink = if t < 0.55 { WHITE } else { draw::INK };
        (draw::viridis(t), ink)
    }
}

impl Figure for Versions {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 620)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = draw::header(root, "Kubernetes versions across the fleet", &self.subtitle)?;
        let mut legend: Vec<(String, RGBColor, Mark)> =
            self.minors.iter().enumerate().map(|(i, m)| (m.to_string(), self.color(i).0, Mark::Swatch)).collect();
        if !self.releases.is_empty() {
            legend.push(("a new minor first reaches a region".into(), draw::INK, Mark::Dashed));
        }
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if self.members == 0 || self.points.is_empty() {
            return draw::empty_note(&area, "no member");
        }
        let (x_lo, x_hi, axis) = date_frame(&self.points);
        let y_hi = self.members as f64 * if self.releases.is_empty() { 1.04 } else { 1.09 };
        let (y_ticks, y_step) = draw::nice_ticks(0.0, y_hi, 8, 1.0);
        let area = draw::inset_for_y_desc(&area);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(x_lo..x_hi, axis.ticks.clone()),
                y: Axis::new(0.0..y_hi, y_ticks),
                x_label: &|v| axis.label(*v),
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: "date (UTC)",
                y_desc: "members",
                sizes: (24, 46, 70),
            },
        )?;
        // Cumulative bands drawn from the top down, each from zero: every band covers the lower edge
        // of the one above it, so no seam of background shows between bands.
        let mut cumulative: Vec<Vec<usize>> = Vec::with_capacity(self.counts.len());
        for counts in &self.counts {
            let row = match cumulative.last() {
                Some(below) => counts.iter().zip(below).map(|(n, b)| n + b).collect(),
                None => counts.clone(),
            };
            cumulative.push(row);
        }
        let (x_first, x_last) = (self.points[0].0, self.points[self.points.len() - 1].0);
        for i in (0..self.minors.len()).rev() {
            let mut points = outline(self.points.iter().map(|&(x, k)| (x, cumulative[i][k] as f64)).collect());
            points.extend([(x_last, 0.0), (x_first, 0.0)]);
            chart.draw_series(std::iter::once(Polygon::new(points, self.color(i).0.filled())))?;
        }
        // Each band named where it is thickest, when that is tall enough for text.
        let (left, _) = chart.backend_coord(&(x_first, 0.0));
        let (right, _) = chart.backend_coord(&(x_last, 0.0));
        for (i, minor) in self.minors.iter().enumerate() {
            // The middle of the days on which the band is at least 90 % of its thickest.
            let thickest = self.points.iter().map(|(_, k)| self.counts[i][*k]).max().unwrap_or(0);
            let wide: Vec<&(f64, usize)> =
                self.points.iter().filter(|(_, k)| self.counts[i][*k] * 10 >= thickest * 9).collect();
            let Some(&&(x, k)) = wide.get(wide.len() / 2) else {
                continue;
            };
            let upper = cumulative[i][k] as f64;
            let lower = upper - self.counts[i][k] as f64;
            let (px, top_px) = chart.backend_coord(&(x, upper));
            let (_, bottom_px) = chart.backend_coord(&(x, lower));
            if bottom_px - top_px < 18 {
                continue;
            }
            let style = draw::anchored(draw::font_color(13.0, self.color(i).1), HPos::Center, VPos::Center);
            let px = px.clamp(left + 30, (right - 30).max(left + 30));
            root.draw(&Text::new(minor.to_string(), (px, (top_px + bottom_px) / 2), style))?;
        }
        // Release labels in the headroom above the bands, right of their line (left of it near the
        // right edge), on the first of three rows where they overlap no earlier label.
        let style = draw::font_color(11.0, draw::INK);
        let (x0, y0) = chart.plotting_area().get_base_pixel();
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let mut placer = draw::Placer::within((x0, y0, x0 + w as i32, y0 + h as i32));
        for (_, t) in &self.releases {
            let x = *t as f64;
            let line = ShapeStyle::from(draw::INK.mix(0.7)).stroke_width(1);
            chart.draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y_hi)], 6, 4, line))?;
        }
        for (minor, t) in &self.releases {
            let (px, py) = chart.backend_coord(&(*t as f64, y_hi));
            let text = format!("{minor} released");
            let (tw, th) = root.estimate_text_size(&text, &style)?;
            let (tw, th) = (tw as i32 + 2, th as i32 + 2);
            let rows = (0..3).map(|row| py + 2 + (th + 1) * row);
            let right = rows.clone().map(|y| (px + 3, y, px + 3 + tw, y + th));
            let left = rows.map(|y| (px - 3 - tw, y, px - 3, y + th));
            if let Some(found) = placer.place(right.chain(left)) {
                draw::boxed_text(root, &text, &style, found, 1)?;
            }
        }
        draw::left_out_note(root, placer.left_out, "release labels")
    }
}

// ----- Lag distribution ---------------------------------------------------------------------------

/// The bin width in days for values from 0 to `max`: the smallest round width that needs at most
/// [`MAX_BINS`] bins.
pub fn bin_width(max: f64) -> f64 {
    let max = if max.is_finite() { max.max(0.0) } else { 0.0 };
    BIN_WIDTHS.iter().copied().find(|w| (max / w).floor() + 1.0 <= MAX_BINS as f64).unwrap_or_else(|| {
        let years = (max / 365.0 / MAX_BINS as f64).floor() + 1.0;
        years * 365.0
    })
}

/// Counts of `values` in bins `[k·width, (k+1)·width)`, as many bins as the largest value needs.
/// With `zero_apart`, values of exactly 0 are counted apart (the first number) and not in a bin.
/// Negative values count in the first bin; non-finite values are left out.
pub fn histogram(values: &[f64], width: f64, zero_apart: bool) -> (usize, Vec<usize>) {
    let mut zeros = 0;
    let mut bins: Vec<usize> = Vec::new();
    for &v in values.iter().filter(|v| v.is_finite()) {
        if zero_apart && v == 0.0 {
            zeros += 1;
            continue;
        }
        let k = ((v.max(0.0) / width).floor() as usize).min(100_000);
        if bins.len() <= k {
            bins.resize(k + 1, 0);
        }
        bins[k] += 1;
    }
    (zeros, bins)
}

struct Panel {
    title: String,
    note: String,
    /// Mean and quantiles in days.
    stats: String,
    x_desc: &'static str,
    /// Why the panel is empty, when it has no value.
    empty: &'static str,
    values: usize,
    width: f64,
    /// Members at the target (lag panels only).
    zeros: Option<usize>,
    bins: Vec<usize>,
    /// Dashed lines: label, value, colour.
    marks: Vec<(String, f64, RGBColor)>,
    /// The x extent of the bins, shared by panels that compare the same thing.
    x_extent: f64,
    /// The tallest bar of the panels sharing a scale.
    y_max: usize,
}

struct LagPanels {
    subtitle: String,
    panels: Vec<Panel>,
    image_panel: bool,
}

fn days_text(v: f64) -> String {
    format!("{} d", draw::short_number(v))
}

/// Dashed lines at p50, p90 and max, and the text that gives their values.
fn quantile_marks(sorted: &[f64]) -> (Vec<(String, f64, RGBColor)>, String) {
    let summary = LagSummary::of(sorted);
    let marks = vec![
        ("p50".to_string(), summary.p50, draw::INK),
        ("p90".to_string(), summary.p90, draw::INK),
        ("max".to_string(), summary.max, draw::MUTED),
    ];
    let text = format!(
        "mean {} · p50 {} · p90 {} · max {}",
        days_text(summary.mean),
        days_text(summary.p50),
        days_text(summary.p90),
        days_text(summary.max)
    );
    (marks, text)
}

impl LagPanels {
    fn new(ctx: &ReportContext, end: &EndState) -> LagPanels {
        let members = ctx.scenario.fleet.len();
        let kubernetes: Vec<(usize, &Vec<f64>)> =
            end.lags.iter().enumerate().filter_map(|(p, l)| l.as_ref().map(|l| (p, l))).collect();
        let drawn = &kubernetes[..kubernetes.len().min(MAX_LAG_PROFILES)];
        // Lag panels share their bins and scales, so that profiles compare at a glance.
        let max_lag = drawn.iter().flat_map(|(_, l)| l.last()).copied().fold(MIN_LAG_EXTENT, f64::max);
        let width = bin_width(max_lag);
        let mut panels: Vec<Panel> = drawn
            .iter()
            .map(|&(p, lags)| {
                let spec = &ctx.scenario.profiles[p];
                let outcome = &ctx.result.profiles[p];
                let summary = LagSummary::of(lags);
                let (zeros, bins) = histogram(lags, width, true);
                let (marks, stats) = quantile_marks(lags);
                let mut note = format!(
                    "target {} · {} of {} behind · {} generated",
                    outcome.targets.last().map_or_else(|| "none".to_string(), |(_, v)| v.to_string()),
                    summary.members_behind,
                    plural(lags.len(), "member", "members"),
                    plural(outcome.runs.len(), "run", "runs"),
                );
                if spec.disabled {
                    note.push_str(" · disabled");
                }
                Panel {
                    title: format!("{} · {} channel", spec.name, spec.channel.api_name()),
                    note,
                    x_desc: "days behind the channel's target",
                    empty: "no member",
                    values: lags.len(),
                    width,
                    zeros: Some(zeros),
                    bins,
                    marks,
                    stats,
                    x_extent: 0.0,
                    y_max: 0,
                }
            })
            .collect();
        let x_extent = (panels.iter().map(|p| p.bins.len()).max().unwrap_or(0) as f64 * width).max(MIN_LAG_EXTENT);
        let y_max = panels.iter().flat_map(|p| p.bins.iter().chain(p.zeros.iter())).copied().max().unwrap_or(0);
        for panel in &mut panels {
            panel.x_extent = x_extent;
            panel.y_max = y_max;
        }
        let ages = &end.image_ages;
        let image_panel = known_images(ctx) || kubernetes.is_empty();
        if image_panel {
            let extent = ages.last().copied().unwrap_or(0.0).max(MIN_AGE_EXTENT);
            let width = bin_width(extent);
            let (_, bins) = histogram(ages, width, false);
            let (mut marks, stats) = quantile_marks(ages);
            marks.push((format!("{OLD_IMAGE_DAYS} days"), OLD_IMAGE_DAYS as f64, draw::FAILED));
            let unknown = members - ages.len();
            let old = ages.iter().filter(|a| **a > OLD_IMAGE_DAYS as f64).count();
            let mut note =
                format!("{old} of {} older than {OLD_IMAGE_DAYS} days", plural(ages.len(), "member", "members"));
            if unknown > 0 {
                note.push_str(&format!(" · {unknown} without a known image left out"));
            }
            let channels: Vec<&str> =
                ctx.scenario.profiles.iter().filter(|p| !p.channel.is_kubernetes()).map(|p| p.name.as_str()).collect();
            if !channels.is_empty() {
                note.push_str(&format!(" · node image profiles: {}", channels.join(", ")));
            }
            panels.push(Panel {
                title: "Node image age".into(),
                note,
                x_desc: "days since the member's oldest pool image was published",
                empty: "no member has a known node image",
                values: ages.len(),
                width,
                zeros: None,
                x_extent: (bins.len() as f64 * width).max(MIN_AGE_EXTENT),
                y_max: bins.iter().copied().max().unwrap_or(0),
                bins,
                marks,
                stats,
            });
        }
        let mut subtitle = format!("{} · {} · members per bin", ctx.scenario.name, &end.time.to_rfc3339()[..10]);
        if kubernetes.len() > drawn.len() {
            subtitle.push_str(&format!(" · first {} of {} Kubernetes-channel profiles", drawn.len(), kubernetes.len()));
        }
        LagPanels { subtitle, panels, image_panel }
    }

    fn grid(&self) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let cols = if n == 1 { 1 } else { 2 };
        (n.div_ceil(cols), cols)
    }
}

impl Figure for LagPanels {
    fn size(&self) -> (u32, u32) {
        (WIDTH, PANELS_TOP + PANEL_HEIGHT * self.grid().0 as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = draw::header(root, "Days behind at the end of the simulation", &self.subtitle)?;
        let mut legend = Vec::new();
        if self.panels.iter().any(|p| p.zeros.is_some()) {
            legend.push(("members at the channel's target".to_string(), draw::COMPLETED, Mark::Swatch));
        }
        legend.push(("members per bin".to_string(), draw::RUNNING, Mark::Swatch));
        legend.push(("p50, p90 and max".to_string(), draw::INK, Mark::Dashed));
        if self.image_panel {
            legend.push((format!("{OLD_IMAGE_DAYS}-day image age"), draw::FAILED, Mark::Dashed));
        }
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically((below as u32 + 6).max(PANELS_TOP - 4));
        let (rows, cols) = self.grid();
        let cells = area.split_evenly((rows, cols));
        for (panel, cell) in self.panels.iter().zip(&cells) {
            draw_panel(cell, panel)?;
        }
        Ok(())
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> DrawResult<DB> {
    let w = area.dim_in_pixel().0.saturating_sub(30);
    let title_style = draw::anchored(draw::font(15.0), HPos::Left, VPos::Top);
    area.draw(&Text::new(draw::fit_text(area, &panel.title, &title_style, w), (15, 4), title_style.clone()))?;
    let note_style = draw::anchored(draw::font_color(12.0, draw::MUTED), HPos::Left, VPos::Top);
    area.draw(&Text::new(draw::fit_text(area, &panel.note, &note_style, w), (15, 24), note_style.clone()))?;
    if panel.values > 0 {
        area.draw(&Text::new(draw::fit_text(area, &panel.stats, &note_style, w), (15, 40), note_style.clone()))?;
    }
    let (_, plot) = area.split_vertically(58);
    if panel.values == 0 {
        return draw::empty_note(&plot, panel.empty);
    }
    let plot = draw::inset_for_y_desc(&plot);
    let width = panel.width;
    let x_lo = if panel.zeros.is_some() { -1.4 * width } else { -0.2 * width };
    let x_hi = panel.x_extent + 0.2 * width;
    let y_hi = panel.y_max.max(1) as f64 * 1.22 + 0.5;
    let (x_ticks, x_step) = draw::nice_ticks(0.0, panel.x_extent, 8, 0.0);
    let (y_ticks, y_step) = draw::nice_ticks(0.0, y_hi, 6, 1.0);
    let mut chart = ChartBuilder::on(&plot)
        .margin_right(20)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(62)
        .build_cartesian_2d(Axis::new(x_lo..x_hi, x_ticks), Axis::new(0.0..y_hi, y_ticks))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(draw::GRID)
        .x_label_formatter(&|v| draw::number_label(*v, x_step))
        .y_label_formatter(&|v| draw::number_label(*v, y_step))
        .label_style(draw::font(11.0))
        .x_desc(panel.x_desc)
        .y_desc("members")
        .axis_desc_style(draw::font(12.0))
        .draw()?;
    // Text is placed in pixels relative to the plot area; the chart gives backend pixels.
    let (bx, by) = plot.get_base_pixel();
    let coord = chart.as_coord_spec().clone();
    let at = |x: f64, y: f64| {
        let (px, py) = coord.translate(&(x, y));
        (px - bx, py - by)
    };
    let gap = width * 0.08;
    let show_counts = at(width, 0.0).0 - at(0.0, 0.0).0 >= 18;
    let mut bars: Vec<(f64, f64, usize, RGBColor)> = Vec::new();
    if let Some(zeros) = panel.zeros {
        bars.push((-1.3 * width, -0.3 * width, zeros, draw::COMPLETED));
    }
    for (k, n) in panel.bins.iter().enumerate() {
        bars.push((k as f64 * width + gap, (k + 1) as f64 * width - gap, *n, draw::RUNNING));
    }
    for &(from, to, n, color) in &bars {
        if n > 0 {
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (to, n as f64)], color.filled())))?;
        }
    }
    // Quantile and threshold lines under every text: the counts and labels drawn after them sit on
    // a white ground, so that no line crosses a number.
    for (_, value, color) in &panel.marks {
        let x = value.clamp(0.0, panel.x_extent);
        let style = ShapeStyle::from(color.mix(0.9)).stroke_width(1);
        chart.draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y_hi)], 5, 4, style))?;
    }
    let ((x0, y0), (x1, y1)) = (at(x_lo, y_hi), at(x_hi, 0.0));
    let mut placer = draw::Placer::within((x0, y0, x1, y1));
    // Counts over the bars, and over the at-target bar even when none is at the target; they are
    // never left out, so they are placed first.
    let count_style = draw::font_color(10.0, draw::INK);
    for (i, &(from, to, n, _)) in bars.iter().enumerate() {
        let at_target = i == 0 && panel.zeros.is_some();
        let mut texts = Vec::new();
        if show_counts && (n > 0 || at_target) {
            texts.push(n.to_string());
        }
        if at_target {
            texts.push("at target".to_string());
        }
        let (px, mut bottom) = at((from + to) / 2.0, n as f64);
        for text in texts {
            let (w, h) = plot.estimate_text_size(&text, &count_style)?;
            let (w, h) = (w as i32 + 2, h as i32 + 2);
            let found = (px - w / 2, bottom - 2 - h, px - w / 2 + w, bottom - 2);
            placer.block(found);
            draw::boxed_text(&plot, &text, &count_style, found, 1)?;
            bottom = found.1;
        }
    }
    // Line labels near the top, right of their line (left of it near the right edge), on the first
    // row where they overlap neither a count nor another label.
    for (label, value, color) in &panel.marks {
        let x = value.clamp(0.0, panel.x_extent);
        let (px, py) = at(x, y_hi);
        let style = draw::font_color(11.0, *color);
        let (w, h) = plot.estimate_text_size(label, &style)?;
        let (w, h) = (w as i32 + 4, h as i32 + 2);
        let rows = (0..8).map(|row| py + 3 + (h + 1) * row);
        let right: Vec<draw::PxBox> = rows.clone().map(|y| (px + 3, y, px + 3 + w, y + h)).collect();
        let left: Vec<draw::PxBox> = rows.map(|y| (px - 3 - w, y, px - 3, y + h)).collect();
        if let Some(found) = placer.place(right.into_iter().chain(left)) {
            draw::boxed_text(&plot, label, &style, found, 1)?;
        }
    }
    Ok(())
}

// ----- Days behind over time ----------------------------------------------------------------------

struct LagOverTime {
    subtitle: String,
    points: Vec<(f64, usize)>,
    /// Label, colour, dashed, value per day.
    series: Vec<(String, RGBColor, bool, Vec<f64>)>,
}

impl LagOverTime {
    fn new(ctx: &ReportContext, fleet: &FleetDays) -> LagOverTime {
        let mut series = Vec::new();
        let drawn = fleet.kubernetes_profiles.len().min(MAX_LAG_PROFILES);
        for (i, &p) in fleet.kubernetes_profiles.iter().take(drawn).enumerate() {
            let name = &ctx.scenario.profiles[p].name;
            let color = draw::series_color(i);
            series.push((format!("{name}: mean"), color, false, fleet.days.iter().map(|d| d.lag[i].mean).collect()));
            series.push((format!("{name}: max"), color, true, fleet.days.iter().map(|d| d.lag[i].max).collect()));
        }
        if known_images(ctx) {
            series.push((
                "mean node image age".into(),
                draw::MUTED,
                false,
                fleet.days.iter().map(|d| d.mean_image_age).collect(),
            ));
        }
        let mut subtitle = format!("{} · daily · days behind each Kubernetes channel's target", ctx.scenario.name);
        if fleet.kubernetes_profiles.len() > drawn {
            subtitle.push_str(&format!(" · first {drawn} of {} profiles", fleet.kubernetes_profiles.len()));
        }
        LagOverTime { subtitle, points: day_points(fleet), series }
    }
}

impl Figure for LagOverTime {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = draw::header(root, "Days behind over time", &self.subtitle)?;
        let legend: Vec<(String, RGBColor, Mark)> = self
            .series
            .iter()
            .map(|(label, color, dashed, _)| (label.clone(), *color, if *dashed { Mark::Dashed } else { Mark::Line }))
            .collect();
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if self.series.is_empty() || self.points.is_empty() {
            return draw::empty_note(&area, "no Kubernetes-channel profile and no node image");
        }
        let (x_lo, x_hi, axis) = date_frame(&self.points);
        let y_max = self.series.iter().flat_map(|s| s.3.iter()).copied().filter(|v| v.is_finite()).fold(1.0, f64::max);
        let y_hi = y_max * 1.08 + 0.5;
        let (y_ticks, y_step) = draw::nice_ticks(0.0, y_hi, 8, 1.0);
        let area = draw::inset_for_y_desc(&area);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(x_lo..x_hi, axis.ticks.clone()),
                y: Axis::new(0.0..y_hi, y_ticks),
                x_label: &|v| axis.label(*v),
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: "date (UTC)",
                y_desc: "days",
                sizes: (24, 46, 70),
            },
        )?;
        for (_, color, dashed, values) in &self.series {
            let points = outline(self.points.iter().map(|&(x, k)| (x, values[k])).collect());
            if *dashed {
                chart.draw_series(DashedLineSeries::new(points, 7, 5, color.stroke_width(1)))?;
            } else {
                chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_round_and_few() {
        assert_eq!(bin_width(0.0), 0.25);
        assert_eq!(bin_width(6.0), 0.25);
        assert_eq!(bin_width(365.0), 14.0);
        assert_eq!(bin_width(100.0), 5.0);
        assert_eq!(bin_width(f64::NAN), 0.25);
        assert!(bin_width(1e6) >= 1e6 / MAX_BINS as f64);
    }

    #[test]
    fn histograms_count_every_value_once() {
        let (zeros, bins) = histogram(&[0.0, 0.0, 0.5, 1.0, 13.9, 14.0, f64::NAN, -1.0], 7.0, true);
        assert_eq!(zeros, 2);
        assert_eq!(bins, vec![3, 1, 1]);
        let (zeros, bins) = histogram(&[0.0, 3.0], 7.0, false);
        assert_eq!((zeros, bins), (0, vec![2]));
        assert_eq!(histogram(&[], 1.0, true), (0, vec![]));
    }

    #[test]
    fn outlines_keep_corners_only() {
        let points = vec![(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0), (4.0, 2.0)];
        assert_eq!(outline(points), vec![(0.0, 1.0), (2.0, 1.0), (3.0, 2.0), (4.0, 2.0)]);
    }
}
