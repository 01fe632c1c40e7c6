//! The scaling plot: one panel per group, aggregate throughput (log scale) against threads
//! (log scale), baselines dashed. [`draw`] is the one drawing; [`write_svg`] and [`write_png`]
//! put it on plotters' SVG and bitmap backends. Text is DejaVu Sans (the `dejavu` crate),
//! rendered by plotters' pure-Rust `ab_glyph` support, so no system font is needed.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::Unit;
use crate::report::{Group, Report};

/// Why a plot could not be drawn or written.
pub type PlotError = Box<dyn Error + Send + Sync>;

/// Width and height of one panel, in pixels.
const PANEL: (u32, u32) = (640, 340);
/// Width of a panel's legend, right of its chart.
const LEGEND: u32 = 290;
/// Height of the title line above the panels.
const TITLE: u32 = 30;
/// Panels per line.
const COLUMNS: usize = 2;
/// Font family every text of the plot uses (registered by [`register_fonts`]).
const FONT: &str = "sans-serif";

/// Line colours (ColorBrewer Dark2, then grey), one per series of a panel of up to 8 series;
/// larger panels get evenly spaced hues instead ([`colour`]), so no two lines share a colour.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x75, 0x70, 0xb3),
    RGBColor(0xe7, 0x29, 0x8a),
    RGBColor(0x66, 0xa6, 0x1e),
    RGBColor(0xe6, 0xab, 0x02),
    RGBColor(0xa6, 0x76, 0x1d),
    RGBColor(0x66, 0x66, 0x66),
];

/// The colour of series `i` of a panel of `n` series: distinct from every other series of the
/// panel.
pub fn colour(i: usize, n: usize) -> RGBColor {
    if n <= COLOURS.len() {
        return COLOURS[i % COLOURS.len()];
    }
    // Evenly spaced hues, dark enough to read on white: HSL (k / n, 0.75, 0.4) as RGB, where
    // series i takes hue k = i * step mod n with a step coprime to n near n / 3, so that
    // series listed next to each other in the legend are far apart on the colour wheel.
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let step = (n / 3..n).find(|&s| s > 0 && gcd(s, n) == 1).unwrap_or(1);
    let h = ((i * step) % n) as f64 / n as f64 * 6.0;
    let (s, l) = (0.75, 0.40);
    let c = (1.0 - (2.0 * l - 1.0_f64).abs()) * s;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// Makes DejaVu Sans the plots' sans-serif font (regular and bold); harmless to repeat.
fn register_fonts() -> Result<(), PlotError> {
    register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| "DejaVu Sans (regular) is not a valid font")?;
    register_font(FONT, FontStyle::Bold, dejavu::sans::bold())
        .map_err(|_| "DejaVu Sans (bold) is not a valid font")?;
    Ok(())
}

/// The picture's size for `report`: two panels a line, as many lines as needed.
pub fn size(report: &Report) -> (u32, u32) {
    let n = report.groups.len().max(1);
    let cols = COLUMNS.min(n);
    let lines = n.div_ceil(cols);
    (PANEL.0 * cols as u32, PANEL.1 * lines as u32 + TITLE)
}

/// Draws `report` on `root`, which should be [`size`] big.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(TITLE);
    title.draw(&Text::new(
        format!(
            "scalrand: aggregate throughput vs threads ({} CPUs; dashed = baseline)",
            report.cpus
        ),
        (10, 8),
        (FONT, 15).into_font(),
    ))?;
    let n = report.groups.len().max(1);
    let cols = COLUMNS.min(n);
    let panels = body.split_evenly((n.div_ceil(cols), cols));
    for (group, panel) in report.groups.iter().zip(&panels) {
        draw_panel(panel, group, &report.threads)?;
    }
    root.present()?;
    Ok(())
}

/// `v` with an SI prefix: `10M`, `1G`.
fn si(v: f64) -> String {
    for (d, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= d {
            return format!("{}{p}", (v / d).round());
        }
    }
    format!("{}", v.round())
}

/// One group: its chart on the left, its legend on the right.
fn draw_panel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    group: &Group,
    threads: &[usize],
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let (w, _) = panel.dim_in_pixel();
    let (chart_area, legend) = panel.split_horizontally(w.saturating_sub(LEGEND));

    // x: threads on a log scale, padded so a single thread count still has a range.
    let tmin = threads.iter().copied().min().unwrap_or(1).max(1) as f64;
    let tmax = threads.iter().copied().max().unwrap_or(1).max(1) as f64;
    let xs = (tmin / 1.15)..(tmax * 1.15);
    // y: whole decades around every positive figure.
    let vals = group
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.per_sec))
        .filter(|v| *v > 0.0);
    let vmin = vals.clone().fold(f64::INFINITY, f64::min).max(1.0);
    let vmax = vals.fold(0.0, f64::max).max(vmin * 10.0);
    let (lo, hi) = (vmin.log10().floor() as i32, vmax.log10().ceil() as i32);
    let decades: Vec<f64> = (lo..=hi).map(|e| 10f64.powi(e)).collect();
    let ys = 10f64.powi(lo)..10f64.powi(hi);

    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&group.name, (FONT, 14).into_font().style(FontStyle::Bold))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(86)
        .build_cartesian_2d(
            xs.log_scale()
                .with_key_points(threads.iter().map(|&t| t as f64).collect()),
            ys.log_scale().with_key_points(decades),
        )?;
    let (unit, y_desc) = match group.unit {
        Unit::Ops => (" op/s", "aggregate throughput (calls/s, log)"),
        Unit::Bytes => ("B/s", "aggregate throughput (bytes/s, log)"),
    };
    chart
        .configure_mesh()
        .x_desc("threads (log)")
        .y_desc(y_desc)
        .x_label_formatter(&|t| format!("{}", t.round()))
        .y_label_formatter(&|v| format!("{}{unit}", si(*v)))
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()?;

    let n = group.series.len();
    for (i, s) in group.series.iter().enumerate() {
        let c = colour(i, n);
        let style = c.stroke_width(2);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (p.threads as f64, p.per_sec.max(1.0)))
            .collect();
        if s.baseline {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, style))?;
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))?;
        }
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;

        // The legend entry: a stroke as drawn in the chart, then the name.
        let y = 40 + 16 * i as i32;
        let stroke = [(4, y), (24, y)];
        if s.baseline {
            legend.draw(&DashedPathElement::new(stroke, 5, 3, style))?;
        } else {
            legend.draw(&PathElement::new(stroke, style))?;
        }
        legend.draw(&Text::new(
            s.name.clone(),
            (30, y - 6),
            (FONT, 11).into_font(),
        ))?;
    }
    Ok(())
}

/// Writes `report` as an SVG picture at `path`.
pub fn write_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let root = SVGBackend::new(path, size(report)).into_drawing_area();
    draw(&root, report)
}

/// Writes `report` as a PNG picture at `path` (the same drawing as [`write_svg`]).
pub fn write_png(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let root = BitMapBackend::new(path, size(report)).into_drawing_area();
    draw(&root, report)
}

#[cfg(test)]
mod tests {
    use super::colour;

    #[test]
    fn colours_are_distinct_within_a_panel() {
        for n in 1..=16 {
            let cs: Vec<_> = (0..n).map(|i| colour(i, n)).collect();
            for i in 0..n {
                for j in 0..i {
                    assert_ne!(cs[i], cs[j], "{n} series: {i} and {j} share a colour");
                }
            }
        }
    }
}
