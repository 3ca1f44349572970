//! Sweep charts: plain functions over plain data, so a sweep engine can call them without knowing
//! anything of runs or members.
//!
//! Each returns a [`Chart`] (SVG and PNG) or an error; none panics on odd input: empty slices give a
//! chart that says "no data", non-finite numbers are left out (heatmap cells show "n/a"), and ragged
//! heatmap rows are padded with missing cells.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{self, Axis, Mark};
use super::{Chart, DrawResult, Figure, render};

/// A 1-D sweep: the mean of a metric over the swept value, with its 95 % confidence band.
///
/// `points` are `(x, mean, ci_low, ci_high)`, in any order (they are sorted by `x`). Points with a
/// non-finite `x` or mean are left out; a non-finite bound is drawn at the mean.
///
/// ```no_run
/// let chart = fleetsim::report::charts::sweep_line(
///     "Makespan by stage maxConcurrency", "maxConcurrency", "makespan (hours)",
///     &[(1.0, 40.0, 36.0, 44.0), (2.0, 22.0, 20.5, 23.5), (5.0, 10.0, 9.0, 11.0)],
/// )?;
/// std::fs::write("makespan.svg", &chart.svg)?;
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn sweep_line(title: &str, x_label: &str, y_label: &str, points: &[(f64, f64, f64, f64)]) -> anyhow::Result<Chart> {
    let mut clean: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(x, m, lo, hi)| {
            (x, m, if lo.is_finite() { lo.min(m) } else { m }, if hi.is_finite() { hi.max(m) } else { m })
        })
        .collect();
    clean.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    render(&LineFigure { title, x_label, y_label, points: clean, dropped: points.len(), categories: None })
}

/// [`sweep_line`] for a parameter whose values are text (strategy names, whole strategy objects):
/// the values are placed at 0, 1, 2, … in the order given and named on the axis (cut to 18
/// characters); `points[i].0` is the index of the value in `categories`.
pub fn sweep_line_categories(
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    points: &[(f64, f64, f64, f64)],
) -> anyhow::Result<Chart> {
    let clean: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite() && p.0 >= 0.0 && (p.0 as usize) < categories.len())
        .map(|&(x, m, lo, hi)| {
            (x, m, if lo.is_finite() { lo.min(m) } else { m }, if hi.is_finite() { hi.max(m) } else { m })
        })
        .collect();
    let categories = Some(categories);
    render(&LineFigure { title, x_label, y_label, points: clean, dropped: points.len(), categories })
}

struct LineFigure<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    points: Vec<(f64, f64, f64, f64)>,
    /// How many points were given (to say how many were left out).
    dropped: usize,
    /// Text values at x = 0, 1, 2, …
    categories: Option<&'a [String]>,
}

/// A padded range around `[lo, hi]`, never empty.
fn padded(lo: f64, hi: f64, fraction: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi <= lo {
        let half = (lo.abs() * 0.1).max(0.5);
        return (lo - half, hi + half);
    }
    let pad = (hi - lo) * fraction;
    (lo - pad, hi + pad)
}

impl Figure for LineFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let left_out = self.dropped - self.points.len();
        let mut subtitle = format!("mean with its 95 % confidence band · {} points", self.points.len());
        if left_out > 0 {
            subtitle.push_str(&format!(" · {left_out} without a finite value left out"));
        }
        let top = draw::header(root, self.title, &subtitle)?;
        let legend = [
            ("mean".to_string(), draw::RUNNING, Mark::Line),
            ("95 % confidence interval".to_string(), RGBColor(0xBF, 0xD7, 0xEA), Mark::Swatch),
        ];
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if self.points.is_empty() {
            return draw::empty_note(&area, "no data");
        }
        let (x_lo, x_hi) = match self.categories {
            Some(c) => (-0.5, c.len() as f64 - 0.5),
            None => padded(self.points[0].0, self.points[self.points.len() - 1].0, 0.04),
        };
        let y_min = self.points.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
        let y_max = self.points.iter().map(|p| p.3).fold(f64::NEG_INFINITY, f64::max);
        let (y_lo, y_hi) = padded(y_min, y_max, 0.08);
        let (x_ticks, x_step) = match self.categories {
            Some(c) => ((0..c.len()).map(|i| i as f64).collect(), 1.0),
            None => draw::nice_ticks(x_lo, x_hi, 10, 0.0),
        };
        let categories = self.categories;
        let x_label = move |v: &f64| match categories {
            Some(c) => c.get(v.round().max(0.0) as usize).map(|t| short_label(t)).unwrap_or_default(),
            None => draw::number_label(*v, x_step),
        };
        let (y_ticks, y_step) = draw::nice_ticks(y_lo, y_hi, 8, 0.0);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(x_lo..x_hi, x_ticks),
                y: Axis::new(y_lo..y_hi, y_ticks),
                x_label: &x_label,
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: self.x_label,
                y_desc: self.y_label,
                sizes: (30, 50, 80),
            },
        )?;
        let mut band: Vec<(f64, f64)> = self.points.iter().map(|p| (p.0, p.3)).collect();
        band.extend(self.points.iter().rev().map(|p| (p.0, p.2)));
        chart.draw_series(std::iter::once(Polygon::new(band, draw::RUNNING.mix(0.25).filled())))?;
        chart.draw_series(LineSeries::new(self.points.iter().map(|p| (p.0, p.1)), draw::RUNNING.stroke_width(2)))?;
        chart.draw_series(self.points.iter().map(|p| Circle::new((p.0, p.1), 4, draw::RUNNING.filled())))?;
        Ok(())
    }
}

/// A 2-D sweep: one cell per pair of swept values, coloured by a metric (viridis, low = dark).
///
/// `values[i][j]` is the value at `ys[i]` (row) and `xs[j]` (column); `None` or a non-finite value
/// is a missing cell, drawn grey with "n/a". Rows shorter than `xs` are padded with missing cells;
/// extra values are ignored. Cells wide enough show their value. Grids of more than about 7,000
/// values on an axis do not fit a chart and give an error.
pub fn sweep_heatmap(
    title: &str,
    x_label: &str,
    y_label: &str,
    xs: &[String],
    ys: &[String],
    values: &[Vec<Option<f64>>],
) -> anyhow::Result<Chart> {
    let grid: Vec<Vec<Option<f64>>> = (0..ys.len())
        .map(|i| {
            (0..xs.len())
                .map(|j| values.get(i).and_then(|row| row.get(j)).copied().flatten().filter(|v| v.is_finite()))
                .collect()
        })
        .collect();
    render(&Heatmap { title, x_label, y_label, xs, ys, grid })
}

struct Heatmap<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    xs: &'a [String],
    ys: &'a [String],
    grid: Vec<Vec<Option<f64>>>,
}

const MISSING: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
const MAX_AXIS_LABEL_CHARS: usize = 18;

fn short_label(text: &str) -> String {
    if text.chars().count() <= MAX_AXIS_LABEL_CHARS {
        text.to_string()
    } else {
        text.chars().take(MAX_AXIS_LABEL_CHARS - 1).collect::<String>() + "…"
    }
}

impl Heatmap<'_> {
    /// Cells of 8 to 110 px (8 to 60 px high), smaller for very large grids so the chart stays within
    /// the size limit; beyond about 7,000 values per axis rendering returns an error.
    fn cell_px(&self) -> (u32, u32) {
        let nx = self.xs.len().clamp(1, u32::MAX as usize) as u32;
        let ny = self.ys.len().clamp(1, u32::MAX as usize) as u32;
        let fit = |n: u32| ((super::MAX_SIDE_PX - 400) / n).max(1);
        ((900 / nx).clamp(8, 110).min(fit(nx)), (520 / ny).clamp(8, 60).min(fit(ny)))
    }

    fn range(&self) -> Option<(f64, f64)> {
        let finite = self.grid.iter().flatten().flatten().copied();
        let lo = finite.clone().fold(f64::INFINITY, f64::min);
        let hi = finite.fold(f64::NEG_INFINITY, f64::max);
        (lo <= hi).then_some((lo, hi))
    }
}

impl Figure for Heatmap<'_> {
    fn size(&self) -> (u32, u32) {
        let (cw, ch) = self.cell_px();
        let w = (cw as usize).saturating_mul(self.xs.len().max(1)).saturating_add(370);
        let h = (ch as usize).saturating_mul(self.ys.len().max(1)).saturating_add(220);
        let (w, h) = (w.min(u32::MAX as usize) as u32, h.min(u32::MAX as usize) as u32);
        (w.max(640), h.max(360))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let missing = self.grid.iter().flatten().filter(|v| v.is_none()).count();
        let mut subtitle = format!("{} × {} cells", self.xs.len(), self.ys.len());
        if missing > 0 {
            subtitle.push_str(&format!(" · {missing} without a value (grey)"));
        }
        let top = draw::header(root, self.title, &subtitle)?;
        let (_, area) = root.split_vertically(top as u32 + 14);
        let (nx, ny) = (self.xs.len(), self.ys.len());
        if nx == 0 || ny == 0 {
            return draw::empty_note(&area, "no data");
        }
        let (area, bar_area) = area.split_horizontally(area.dim_in_pixel().0.saturating_sub(150));
        // Label every k-th value when there are more than fit (x labels need about 100 px, y 16 px).
        let (cw, ch) = self.cell_px();
        let kx = nx.div_ceil((cw as usize * nx / 100).max(1)).max(1);
        let ky = ny.div_ceil((ch as usize * ny / 16).max(1)).max(1);
        let x_keys: Vec<f64> = (0..nx).step_by(kx).map(|j| j as f64 + 0.5).collect();
        let y_keys: Vec<f64> = (0..ny).step_by(ky).map(|i| (ny - 1 - i) as f64 + 0.5).collect();
        let mut chart = ChartBuilder::on(&area)
            .margin_right(10)
            .margin_bottom(8)
            .x_label_area_size(60)
            .y_label_area_size(150)
            .build_cartesian_2d(Axis::new(0.0..nx as f64, x_keys), Axis::new(0.0..ny as f64, y_keys))?;
        let xs = self.xs;
        let ys = self.ys;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_label_formatter(&|v| xs.get(v.floor() as usize).map(|s| short_label(s)).unwrap_or_default())
            .y_label_formatter(&|v| {
                let i = ny.saturating_sub(1).saturating_sub(v.floor() as usize);
                ys.get(i).map(|s| short_label(s)).unwrap_or_default()
            })
            .label_style(draw::font(12.0))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .axis_desc_style(draw::font(13.0))
            .draw()?;
        let range = self.range();
        let show_values = cw >= 44 && ch >= 18;
        for (i, row) in self.grid.iter().enumerate() {
            let y = (ny - 1 - i) as f64;
            for (j, value) in row.iter().enumerate() {
                let x = j as f64;
                let color = match (value, range) {
                    (Some(v), Some((lo, hi))) if hi > lo => draw::viridis((v - lo) / (hi - lo)),
                    (Some(_), _) => draw::viridis(0.5),
                    (None, _) => MISSING,
                };
                chart.draw_series(std::iter::once(Rectangle::new([(x, y), (x + 1.0, y + 1.0)], color.filled())))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    WHITE.stroke_width(1),
                )))?;
                if show_values {
                    let text = value.map(draw::short_number).unwrap_or_else(|| "n/a".into());
                    let light = value.is_some() && (color.0 as u32 * 3 + color.1 as u32 * 6 + color.2 as u32) < 1280;
                    let ink = if light { WHITE } else { draw::INK };
                    let style = draw::anchored(draw::font_color(11.0, ink), HPos::Center, VPos::Center);
                    chart.draw_series(std::iter::once(Text::new(text, (x + 0.5, y + 0.5), style)))?;
                }
            }
        }
        self.color_bar(&bar_area, range)
    }
}

impl Heatmap<'_> {
    fn color_bar<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        range: Option<(f64, f64)>,
    ) -> DrawResult<DB> {
        let Some((lo, hi)) = range else {
            return Ok(());
        };
        let (x0, y0, height) = (20, 10, 240);
        let steps = 48;
        for k in 0..steps {
            let t = 1.0 - k as f64 / (steps - 1) as f64;
            let top = y0 + k * height / steps;
            let bottom = y0 + (k + 1) * height / steps;
            area.draw(&Rectangle::new([(x0, top), (x0 + 18, bottom)], draw::viridis(t).filled()))?;
        }
        let style = draw::anchored(draw::font(11.0), HPos::Left, VPos::Center);
        for (t, value) in [(1.0, hi), (0.5, (lo + hi) / 2.0), (0.0, lo)] {
            let y = y0 + ((1.0 - t) * f64::from(height)) as i32;
            area.draw(&Text::new(draw::short_number(value), (x0 + 24, y), style.clone()))?;
        }
        Ok(())
    }
}

/// Indices of the points on the Pareto front when both coordinates are minimised: no other point
/// is at least as good on both and better on one. Sorted by `x`, then `y`, then index; exact
/// duplicates of a front point are all on the front; non-finite points never are.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> =
        (0..points.len()).filter(|&i| points[i].0.is_finite() && points[i].1.is_finite()).collect();
    order.sort_by(|&a, &b| {
        points[a].0.total_cmp(&points[b].0).then(points[a].1.total_cmp(&points[b].1)).then(a.cmp(&b))
    });
    let mut front = Vec::new();
    let mut best: Option<(f64, f64)> = None;
    for i in order {
        let (x, y) = points[i];
        let on_front = match best {
            None => true,
            Some((bx, by)) => y < by || (x == bx && y == by),
        };
        if on_front {
            front.push(i);
            if best.is_none_or(|(_, by)| y < by) {
                best = Some((x, y));
            }
        }
    }
    front
}

/// Front points numbered on the chart and named in its key, at most.
pub const MAX_FRONT_LABELS: usize = 25;
/// Width of the key that names the numbered front points.
const KEY_WIDTH: u32 = 300;

/// A Pareto scatter of labelled points, e.g. hours to 90 % upgraded against blast radius across
/// sweep points.
///
/// Lower is better on both axes: the front ([`pareto_front`]) is highlighted, joined by its
/// staircase, and numbered where the numbers overlap nothing (up to [`MAX_FRONT_LABELS`]), with a
/// key at the right that names each number; dominated points are grey.
/// Points with a non-finite coordinate are left out.
pub fn pareto_scatter(
    title: &str,
    x_label: &str,
    y_label: &str,
    points: &[(String, f64, f64)],
) -> anyhow::Result<Chart> {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.2)).collect();
    let front = pareto_front(&xy);
    render(&Scatter { title, x_label, y_label, points, front })
}

struct Scatter<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    points: &'a [(String, f64, f64)],
    front: Vec<usize>,
}

impl Figure for Scatter<'_> {
    fn size(&self) -> (u32, u32) {
        (1000, 640)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let finite: Vec<&(String, f64, f64)> =
            self.points.iter().filter(|p| p.1.is_finite() && p.2.is_finite()).collect();
        let mut subtitle = format!(
            "{} points · {} on the Pareto front (lower is better on both axes)",
            finite.len(),
            self.front.len()
        );
        if finite.len() < self.points.len() {
            subtitle.push_str(&format!(" · {} without finite values left out", self.points.len() - finite.len()));
        }
        let top = draw::header(root, self.title, &subtitle)?;
        let legend = [
            ("Pareto front".to_string(), draw::FAILED, Mark::Swatch),
            ("dominated".to_string(), draw::SKIPPED, Mark::Swatch),
        ];
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if finite.is_empty() {
            return draw::empty_note(&area, "no data");
        }
        // Front points are numbered on the chart and named in a key at the right, so that labels
        // never overlap however close the points are; room is left of the y-axis name.
        let (width, _) = area.dim_in_pixel();
        let (area, key_area) = area.split_horizontally(width.saturating_sub(KEY_WIDTH));
        let area = area.margin(0, 0, 12, 0);
        let fold = |f: fn(&&(String, f64, f64)) -> f64| {
            let lo = finite.iter().map(f).fold(f64::INFINITY, f64::min);
            let hi = finite.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
            padded(lo, hi, 0.08)
        };
        let (x_lo, x_hi) = fold(|p| p.1);
        let (y_lo, y_hi) = fold(|p| p.2);
        let (x_ticks, x_step) = draw::nice_ticks(x_lo, x_hi, 10, 0.0);
        let (y_ticks, y_step) = draw::nice_ticks(y_lo, y_hi, 8, 0.0);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(x_lo..x_hi, x_ticks),
                y: Axis::new(y_lo..y_hi, y_ticks),
                x_label: &|v| draw::number_label(*v, x_step),
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: self.x_label,
                y_desc: self.y_label,
                sizes: (30, 50, 80),
            },
        )?;
        let on_front: std::collections::BTreeSet<usize> = self.front.iter().copied().collect();
        chart.draw_series(
            self.points
                .iter()
                .enumerate()
                .filter(|(i, p)| !on_front.contains(i) && p.1.is_finite() && p.2.is_finite())
                .map(|(_, p)| Circle::new((p.1, p.2), 4, draw::SKIPPED.filled())),
        )?;
        let mut stairs = Vec::new();
        for (k, &i) in self.front.iter().enumerate() {
            let (x, y) = (self.points[i].1, self.points[i].2);
            if k > 0 {
                let previous_y = stairs.last().map_or(y, |p: &(f64, f64)| p.1);
                stairs.push((x, previous_y));
            }
            stairs.push((x, y));
        }
        chart.draw_series(LineSeries::new(stairs, draw::FAILED.mix(0.6).stroke_width(1)))?;
        chart.draw_series(
            self.front.iter().map(|&i| Circle::new((self.points[i].1, self.points[i].2), 6, draw::FAILED.filled())),
        )?;
        let (x0, y0) = chart.plotting_area().get_base_pixel();
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let mut placer = draw::Placer::within((x0, y0, x0 + w as i32, y0 + h as i32));
        for &i in &self.front {
            let (px, py) = chart.backend_coord(&(self.points[i].1, self.points[i].2));
            placer.block((px - 6, py - 6, px + 6, py + 6));
        }
        let number_style = draw::font(11.0);
        let shown = self.front.len().min(MAX_FRONT_LABELS);
        for (k, &i) in self.front.iter().take(shown).enumerate() {
            let number = (k + 1).to_string();
            let (tw, th) = root.estimate_text_size(&number, &number_style)?;
            let (tw, th) = (tw as i32 + 2, th as i32 + 2);
            let (px, py) = chart.backend_coord(&(self.points[i].1, self.points[i].2));
            let at = |x: i32, y: i32| (x, y, x + tw, y + th);
            let candidates = [
                at(px + 8, py - th / 2),
                at(px - 8 - tw, py - th / 2),
                at(px - tw / 2, py - 8 - th),
                at(px - tw / 2, py + 8),
                at(px + 8, py - 8 - th),
                at(px - 8 - tw, py + 8),
                at(px + 8, py + 8),
                at(px - 8 - tw, py - 8 - th),
            ];
            if let Some(found) = placer.place(candidates) {
                draw::boxed_text(root, &number, &number_style, found, 1)?;
            }
        }
        // The key: number and point name, as many rows as fit.
        let key_style = draw::anchored(draw::font(11.0), HPos::Left, VPos::Top);
        let row = 16;
        let (_, key_h) = key_area.dim_in_pixel();
        let rows = ((key_h as i32 - 40) / row).max(1) as usize;
        key_area.draw(&Text::new(
            "Pareto front".to_string(),
            (8, 8),
            draw::anchored(draw::font(12.0), HPos::Left, VPos::Top),
        ))?;
        // Each name wrapped at its ", " separators (parameter=value pairs) onto as many lines as it
        // needs, so the part that tells two points apart is never cut off.
        let width = |t: &str| key_area.estimate_text_size(t, &key_style).map_or(u32::MAX, |(w, _)| w);
        let mut line = 0usize;
        let mut listed = 0usize;
        for (k, &i) in self.front.iter().take(shown).enumerate() {
            let mut lines: Vec<String> = Vec::new();
            for piece in self.points[i].0.split(", ") {
                match lines.last_mut() {
                    Some(last) if width(&format!("{last}, {piece}")) <= KEY_WIDTH - 40 => {
                        last.push_str(", ");
                        last.push_str(piece);
                    }
                    _ => lines.push(piece.to_string()),
                }
            }
            if line + lines.len() + 1 > rows {
                break;
            }
            for (j, text) in lines.iter().enumerate() {
                let text = draw::fit_text(&key_area, text, &key_style, KEY_WIDTH - 40);
                let y = 30 + row * (line + j) as i32;
                if j == 0 {
                    key_area.draw(&Text::new((k + 1).to_string(), (8, y), key_style.clone()))?;
                }
                key_area.draw(&Text::new(text, (30, y), key_style.clone()))?;
            }
            line += lines.len();
            listed += 1;
        }
        if self.front.len() > listed {
            let more = format!("… and {} more (points.csv)", self.front.len() - listed);
            key_area.draw(&Text::new(more, (8, 30 + row * line as i32), key_style.clone()))?;
        }
        draw::left_out_note(root, placer.left_out, "point numbers")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_front_minimises_both() {
        let points =
            [(1.0, 5.0), (2.0, 3.0), (3.0, 3.0), (2.0, 4.0), (4.0, 1.0), (5.0, 0.5), (2.0, 3.0), (f64::NAN, 0.0)];
        assert_eq!(pareto_front(&points), vec![0, 1, 6, 4, 5]);
        assert!(pareto_front(&[]).is_empty());
    }

    #[test]
    fn viridis_ends() {
        assert_eq!(draw::viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(draw::viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(draw::viridis(f64::NAN), draw::viridis(0.5));
    }
}
