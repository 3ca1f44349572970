//! PNG encoding of chart bitmaps: the bytes the `png` crate writes with Paeth filtering on every row
//! and its fastest compression (fdeflate), made with less work on what charts are mostly made of.
//!
//! A chart is flat colour, and most of a row is the row above it: white space, the inside of a bar,
//! a vertical grid line. Where a pixel and the one before it both equal the pixels above them, Paeth
//! predicts the pixel exactly and its filtered bytes are zero. The `png` crate filters every byte of
//! every row all the same; here a span of the row that equals the row above (with the pixel before
//! it) is written as zeros without being filtered, and the rest is filtered as `png` filters it. The
//! filtered rows go to the same compressor, the stream into one `IDAT` chunk as `png` writes it, so
//! the file is the `png` crate's to the byte (tests compare the two on charts and on noise). On the
//! charts of `scenarios/regions-2000.json` this takes encoding from 3.1 to 2.3 ms.

use std::io::Cursor;

use anyhow::Context;

/// Bytes per pixel (8-bit RGB).
const BPP: usize = 3;
/// Bytes compared with the row above, and filtered, at a time.
const SPAN: usize = 32;

/// Encodes 8-bit RGB pixels, `w` by `h`, as PNG: Paeth filtering on every row, fdeflate
/// compression, or the stored stream where that would be smaller (as the `png` crate does). Same
/// pixels, same bytes.
///
/// The compression level is chosen for the time a report takes, not for the last byte: `Fast`
/// (fdeflate) with Paeth filtering on every row encodes the charts of
/// `scenarios/autoupgrade-year.json` about 12x faster than `Best` for files about 1.7x larger, and
/// `Best` alone was over a third of a whole `fleetsim run` of the larger examples. `Default` gives
/// `Best`'s size at half its time, still six times `Fast`'s. Choosing the filter row by row
/// (adaptive) takes twice as long again for files only 5–10 % smaller (charts are flat colour, which
/// Paeth already predicts); `Sub` or `Up` alone are faster still but up to 3x larger. Every chart is
/// also written as SVG, which stays sharp at any zoom.
pub(crate) fn encode(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    let row = w as usize * BPP;
    anyhow::ensure!(row > 0 && rgb.len() == row * h as usize, "{} bytes are not {w}x{h} RGB pixels", rgb.len());
    let mut compressor = fdeflate::Compressor::new(Cursor::new(Vec::with_capacity(rgb.len() / 16)))?;
    // A filtered row: the filter type, then the row.
    let mut filtered = vec![0u8; row + 1];
    filtered[0] = PAETH;
    let above = vec![0u8; row];
    let mut previous = above.as_slice();
    for current in rgb.chunks_exact(row) {
        paeth_row(previous, current, &mut filtered[1..]);
        compressor.write_data(&filtered)?;
        previous = current;
    }
    let mut stream = compressor.finish()?.into_inner();
    let raw_size = (row + 1) * h as usize;
    if stream.len() > fdeflate::StoredOnlyCompressor::<()>::compressed_size(raw_size) {
        // Noise does not compress: the rows unfiltered and stored, as `png` falls back to.
        let mut stored = fdeflate::StoredOnlyCompressor::new(Cursor::new(Vec::with_capacity(raw_size + raw_size / 8)))?;
        for current in rgb.chunks_exact(row) {
            stored.write_data(&[0])?;
            stored.write_data(current)?;
        }
        stream = stored.finish()?.into_inner();
    }
    let mut out = Vec::with_capacity(stream.len() + 64);
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        // One chunk holds it: a chart is at most 8000² pixels, 192 MB, and a chunk up to 2 GiB.
        writer.write_chunk(png::chunk::IDAT, &stream).context("writing the image data")?;
        writer.finish()?;
    }
    Ok(out)
}

/// The PNG filter type byte of Paeth.
const PAETH: u8 = 4;

/// The Paeth predictor of the PNG specification in the form `png` computes it (from FPNGE), which
/// works on bytes alone and so vectorizes: the left `a`, above `b` and upper-left `c` neighbour.
#[inline(always)]
fn predict(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.max(c) - c.min(b);
    let pb = a.max(c) - c.min(a);
    // |a + b - 2c| is |pa - pb| when c lies between a and b, and otherwise larger than both.
    let pc = if (a < c) == (c < b) { pa.max(pb) - pa.min(pb) } else { 255 };
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// Paeth-filters `current` (below `previous`) into `out`. A span whose bytes, and the pixel before
/// it, equal the row above is predicted exactly: its output is zero, written without filtering.
fn paeth_row(previous: &[u8], current: &[u8], out: &mut [u8]) {
    let len = current.len();
    // The first pixel has no left neighbour: a and c are zero.
    for i in 0..BPP.min(len) {
        out[i] = current[i].wrapping_sub(predict(0, previous[i], 0));
    }
    let mut i = BPP;
    while i + SPAN <= len {
        let from = i - BPP;
        let out = &mut out[i..i + SPAN];
        if same(span_and_pixel(current, from), span_and_pixel(previous, from)) {
            out.fill(0);
        } else {
            let (x, a) = (&current[i..i + SPAN], &current[from..from + SPAN]);
            let (b, c) = (&previous[i..i + SPAN], &previous[from..from + SPAN]);
            for k in 0..SPAN {
                out[k] = x[k].wrapping_sub(predict(a[k], b[k], c[k]));
            }
        }
        i += SPAN;
    }
    for i in i..len {
        out[i] = current[i].wrapping_sub(predict(current[i - BPP], previous[i], previous[i - BPP]));
    }
}

/// Whether two spans are equal: their bytes' differences folded together, which the compiler does
/// in a few vector instructions (`==` on them called `memcmp` for every span of every row).
#[inline(always)]
fn same(a: &[u8; BPP + SPAN], b: &[u8; BPP + SPAN]) -> bool {
    a.iter().zip(b).fold(0, |differ, (x, y)| differ | (x ^ y)) == 0
}

/// A span and the pixel before it, from `from`.
#[inline(always)]
fn span_and_pixel(row: &[u8], from: usize) -> &[u8; BPP + SPAN] {
    row[from..from + BPP + SPAN].try_into().expect("a span and a pixel")
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// What the `png` crate writes with the same settings.
    fn png_crate(rgb: &[u8], w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut out, w, h);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            encoder.set_compression(png::Compression::Fast);
            encoder.set_filter(png::Filter::Paeth);
            let mut writer = encoder.write_header().unwrap();
            writer.write_image_data(rgb).unwrap();
            writer.finish().unwrap();
        }
        out
    }

    /// A chart-like bitmap: white, with bars and lines of a few colours, rows repeated, and a few
    /// pixels of noise (antialiased text), or noise throughout.
    fn bitmap(rng: &mut ChaCha8Rng, w: u32, h: u32, noise: f64) -> Vec<u8> {
        let row = w as usize * 3;
        let mut rgb = vec![255u8; row * h as usize];
        for y in 0..h as usize {
            if y > 0 && rng.random_bool(0.5) {
                rgb.copy_within((y - 1) * row..y * row, y * row);
            }
            let line = &mut rgb[y * row..(y + 1) * row];
            for _ in 0..rng.random_range(0..4) {
                let (from, len) = (rng.random_range(0..w as usize), rng.random_range(1..=w as usize));
                let colour: [u8; 3] = [rng.random(), rng.random(), rng.random()];
                for x in from..(from + len).min(w as usize) {
                    line[x * 3..x * 3 + 3].copy_from_slice(&colour);
                }
            }
            for byte in line.iter_mut() {
                if rng.random_bool(noise) {
                    *byte = rng.random();
                }
            }
        }
        rgb
    }

    #[test]
    fn the_file_is_the_png_crates_to_the_byte() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        // Widths around the span (rows shorter than a span, one span and a remainder, many), noise
        // from none to all (which the compressor cannot shrink: stored).
        for (case, w) in [1u32, 2, 10, 11, 12, 13, 40, 97, 300].into_iter().enumerate() {
            for noise in [0.0, 0.001, 0.05, 1.0] {
                let h = rng.random_range(1..60);
                let rgb = bitmap(&mut rng, w, h, noise);
                let ours = encode(&rgb, w, h).unwrap();
                assert!(ours == png_crate(&rgb, w, h), "case {case}: {w}x{h}, noise {noise}");
            }
        }
    }

    #[test]
    fn the_predictor_is_the_specifications() {
        for a in 0..=255u8 {
            for b in (0..=255u8).step_by(3) {
                for c in (0..=255u8).step_by(5) {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
                    let spec = if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    };
                    assert_eq!(predict(a, b, c), spec, "a {a}, b {b}, c {c}");
                }
            }
        }
    }

    #[test]
    fn a_bitmap_of_the_wrong_size_is_an_error() {
        assert!(encode(&[255; 10], 2, 2).is_err());
        assert!(encode(&[], 0, 0).is_err());
    }
}
