//! Polygon filling for the PNG backend: plotters' scanline algorithm (`plotters_backend::rasterizer::
//! fill_polygon`), kept call for call so that every pixel comes out as plotters draws it, without its
//! costs: plotters makes a new list of active edges and clones edges on every scan line, and works
//! out each edge's position again at every comparison of a sort. Here the lists are reused, a
//! position is worked out once per line, blends that change nothing (an alpha of 0 or less) are not
//! made, and a run of scan lines that fill the same opaque spans is filled as one rectangle, which
//! sets the same pixels to the same colour. Where every active edge is flat across the sweep and
//! none starts or ends (a Gantt band between two steps), the lines are not even worked out: they
//! would give the same spans.
//!
//! Filled areas are most of what a chart's bitmap costs: the Gantt chart's stacked bands, the area
//! under the completion line and every line wider than a pixel (plotters draws those as polygons).

use plotters_backend::{BackendColor, BackendCoord, BackendStyle, DrawingBackend};

use super::pixels::{Error, Pixels};

/// An edge as the sweep sees it: `master` along the sweep, `slave` across it.
#[derive(Clone, Copy)]
struct Edge {
    epoch: u32,
    total_epoch: u32,
    slave_begin: i32,
    slave_end: i32,
    /// [`Edge::slave_pos`] at the current `epoch`.
    pos: f64,
}

impl Edge {
    /// An edge from `from` to `to` in (master, slave) coordinates; none if it has no length along
    /// the sweep.
    fn new(mut from: (i32, i32), mut to: (i32, i32)) -> Option<Edge> {
        if from.0 == to.0 {
            return None;
        }
        if from.0 > to.0 {
            std::mem::swap(&mut from, &mut to);
        }
        let mut edge =
            Edge { epoch: 0, total_epoch: (to.0 - from.0) as u32, slave_begin: from.1, slave_end: to.1, pos: 0.0 };
        edge.pos = edge.slave_pos();
        Some(edge)
    }

    fn master_pos(&self) -> i32 {
        (self.total_epoch - self.epoch) as i32
    }

    /// plotters' formula, to the bit.
    fn slave_pos(&self) -> f64 {
        f64::from(self.slave_begin)
            + (i64::from(self.slave_end - self.slave_begin) * i64::from(self.epoch)) as f64
                / f64::from(self.total_epoch)
    }
}

/// What one scan line draws, in order.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    /// A 1-pixel line across the sweep from `from` to `to` (slave coordinates, both included).
    Line { from: i32, to: i32 },
    /// A pixel at `at`, the fill colour at `share` of its alpha.
    Pixel { at: i32, share: f64 },
}

/// Fills the polygon `vertices` on `back` as `plotters_backend::rasterizer::fill_polygon` fills it.
pub(crate) fn fill_polygon<S: BackendStyle>(
    back: &mut Pixels,
    vertices: &[BackendCoord],
    style: &S,
) -> Result<(), Error> {
    let Some((&first, rest)) = vertices.split_first() else { return Ok(()) };
    let (mut x_span, mut y_span) = ((first.0, first.0), (first.1, first.1));
    for &(x, y) in rest {
        x_span = (x_span.0.min(x), x_span.1.max(x));
        y_span = (y_span.0.min(y), y_span.1.max(y));
    }
    // Every point on one vertical or horizontal line.
    if x_span.0 == x_span.1 || y_span.0 == y_span.1 {
        return back.line((x_span.0, y_span.0), (x_span.1, y_span.1), style);
    }
    let horizontal_sweep = x_span.1 - x_span.0 > y_span.1 - y_span.0;
    // (master, slave): x and y for a horizontal sweep (columns), y and x for a vertical one (rows).
    let swept = |(x, y): BackendCoord| if horizontal_sweep { (x, y) } else { (y, x) };
    let mut edges: Vec<((i32, i32), (i32, i32))> =
        vertices.iter().zip(vertices.iter().skip(1)).map(|(a, b)| (swept(*a), swept(*b))).collect();
    edges.push((swept(vertices[vertices.len() - 1]), swept(vertices[0])));
    // Stable, by where an edge starts along the sweep: the order plotters adds them in.
    edges.sort_by_key(|(a, b)| a.0.min(b.0));
    for edge in &mut edges {
        if edge.0.0 > edge.1.0 {
            std::mem::swap(&mut edge.0, &mut edge.1);
        }
    }
    let (low, high) = if horizontal_sweep { x_span } else { y_span };
    let color = style.color();
    let opaque = color.alpha >= 1.0;
    let mut next = 0;
    let mut active: Vec<Edge> = Vec::new();
    let mut ops: Vec<Op> = Vec::new();
    // A run of lines drawing the same opaque spans and nothing else, not drawn yet: from `run_start`,
    // the spans in `run`.
    let mut run: Vec<Op> = Vec::new();
    let mut run_start = low;
    let mut line = low;
    while line <= high {
        active.retain_mut(|e| {
            if e.master_pos() > 0 {
                e.epoch += 1;
                e.pos = e.slave_pos();
                true
            } else {
                false
            }
        });
        while let Some(&(from, to)) = edges.get(next) {
            if from.0 > line {
                break;
            }
            active.extend(Edge::new(from, to));
            next += 1;
        }
        active.sort_by(|a, b| a.pos.partial_cmp(&b.pos).expect("an edge's position is a number"));
        spans(&active, horizontal_sweep, color.alpha, &mut ops);
        // The run goes on while this line draws what it draws; a line that blends a pixel is drawn
        // on its own as plotters draws it. (A reversed span always comes with such a pixel; it is
        // named anyway, since a merged rectangle would not draw it as a line does.) Translucent
        // lines are never merged: plotters' wide blend rounds its 8-pixel groups differently from
        // the one-pixel blend of a line, so a rectangle would change some pixels by one.
        let plain = opaque && ops.iter().all(|op| matches!(op, Op::Line { from, to } if from <= to));
        if !(plain && ops == run) {
            fill_run(back, horizontal_sweep, run_start, line.saturating_sub(1), &run, color)?;
            run.clear();
            if plain {
                run.extend_from_slice(&ops);
                run_start = line;
            } else {
                for op in &ops {
                    draw(back, horizontal_sweep, line, *op, color)?;
                }
            }
        }
        // While no edge starts, none reaches its last line and every one is flat across the sweep
        // (the Gantt chart's bands), the lines after this one draw the same spans: the run goes on
        // over them without working them out.
        if plain && active.iter().all(|e| e.slave_begin == e.slave_end) {
            let before_next = edges.get(next).map_or(high, |(from, _)| from.0.saturating_sub(1));
            let last = active.iter().fold(i64::from(before_next.min(high)), |last, e| {
                last.min(i64::from(line) + i64::from(e.master_pos()) - 1)
            });
            if last > i64::from(line) {
                for e in &mut active {
                    e.epoch += (last - i64::from(line)) as u32;
                }
                line = last as i32;
            }
        }
        if line == high {
            break;
        }
        line += 1;
    }
    fill_run(back, horizontal_sweep, run_start, high, &run, color)
}

/// The spans the sorted active edges give on one scan line, as plotters pairs them. A pixel blended
/// at an alpha (`alpha` times its share) of zero or less is unchanged (plotters' bitmap returns at
/// once): it is left out. (The vertical sweep blends the far pixel by `floor - to`, never above
/// zero, so with the charts' colours it is always left out.)
fn spans(active: &[Edge], horizontal_sweep: bool, alpha: f64, ops: &mut Vec<Op>) {
    ops.clear();
    let (mut first, mut second): (Option<&Edge>, Option<&Edge>) = (None, None);
    for edge in active {
        if first.is_none() {
            first = Some(edge);
        } else if second.is_none() {
            second = Some(edge);
        }
        let (Some(a), Some(b)) = (first, second) else { continue };
        if a.master_pos() == 0 && b.master_pos() != 0 {
            (first, second) = (Some(b), None);
            continue;
        }
        if a.master_pos() != 0 && b.master_pos() == 0 {
            (first, second) = (Some(a), None);
            continue;
        }
        let (from, to) = (a.pos, b.pos);
        if a.master_pos() == 0 && b.master_pos() == 0 && to - from > 1.0 {
            (first, second) = (None, None);
            continue;
        }
        ops.push(Op::Line { from: from.ceil() as i32, to: to.floor() as i32 });
        ops.push(Op::Pixel { at: from.floor() as i32, share: from.ceil() - from });
        let far = if horizontal_sweep { to - to.floor() } else { to.floor() - to };
        ops.push(Op::Pixel { at: to.ceil() as i32, share: far });
        (first, second) = (None, None);
    }
    ops.retain(|op| !matches!(op, Op::Pixel { share, .. } if alpha * *share <= 0.0));
}

/// One operation of scan line `line`, as plotters makes it.
fn draw(back: &mut Pixels, horizontal_sweep: bool, line: i32, op: Op, color: BackendColor) -> Result<(), Error> {
    let at = |slave: i32| if horizontal_sweep { (line, slave) } else { (slave, line) };
    match op {
        Op::Line { from, to } => back.line(at(from), at(to), &color),
        Op::Pixel { at: slave, share } => {
            back.pixel(at(slave), color.mix(share));
            Ok(())
        }
    }
}

/// Fills the opaque spans `run` on scan lines `first..=last` at once.
fn fill_run(
    back: &mut Pixels,
    horizontal_sweep: bool,
    first: i32,
    last: i32,
    run: &[Op],
    color: BackendColor,
) -> Result<(), Error> {
    if first > last {
        return Ok(());
    }
    for op in run {
        if let Op::Line { from, to } = *op {
            // Saturating: a span that ends at the largest coordinate is off the canvas anyway.
            let (after_last, after_to) = (last.saturating_add(1), to.saturating_add(1));
            let (upper_left, bottom_right) = if horizontal_sweep {
                ((first, from), (after_last, after_to))
            } else {
                ((from, first), (after_to, after_last))
            };
            back.backend().draw_rect(upper_left, bottom_right, &color, true)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The pixels of `vertices` filled by plotters' rasterizer and by [`fill_polygon`].
    fn both(vertices: &[BackendCoord], color: RGBAColor, (w, h): (u32, u32)) -> (Vec<u8>, Vec<u8>) {
        let style = ShapeStyle::from(color).filled();
        let draw = |ours: bool| {
            // A background that is not flat, so that every blend shows.
            let mut rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 37 % 256) as u8).collect();
            {
                if ours {
                    fill_polygon(&mut Pixels::new(&mut rgb, (w, h)), vertices, &style).unwrap();
                } else {
                    let mut back = BitMapBackend::with_buffer(&mut rgb, (w, h));
                    plotters_backend::rasterizer::fill_polygon(&mut back, vertices, &style).unwrap();
                    back.present().unwrap();
                }
            }
            rgb
        };
        (draw(false), draw(true))
    }

    #[test]
    fn polygons_are_filled_pixel_for_pixel_as_plotters_fills_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let size = (90, 70);
        for case in 0..3000 {
            let n = rng.random_range(3..12);
            // Wide and tall shapes (both sweeps), partly outside the canvas, steps (the charts'
            // bands and areas: runs of identical spans) and slopes.
            let (sx, sy) = if case % 2 == 0 { (120, 40) } else { (40, 120) };
            let steps = case % 3 == 0;
            let mut vertices: Vec<BackendCoord> = Vec::new();
            for i in 0..n {
                let p = (rng.random_range(-40..sx + 40), rng.random_range(-40..sy + 40));
                if steps && let Some(&(_, y)) = vertices.last() {
                    vertices.push((p.0, y));
                }
                vertices.push(if steps && i == n - 1 { (p.0, vertices[0].1) } else { p });
            }
            // Opaque, translucent, just under opaque (the bitmap sets a pixel from 255/256 but blends
            // a line below 1), above 1, and negative (then plotters blends the far pixels the
            // vertical sweep gives a negative share).
            let alpha = [1.0, 0.15, 0.5, 0.999, 0.996, 1.5, -0.5][case % 7];
            // Grey too: the bitmap fills grey rows with one memset.
            let color = if case % 5 == 0 {
                let v = rng.random();
                RGBAColor(v, v, v, alpha)
            } else {
                RGBAColor(rng.random(), rng.random(), rng.random(), alpha)
            };
            let (theirs, ours) = both(&vertices, color, size);
            assert!(theirs == ours, "case {case}: {vertices:?} alpha {alpha}");
        }
    }

    #[test]
    fn stacked_step_bands_are_filled_pixel_for_pixel_as_plotters_fills_them() {
        // The Gantt chart's bands: between two step functions over the same bins, flat stretches
        // (skipped over) ending where steps, other stretches or the band's ends begin.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for case in 0..1500 {
            let (w, h) = if case % 2 == 0 { (120, 40) } else { (40, 120) };
            let bins = rng.random_range(1..30);
            let (x0, x1) = (rng.random_range(-20..20), rng.random_range(40..140));
            let xs: Vec<i32> = (0..=bins).map(|b| x0 + (x1 - x0) * b / bins).collect();
            let mut lower: Vec<i32> = vec![rng.random_range(-10..20); bins as usize];
            let mut upper = lower.clone();
            for b in 0..bins as usize {
                if b > 0 && rng.random_bool(0.6) {
                    (lower[b], upper[b]) = (lower[b - 1], upper[b - 1]);
                } else {
                    lower[b] = lower[0] + rng.random_range(0..4);
                    upper[b] = lower[b] + rng.random_range(0..30);
                }
            }
            let edge = |ys: &[i32]| {
                let mut points = Vec::new();
                for b in 0..ys.len() {
                    if b == 0 || ys[b] != ys[b - 1] {
                        points.push((xs[b], ys[b]));
                    }
                    if b + 1 == ys.len() || ys[b + 1] != ys[b] {
                        points.push((xs[b + 1], ys[b]));
                    }
                }
                points
            };
            let mut vertices = edge(&upper);
            vertices.extend(edge(&lower).into_iter().rev());
            // Tall canvases sweep the other way: the same shape, turned.
            if w < h {
                vertices = vertices.into_iter().map(|(x, y)| (y, x)).collect();
            }
            let color = RGBAColor(rng.random(), rng.random(), rng.random(), 1.0);
            let (theirs, ours) = both(&vertices, color, (w, h));
            assert!(theirs == ours, "case {case}: {vertices:?}");
        }
    }

    #[test]
    fn polygons_at_the_ends_of_the_coordinates_are_filled_without_overflow() {
        let color = RGBAColor(200, 40, 40, 1.0);
        let (max, min) = (i32::MAX, i32::MIN);
        for vertices in
            [vec![(0, min), (5, min), (5, min + 1), (0, min + 1)], vec![(min, 0), (min + 1, 0), (min + 1, 5), (min, 5)]]
        {
            let (theirs, ours) = both(&vertices, color, (60, 60));
            assert!(theirs == ours, "{vertices:?}");
        }
        // Spans that end at the largest coordinate, off the canvas: plotters' own lines overflow
        // there (`to + 1`: a panic with overflow checks, the whole row painted once wrapped); here
        // they draw nothing.
        let (untouched, _) = both(&[], color, (60, 60));
        for vertices in [
            vec![(0, max - 1), (10, max - 1), (10, max), (0, max)],
            vec![(max - 1, 0), (max, 0), (max, 10), (max - 1, 10)],
            // Swept up to the largest coordinate, flat edges skipped over to it.
            vec![(max - 50, 0), (max, 0), (max, 3), (max - 50, 3)],
            vec![(0, max - 50), (3, max - 50), (3, max), (0, max)],
        ] {
            let mut rgb = untouched.clone();
            fill_polygon(&mut Pixels::new(&mut rgb, (60, 60)), &vertices, &ShapeStyle::from(color).filled()).unwrap();
            assert!(rgb == untouched, "{vertices:?}");
        }
    }

    #[test]
    fn degenerate_polygons_are_lines_as_plotters_draws_them() {
        let color = RGBAColor(10, 120, 200, 1.0);
        for vertices in [
            vec![(5, 5), (40, 5), (20, 5)],
            vec![(7, 3), (7, 50)],
            vec![(3, 3), (30, 30), (12, 12)],
            vec![(3, 3)],
            vec![],
        ] {
            let (theirs, ours) = both(&vertices, color, (60, 60));
            assert!(theirs == ours, "{vertices:?}");
        }
    }
}
