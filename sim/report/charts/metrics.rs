//! Text measuring with the bundled font: the boxes plotters' `ab_glyph` font measures, to the bit,
//! with each character's glyph and advance and each pair's kerning looked up once per thread.
//!
//! plotters measures a text (`estimate_layout`) by looking up every character's glyph in the font's
//! character map, its advance in the metrics table and the kerning of every pair in the kerning
//! table: about 470 instructions a character, and a chart measures its labels several times (to
//! fit them, to size the label column, to anchor them). Here those unscaled values are kept and
//! scaled with the same `f32` operations `ab_glyph` uses, so every width is the one plotters gives.
//! [`Measured`] puts this measuring under any backend; the PNG backend measures and places its
//! glyphs with it too ([`super::glyphs`]).

use std::cell::RefCell;

use ab_glyph::{Font, FontRef, GlyphId};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};
use rustc_hash::FxHashMap;

use super::{FAMILY, FONT};

/// The bundled font's glyphs, advances and kerning (unscaled) looked up so far on this thread.
pub(crate) struct Metrics {
    font: FontRef<'static>,
    /// `Font::height_unscaled`, which divides every size into its scale factor.
    height: f32,
    /// Glyph and unscaled advance of each ASCII character, looked up when the metrics are made.
    ascii: [(GlyphId, f32); 128],
    /// Glyph and unscaled advance of the other characters met so far.
    other: FxHashMap<char, (GlyphId, f32)>,
    /// Unscaled kerning of the glyph pairs met so far.
    kerning: FxHashMap<(u16, u16), f32>,
}

/// Kerning pairs kept per thread before they are dropped and looked up again (a few bytes each;
/// chart labels meet a few thousand).
const MAX_PAIRS: usize = 1 << 16;

/// A text's box as plotters gives it: its corners, from the origin.
pub(crate) type LayoutBox = ((i32, i32), (i32, i32));

thread_local! {
    static METRICS: RefCell<Option<Metrics>> = const { RefCell::new(None) };
}

/// A glyph of a text as `ab_glyph` lays it out at one size: its id, its advance and the kerning
/// between the glyph before it and this one (0 for the first), in pixels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub id: GlyphId,
    pub advance: f32,
    pub kern: f32,
}

impl Metrics {
    fn new() -> Metrics {
        let font = FontRef::try_from_slice(FONT).expect("the bundled DejaVu Sans font parses");
        let mut ascii = [(GlyphId(0), 0.0); 128];
        for (code, entry) in ascii.iter_mut().enumerate() {
            let id = font.glyph_id(char::from(code as u8));
            *entry = (id, font.h_advance_unscaled(id));
        }
        Metrics {
            height: font.height_unscaled(),
            font,
            ascii,
            other: FxHashMap::default(),
            kerning: FxHashMap::default(),
        }
    }

    /// Runs `f` with this thread's metrics, made on first use.
    pub(crate) fn with<R>(f: impl FnOnce(&mut Metrics) -> R) -> R {
        METRICS.with_borrow_mut(|metrics| f(metrics.get_or_insert_with(Metrics::new)))
    }

    fn glyph(&mut self, c: char) -> (GlyphId, f32) {
        if c.is_ascii() {
            return self.ascii[c as usize];
        }
        let font = &self.font;
        *self.other.entry(c).or_insert_with(|| {
            let id = font.glyph_id(c);
            (id, font.h_advance_unscaled(id))
        })
    }

    fn kern(&mut self, first: GlyphId, second: GlyphId) -> f32 {
        // Pairs met so far, kept within bounds on a thread that draws charts for a long time.
        if self.kerning.len() >= MAX_PAIRS {
            self.kerning.clear();
        }
        let font = &self.font;
        *self.kerning.entry((first.0, second.0)).or_insert_with(|| font.kern_unscaled(first, second))
    }

    /// Calls `f` with each glyph of `text` at `size` pixels, in order, as `ab_glyph`'s
    /// `PxScaleFont` gives them: `glyph_id`, `h_advance` and `kern` with the previous glyph.
    pub(crate) fn glyphs(&mut self, size: f32, text: &str, mut f: impl FnMut(Placed)) {
        // `ScaleFont::h_scale_factor` of `font.as_scaled(size)`.
        let factor = size / self.height;
        let mut prev: Option<GlyphId> = None;
        for c in text.chars() {
            let (id, advance) = self.glyph(c);
            let kern = match prev {
                Some(p) => factor * self.kern(p, id),
                None => 0.0,
            };
            prev = Some(id);
            f(Placed { id, advance: factor * advance, kern });
        }
    }

    /// The box plotters' `ab_glyph` font gives `text` at `size` (`FontData::estimate_layout`): from
    /// the origin to the sum of advances and kerning, truncated, by `size / 1.24`, truncated.
    pub(crate) fn layout_box(&mut self, size: f64, text: &str) -> LayoutBox {
        ((0, 0), (self.width(size as f32, text) as i32, (size / 1.24) as i32))
    }

    /// The width `estimate_layout` adds up before truncating it: the same sum in the same order,
    /// each advance, then the kerning with the glyph before it.
    fn width(&mut self, size: f32, text: &str) -> f32 {
        let mut width = 0f32;
        self.glyphs(size, text, |glyph| {
            width += glyph.advance;
            width += glyph.kern;
        });
        width
    }
}

/// The box of `text` in `style` as plotters measures it; measured here when the style's font is
/// the bundled one (plotters falls back to it for every style of its family), by plotters otherwise.
pub(crate) fn layout_box<S: BackendTextStyle>(text: &str, style: &S) -> Result<LayoutBox, S::FontError> {
    if style.family().as_str() == FAMILY {
        return Ok(Metrics::with(|metrics| metrics.layout_box(style.size(), text)));
    }
    style.layout_box(text)
}

/// `DrawingBackend::estimate_text_size` with [`layout_box`].
pub(crate) fn text_size<S: BackendTextStyle, E: std::error::Error + Send + Sync>(
    text: &str,
    style: &S,
) -> Result<(u32, u32), DrawingErrorKind<E>> {
    let ((min_x, min_y), (max_x, max_y)) =
        layout_box(text, style).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
    Ok(((max_x - min_x) as u32, (max_y - min_y) as u32))
}

/// A backend that measures text with [`layout_box`] and draws everything as `B` does.
pub(crate) struct Measured<B>(pub B);

impl<B: DrawingBackend> DrawingBackend for Measured<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.draw_text(text, style, pos)
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<B::ErrorType>> {
        text_size(text, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<B::ErrorType>> {
        self.0.blit_bitmap(pos, (iw, ih), src)
    }
}

#[cfg(test)]
mod tests {
    use plotters::style::{IntoFont, TextStyle};
    use proptest::prelude::*;

    use super::*;

    fn plotters_box(size: f64, text: &str) -> LayoutBox {
        super::super::ensure_font().unwrap();
        let style = TextStyle::from((FAMILY, size).into_font());
        BackendTextStyle::layout_box(&style, text).unwrap()
    }

    fn ours(size: f64, text: &str) -> LayoutBox {
        let style = TextStyle::from((FAMILY, size).into_font());
        layout_box(text, &style).unwrap()
    }

    #[test]
    fn measures_chart_labels_as_plotters_does() {
        let labels = [
            "",
            "A",
            "AVATAR Wave To",
            "node-image-ubuntu2204gen2containerd-202606-12-0 · Pending: window closed",
            "2026-03-02 00:00",
            "members done (Completed, Failed, Skipped)",
            "stable-1-33-6 · after-stage waits",
            "prod-westeurope-007 …",
            "ÅÉÎõü ß ½ € ✓ 漢字 \u{10ffff}",
            "fi fl ff LT Ty Yo",
        ];
        for size in [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.5, 16.0, 18.0, 22.0, 100.0] {
            for label in labels {
                assert_eq!(ours(size, label), plotters_box(size, label), "{label:?} at {size}");
            }
        }
    }

    #[test]
    fn other_families_are_measured_by_plotters() {
        let style = TextStyle::from(("no-such-family", 12.0).into_font());
        assert!(layout_box("abc", &style).is_err(), "plotters' own answer for a family it does not have");
    }

    proptest! {
        /// The width before it is truncated, to the bit: `estimate_layout`'s loop, redone.
        #[test]
        fn the_width_is_estimate_layout_s_sum(text in "\\PC{0,40}", tenths in 10u32..400) {
            use ab_glyph::ScaleFont;
            let size = tenths as f32 / 10.0;
            let font = FontRef::try_from_slice(FONT).unwrap();
            let scaled = font.as_scaled(size);
            let (mut width, mut prev) = (0f32, None);
            for c in text.chars() {
                let id = scaled.glyph_id(c);
                width += scaled.h_advance(id);
                if let Some(p) = prev {
                    width += scaled.kern(p, id);
                }
                prev = Some(id);
            }
            prop_assert_eq!(Metrics::with(|m| m.width(size, &text)).to_bits(), width.to_bits());
        }

        #[test]
        fn any_text_at_any_size_measures_as_plotters_does(text in "\\PC{0,40}", tenths in 10u32..400) {
            let size = f64::from(tenths) / 10.0;
            prop_assert_eq!(ours(size, &text), plotters_box(size, &text));
        }

        #[test]
        fn glyph_placements_are_ab_glyph_s(text in "[ -~·…é]{0,24}", tenths in 10u32..300) {
            use ab_glyph::ScaleFont;
            let size = tenths as f32 / 10.0;
            let font = FontRef::try_from_slice(FONT).unwrap();
            let scaled = font.as_scaled(size);
            let mut placed = Vec::new();
            Metrics::with(|m| m.glyphs(size, &text, |g| placed.push(g)));
            let mut prev = None;
            let expected: Vec<Placed> = text
                .chars()
                .map(|c| {
                    let id = scaled.glyph_id(c);
                    let kern = prev.map_or(0.0, |p| scaled.kern(p, id));
                    prev = Some(id);
                    Placed { id, advance: scaled.h_advance(id), kern }
                })
                .collect();
            prop_assert_eq!(placed.len(), expected.len());
            for (a, b) in placed.iter().zip(&expected) {
                prop_assert_eq!(a.id, b.id);
                prop_assert_eq!(a.advance.to_bits(), b.advance.to_bits());
                prop_assert_eq!(a.kern.to_bits(), b.kern.to_bits());
            }
        }
    }
}
