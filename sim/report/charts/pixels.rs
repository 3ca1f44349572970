//! The RGB pixels a PNG chart is drawn into. Every operation is plotters' bitmap backend's, pixel
//! for pixel; the two that charts make by the hundred thousand are done here in place rather than
//! through a backend call each:
//!
//! - a translucent line one pixel wide (the area under a completion line is blended one column at
//!   a time), with the blend of the colour looked up for each old value of a channel (the bitmap
//!   works out `(new - old) * alpha / 256` for every channel of every pixel, and a column is a
//!   few hundred pixels of the same colour);
//! - a pixel (text is drawn one covered pixel at a time).
//!
//! Everything else is handed to a `BitMapBackend` made over the same pixels for that call.

use plotters::prelude::BitMapBackend;
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, DrawingBackend, DrawingErrorKind};

pub(crate) type Error = DrawingErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>;

/// What blending `(r, g, b)` at the bitmap's integer alpha `a` (0–256) makes of each old value of
/// each channel.
struct Blend {
    key: ((u8, u8, u8), u64),
    table: [[u8; 256]; 3],
}

impl Blend {
    fn new(rgb: (u8, u8, u8), a: u64) -> Blend {
        let mut table = [[0; 256]; 3];
        for (channel, new) in table.iter_mut().zip([rgb.0, rgb.1, rgb.2]) {
            for (old, out) in channel.iter_mut().enumerate() {
                let mut value = old as u8;
                blend(&mut value, new, a);
                *out = value;
            }
        }
        Blend { key: (rgb, a), table }
    }
}

/// plotters-bitmap's blend of one channel (`pixel_format::blend`), to the bit.
#[inline(always)]
fn blend(prev: &mut u8, new: u8, a: u64) {
    if new > *prev {
        *prev += (u64::from(new - *prev) * a / 256) as u8
    } else {
        *prev -= (u64::from(*prev - new) * a / 256) as u8
    }
}

pub(crate) struct Pixels<'a> {
    rgb: &'a mut [u8],
    size: (u32, u32),
    /// The blend of the last translucent line's colour.
    blend: Option<Box<Blend>>,
}

impl<'a> Pixels<'a> {
    /// `rgb`: `size.0 * size.1` pixels, 3 bytes each, row after row.
    pub(crate) fn new(rgb: &'a mut [u8], size: (u32, u32)) -> Pixels<'a> {
        assert!(rgb.len() >= size.0 as usize * size.1 as usize * 3, "a bitmap of {size:?} pixels");
        Pixels { rgb, size, blend: None }
    }

    pub(crate) fn size(&self) -> (u32, u32) {
        self.size
    }

    /// plotters' bitmap backend over these pixels, for one operation.
    pub(crate) fn backend(&mut self) -> BitMapBackend<'_> {
        BitMapBackend::with_buffer(self.rgb, self.size)
    }

    /// `BitMapBackend::draw_pixel`.
    #[inline]
    pub(crate) fn pixel(&mut self, (x, y): BackendCoord, color: BackendColor) {
        let (w, h) = self.size;
        if x < 0 || y < 0 || x as u32 >= w || y as u32 >= h {
            return;
        }
        let base = (y as usize * w as usize + x as usize) * 3;
        let (r, g, b) = color.rgb;
        let pixel = &mut self.rgb[base..base + 3];
        if color.alpha >= 1.0 - 1.0 / 256.0 {
            pixel.copy_from_slice(&[r, g, b]);
        } else if color.alpha > 0.0 {
            // (An alpha that is not a number blends nothing, in the bitmap as here.)
            let a = (color.alpha * 256.0) as u64; // floor: the alpha is positive
            for (old, new) in pixel.iter_mut().zip([r, g, b]) {
                blend(old, new, a);
            }
        }
    }

    /// `BitMapBackend::draw_line`.
    pub(crate) fn line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error> {
        let color = style.color();
        let straight = (from.0 == to.0 || from.1 == to.1) && style.stroke_width() == 1;
        // The bitmap blends such a line as the rectangle from `from` to `to + (1, 1)`; only
        // rectangles one pixel wide are blended here.
        if straight
            && color.alpha < 1.0
            && let (Some(end_x), Some(end_y)) = (to.0.checked_add(1), to.1.checked_add(1))
        {
            let (w, h) = (self.size.0 as i32, self.size.1 as i32);
            let (x0, y0) = (from.0.min(end_x).max(0), from.1.min(end_y).max(0));
            let (x1, y1) = (from.0.max(end_x).min(w), from.1.max(end_y).min(h));
            if x0 >= x1 || y0 >= y1 {
                return Ok(());
            }
            if x1 - x0 == 1 {
                self.column(x0, y0..y1, color);
                return Ok(());
            }
        }
        self.backend().draw_line(from, to, style)
    }

    /// Blends `color` over column `x`, rows `rows` (inside the bitmap, or empty), as
    /// `RGBPixel::blend_rect_fast` blends a rectangle one pixel wide.
    fn column(&mut self, x: i32, rows: std::ops::Range<i32>, color: BackendColor) {
        let a = color.alpha.clamp(0.0, 1.0);
        if a == 0.0 || rows.is_empty() {
            return;
        }
        let a = (256.0 * a) as u64; // floor: at least 0
        let blend = match &mut self.blend {
            Some(blend) if blend.key == (color.rgb, a) => blend,
            slot => slot.insert(Box::new(Blend::new(color.rgb, a))),
        };
        let [r, g, b] = &blend.table;
        let stride = self.size.0 as usize * 3;
        let mut base = rows.start as usize * stride + x as usize * 3;
        for _ in rows {
            let pixel = &mut self.rgb[base..base + 3];
            pixel[0] = r[usize::from(pixel[0])];
            pixel[1] = g[usize::from(pixel[1])];
            pixel[2] = b[usize::from(pixel[2])];
            base += stride;
        }
    }
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// A background that is not flat, so that every blend shows, with every value of a channel.
    fn background(w: u32, h: u32) -> Vec<u8> {
        (0..w * h * 3).map(|i| (i * 37 % 256) as u8).collect()
    }

    const ALPHAS: [f64; 12] = [0.15, 0.5, 0.5001, 0.8, 0.999, 0.996, 1.0, 1.5, -0.5, 0.0, 1.0 / 512.0, f64::NAN];

    /// A line from a random point: vertical (often), horizontal, a point, slanted, a column far off
    /// the bitmap, and one ending where the bitmap's `to + 1` is the largest coordinate.
    fn random_line(rng: &mut ChaCha8Rng, shape: usize) -> (BackendCoord, BackendCoord) {
        let mut coord = || rng.random_range(-10..50);
        let from = (coord(), coord());
        let to = match shape % 7 {
            0 | 1 => (from.0, coord()),
            2 => (coord(), from.1),
            3 => from,
            4 => (coord(), coord()),
            5 => (from.0, -1000),
            _ => (from.0, i32::MAX - 1),
        };
        (from, to)
    }

    #[test]
    fn lines_and_pixels_are_drawn_as_the_bitmap_draws_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (w, h) = (40u32, 30u32);
        for case in 0..6000 {
            // Every alpha with every shape.
            let alpha = ALPHAS[case / 7 % ALPHAS.len()];
            let color = RGBAColor(rng.random(), rng.random(), rng.random(), alpha);
            let (from, to) = random_line(&mut rng, case);
            // (A wide line is a polygon, which plotters fills line by line: not to the largest coordinate.)
            let width = if case % 5 == 0 && case % 7 != 6 { 2 } else { 1 };
            let style = ShapeStyle::from(color).stroke_width(width);
            let (mut theirs, mut ours) = (background(w, h), background(w, h));
            {
                let mut back = BitMapBackend::with_buffer(&mut theirs, (w, h));
                back.draw_line(from, to, &style).unwrap();
                back.draw_pixel(to, color.to_backend_color()).unwrap();
                back.draw_pixel(from, color.mix(0.4).to_backend_color()).unwrap();
            }
            {
                let mut pixels = Pixels::new(&mut ours, (w, h));
                pixels.line(from, to, &style).unwrap();
                pixels.pixel(to, color.to_backend_color());
                pixels.pixel(from, color.mix(0.4).to_backend_color());
            }
            assert!(theirs == ours, "case {case}: {from:?} to {to:?}, alpha {alpha}, width {width}");
        }
    }

    #[test]
    fn columns_of_changing_colours_on_one_bitmap_are_blended_as_the_bitmap_blends_them() {
        // The blend table of one colour is kept for the next column: colours and alphas alternate
        // (as an area and the guides over it do), and two alphas give the same 256ths.
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let (w, h) = (40u32, 30u32);
        let colours = [RGBColor(40, 120, 200), RGBColor(200, 40, 40), RGBColor(40, 120, 201)];
        for round in 0..200 {
            let (mut theirs, mut ours) = (background(w, h), background(w, h));
            let mut back = BitMapBackend::with_buffer(&mut theirs, (w, h));
            let mut pixels = Pixels::new(&mut ours, (w, h));
            for _ in 0..30 {
                let colour = colours[rng.random_range(0..colours.len())];
                let style = colour.mix([0.15, 0.5, 0.5001, 0.8][rng.random_range(0..4)]);
                let shape = rng.random_range(0..2);
                let (from, to) = random_line(&mut rng, shape);
                back.draw_line(from, to, &style).unwrap();
                pixels.line(from, to, &style).unwrap();
            }
            drop(back);
            drop(pixels);
            assert!(theirs == ours, "round {round}");
        }
    }
}
