//! Shared drawing helpers: palette, axis ticks and their labels, legends, text fitting, and the
//! downsampling of long step series.

use std::ops::Range;

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{DrawResult, FAMILY};

// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const COMPLETED: RGBColor = RGBColor(0x00, 0x9E, 0x73);
pub const FAILED: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
pub const RUNNING: RGBColor = RGBColor(0x00, 0x72, 0xB2);
/// Pending (any reason, and for a closed maintenance window): amber.
pub const PENDING: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
/// Pending because the release has not reached the member's region: violet, apart from every other
/// state's colour (the failure orange among them).
pub const AVAILABILITY: RGBColor = RGBColor(0x8E, 0x6B, 0xC4);
pub const SKIPPED: RGBColor = RGBColor(0x99, 0x99, 0x99);
pub const GATE: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
pub const WAIT: RGBColor = RGBColor(0x56, 0xB4, 0xE9);
pub const NOT_STARTED: RGBColor = RGBColor(0xE8, 0xE8, 0xE8);
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
pub const GRID: RGBColor = RGBColor(0xE2, 0xE2, 0xE2);
pub const BAND: RGBColor = RGBColor(0xF4, 0xF4, 0xF4);
pub const STRUCTURE: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// Colours for series that stand for different runs or points (cycled).
pub const SERIES: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x33, 0x33, 0x33),
];

pub fn series_color(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

const VIRIDIS: [(f64, f64, f64); 5] =
    [(68.0, 1.0, 84.0), (59.0, 82.0, 139.0), (33.0, 145.0, 140.0), (94.0, 201.0, 98.0), (253.0, 231.0, 37.0)];

/// Viridis colour at `t` in `[0, 1]`, linearly between five stops (dark violet to yellow; readable
/// with the common colour-vision deficiencies and in grey).
pub fn viridis(t: f64) -> RGBColor {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.5 };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

pub fn font(size: f64) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&INK)
}

pub fn font_color(size: f64, color: RGBColor) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&color)
}

pub fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// A linear `f64` axis whose ticks are chosen here ([`time_axis`], [`nice_ticks`]) rather than by
/// plotters, so that tick positions and labels are ours and stable.
#[derive(Clone)]
pub struct Axis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Axis {
    pub fn new(range: Range<f64>, ticks: Vec<f64>) -> Axis {
        Axis { inner: range.into(), ticks }
    }
}

impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Only bold points: no light grid lines.
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

impl ValueFormatter<f64> for Axis {
    /// Charts always set their own formatter; this is the fallback.
    fn format(value: &f64) -> String {
        short_number(*value)
    }
}

/// The layout of an x/y chart: our axes, how their ticks are labelled and what they are called.
pub struct Frame<'f> {
    pub x: Axis,
    pub y: Axis,
    pub x_label: &'f dyn Fn(&f64) -> String,
    pub y_label: &'f dyn Fn(&f64) -> String,
    pub x_desc: &'f str,
    pub y_desc: &'f str,
    /// Right margin, then the heights of the x and y label areas, in pixels.
    pub sizes: (u32, u32, u32),
}

/// Pixels kept free left of a chart's y-axis name, so that the rotated text is never cut at the
/// image edge.
pub const Y_DESC_MARGIN_PX: u32 = 10;

/// `area` without its leftmost [`Y_DESC_MARGIN_PX`] pixels: where a chart with a y-axis name goes.
pub fn inset_for_y_desc<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> DrawingArea<DB, Shift> {
    area.split_horizontally(Y_DESC_MARGIN_PX).1
}

/// A chart on two of our axes.
pub type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// Builds an x/y chart on `area` and draws its grid, tick labels and axis names, the look every
/// line, band and scatter chart shares.
pub fn xy_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    frame: Frame,
) -> Result<XyChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (right, x_area, y_area) = frame.sizes;
    let mut chart = ChartBuilder::on(area)
        .margin_right(right)
        .margin_bottom(8)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(frame.x, frame.y)?;
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .x_label_formatter(frame.x_label)
        .y_label_formatter(frame.y_label)
        .label_style(font(12.0))
        .x_desc(frame.x_desc)
        .y_desc(frame.y_desc)
        .axis_desc_style(font(13.0))
        .draw()?;
    Ok(chart)
}

/// A calendar-aligned time axis: ticks at multiples of a round step, labelled in UTC.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeAxis {
    pub ticks: Vec<f64>,
    pub step_seconds: i64,
}

/// Round steps for time axes, in seconds.
const TIME_STEPS: [i64; 20] = [
    60,
    120,
    300,
    600,
    900,
    1_800,
    3_600,
    7_200,
    10_800,
    21_600,
    43_200,
    86_400,
    2 * 86_400,
    7 * 86_400,
    14 * 86_400,
    28 * 86_400,
    56 * 86_400,
    91 * 86_400,
    182 * 86_400,
    364 * 86_400,
];

/// 1970-01-05 was a Monday: week-multiple ticks are aligned to Mondays 00:00 UTC.
const MONDAY_OFFSET: i64 = 4 * 86_400;

/// The smallest round step giving at most `max_ticks` ticks over `[start, end]` (seconds since epoch).
pub fn time_axis(start: i64, end: i64, max_ticks: usize) -> TimeAxis {
    let span = (end - start).max(1);
    let max_ticks = max_ticks.max(2) as i64;
    let step = TIME_STEPS.iter().copied().find(|s| span / s < max_ticks).unwrap_or_else(|| {
        let years = span / (364 * 86_400) / max_ticks + 1;
        years * 364 * 86_400
    });
    let offset = if step >= 7 * 86_400 { MONDAY_OFFSET } else { 0 };
    let first = (start - offset).div_euclid(step) * step + offset;
    let first = if first < start { first + step } else { first };
    let ticks = (0..)
        .map(|i| first + i * step)
        .take_while(|t| *t <= end)
        .take(max_ticks as usize + 1)
        .map(|t| t as f64)
        .collect();
    TimeAxis { ticks, step_seconds: step }
}

/// A tick label: `Mar 02 08:00` for steps under a day, `2026-03-02` otherwise (UTC).
pub fn time_label(t: f64, step_seconds: i64) -> String {
    let Some(dt) = DateTime::<Utc>::from_timestamp(t.round() as i64, 0) else {
        return String::new();
    };
    if step_seconds < 86_400 { dt.format("%b %d %H:%M").to_string() } else { dt.format("%Y-%m-%d").to_string() }
}

/// A date axis for day-by-day series: ticks on the first of a month, every 1, 2, 3, 6 or 12 months
/// (or more), for spans of 60 days or more; shorter spans get a [`time_axis`].
#[derive(Clone, Debug, PartialEq)]
pub struct DateAxis {
    pub ticks: Vec<f64>,
    /// Months between ticks; 0 for a [`time_axis`].
    months: i64,
    step_seconds: i64,
}

const MONTH_STEPS: [i64; 8] = [1, 2, 3, 6, 12, 24, 60, 120];

impl DateAxis {
    /// A tick label: `Apr 2026` for month steps, `2027` for year steps, else as [`time_label`] (UTC).
    pub fn label(&self, t: f64) -> String {
        if self.months == 0 {
            return time_label(t, self.step_seconds);
        }
        let Some(dt) = DateTime::<Utc>::from_timestamp(t.round() as i64, 0) else {
            return String::new();
        };
        if self.months >= 12 { dt.format("%Y").to_string() } else { dt.format("%b %Y").to_string() }
    }
}

/// Ticks for `[start, end]` (seconds since the epoch), at most about `max_ticks`.
pub fn date_axis(start: i64, end: i64, max_ticks: usize) -> DateAxis {
    let month_index = |dt: DateTime<Utc>| dt.year() as i64 * 12 + dt.month0() as i64;
    let month_start = |m: i64| {
        let year = i32::try_from(m.div_euclid(12)).ok()?;
        let day = NaiveDate::from_ymd_opt(year, m.rem_euclid(12) as u32 + 1, 1)?;
        Some(day.and_hms_opt(0, 0, 0)?.and_utc().timestamp())
    };
    if end - start >= 60 * 86_400
        && let (Some(a), Some(b)) = (DateTime::<Utc>::from_timestamp(start, 0), DateTime::<Utc>::from_timestamp(end, 0))
    {
        let on_month_start = a.day() == 1 && a.num_seconds_from_midnight() == 0;
        let first = month_index(a) + if on_month_start { 0 } else { 1 };
        let last = month_index(b);
        for months in MONTH_STEPS {
            let indices: Vec<i64> = (first..=last).filter(|m| m.rem_euclid(months) == 0).collect();
            if indices.len() <= max_ticks.max(2) || months == MONTH_STEPS[MONTH_STEPS.len() - 1] {
                let ticks = indices.into_iter().take(100).filter_map(month_start).map(|t| t as f64).collect();
                return DateAxis { ticks, months, step_seconds: 0 };
            }
        }
    }
    let axis = time_axis(start, end, max_ticks);
    DateAxis { ticks: axis.ticks, months: 0, step_seconds: axis.step_seconds }
}

/// Round numeric ticks (1, 2, 5 × 10^k) over `[lo, hi]`, at most about `max_ticks`; `min_step`
/// keeps count axes on whole numbers.
pub fn nice_ticks(lo: f64, hi: f64, max_ticks: usize, min_step: f64) -> (Vec<f64>, f64) {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return (vec![if lo.is_finite() { lo } else { 0.0 }], 1.0);
    }
    let raw = (hi - lo) / max_ticks.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude);
    let step = step.max(min_step);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let ticks = (first..=last).take(100).map(|k| k as f64 * step).collect();
    (ticks, step)
}

/// A number with as many decimals as the tick step needs (`-0` printed as `0`).
pub fn number_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 || step <= 0.0 { 0 } else { (-step.log10()).ceil().clamp(0.0, 6.0) as usize };
    let text = format!("{v:.decimals$}");
    if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        text.trim_start_matches('-').into()
    } else {
        text
    }
}

/// A number for value labels: up to three significant decimals, no trailing zeros.
pub fn short_number(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let decimals = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    if text == "-0" { "0".into() } else { text }
}

/// Cuts `text` so that it fits `max_px` in the given style, ending it with "…" when cut.
pub fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max_px: u32,
) -> String {
    let width = |t: &str| area.estimate_text_size(t, style).map(|(w, _)| w).unwrap_or(u32::MAX);
    if width(text) <= max_px {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search on the kept prefix length: widths grow with the prefix.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let candidate: String = chars[..mid].iter().collect::<String>() + "…";
        if width(&candidate) <= max_px { lo = mid } else { hi = mid - 1 }
    }
    chars[..lo].iter().collect::<String>() + "…"
}

/// A box in backend pixels: left, top, right, bottom.
pub type PxBox = (i32, i32, i32, i32);

fn overlaps(a: PxBox, b: PxBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Greedy label placement: each label takes the first of its candidate boxes that lies within the
/// bounds and overlaps no box taken before (labels placed earlier and blocked areas such as other
/// text). A label none of whose candidates fits is left out and counted, so that a chart with
/// hundreds of guides draws the labels it has room for and says how many it left out, rather than
/// drawing them over each other. Labels are placed in the order given: deterministic.
#[derive(Clone, Debug)]
pub struct Placer {
    bounds: PxBox,
    taken: Vec<PxBox>,
    /// Labels [`Placer::place`] found no room for.
    pub left_out: usize,
}

impl Placer {
    pub fn within(bounds: PxBox) -> Placer {
        Placer { bounds, taken: Vec::new(), left_out: 0 }
    }

    /// Marks a box as taken without a label (text drawn otherwise).
    pub fn block(&mut self, area: PxBox) {
        self.taken.push(area);
    }

    /// Whether a box lies within the bounds and overlaps nothing taken.
    pub fn is_free(&self, area: PxBox) -> bool {
        let b = self.bounds;
        area.0 >= b.0
            && area.1 >= b.1
            && area.2 <= b.2
            && area.3 <= b.3
            && !self.taken.iter().any(|t| overlaps(*t, area))
    }

    /// The first free candidate, now taken; `None` (and one more left out) when none is free.
    pub fn place(&mut self, candidates: impl IntoIterator<Item = PxBox>) -> Option<PxBox> {
        match candidates.into_iter().find(|c| self.is_free(*c)) {
            Some(found) => {
                self.taken.push(found);
                Some(found)
            }
            None => {
                self.left_out += 1;
                None
            }
        }
    }
}

/// Draws `text` with its top left at the box's top left plus `pad`, on a nearly opaque white
/// background so that no line drawn before crosses it.
pub fn boxed_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle<'static>,
    at: PxBox,
    pad: i32,
) -> DrawResult<DB> {
    area.draw(&Rectangle::new([(at.0, at.1), (at.2, at.3)], WHITE.mix(0.9).filled()))?;
    let style = style.clone().pos(Pos::new(HPos::Left, VPos::Top));
    area.draw(&Text::new(text.to_string(), (at.0 + pad, at.1 + pad), style))
}

/// A note in small muted text at the bottom right of a chart: "12 labels left out for want of room".
pub fn left_out_note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, left_out: usize, what: &str) -> DrawResult<DB> {
    if left_out == 0 {
        return Ok(());
    }
    let (w, h) = area.dim_in_pixel();
    let style = anchored(font_color(11.0, MUTED), HPos::Right, VPos::Bottom);
    let text = format!("{left_out} {what} left out for want of room");
    area.draw(&Text::new(text, (w as i32 - 12, h as i32 - 4), style))
}

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug)]
pub enum Mark {
    /// A filled square.
    Swatch,
    /// A short thin bar (Pending and gates, drawn thinner than Running).
    Thin,
    /// A line.
    Line,
    /// A dashed line.
    Dashed,
}

/// Draws legend entries left to right from `(x, y)`, wrapping at the area's right edge. Returns
/// the y below the last line.
pub fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBColor, Mark)],
    x: i32,
    y: i32,
) -> Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
    let style = anchored(font(12.0), HPos::Left, VPos::Center);
    let right = area.dim_in_pixel().0 as i32 - 10;
    let (mut cx, mut cy) = (x, y + 8);
    for (label, color, mark) in entries {
        let text_w = area.estimate_text_size(label, &style)?.0 as i32;
        if cx + 22 + text_w > right && cx > x {
            cx = x;
            cy += 20;
        }
        match mark {
            Mark::Swatch => area.draw(&Rectangle::new([(cx, cy - 6), (cx + 14, cy + 6)], color.filled()))?,
            Mark::Thin => area.draw(&Rectangle::new([(cx, cy - 3), (cx + 14, cy + 3)], color.filled()))?,
            Mark::Line => area.draw(&PathElement::new(vec![(cx, cy), (cx + 14, cy)], color.stroke_width(2)))?,
            Mark::Dashed => {
                area.draw(&PathElement::new(vec![(cx, cy), (cx + 5, cy)], color.stroke_width(2)))?;
                area.draw(&PathElement::new(vec![(cx + 9, cy), (cx + 14, cy)], color.stroke_width(2)))?;
            }
        }
        area.draw(&Text::new(label.clone(), (cx + 19, cy), style.clone()))?;
        cx += 19 + text_w + 18;
    }
    Ok(cy + 12)
}

/// Title and subtitle at the top of a chart. Returns the y below them.
pub fn header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
    let w = area.dim_in_pixel().0.saturating_sub(30);
    let title_style = anchored(font(20.0), HPos::Left, VPos::Top);
    area.draw(&Text::new(fit_text(area, title, &title_style, w), (15, 10), title_style.clone()))?;
    if subtitle.is_empty() {
        return Ok(40);
    }
    let sub_style = anchored(font_color(13.0, MUTED), HPos::Left, VPos::Top);
    area.draw(&Text::new(fit_text(area, subtitle, &sub_style, w), (15, 36), sub_style.clone()))?;
    Ok(58)
}

/// A centred message in an empty chart ("nothing to draw").
pub fn empty_note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str) -> DrawResult<DB> {
    let (w, h) = area.dim_in_pixel();
    let style = anchored(font_color(15.0, MUTED), HPos::Center, VPos::Center);
    area.draw(&Text::new(text.to_string(), (w as i32 / 2, h as i32 / 2), style))
}

/// Points of a step line for a series of `(time, value)` changes, from `start` to `end`.
///
/// A series with more changes than `2 × bins` is reduced per time bin to its first, lowest, highest
/// and last value (the M4 reduction), drawn at the bin's first change: the drawn line looks the
/// same at chart resolution, and SVG size stays bounded by the chart width, not by the number of
/// members.
pub fn step_points(changes: &[(i64, i64)], start: i64, end: i64, bins: usize) -> Vec<(f64, f64)> {
    let mut value = 0;
    let mut i = 0;
    while i < changes.len() && changes[i].0 <= start {
        value = changes[i].1;
        i += 1;
    }
    let rest = &changes[i..];
    let mut out = vec![(start as f64, value as f64)];
    if rest.len() <= 2 * bins.max(1) {
        for &(t, v) in rest.iter().take_while(|(t, _)| *t <= end) {
            out.push((t as f64, value as f64));
            out.push((t as f64, v as f64));
            value = v;
        }
    } else {
        let width = ((end - start) as f64 / bins as f64).max(1.0);
        let mut j = 0;
        for b in 0..bins {
            let b_end = if b + 1 == bins { end + 1 } else { start + ((b + 1) as f64 * width) as i64 };
            let first = j;
            let (mut lo, mut hi) = (value, value);
            while j < rest.len() && rest[j].0 < b_end {
                lo = lo.min(rest[j].1);
                hi = hi.max(rest[j].1);
                j += 1;
            }
            if j == first {
                continue;
            }
            // Every move of the bin is drawn at its first change: the line stays one of horizontal
            // and vertical segments. A slanted one (to the bin's last change) followed by a move back
            // up or down would meet it at a sharp angle, and plotters outlines a wide line's sharp
            // angles with a spike that can cross the chart.
            let t = rest[first].0 as f64;
            let last = rest[j - 1].1;
            out.push((t, value as f64));
            for v in [lo, hi, last] {
                if out.last().map(|p| p.1) != Some(v as f64) {
                    out.push((t, v as f64));
                }
            }
            value = last;
        }
    }
    out.push((end as f64, value as f64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_772_438_400; // 2026-03-02T08:00:00Z

    #[test]
    fn placed_labels_never_overlap_and_the_rest_are_counted() {
        let mut placer = Placer::within((0, 0, 100, 40));
        placer.block((0, 0, 20, 10));
        // The first free candidate wins: the blocked one and the one outside the bounds are passed over.
        assert_eq!(placer.place([(10, 0, 30, 10), (90, 0, 110, 10), (30, 0, 50, 10)]), Some((30, 0, 50, 10)));
        assert_eq!(
            placer.place([(40, 5, 60, 15), (40, 10, 60, 20)]),
            Some((40, 10, 60, 20)),
            "touching is not overlapping"
        );
        assert_eq!(placer.place([(35, 5, 45, 15)]), None);
        assert_eq!(placer.left_out, 1);
        let mut crowded = Placer::within((0, 0, 100, 40));
        let placed: Vec<PxBox> =
            (0..50).filter_map(|i| crowded.place((0..4).map(|row| (i, row * 10, i + 30, row * 10 + 10)))).collect();
        for (a, b) in placed.iter().enumerate().flat_map(|(i, a)| placed[i + 1..].iter().map(move |b| (a, b))) {
            assert!(!overlaps(*a, *b), "{a:?} overlaps {b:?}");
        }
        assert_eq!(placed.len() + crowded.left_out, 50);
    }

    #[test]
    fn time_axis_picks_round_steps() {
        let axis = time_axis(T0, T0 + 3 * 3600, 8);
        assert_eq!(axis.step_seconds, 1800);
        assert_eq!(axis.ticks.first(), Some(&(T0 as f64)));
        assert_eq!(time_label(axis.ticks[1], axis.step_seconds), "Mar 02 08:30");
        let long = time_axis(T0, T0 + 60 * 86_400, 8);
        assert_eq!(long.step_seconds, 14 * 86_400);
        assert_eq!(time_label(long.ticks[0], long.step_seconds), "2026-03-16", "week steps fall on Mondays");
        assert_eq!(time_axis(T0, T0, 8).ticks, vec![T0 as f64], "an empty span still gets a tick");
    }

    #[test]
    fn date_axis_uses_month_starts_for_long_spans() {
        let year = date_axis(T0, T0 + 365 * 86_400, 13);
        assert_eq!(year.ticks.len(), 12);
        assert_eq!(year.label(year.ticks[0]), "Apr 2026");
        assert_eq!(year.label(year.ticks[11]), "Mar 2027");
        let few = date_axis(T0, T0 + 365 * 86_400, 5);
        assert_eq!(
            few.ticks.iter().map(|t| few.label(*t)).collect::<Vec<_>>(),
            ["Apr 2026", "Jul 2026", "Oct 2026", "Jan 2027"]
        );
        let decade = date_axis(T0, T0 + 3650 * 86_400, 6);
        assert_eq!(decade.label(decade.ticks[0]), "2028");
        let month = date_axis(T0, T0 + 30 * 86_400, 8);
        assert_eq!(month.label(month.ticks[0]), "2026-03-09", "short spans get weekly dates");
        assert_eq!(date_axis(T0, T0, 8).ticks.len(), 1);
    }

    #[test]
    fn nice_ticks_and_labels() {
        let (ticks, step) = nice_ticks(0.0, 47.0, 6, 1.0);
        assert_eq!(step, 10.0);
        assert_eq!(ticks, vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        let (_, step) = nice_ticks(0.0, 3.0, 10, 1.0);
        assert_eq!(step, 1.0, "count axes never get fractional ticks");
        assert_eq!(number_label(0.25, 0.05), "0.25");
        assert_eq!(number_label(-0.0, 1.0), "0");
        assert_eq!(short_number(12.345), "12.3");
        assert_eq!(short_number(0.5), "0.5");
        assert_eq!(nice_ticks(f64::NAN, 1.0, 5, 0.0).0, vec![0.0]);
    }

    #[test]
    fn step_points_keep_every_change_when_few() {
        let points = step_points(&[(10, 1), (20, 2), (30, 0)], 0, 40, 100);
        assert_eq!(
            points,
            vec![(0.0, 0.0), (10.0, 0.0), (10.0, 1.0), (20.0, 1.0), (20.0, 2.0), (30.0, 2.0), (30.0, 0.0), (40.0, 0.0)]
        );
    }

    #[test]
    fn step_points_reduce_many_changes_but_keep_extremes() {
        let changes: Vec<(i64, i64)> = (0..10_000).map(|i| (i, if i == 5_000 { 99 } else { i % 7 })).collect();
        let points = step_points(&changes, 0, 10_000, 50);
        assert!(points.len() <= 50 * 4 + 2, "{}", points.len());
        assert!(points.iter().any(|p| p.1 == 99.0), "the peak survives the reduction");
        // Horizontal and vertical segments only: a slanted one turning back would draw a spike.
        for pair in points.windows(2) {
            assert!(pair[0].0 == pair[1].0 || pair[0].1 == pair[1].1, "slanted segment {pair:?}");
        }
    }
}
