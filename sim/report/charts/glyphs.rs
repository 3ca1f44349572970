//! The PNG backend: plotters' bitmap backend's drawing ([`super::pixels`]) with text drawn here.
//!
//! plotters' `ab_glyph` text places every glyph's outline at the pen position without its left side
//! bearing and truncates the pen to whole pixels, so narrow glyphs drift ("fr ont", "-1 7"). Here each
//! glyph is positioned at its fractional pen position (advance plus kerning, the same layout plotters
//! measures with) and rasterized there, so PNG text reads like SVG text. Polygons (and lines wider
//! than a pixel, which are polygons) are filled by [`super::polygon`], pixel for pixel as plotters
//! fills them; everything else is drawn as the bitmap backend draws it.

use ab_glyph::{Font, FontRef, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind, text_anchor,
};
use rustc_hash::FxHashMap;

use super::metrics::{Metrics, Placed, layout_box, text_size};
use super::pixels::{Error, Pixels};

pub(crate) struct GlyphBackend<'a> {
    pixels: Pixels<'a>,
    font: FontRef<'static>,
}

impl<'a> GlyphBackend<'a> {
    /// `font` is the bundled font, the one whose glyphs each thread keeps ([`RASTERIZED`]): text is
    /// laid out with the bundled font's metrics ([`Metrics`]) and drawn with these outlines.
    pub(crate) fn new(pixels: Pixels<'a>, font: FontRef<'static>) -> GlyphBackend<'a> {
        GlyphBackend { pixels, font }
    }
}

/// Glyphs of the bundled font rasterized so far on this thread, by every chart it drew: a glyph's
/// pixels depend on nothing else, so which thread drew a chart never shows in it.
#[derive(Default)]
struct Rasterized {
    /// By glyph, size and pen position (the exact bits: a glyph's coverage depends on where its pen
    /// falls, and text starts at pen 0, so tick labels such as "2026-03-02" and "2026-03-04" share
    /// their first glyphs; charts of one report share their time axis): where the coverage is in
    /// `coverage`.
    ranges: FxHashMap<(u16, u32, u32), (usize, usize)>,
    /// Pixels (relative to the text's box) and coverage of every glyph in `ranges`.
    coverage: Vec<(i32, i32, f32)>,
}

/// Coverage kept per thread before it is dropped and started again (12 bytes each).
const MAX_COVERAGE: usize = 1 << 20;

thread_local! {
    static RASTERIZED: std::cell::RefCell<Rasterized> = std::cell::RefCell::default();
}

impl DrawingBackend for GlyphBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.pixels.size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn present(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error> {
        self.pixels.pixel(point, color);
        Ok(())
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Result<(), Error> {
        // The bitmap's own fast lines; any other is rasterized as the bitmap would (a line wider
        // than a pixel is a polygon, filled here).
        if (from.0 == to.0 || from.1 == to.1) && style.stroke_width() == 1 {
            return self.pixels.line(from, to, style);
        }
        plotters_backend::rasterizer::draw_line(self, from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.pixels.backend().draw_rect(upper_left, bottom_right, style, fill)
    }
    // `draw_path` is the trait's own: a path wider than a pixel is filled as a polygon, here.
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error> {
        self.pixels.backend().draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error> {
        let vertices: Vec<BackendCoord> = vert.into_iter().collect();
        super::polygon::fill_polygon(&mut self.pixels, &vertices, style)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Result<(), Error> {
        self.pixels.backend().blit_bitmap(pos, size, src)
    }
    fn estimate_text_size<T: BackendTextStyle>(&self, text: &str, style: &T) -> Result<(u32, u32), Error> {
        text_size(text, style)
    }

    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> Result<(), Error> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // The box plotters measures (and lays charts out with): advances plus kerning, height size / 1.24.
        let ((min_x, min_y), (max_x, max_y)) =
            layout_box(text, style).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            text_anchor::HPos::Left => 0,
            text_anchor::HPos::Right => -width,
            text_anchor::HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            text_anchor::VPos::Top => 0,
            text_anchor::VPos::Center => -height / 2,
            text_anchor::VPos::Bottom => -height,
        };
        let size = style.size() as f32;
        let font = &self.font;
        let transform = style.transform();
        // The baseline sits where plotters puts it: half the size below the top of the box.
        let baseline = size / 2.0;
        let mut placed = Vec::with_capacity(text.len());
        Metrics::with(|metrics| metrics.glyphs(size, text, |glyph| placed.push(glyph)));
        RASTERIZED.with_borrow_mut(|rasterized| {
            if rasterized.coverage.len() > MAX_COVERAGE {
                *rasterized = Rasterized::default();
            }
            let Rasterized { ranges, coverage } = rasterized;
            let mut pen = 0f32;
            let mut glyphs: Vec<(usize, usize)> = Vec::with_capacity(placed.len());
            for Placed { id, advance, kern } in placed {
                pen += kern;
                let key = (id.0, size.to_bits(), pen.to_bits());
                let glyph = id.with_scale_and_position(size, point(pen, baseline));
                pen += advance;
                let range = *ranges.entry(key).or_insert_with(|| {
                    let start = coverage.len();
                    if let Some(outline) = font.outline_glyph(glyph) {
                        let bounds = outline.px_bounds();
                        let (bx, by) = (bounds.min.x as i32, bounds.min.y as i32);
                        // Pixels it does not cover are not kept: they draw nothing. (Written as
                        // "not at most 0" so that a coverage that is not a number is kept and
                        // drawn, as it always was.)
                        #[allow(clippy::neg_cmp_op_on_partial_ord)]
                        outline.draw(|x, y, c| {
                            if !(c <= 0.0) {
                                coverage.push((bx + x as i32, by + y as i32, c));
                            }
                        });
                    }
                    (start, coverage.len())
                });
                glyphs.push(range);
            }
            for (start, end) in glyphs {
                for &(x, y, coverage) in &coverage[start..end] {
                    let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
                    // Off the bitmap: left out by `pixel`, as by the bitmap's own.
                    self.pixels.pixel((pos.0 + x, pos.1 + y), color.mix(f64::from(coverage.min(1.0))));
                }
            }
        });
        Ok(())
    }
}
