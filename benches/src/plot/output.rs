//! Writing a scaling figure: the error every drawing and writing function returns, the fonts
//! registered before any text is drawn, and a drawing put on an SVG file or a PNG file.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::{BitMapBackend, DrawingArea, IntoDrawingArea, SVGBackend};
use plotters::style::{FontStyle, register_font};

use super::style::FONT;

/// Why a plot could not be drawn or written.
pub type PlotError = Box<dyn Error + Send + Sync>;

/// Makes DejaVu Sans the plots' sans-serif font (regular and bold); harmless to repeat.
pub(super) fn register_fonts() -> Result<(), PlotError> {
    register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "DejaVu Sans (regular) is not a valid font")?;
    register_font(FONT, FontStyle::Bold, dejavu::sans::bold())
        .map_err(|_| "DejaVu Sans (bold) is not a valid font")?;
    Ok(())
}

/// Draws a figure of `size` with `draw` onto an SVG file at `path`.
pub(super) fn write_svg_with(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<(), PlotError> {
    register_fonts()?;
    draw(&SVGBackend::new(path, size).into_drawing_area())
}

/// Draws a figure of `size` with `draw` into a bitmap and writes it as a PNG file at `path`.
pub(super) fn write_png_with(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<(), PlotError> {
    register_fonts()?;
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    draw(&BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area())?;
    write_rgb_png(path, size, &rgb)
}

/// Encodes an RGB buffer of `size` as a PNG file at `path`. plotters' own PNG writer goes
/// through the `image` crate, whose codecs are a quarter of the scaling harness's build.
fn write_rgb_png(path: &Path, size: (u32, u32), rgb: &[u8]) -> Result<(), PlotError> {
    let file = std::fs::File::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(())
}
