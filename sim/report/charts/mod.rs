//! Charts: the run charts of every report folder, and sweep charts as plain functions over plain data.
//!
//! Every chart is drawn twice by the same code, once into an SVG string and once into an RGB buffer
//! that is encoded as PNG. Text is laid out with the bundled DejaVu Sans (`assets/fonts/`), never a
//! system font, and every axis label is formatted here (UTC times, fixed decimals), so identical input
//! gives byte-identical SVG and PNG on every machine (des-anchors §5).
//!
//! - [`run`]: Gantt timeline, completion, concurrency and Pending-by-reason charts of a simulation.
//! - [`sweep`]: a line with a confidence band, a heatmap and a Pareto scatter, for sweep reports.
//! - [`profiles`]: Kubernetes versions over time and days behind target, when there are auto-upgrade
//!   profiles.
//! - [`forecast`]: the fan chart of members done over time of `fleetsim forecast`.
//! - [`tracks`]: member state histories derived from the timeline, which the run charts draw.

mod draw;
mod encode;
pub mod forecast;
mod glyphs;
mod metrics;
mod pixels;
mod polygon;
pub mod profiles;
pub mod run;
pub mod sweep;
pub mod tracks;

use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::{Context, anyhow, bail};
use plotters::coord::Shift;
use plotters::prelude::*;

pub use sweep::{pareto_front, pareto_scatter, sweep_heatmap, sweep_line, sweep_line_categories};

use super::ReportFile;

/// A rendered chart: the same drawing as an SVG document and as a PNG image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chart {
    /// A standalone SVG document (`<svg …>…</svg>`, no XML declaration).
    pub svg: String,
    /// The PNG image (8-bit RGB).
    pub png: Vec<u8>,
}

impl Chart {
    /// The chart as two report files, `<stem>.svg` and `<stem>.png` (e.g. `charts/gantt`).
    pub fn files(&self, stem: &str) -> [ReportFile; 2] {
        self.borrowed_files(stem).map(|(path, bytes)| (path, bytes.to_vec()))
    }

    /// [`files`](Self::files) with the bytes borrowed.
    pub fn borrowed_files(&self, stem: &str) -> [(PathBuf, &[u8]); 2] {
        [(PathBuf::from(format!("{stem}.svg")), self.svg.as_bytes()), (PathBuf::from(format!("{stem}.png")), &self.png)]
    }

    /// [`files`](Self::files) without a copy of the bytes.
    pub fn into_files(self, stem: &str) -> [ReportFile; 2] {
        [
            (PathBuf::from(format!("{stem}.svg")), self.svg.into_bytes()),
            (PathBuf::from(format!("{stem}.png")), self.png),
        ]
    }
}

/// The bundled font: every glyph of every chart comes from here.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family name charts ask for. SVG viewers substitute their own sans-serif face; PNGs use DejaVu.
pub(crate) const FAMILY: &str = "sans-serif";

/// The largest side of a chart in pixels: a bound on memory (an RGB buffer of 8000² is 192 MB).
pub(crate) const MAX_SIDE_PX: u32 = 8000;

/// Registers the bundled font with plotters once per process. Registration is global, so charts
/// drawn concurrently from several threads all see it.
fn ensure_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok { Ok(()) } else { bail!("the bundled DejaVu Sans font could not be loaded") }
}

/// What drawing code returns: plotters' error for the backend at hand.
pub(crate) type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart that can draw itself on any plotters backend; [`render`] draws it on SVG and bitmap.
/// `Sync` because [`render`] draws the SVG and the bitmap on two threads.
pub(crate) trait Figure: Sync {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws onto a white root area of [`Figure::size`].
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// Draws a figure into SVG and PNG. `present()` is called explicitly so that a failed flush is an
/// error rather than something `Drop` swallows (des-anchors §5).
pub(crate) fn render(figure: &impl Figure) -> anyhow::Result<Chart> {
    ensure_font()?;
    let (w, h) = figure.size();
    if w == 0 || h == 0 || w > MAX_SIDE_PX || h > MAX_SIDE_PX {
        bail!("chart size {w}x{h} px is outside 1..={MAX_SIDE_PX} px");
    }
    // The two drawings are independent: the SVG on one thread while the bitmap is drawn and encoded.
    let (svg, png) = rayon::join(
        || -> anyhow::Result<String> {
            let mut svg = String::new();
            {
                let root = metrics::Measured(SVGBackend::with_string(&mut svg, (w, h))).into_drawing_area();
                root.fill(&WHITE).map_err(|e| anyhow!("drawing SVG chart: {e}"))?;
                figure.draw(&root).map_err(|e| anyhow!("drawing SVG chart: {e}"))?;
                root.present().map_err(|e| anyhow!("finishing SVG chart: {e}"))?;
            }
            Ok(svg)
        },
        || -> anyhow::Result<Vec<u8>> {
            // Made white: the background the SVG fills in, set once (a tall chart is 16 MB).
            let mut rgb = vec![255u8; w as usize * h as usize * 3];
            {
                let font = ab_glyph::FontRef::try_from_slice(FONT)
                    .context("the bundled DejaVu Sans font could not be loaded")?;
                let root = glyphs::GlyphBackend::new(pixels::Pixels::new(&mut rgb, (w, h)), font).into_drawing_area();
                figure.draw(&root).map_err(|e| anyhow!("drawing PNG chart: {e}"))?;
                root.present().map_err(|e| anyhow!("finishing PNG chart: {e}"))?;
            }
            encode::encode(&rgb, w, h).context("encoding PNG chart")
        },
    );
    Ok(Chart { svg: svg?, png: png? })
}
