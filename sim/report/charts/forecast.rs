//! The fan chart of `fleetsim forecast`: members done over time from the status's instant on, the
//! band between the 10th and 90th percentile over replications and the median line, in the look of
//! the run charts (same palette, time axis, guide lines and placed labels).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::draw::{self, Axis, Mark};
use super::{Chart, DrawResult, Figure, render};

/// What the fan chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct Fan {
    pub title: String,
    pub subtitle: String,
    /// `(time, p10, p50, p90)` of members done, times in seconds since the epoch, in time order.
    pub points: Vec<(i64, f64, f64, f64)>,
    /// Members of the run: the top of the scale.
    pub total: usize,
    /// The status's instant.
    pub now: i64,
    /// Dashed vertical guides: the median finish of each remaining stage, and of the run.
    pub guides: Vec<(i64, String)>,
}

const WIDTH: u32 = 1400;
const HEIGHT: u32 = 560;

/// Draws the fan chart (SVG and PNG).
pub fn fan_chart(fan: &Fan) -> anyhow::Result<Chart> {
    render(&FanFigure(fan))
}

struct FanFigure<'a>(&'a Fan);

impl Figure for FanFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let fan = self.0;
        let top = draw::header(root, &fan.title, &fan.subtitle)?;
        let legend = [
            ("median (p50)".to_string(), draw::RUNNING, Mark::Line),
            ("p10 to p90 of the replications".to_string(), RGBColor(0xBF, 0xDC, 0xEC), Mark::Swatch),
            ("status time and median finishes (dashed)".to_string(), draw::STRUCTURE, Mark::Line),
        ];
        let below = draw::legend(root, &legend, 15, top)?;
        let (_, area) = root.split_vertically(below as u32 + 6);
        if fan.points.len() < 2 {
            return draw::empty_note(&area, "nothing left to draw");
        }
        let lo = fan.points[0].0.min(fan.now);
        let hi = fan.points[fan.points.len() - 1].0.max(lo + 60);
        let axis = draw::time_axis(lo, hi, 10);
        let step = axis.step_seconds;
        let y_hi = fan.total as f64 * 1.08 + 0.5;
        let (y_ticks, y_step) = draw::nice_ticks(0.0, y_hi, 8, 1.0);
        let area = draw::inset_for_y_desc(&area);
        let mut chart = draw::xy_chart(
            &area,
            draw::Frame {
                x: Axis::new(lo as f64..hi as f64, axis.ticks.clone()),
                y: Axis::new(0.0..y_hi, y_ticks),
                x_label: &|v| draw::time_label(*v, step),
                y_label: &|v| draw::number_label(*v, y_step),
                x_desc: "time (UTC)",
                y_desc: "members done",
                sizes: (24, 46, 70),
            },
        )?;
        // Counts change in steps: each value holds until the next grid point.
        let steps = |value: fn(&(i64, f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
            let mut out = Vec::with_capacity(2 * fan.points.len());
            for (i, p) in fan.points.iter().enumerate() {
                if i > 0 {
                    out.push((p.0 as f64, value(&fan.points[i - 1])));
                }
                out.push((p.0 as f64, value(p)));
            }
            out
        };
        let mut band = steps(|p| p.3);
        band.extend(steps(|p| p.1).into_iter().rev());
        chart.draw_series(std::iter::once(Polygon::new(band, draw::RUNNING.mix(0.25).filled())))?;
        chart.draw_series(LineSeries::new(steps(|p| p.2), draw::RUNNING.stroke_width(2)))?;
        let total = fan.total as f64;
        chart.draw_series(DashedLineSeries::new(
            vec![(lo as f64, total), (hi as f64, total)],
            6,
            4,
            ShapeStyle::from(draw::MUTED.mix(0.8)).stroke_width(1),
        ))?;
        let mut guides = vec![(fan.now, "status".to_string())];
        guides.extend(fan.guides.iter().filter(|(t, _)| (lo..=hi).contains(t)).cloned());
        for (t, _) in &guides {
            chart.draw_series(DashedLineSeries::new(
                vec![(*t as f64, 0.0), (*t as f64, y_hi)],
                6,
                4,
                ShapeStyle::from(draw::STRUCTURE.mix(0.8)).stroke_width(1),
            ))?;
        }
        let (x0, y0) = chart.plotting_area().get_base_pixel();
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let mut placer = draw::Placer::within((x0, y0, x0 + w as i32, y0 + h as i32));
        let style = draw::font_color(11.0, draw::MUTED);
        const PAD: i32 = 1;
        let total_label = format!("{} members", fan.total);
        let mut labels: Vec<(String, (f64, f64), bool)> = vec![(total_label, (hi as f64, total), true)];
        labels.extend(guides.iter().map(|(t, l)| (l.clone(), (*t as f64, y_hi), false)));
        for (label, point, level) in &labels {
            let (tw, th) = root.estimate_text_size(label, &style)?;
            let (tw, th) = (tw as i32 + 2 * PAD, th as i32 + 2 * PAD);
            let at = |x: i32, y: i32| (x, y, x + tw, y + th);
            let (px, py) = chart.backend_coord(point);
            let candidates: Vec<draw::PxBox> = if *level {
                vec![at(px - 4 - tw, py - 2 - th), at(px - 4 - tw, py + 2)]
            } else {
                let rows = (0..6).map(|row| py + 3 + (th + 2) * row);
                rows.clone().map(|y| at(px + 3, y)).chain(rows.map(|y| at(px - 3 - tw, y))).collect()
            };
            if let Some(found) = placer.place(candidates) {
                draw::boxed_text(root, label, &style, found, PAD)?;
            }
        }
        draw::left_out_note(root, placer.left_out, "guide labels")
    }
}
