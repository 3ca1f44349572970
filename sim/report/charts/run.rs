//! The charts of a run report folder: a Gantt timeline of members, members done over time, members
//! running over time against the stage limits, and hours Pending by reason (PRODUCT.md).
//!
//! # Legibility from 10 to 100,000 members
//!
//! The Gantt chart draws at most [`MAX_GANTT_ROWS`] rows and picks the finest of three modes that
//! fits (the counts include one row per stage, per group, and per run when there are several):
//!
//! 1. **one row per member**: Pending as a thin bar (amber for a closed window, violet for a release
//!    not yet in the region), Running as a thick bar coloured by how the attempt ended, a grey tick where a member was skipped, the error code after a failure;
//! 2. **one row per group**: the share of the group's members in each state, time-averaged over
//!    [`AGGREGATE_BINS`] time bins, stacked (Completed at the bottom, not started at the top), with
//!    Pending split by reason in the same two colours;
//! 3. **one row per stage**: the same, per stage; beyond [`MAX_GANTT_ROWS`] stage rows the first
//!    ones are drawn and the subtitle says how many were left out.
//!
//! In every mode, stage and group rows carry a thin line while they were active, their gates as
//! pink bars while Pending, and the after-stage wait as a light blue bar. Line charts with more
//! state changes than twice their bins are reduced per bin to first, lowest, highest and last value
//! ([`super::draw::step_points`]), so SVG size is bounded by the chart width, not the fleet size.
//! Bins are a fixed share of the time axis ([`run_bins`]): a run that spans a hundredth of it has a
//! hundredth of them, so a year of short runs is drawn from as many points as one long run.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Axis, Mark};
use super::tracks::{self, CATEGORIES, CATEGORY_COUNT, Category, RunTracks};
use super::{Chart, DrawResult, Figure, render};
use crate::engine::Time;
use crate::orchestrator::run::{GateRt, StageRt};
use crate::orchestrator::{GateKind, UpdateRun, UpdateState};
use crate::report::ReportContext;
use crate::report::summary::hours;

/// Most rows the Gantt chart draws (about 2,200 px tall at one row per member).
pub const MAX_GANTT_ROWS: usize = 120;
/// Time bins of the aggregated Gantt rows (about 5 px each at the default width).
pub const AGGREGATE_BINS: usize = 240;
/// Runs drawn in the Pending chart and named in legends; more are summed up in the subtitle.
pub const MAX_LEGEND_RUNS: usize = 8;
const MAX_PENDING_RUNS: usize = 30;

const WIDTH: u32 = 1400;
const LINE_HEIGHT: u32 = 560;
const MEMBER_ROW_PX: u32 = 18;
const AGGREGATE_ROW_PX: u32 = 30;
/// Bins of the line charts across the whole time axis: one per two pixels of plot width.
const LINE_BINS: usize = 600;

/// One chart of a run report.
#[derive(Clone, Debug)]
pub struct RunChart {
    /// File stem under `charts/` and the id of the figure in `index.html`.
    pub name: &'static str,
    pub title: String,
    /// What the chart shows, for the figure caption.
    pub caption: String,
    pub chart: Chart,
}

/// Renders every chart of a run report.
pub fn run_charts(ctx: &ReportContext) -> anyhow::Result<Vec<RunChart>> {
    let tracks = tracks::run_tracks(ctx.result);
    let frame = Frame::new(ctx, &tracks);
    let gantt = Gantt::new(ctx, &tracks, &frame);
    let gantt_caption = gantt.caption();
    let lines = Lines { ctx, tracks: &tracks, frame: &frame };
    let pending = Pending::new(ctx);
    // The four charts are independent drawings: rendered in parallel, listed in a fixed order.
    // A line chart's series are worked out once, in its own task, for both of its drawings.
    let lines_chart = |kind| render(&LinesFigure::new(&lines, kind));
    let ((gantt_chart, completion_chart), (concurrency_chart, pending_chart)) = rayon::join(
        || rayon::join(|| render(&gantt), || lines_chart(LineKind::Completion)),
        || rayon::join(|| lines_chart(LineKind::Concurrency), || render(&pending)),
    );
    Ok(vec![
        RunChart {
            name: "gantt",
            title: "Timeline of members by stage and group".into(),
            caption: gantt_caption,
            chart: gantt_chart?,
        },
        RunChart {
            name: "completion",
            title: "Members done over time".into(),
            caption: "Members that reached Completed, Failed or Skipped, over time, with the Failed among them; \
                      dashed lines mark when each stage started."
                .into(),
            chart: completion_chart?,
        },
        RunChart {
            name: "concurrency",
            title: "Members running over time".into(),
            caption: "Members Running at once, against each stage's resolved maxConcurrency (dashed) while the \
                      stage was active."
                .into(),
            chart: concurrency_chart?,
        },
        RunChart {
            name: "pending",
            title: "Hours Pending by reason".into(),
            caption: "Member-hours Pending because a maintenance window was closed or the release had not reached \
                      the member's region; hours gates were Pending; hours of after-stage waits."
                .into(),
            chart: pending_chart?,
        },
    ])
}

/// The time span every time chart shows: from the first run start to the last thing that happened.
struct Frame {
    start: i64,
    end: i64,
    /// `start`/`end` with a little margin, as the x range.
    lo: f64,
    hi: f64,
    axis: draw::TimeAxis,
    runs_started: usize,
}

impl Frame {
    fn new(ctx: &ReportContext, tracks: &[RunTracks]) -> Frame {
        let runs = &ctx.result.runs;
        let start = runs.iter().filter_map(|r| r.start_time).min().unwrap_or(ctx.scenario.start).0;
        let mut end = start;
        for (run, track) in runs.iter().zip(tracks) {
            if run.start_time.is_some() {
                end = end.max(track.until.0);
            }
            for stage in &run.stages {
                for t in [stage.start_time, stage.completed_time].into_iter().flatten() {
                    end = end.max(t.0);
                }
            }
        }
        if end <= start {
            end = start + 3600;
        }
        let span = (end - start) as f64;
        let axis = draw::time_axis(start, end, 10);
        Frame {
            start,
            end,
            lo: start as f64 - span * 0.01,
            hi: end as f64 + span * 0.03,
            axis,
            runs_started: runs.iter().filter(|r| r.start_time.is_some()).count(),
        }
    }
}

// ----- Gantt ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GanttMode {
    Members,
    Groups,
    Stages,
}

/// Something drawn on a Gantt row.
#[derive(Clone, Debug)]
enum Item {
    /// A bar from `from` to `to`, `thickness` a fraction of the row height, its centre `offset` above
    /// the row's middle (gates sit in the upper half, waits in the lower, so both show at once).
    Bar { from: i64, to: i64, color: RGBColor, thickness: f64, offset: f64 },
    /// A short tick at an instant (a skip).
    Tick { at: i64, color: RGBColor },
    /// Text naming the bar from `from` to `to` (an error code, a gate): after it (and after the other
    /// gate or wait bars it overlaps), or before it when there is no room on the right.
    Label { from: i64, to: i64, text: String, color: RGBColor },
    /// Stacked shares of members per category and time bin; `total` members in the row.
    Bands { bins: Vec<[f64; CATEGORY_COUNT]>, total: usize },
}

#[derive(Clone, Debug)]
struct Row {
    label: String,
    indent: u8,
    /// Index of the stage band the row belongs to (alternate bands are shaded).
    band: usize,
    /// A thin rule above the row (between groups).
    rule: bool,
    items: Vec<Item>,
}

struct Gantt {
    title: String,
    subtitle: String,
    mode: GanttMode,
    rows: Vec<Row>,
    left_out: usize,
    /// The frame the aggregated bins cover.
    start: i64,
    end: i64,
    lo: f64,
    hi: f64,
    axis: draw::TimeAxis,
    legend: Vec<(String, RGBColor, Mark)>,
}

const STRUCTURE_THICKNESS: f64 = 0.14;
const GATE_THICKNESS: f64 = 0.4;
const PENDING_THICKNESS: f64 = 0.34;
const RUNNING_THICKNESS: f64 = 0.72;

fn active_bar(start: Option<Time>, completed: Option<Time>, until: Time) -> Option<Item> {
    let from = start?;
    Some(Item::Bar {
        from: from.0,
        to: completed.unwrap_or(until).max(from).0,
        color: draw::STRUCTURE,
        thickness: STRUCTURE_THICKNESS,
        offset: 0.0,
    })
}

fn is_structure(item: &Item) -> bool {
    matches!(item, Item::Bar { color, .. } if *color == draw::STRUCTURE)
}

/// Bars for the gates that were reached, labelled with their display name (or type) when `label`.
fn gate_bars(gates: &[GateRt], until: Time, label: bool, out: &mut Vec<Item>) {
    for gate in gates {
        if let Some(from) = gate.start_time {
            let to = gate.completed_time.unwrap_or(until).max(from);
            out.push(Item::Bar {
                from: from.0,
                to: to.0,
                color: draw::GATE,
                thickness: GATE_THICKNESS,
                offset: GATE_THICKNESS / 2.0,
            });
            if label {
                let text = gate.config.display_name.clone().unwrap_or_else(|| match gate.config.kind {
                    GateKind::Approval => "Approval gate".to_string(),
                    GateKind::ScheduledStart(_) => "ScheduledStart gate".to_string(),
                });
                out.push(Item::Label { from: from.0, to: to.0, text, color: draw::INK });
            }
        }
    }
}

fn stage_items(stage: &StageRt, until: Time) -> Vec<Item> {
    let mut items: Vec<Item> = active_bar(stage.start_time, stage.completed_time, until).into_iter().collect();
    gate_bars(&stage.before_gates, until, true, &mut items);
    gate_bars(&stage.after_gates, until, true, &mut items);
    if let Some(wait) = &stage.wait
        && let Some(from) = wait.start_time
    {
        let to = wait.completed_time.unwrap_or(until).max(from);
        items.push(Item::Bar {
            from: from.0,
            to: to.0,
            color: draw::WAIT,
            thickness: GATE_THICKNESS,
            offset: -GATE_THICKNESS / 2.0,
        });
    }
    items
}

fn member_items(
    changes: &tracks::Changes,
    until: Time,
    failure_code: Option<&str>,
    availability: impl Fn(Time) -> bool,
) -> Vec<Item> {
    let mut items = Vec::new();
    for span in tracks::spans(changes, until) {
        match span.state {
            UpdateState::Pending => items.push(Item::Bar {
                from: span.from.0,
                to: span.to.0,
                color: if availability(span.from) { draw::AVAILABILITY } else { draw::PENDING },
                thickness: PENDING_THICKNESS,
                offset: 0.0,
            }),
            UpdateState::Running => {
                let color = match span.next {
                    Some(UpdateState::Completed) => draw::COMPLETED,
                    Some(UpdateState::Failed) => draw::FAILED,
                    _ => draw::RUNNING,
                };
                items.push(Item::Bar {
                    from: span.from.0,
                    to: span.to.0,
                    color,
                    thickness: RUNNING_THICKNESS,
                    offset: 0.0,
                });
            }
            UpdateState::Skipped => items.push(Item::Tick { at: span.from.0, color: draw::SKIPPED }),
            _ => {}
        }
    }
    if let (Some(code), Some(&(at, UpdateState::Failed))) = (failure_code, changes.last()) {
        let from = changes.iter().rev().find(|c| c.1 == UpdateState::Running).map_or(at, |c| c.0);
        items.push(Item::Label { from: from.0, to: at.0, text: code.to_string(), color: draw::FAILED });
    }
    items
}

fn member_count(stage: &StageRt) -> usize {
    stage.groups.iter().map(|g| g.members.len()).sum()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Gantt {
    fn new(ctx: &ReportContext, tracks: &[RunTracks], frame: &Frame) -> Gantt {
        let runs = &ctx.result.runs;
        let multi = runs.len() > 1;
        let run_rows = if multi { runs.len() } else { 0 };
        let stages: usize = runs.iter().map(|r| r.stages.len()).sum();
        let groups: usize = runs.iter().flat_map(|r| &r.stages).map(|s| s.groups.len()).sum();
        let members: usize = runs.iter().flat_map(|r| &r.stages).map(member_count).sum();
        let mode = if run_rows + stages + groups + members <= MAX_GANTT_ROWS {
            GanttMode::Members
        } else if run_rows + stages + groups <= MAX_GANTT_ROWS {
            GanttMode::Groups
        } else {
            GanttMode::Stages
        };
        let mut rows = Vec::new();
        let mut band = 0;
        for (r, (run, track)) in runs.iter().zip(tracks).enumerate() {
            if multi {
                let until = track.until;
                rows.push(Row {
                    label: format!("run {}", run.name),
                    indent: 0,
                    band,
                    rule: r > 0,
                    items: active_bar(run.start_time, run.completed_time, until).into_iter().collect(),
                });
            }
            for s in 0..run.stages.len() {
                band += 1;
                Self::stage_rows(ctx, run, s, track, frame, mode, band, &mut rows);
            }
        }
        let total = rows.len();
        rows.truncate(MAX_GANTT_ROWS);
        let left_out = total - rows.len();
        let what = match mode {
            GanttMode::Members => "one row per member".to_string(),
            GanttMode::Groups => format!(
                "{} in {}: one row per group, the share of its members in each state over time",
                plural(members, "member", "members"),
                plural(groups, "group", "groups")
            ),
            GanttMode::Stages => format!(
                "{} in {}: one row per stage, the share of its members in each state over time",
                plural(members, "member", "members"),
                plural(stages, "stage", "stages")
            ),
        };
        let mut subtitle = format!("{} · {what}", ctx.scenario.name);
        if left_out > 0 {
            subtitle.push_str(&format!(" · first {} of {total} rows drawn", rows.len()));
        }
        if frame.runs_started == 0 && !runs.is_empty() {
            subtitle.push_str(" · no run started");
        }
        let mut legend: Vec<(String, RGBColor, Mark)> = match mode {
            GanttMode::Members => vec![
                (PENDING_WINDOW_LABEL.into(), draw::PENDING, Mark::Thin),
                (PENDING_AVAILABILITY_LABEL.into(), draw::AVAILABILITY, Mark::Thin),
                ("Running, then Completed".into(), draw::COMPLETED, Mark::Swatch),
                ("Running, then Failed".into(), draw::FAILED, Mark::Swatch),
                ("Running at the end".into(), draw::RUNNING, Mark::Swatch),
                ("Skipped".into(), draw::SKIPPED, Mark::Swatch),
            ],
            GanttMode::Groups | GanttMode::Stages => {
                CATEGORIES.iter().map(|c| (category_label(*c).to_string(), category_color(*c), Mark::Swatch)).collect()
            }
        };
        legend.push(("gate Pending".into(), draw::GATE, Mark::Thin));
        legend.push(("after-stage wait".into(), draw::WAIT, Mark::Thin));
        legend.push(("stage or group active".into(), draw::STRUCTURE, Mark::Line));
        Gantt {
            title: "Timeline of members by stage and group".into(),
            subtitle,
            mode,
            rows,
            left_out,
            start: frame.start,
            end: frame.end,
            lo: frame.lo,
            hi: frame.hi,
            axis: frame.axis.clone(),
            legend,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn stage_rows(
        ctx: &ReportContext,
        run: &UpdateRun,
        s: usize,
        track: &tracks::RunTracks,
        frame: &Frame,
        mode: GanttMode,
        band: usize,
        rows: &mut Vec<Row>,
    ) {
        let (histories, until, availability) = (&track.members[s], track.until, &track.availability);
        let stage = &run.stages[s];
        let mut items = stage_items(stage, until);
        let label = match mode {
            GanttMode::Stages => {
                let slotted = histories
                    .iter()
                    .enumerate()
                    .flat_map(|(g, group)| group.iter().enumerate().map(move |(i, h)| (slot(s, g, i), h)));
                let bins = tracks::occupancy(slotted, availability, until, frame.start, frame.end, AGGREGATE_BINS);
                // The bands show when the stage was active; a line over them would hide them.
                items.retain(|item| !is_structure(item));
                items.insert(0, Item::Bands { bins, total: member_count(stage) });
                for group in &stage.groups {
                    gate_bars(&group.before_gates, until, false, &mut items);
                    gate_bars(&group.after_gates, until, false, &mut items);
                }
                format!("stage {} ({})", stage.name, plural(member_count(stage), "member", "members"))
            }
            _ => format!("stage {}", stage.name),
        };
        rows.push(Row { label, indent: 1, band, rule: true, items });
        if mode == GanttMode::Stages {
            return;
        }
        for (g, group) in stage.groups.iter().enumerate() {
            let mut items: Vec<Item> = active_bar(group.start_time, group.completed_time, until).into_iter().collect();
            gate_bars(&group.before_gates, until, true, &mut items);
            gate_bars(&group.after_gates, until, true, &mut items);
            let label = if mode == GanttMode::Groups {
                let slotted = histories[g].iter().enumerate().map(|(i, h)| (slot(s, g, i), h));
                let bins = tracks::occupancy(slotted, availability, until, frame.start, frame.end, AGGREGATE_BINS);
                items.retain(|item| !is_structure(item));
                items.insert(0, Item::Bands { bins, total: group.members.len() });
                format!("{} ({})", group.name, plural(group.members.len(), "member", "members"))
            } else {
                format!("group {}", group.name)
            };
            rows.push(Row { label, indent: 2, band, rule: g > 0, items });
            if mode != GanttMode::Members {
                continue;
            }
            for (i, member) in group.members.iter().enumerate() {
                let name = &ctx.scenario.fleet[member.id.index()].name;
                let code = (member.state == UpdateState::Failed).then_some(member.note.code.as_deref()).flatten();
                let slot = slot(s, g, i);
                let items = member_items(&histories[g][i], until, code, |t| availability.contains(&(slot, t)));
                rows.push(Row { label: name.clone(), indent: 3, band, rule: false, items });
            }
        }
    }

    fn row_px(&self) -> u32 {
        if self.mode == GanttMode::Members { MEMBER_ROW_PX } else { AGGREGATE_ROW_PX }
    }

    const TOP_PX: u32 = 100;
    const BOTTOM_PX: u32 = 56;

    fn caption(&self) -> String {
        let mode = match self.mode {
            GanttMode::Members => {
                "One row per member under its stage and group: Pending as a thin bar (amber for a closed window, \
                 violet for a release not yet in the region), Running as a thick bar coloured by how the attempt \
                 ended, a grey tick where a member was skipped, the error code after a failure."
            }
            GanttMode::Groups => {
                "Too many members for one row each: one row per group, showing the share of its members in each \
                 state over time (time-averaged per bin; Completed at the bottom; Pending amber for a closed window, \
                 violet for a release not yet in the region)."
            }
            GanttMode::Stages => {
                "Too many groups for one row each: one row per stage, showing the share of its members in each \
                 state over time (time-averaged per bin; Completed at the bottom; Pending amber for a closed window, \
                 violet for a release not yet in the region)."
            }
        };
        let left_out =
            if self.left_out > 0 { format!(" {} further rows are not drawn.", self.left_out) } else { String::new() };
        format!(
            "{mode} Stage and group rows show when they were active, their gates while Pending and the after-stage wait.{left_out}"
        )
    }

    fn mode_of(&self) -> GanttMode {
        self.mode
    }
}

/// The Gantt mode a report would use, for tests and the HTML caption.
pub fn gantt_mode(ctx: &ReportContext) -> GanttMode {
    let tracks = tracks::run_tracks(ctx.result);
    let frame = Frame::new(ctx, &tracks);
    Gantt::new(ctx, &tracks, &frame).mode_of()
}

fn slot(stage: usize, group: usize, index: usize) -> crate::orchestrator::Slot {
    crate::orchestrator::Slot { stage: stage as u16, group: group as u16, index: index as u32 }
}

/// Legend label of a category: the same words as the per-member legend for the Pending reasons.
fn category_label(category: Category) -> &'static str {
    match category {
        Category::Completed => "Completed",
        Category::Failed => "Failed",
        Category::Skipped => "Skipped",
        Category::Running => "Running",
        Category::PendingWindow => PENDING_WINDOW_LABEL,
        Category::PendingAvailability => PENDING_AVAILABILITY_LABEL,
        Category::NotStarted => "not started",
    }
}

/// One colour per category, the same as the per-member bars and the Pending chart.
fn category_color(category: Category) -> RGBColor {
    match category {
        Category::Completed => draw::COMPLETED,
        Category::Failed => draw::FAILED,
        Category::Skipped => draw::SKIPPED,
        Category::Running => draw::RUNNING,
        Category::PendingWindow => draw::PENDING,
        Category::PendingAvailability => draw::AVAILABILITY,
        Category::NotStarted => draw::NOT_STARTED,
    }
}

const PENDING_WINDOW_LABEL: &str = "Pending: window closed";
const PENDING_AVAILABILITY_LABEL: &str = "Pending: release not in region";

impl Figure for Gantt {
    fn size(&self) -> (u32, u32) {
        let rows = self.rows.len().max(3) as u32;
        (WIDTH, Self::TOP_PX + rows * self.row_px() + Self::BOTTOM_PX)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = draw::header(root, &self.title, &self.subtitle)?;
        draw::legend(root, &self.legend, 15, top)?;
        let (_, area) = root.split_vertically(Self::TOP_PX);
        if self.rows.is_empty() {
            return draw::empty_note(&area, "no update run with stages to draw");
        }
        let label_style = draw::anchored(draw::font(11.5), HPos::Left, VPos::Center);
        let label_px = self
            .rows
            .iter()
            .map(|r| root.estimate_text_size(&r.label, &label_style).map(|(w, _)| w + 12 * u32::from(r.indent)))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .max()
            .unwrap_or(100)
            .clamp(120, 340)
            + 28;
        let n = self.rows.len() as f64;
        let step = self.axis.step_seconds;
        let mut chart = ChartBuilder::on(&area)
            .margin_right(24)
            .margin_bottom(8)
            .x_label_area_size(46)
            .y_label_area_size(label_px)
            .build_cartesian_2d(Axis::new(self.lo..self.hi, self.axis.ticks.clone()), Axis::new(0.0..n, Vec::new()))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .bold_line_style(draw::GRID)
            .x_label_formatter(&|v| draw::time_label(*v, step))
            .x_label_style(draw::font(12.0))
            .x_desc("time (UTC)")
            .axis_desc_style(draw::font(13.0))
            .draw()?;
        let plot_px = chart.plotting_area().dim_in_pixel().0;
        let plot_right = chart.plotting_area().get_base_pixel().0 + plot_px as i32;
        let min_dt = 2.0 * (self.hi - self.lo) / f64::from(plot_px.max(1));
        // Shaded stage bands and group rules first, so bars are drawn over them.
        let y_of = |i: usize| n - i as f64; // top edge of row i
        chart.draw_series(
            self.rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.band % 2 == 0)
                .map(|(i, _)| Rectangle::new([(self.lo, y_of(i)), (self.hi, y_of(i) - 1.0)], draw::BAND.filled())),
        )?;
        chart.draw_series(self.rows.iter().enumerate().filter(|(i, r)| r.rule && *i > 0).map(|(i, r)| {
            let color = if r.indent <= 1 { draw::MUTED } else { draw::GRID };
            PathElement::new(vec![(self.lo, y_of(i)), (self.hi, y_of(i))], color.stroke_width(1))
        }))?;
        // Shapes first, then every text, so that no bar hides a label.
        for (i, row) in self.rows.iter().enumerate() {
            let mid = y_of(i) - 0.5;
            for item in &row.items {
                match item {
                    Item::Bands { bins, total } => self.draw_bands(&mut chart, bins, *total, y_of(i) - 1.0)?,
                    Item::Bar { from, to, color, thickness, offset } => {
                        let (x0, x1) = (*from as f64, (*to as f64).max(*from as f64 + min_dt));
                        let (h, c) = (thickness / 2.0, mid + offset);
                        chart
                            .draw_series(std::iter::once(Rectangle::new([(x0, c + h), (x1, c - h)], color.filled())))?;
                    }
                    Item::Tick { at, color } => {
                        let x = *at as f64;
                        chart.draw_series(std::iter::once(Rectangle::new(
                            [(x, mid + 0.38), (x + 1.5 * min_dt, mid - 0.38)],
                            color.filled(),
                        )))?;
                    }
                    Item::Label { .. } => {}
                }
            }
        }
        for (i, row) in self.rows.iter().enumerate() {
            let mid = y_of(i) - 0.5;
            for item in &row.items {
                if let Item::Label { from, to, text, color } = item {
                    let style = draw::font_color(10.5, *color);
                    let after = row
                        .items
                        .iter()
                        .filter_map(|other| match other {
                            Item::Bar { from: f, to: t, color: c, .. } if *c != draw::STRUCTURE && f <= to => Some(*t),
                            _ => None,
                        })
                        .fold(*to, i64::max);
                    let (start_px, py) = chart.backend_coord(&(*from as f64, mid));
                    let (end_px, _) = chart.backend_coord(&(after as f64, mid));
                    let text_px = root.estimate_text_size(text, &style)?.0 as i32;
                    let (x, h_pos) = if end_px + 5 + text_px <= plot_right {
                        (end_px + 5, HPos::Left)
                    } else {
                        (start_px - 5, HPos::Right)
                    };
                    root.draw(&Text::new(text.clone(), (x, py), draw::anchored(style, h_pos, VPos::Center)))?;
                }
            }
            let (_, py) = chart.backend_coord(&(self.lo, mid));
            let x = 12 + 12 * i32::from(row.indent);
            let max_px = label_px.saturating_sub(x as u32 + 8);
            let color = if row.indent <= 2 { draw::INK } else { draw::MUTED };
            let style = draw::anchored(draw::font_color(11.5, color), HPos::Left, VPos::Center);
            root.draw(&Text::new(draw::fit_text(root, &row.label, &style, max_px), (x, py), style.clone()))?;
        }
        Ok(())
    }
}

impl Gantt {
    /// Stacked category shares of one aggregated row, as one polygon per category.
    fn draw_bands<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<Axis, Axis>>,
        bins: &[[f64; CATEGORY_COUNT]],
        total: usize,
        bottom: f64,
    ) -> DrawResult<DB> {
        if total == 0 || bins.is_empty() {
            return Ok(());
        }
        // Shares are rounded to the row's pixel grid so flat stretches collapse into one segment.
        let inner_px = f64::from(AGGREGATE_ROW_PX) * 0.84;
        let quantize = |share: f64| (share * inner_px).round() / inner_px;
        let (start, end) = (self.start as f64, self.end as f64);
        let width = (end - start) / bins.len() as f64;
        let xs: Vec<f64> = (0..=bins.len()).map(|b| start + b as f64 * width).collect();
        let base = bottom + 0.08;
        let mut lower = vec![0.0; bins.len()];
        for (k, category) in CATEGORIES.iter().enumerate() {
            let upper: Vec<f64> = bins.iter().zip(&lower).map(|(bin, l)| quantize(l + bin[k] / total as f64)).collect();
            if upper.iter().zip(&lower).any(|(u, l)| u > l) {
                let mut points = step_edge(&xs, &upper, base, 0.84);
                let mut back = step_edge(&xs, &lower, base, 0.84);
                back.reverse();
                points.extend(back);
                chart.draw_series(std::iter::once(Polygon::new(points, category_color(*category).filled())))?;
            }
            lower = upper;
        }
        Ok(())
    }
}

/// The upper outline of a step function `ys` over bin edges `xs`, keeping only the corners.
fn step_edge(xs: &[f64], ys: &[f64], base: f64, scale: f64) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    for b in 0..ys.len() {
        let y = base + ys[b] * scale;
        if b == 0 || ys[b] != ys[b - 1] {
            points.push((xs[b], y));
        }
        if b + 1 == ys.len() || ys[b + 1] != ys[b] {
            points.push((xs[b + 1], y));
        }
    }
    points
}

// ----- Completion and concurrency ------------------------------------------------------------------

struct Lines<'a, 'c> {
    ctx: &'a ReportContext<'c>,
    tracks: &'a [RunTracks],
    frame: &'a Frame,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Completion,
    Concurrency,
}

struct LinesFigure<'a, 'c> {
    lines: &'a Lines<'a, 'c>,
    kind: LineKind,
    /// The lines, the guides and the top of the scale ([`LinesFigure::series_and_guides`]).
    series: Vec<Series>,
    guides: Vec<Guide>,
    y_max: f64,
}

/// Stage limits more than this many times the peak (at least 1) are drawn at the top edge.
const LIMIT_SCALE_FACTOR: f64 = 3.0;

/// A line of a line chart, already reduced to drawable points.
struct Series {
    label: String,
    color: RGBColor,
    width: u32,
    fill: bool,
    points: Vec<(f64, f64)>,
}

/// The bins of a run's lines from `start` to `end`: its share of [`LINE_BINS`] by the part of the
/// time axis it spans, at least one. Bins are then about as wide whatever the run, about two pixels:
/// a run of a day in a chart of a year is not drawn from 600 bins squeezed into five pixels. A run
/// spanning the whole axis (every single-run report) has all of them.
fn run_bins(start: i64, end: i64, frame: &Frame) -> usize {
    let span = (frame.end - frame.start).max(1) as f64;
    ((end - start) as f64 * LINE_BINS as f64 / span).ceil().clamp(1.0, LINE_BINS as f64) as usize
}

/// A dashed horizontal or vertical guide with a text label.
struct Guide {
    label: String,
    color: RGBColor,
    /// Vertical at a time, or horizontal from/to at a value.
    at: GuideAt,
}

enum GuideAt {
    Time(i64),
    /// `label_at_end`: the label sits at the right end of the line rather than the left.
    Level {
        from: i64,
        to: i64,
        value: f64,
        label_at_end: bool,
    },
}

impl<'a, 'c> LinesFigure<'a, 'c> {
    fn new(lines: &'a Lines<'a, 'c>, kind: LineKind) -> LinesFigure<'a, 'c> {
        let (series, guides, y_max) = Self::series_and_guides(lines, kind);
        LinesFigure { lines, kind, series, guides, y_max }
    }

    fn series_and_guides(lines: &Lines, kind: LineKind) -> (Vec<Series>, Vec<Guide>, f64) {
        let Lines { ctx, tracks, frame } = *lines;
        let runs = &ctx.result.runs;
        let multi = runs.len() > 1;
        let mut series = Vec::new();
        let mut guides = Vec::new();
        let mut y_max: f64 = 1.0;
        let mut limits = Vec::new();
        for (r, (run, track)) in
            runs.iter().zip(tracks.iter()).enumerate().filter(|(_, (run, _))| run.start_time.is_some())
        {
            let prefix = if multi { format!("{} ", run.name) } else { String::new() };
            let color = if multi { draw::series_color(r) } else { draw::RUNNING };
            // Each run's lines start when the run does: zeros before that would only be clutter.
            let start = run.start_time.map_or(frame.start, |t| t.0);
            let end = track.until.0.min(frame.end).max(start);
            let bins = run_bins(start, end, frame);
            match kind {
                LineKind::Completion => {
                    let total: usize = run.stages.iter().map(member_count).sum();
                    y_max = y_max.max(total as f64);
                    let done = tracks::count_series(track, |s| s.is_member_terminal());
                    let failed = tracks::count_series(track, |s| s == UpdateState::Failed);
                    series.push(Series {
                        label: format!("{prefix}done"),
                        color: if multi { color } else { draw::COMPLETED },
                        width: 2,
                        fill: !multi,
                        points: draw::step_points(&done, start, end, bins),
                    });
                    series.push(Series {
                        label: format!("{prefix}Failed"),
                        color: if multi { color } else { draw::FAILED },
                        width: if multi { 1 } else { 2 },
                        fill: false,
                        points: draw::step_points(&failed, start, end, bins),
                    });
                    if !multi {
                        guides.push(Guide {
                            label: format!("{total} members"),
                            color: draw::MUTED,
                            at: GuideAt::Level { from: start, to: end, value: total as f64, label_at_end: true },
                        });
                    }
                    for stage in &run.stages {
                        if let Some(t) = stage.start_time {
                            guides.push(Guide {
                                label: format!("{}{}", prefix, stage.name),
                                color: if multi { color } else { draw::STRUCTURE },
                                at: GuideAt::Time(t.0),
                            });
                        }
                    }
                }
                LineKind::Concurrency => {
                    let running = tracks::count_series(track, |s| s == UpdateState::Running);
                    let peak = running.iter().map(|p| p.1).max().unwrap_or(0);
                    y_max = y_max.max(peak as f64);
                    series.push(Series {
                        label: format!("{prefix}Running"),
                        color,
                        width: 2,
                        fill: !multi,
                        points: draw::step_points(&running, start, end, bins),
                    });
                    for stage in &run.stages {
                        if let Some(from) = stage.start_time {
                            let to = stage.completed_time.unwrap_or(track.until).max(from);
                            limits.push(f64::from(stage.max_concurrency));
                            guides.push(Guide {
                                label: format!("{}{}: maxConcurrency {}", prefix, stage.name, stage.max_concurrency),
                                color: if multi { color } else { draw::INK },
                                at: GuideAt::Level {
                                    from: from.0,
                                    to: to.0,
                                    value: f64::from(stage.max_concurrency),
                                    label_at_end: false,
                                },
                            });
                        }
                    }
                }
            }
        }
        // A limit far above what ran would flatten the curve: such limits are drawn at the top edge
        // and labelled as above the scale.
        let cap = y_max * LIMIT_SCALE_FACTOR;
        y_max = limits.iter().copied().filter(|l| *l <= cap).fold(y_max, f64::max);
        (series, guides, y_max)
    }
}

impl Figure for LinesFigure<'_, '_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, LINE_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let Lines { ctx, frame, .. } = *self.lines;
        let (title, y_desc) = match self.kind {
            LineKind::Completion => ("Members done over time", "members done"),
            LineKind::Concurrency => ("Members running over time", "members Running"),
        };
        let (series, guides, y_max) = (self.series.as_slice(), self.guides.as_slice(), self.y_max);
        let top = draw::header(root, title, &ctx.scenario.name)?;
        let mut legend: Vec<(String, RGBColor, Mark)> =
            series.iter().take(2 * MAX_LEGEND_RUNS).map(|s| (s.label.clone(), s.color, Mark::Line)).collect();
        match self.kind {
            LineKind::Completion => legend.push(("stage starts (dashed)".into(), draw::STRUCTURE, Mark::Line)),
            LineKind::Concurrency => legend.push(("stage maxConcurrency (dashed)".into(), draw::INK, Mark::Line)),
        }
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if series.is_empty() {
            return draw::empty_note(&area, "no run started");
        }
        let y_hi = y_max * 1.08 + 0.5;
        let (y_ticks, y_step) = draw::nice_ticks(0.0, y_hi, 8, 1.0);
        let step = frame.axis.step_seconds;
        let area = draw::inset_for_y_desc(&area);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(frame.lo..frame.hi, frame.axis.ticks.clone()),
                y: Axis::new(0.0..y_hi, y_ticks),
                x_label: &|v| draw::time_label(*v, step),
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: "time (UTC)",
                y_desc,
                sizes: (24, 46, 70),
            },
        )?;
        for s in series {
            if s.fill {
                chart.draw_series(AreaSeries::new(s.points.iter().copied(), 0.0, s.color.mix(0.15)))?;
            }
            chart.draw_series(LineSeries::new(s.points.iter().copied(), s.color.stroke_width(s.width)))?;
        }
        // Every guide line first, then the labels where they fit (see `draw::Placer`).
        let mut lines = Vec::with_capacity(guides.len());
        for guide in guides {
            let style = ShapeStyle::from(guide.color.mix(0.8)).stroke_width(1);
            let (label, points) = match guide.at {
                GuideAt::Time(t) => (guide.label.clone(), vec![(t as f64, 0.0), (t as f64, y_hi)]),
                GuideAt::Level { from, to, value, .. } if value > y_hi => (
                    format!("{} (above the scale)", guide.label),
                    vec![(from as f64, y_hi * 0.99), (to as f64, y_hi * 0.99)],
                ),
                GuideAt::Level { from, to, value, .. } => {
                    (guide.label.clone(), vec![(from as f64, value), (to as f64, value)])
                }
            };
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))?;
            lines.push((label, points));
        }
        let (x0, y0) = chart.plotting_area().get_base_pixel();
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let mut placer = draw::Placer::within((x0, y0, x0 + w as i32, y0 + h as i32));
        let style = draw::font_color(11.0, draw::MUTED);
        const PAD: i32 = 1;
        for (guide, (label, points)) in guides.iter().zip(&lines) {
            let (tw, th) = root.estimate_text_size(label, &style)?;
            let (tw, th) = (tw as i32 + 2 * PAD, th as i32 + 2 * PAD);
            let at = |x: i32, y: i32| (x, y, x + tw, y + th);
            let candidates: Vec<draw::PxBox> = match guide.at {
                // Stage starts: right of the line on one of four rows under the top, else left of it.
                GuideAt::Time(_) => {
                    let (px, py) = chart.backend_coord(&points[1]);
                    let rows = (0..4).map(|row| py + 3 + (th + 2) * row);
                    rows.clone().map(|y| at(px + 3, y)).chain(rows.map(|y| at(px - 3 - tw, y))).collect()
                }
                // Levels: above the line, else under it; at its right end for the total.
                GuideAt::Level { label_at_end: true, .. } => {
                    let (px, py) = chart.backend_coord(&points[1]);
                    vec![at(px - 4 - tw, py - 2 - th), at(px - 4 - tw, py + 2)]
                }
                GuideAt::Level { .. } => {
                    let (px, py) = chart.backend_coord(&points[0]);
                    vec![at(px + 4, py - 2 - th), at(px + 4, py + 2)]
                }
            };
            if let Some(found) = placer.place(candidates) {
                draw::boxed_text(root, label, &style, found, PAD)?;
            }
        }
        draw::left_out_note(root, placer.left_out, "guide labels")
    }
}

// ----- Pending by reason ---------------------------------------------------------------------------

struct Pending {
    subtitle: String,
    /// (label, hours, colour) per bar, top to bottom.
    bars: Vec<(String, f64, RGBColor)>,
}

const REASONS: [(&str, RGBColor); 4] = [
    (PENDING_WINDOW_LABEL, draw::PENDING),
    (PENDING_AVAILABILITY_LABEL, draw::AVAILABILITY),
    ("gates Pending", draw::GATE),
    ("after-stage waits", draw::WAIT),
];

impl Pending {
    fn new(ctx: &ReportContext) -> Pending {
        let runs = &ctx.result.runs;
        let multi = runs.len() > 1;
        let mut bars = Vec::new();
        for run in runs.iter().take(MAX_PENDING_RUNS) {
            let s = &run.stats;
            let values =
                [s.pending_window_seconds, s.pending_availability_seconds, s.gate_pending_seconds, s.wait_seconds];
            for ((reason, color), seconds) in REASONS.iter().zip(values) {
                let label = if multi { format!("{} · {reason}", run.name) } else { (*reason).to_string() };
                bars.push((label, hours(seconds), *color));
            }
        }
        let mut subtitle =
            format!("{} · member-hours for windows and availability, hours for gates and waits", ctx.scenario.name);
        if runs.len() > MAX_PENDING_RUNS {
            subtitle.push_str(&format!(" · first {MAX_PENDING_RUNS} of {} runs", runs.len()));
        }
        Pending { subtitle, bars }
    }
}

impl Figure for Pending {
    fn size(&self) -> (u32, u32) {
        // Two panels, one unit each: member-hours (windows, availability) and hours (gates, waits).
        (WIDTH, 230 + 30 * self.bars.len().max(4) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = draw::header(root, "Hours Pending by reason", &self.subtitle)?;
        let (_, area) = root.split_vertically(top as u32 + 10);
        if self.bars.is_empty() {
            return draw::empty_note(&area, "no update run");
        }
        let (members, gates): (Vec<_>, Vec<_>) = self.bars.iter().enumerate().partition(|(i, _)| i % 4 < 2);
        let members: Vec<&(String, f64, RGBColor)> = members.into_iter().map(|(_, b)| b).collect();
        let gates: Vec<&(String, f64, RGBColor)> = gates.into_iter().map(|(_, b)| b).collect();
        let label_style = draw::anchored(draw::font(12.0), HPos::Right, VPos::Center);
        let label_px = self
            .bars
            .iter()
            .map(|b| root.estimate_text_size(&b.0, &label_style).map(|(w, _)| w))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .max()
            .unwrap_or(100)
            .clamp(100, 420)
            + 20;
        let (_, h) = area.dim_in_pixel();
        let first = (h as usize * members.len() / self.bars.len().max(1)).max(1) as u32;
        let (upper, lower) = area.split_vertically(first + 20);
        bar_panel(root, &upper, &members, label_px, "member-hours Pending (window closed, release not in region)")?;
        bar_panel(root, &lower, &gates, label_px, "hours (gates Pending, after-stage waits)")
    }
}

/// One panel of horizontal bars with its own axis and unit.
fn bar_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    bars: &[&(String, f64, RGBColor)],
    label_px: u32,
    unit: &str,
) -> DrawResult<DB> {
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let x_hi = if max > 0.0 { max * 1.18 } else { 1.0 };
    let (x_ticks, x_step) = draw::nice_ticks(0.0, x_hi, 10, 0.0);
    let n = bars.len() as f64;
    let label_style = draw::anchored(draw::font(12.0), HPos::Right, VPos::Center);
    let mut chart = ChartBuilder::on(area)
        .margin_right(40)
        .margin_bottom(8)
        .x_label_area_size(46)
        .y_label_area_size(label_px)
        .build_cartesian_2d(Axis::new(0.0..x_hi, x_ticks), Axis::new(0.0..n, Vec::new()))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .bold_line_style(draw::GRID)
        .x_label_formatter(&|v| draw::number_label(*v, x_step))
        .x_label_style(draw::font(12.0))
        .x_desc(unit)
        .axis_desc_style(draw::font(13.0))
        .draw()?;
    let value_style = draw::anchored(draw::font(12.0), HPos::Left, VPos::Center);
    for (i, (label, value, color)) in bars.iter().map(|b| (&b.0, b.1, b.2)).enumerate() {
        let top_y = n - i as f64;
        chart
            .draw_series(std::iter::once(Rectangle::new([(0.0, top_y - 0.2), (value, top_y - 0.8)], color.filled())))?;
        let (px, py) = chart.backend_coord(&(value, top_y - 0.5));
        root.draw(&Text::new(format!("{} h", draw::short_number(value)), (px + 6, py), value_style.clone()))?;
        let (ax, _) = chart.backend_coord(&(0.0, top_y - 0.5));
        let text = draw::fit_text(root, label, &label_style, label_px - 20);
        root.draw(&Text::new(text, (ax - 8, py), label_style.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_line_has_its_share_of_the_bins_of_the_time_axis() {
        let (start, end) = (1_772_438_400, 1_772_438_400 + 365 * 86_400);
        let frame = Frame {
            start,
            end,
            lo: start as f64,
            hi: end as f64,
            axis: draw::time_axis(start, end, 10),
            runs_started: 2,
        };
        assert_eq!(run_bins(start, end, &frame), LINE_BINS, "a run over the whole axis has every bin");
        assert_eq!(run_bins(start + 86_400, start + 86_400 + 73 * 86_400, &frame), LINE_BINS / 5);
        // A day of a year: its share (1.6 bins) rounded up.
        assert_eq!(run_bins(start, start + 86_400, &frame), 2);
        assert_eq!(run_bins(end, end, &frame), 1, "at least one");
    }
}
