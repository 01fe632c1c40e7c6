//! The scaling figures, each drawn once and put on plotters' SVG and bitmap backends:
//!
//! * the headline ([`draw`], [`write_svg`], [`write_png`]): `scalrand::fill_bytes` against
//!   rand's `ThreadRng`, the vDSO getrandom and `getrandom::fill` on 32-byte reads, and
//!   `scalrand::fast` against `fastrand`, as bars of the median over the run's processes with
//!   their interquartile range and min–max, one bar per thread count, on linear axes;
//! * every group ([`draw_groups`], [`write_groups_svg`], [`write_groups_png`]): one panel per
//!   group, aggregate throughput (log scale) against threads (log scale), baselines dashed,
//!   the spread over the processes as a bar at each point.
//!
//! Text is DejaVu Sans (the `dejavu` crate), rendered by plotters' pure-Rust `ab_glyph`
//! support, so no system font is needed.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use crate::report::{Group, Report, Series};
use crate::{HEADLINE, Unit};

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

/// The size of [`draw_groups`]' picture for `report`: two panels a line, as many lines as
/// needed.
pub fn groups_size(report: &Report) -> (u32, u32) {
    let n = report.groups.len().max(1);
    let cols = COLUMNS.min(n);
    let lines = n.div_ceil(cols);
    (PANEL.0 * cols as u32, PANEL.1 * lines as u32 + TITLE)
}

/// Draws every group of `report` on `root`, which should be [`groups_size`] big.
pub fn draw_groups<DB: DrawingBackend>(
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
            "scalrand: aggregate throughput against threads, higher is better ({}; dashed = \
             baseline{})",
            machine(report),
            if report.processes {
                "; bars: min–max over the processes"
            } else {
                ""
            }
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

/// `v` with an SI prefix and at most three significant digits: `10M`, `1.5G`, `250k`.
pub fn si(v: f64) -> String {
    for (d, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= d * 0.9995 {
            return format!("{}{p}", three_digits(v / d));
        }
    }
    three_digits(v)
}

/// `x` (at least 0) with at most three significant digits and no trailing zeros.
fn three_digits(x: f64) -> String {
    let decimals = if x >= 99.95 {
        0
    } else if x >= 9.995 {
        1
    } else {
        2
    };
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The machine in words: `2 CPUs, Intel(R) Xeon(R) Processor, ChaCha backend Avx512`.
fn machine(report: &Report) -> String {
    let mut s = format!("{} CPUs", report.cpus);
    if let Some(m) = &report.cpu_model {
        s.push_str(&format!(", {m}"));
    }
    if let Some(b) = &report.backend {
        s.push_str(&format!(", ChaCha backend {b}"));
    }
    s
}

/// A group's title in plain words (its name where there is none).
pub fn title(group: &str) -> String {
    match group {
        "fast u64" => "Fast, non-cryptographic numbers: u64 per call",
        "crypto 32B" => "Secure random bytes, 32-byte reads (a key)",
        "crypto 4KiB" => "Secure random bytes, 4 KiB reads",
        "numa 4x4 explicit topology 32B" => "Per-node pools (4 nodes x 4 CPUs) vs one lock, 32 B",
        "fortuna 4KiB" => "Fortuna, AES-256 (4 KiB): outside the lock vs inside",
        "fortuna ChaCha20 4KiB" => "Fortuna, ChaCha20 (4 KiB): outside the lock vs inside",
        other => other,
    }
    .to_owned()
}

/// Log-scale key points for `lo..=hi` decades: 1, 2 and 5 times each decade while there are
/// few decades, the decades alone past four.
fn log_ticks(lo: i32, hi: i32) -> Vec<f64> {
    let steps: &[f64] = if hi - lo <= 4 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    (lo..=hi)
        .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
        .filter(|v| *v <= 10f64.powi(hi) * 1.0001)
        .collect()
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
    let decades = log_ticks(lo, hi);
    let ys = 10f64.powi(lo)..10f64.powi(hi);

    let mut chart = ChartBuilder::on(&chart_area)
        .caption(
            title(&group.name),
            (FONT, 14).into_font().style(FontStyle::Bold),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(86)
        .build_cartesian_2d(
            xs.log_scale()
                .with_key_points(threads.iter().map(|&t| t as f64).collect()),
            ys.log_scale().with_key_points(decades),
        )?;
    let (unit, y_desc) = match group.unit {
        Unit::Ops => (" calls/s", "calls/s, all threads (log; higher is better)"),
        Unit::Bytes => ("B/s", "bytes/s, all threads (log; higher is better)"),
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
        // The spread over the processes: a bar from the smallest figure to the largest.
        chart.draw_series(s.points.iter().filter_map(|p| {
            let sp = p.spread.filter(|sp| sp.n > 1)?;
            let x = p.threads as f64;
            Some(PathElement::new(
                [(x, sp.min.max(1.0)), (x, sp.max.max(1.0))],
                c.stroke_width(1),
            ))
        }))?;

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

/// Writes every group of `report` as an SVG picture at `path`.
pub fn write_groups_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let root = SVGBackend::new(path, groups_size(report)).into_drawing_area();
    draw_groups(&root, report)
}

/// Writes every group of `report` as a PNG picture at `path` (the same drawing as
/// [`write_groups_svg`]).
pub fn write_groups_png(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let size = groups_size(report);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw_groups(&root, report)?;
    }
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

/// Writes the headline figure of `report` as an SVG picture at `path`.
pub fn write_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let root = SVGBackend::new(path, size(report)).into_drawing_area();
    draw(&root, report)
}

/// Writes the headline figure of `report` as a PNG picture at `path` (the same drawing as
/// [`write_svg`]).
pub fn write_png(report: &Report, path: &Path) -> Result<(), PlotError> {
    register_fonts()?;
    let size = size(report);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root, report)?;
    }
    write_rgb_png(path, size, &rgb)
}

/// The groups the headline figure shows, in its order.
const HEADLINE_GROUPS: [&str; 2] = ["crypto 32B", "fast u64"];

/// Width and height of one headline chart, in pixels.
const HEADLINE_CHART: (u32, u32) = (720, 400);
/// Height of the headline figure's title lines.
const HEADLINE_TITLE: u32 = 56;

/// The headline charts of `report`: each of [`HEADLINE_GROUPS`] it has, with its
/// [`HEADLINE`] rows (all its rows where it has none of them).
fn headline_charts(report: &Report) -> Vec<(&Group, Vec<&Series>)> {
    HEADLINE_GROUPS
        .iter()
        .filter_map(|name| {
            let g = report.groups.iter().find(|g| g.name == *name)?;
            let picked: Vec<&Series> = g
                .series
                .iter()
                .filter(|s| HEADLINE.contains(&(g.name.as_str(), s.name.as_str())))
                .collect();
            let picked = if picked.is_empty() {
                g.series.iter().collect()
            } else {
                picked
            };
            Some((g, picked))
        })
        .collect()
}

/// The size of the headline figure of `report`: one chart per headline group side by side,
/// or [`groups_size`] where the report has none of them (the figure is then every group).
pub fn size(report: &Report) -> (u32, u32) {
    let n = headline_charts(report).len() as u32;
    if n == 0 {
        return groups_size(report);
    }
    (HEADLINE_CHART.0 * n, HEADLINE_CHART.1 + HEADLINE_TITLE)
}

/// Draws the headline figure of `report` on `root`, which should be [`size`] big: where the
/// report has neither headline group, every group ([`draw_groups`]).
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &Report,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let charts = headline_charts(report);
    if charts.is_empty() {
        return draw_groups(root, report);
    }
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(HEADLINE_TITLE);
    title.draw(&Text::new(
        format!(
            "scalrand against what programs use today — higher is better ({})",
            machine(report)
        ),
        (10, 8),
        (FONT, 15).into_font().style(FontStyle::Bold),
    ))?;
    let spread = if report.processes {
        format!(
            "bars: median of {} processes, each {} ms per point; black: interquartile range \
             (thick) and min–max (thin) over the processes",
            report.repeat, report.duration_ms
        )
    } else {
        format!(
            "bars: median of {} runs, each {} ms per point",
            report.repeat, report.duration_ms
        )
    };
    title.draw(&Text::new(spread, (10, 30), (FONT, 12).into_font()))?;
    let panels = body.split_evenly((1, charts.len()));
    for ((group, series), panel) in charts.iter().zip(&panels) {
        draw_bars(panel, group, series, &report.threads, report.cpus)?;
    }
    root.present()?;
    Ok(())
}

/// Colours of the headline bars, by thread count: 1 thread, then more.
const BAR_COLOURS: [RGBColor; 4] = [
    RGBColor(0xfd, 0xae, 0x61),
    RGBColor(0x2c, 0x7b, 0xb6),
    RGBColor(0x1a, 0x96, 0x41),
    RGBColor(0x7b, 0x32, 0x94),
];

/// One headline chart: a band per series (top to bottom in the group's order), a bar per
/// thread count with its value, the spread over the processes in black.
fn draw_bars<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    group: &Group,
    series: &[&Series],
    threads: &[usize],
    cpus: usize,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let n = series.len();
    let k = threads.len().max(1);
    let top = |v: f64, sp: Option<crate::report::Spread>| sp.map_or(v, |s| s.max.max(v));
    let xmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| top(p.per_sec, p.spread)))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        .max(1.0);
    let names: Vec<String> = series.iter().map(|s| short_name(&s.name)).collect();
    // Series i occupies the band [n - 1 - i, n - i): the first series on top.
    let centre = |i: usize| (n - 1 - i) as f64 + 0.5;
    let (unit, x_desc) = match group.unit {
        Unit::Ops => (
            "/s",
            "calls per second, all threads together (higher is better)",
        ),
        Unit::Bytes => (
            "B/s",
            "bytes per second, all threads together (higher is better)",
        ),
    };
    let mut chart = ChartBuilder::on(panel)
        .caption(
            title(&group.name),
            (FONT, 14).into_font().style(FontStyle::Bold),
        )
        .margin(12)
        .margin_top(30)
        .x_label_area_size(40)
        .y_label_area_size(200)
        .build_cartesian_2d(0.0..xmax * 1.3, 0.0..n as f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(x_desc)
        .x_labels(6)
        .x_label_formatter(&|v| format!("{}{unit}", si(*v)))
        .y_labels(0)
        .label_style((FONT, 11))
        .axis_desc_style((FONT, 12))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
        .draw()?;

    // The names, right-aligned left of the chart; under a recommended row's name, the word.
    chart.draw_series(names.iter().enumerate().map(|(i, name)| {
        let style = (FONT, 13)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        EmptyElement::at((0.0, centre(i))) + Text::new(name.clone(), (-8, 0), style)
    }))?;
    chart.draw_series(
        series
            .iter()
            .enumerate()
            .filter(|(_, s)| recommended(s))
            .map(|(i, _)| {
                let style = (FONT, 12)
                    .into_font()
                    .color(&RECOMMENDED)
                    .pos(Pos::new(HPos::Right, VPos::Top));
                EmptyElement::at((0.0, centre(i)))
                    + Text::new("★ recommended".to_owned(), (-8, 10), style)
            }),
    )?;

    let h = 0.76 / k as f64;
    for (ti, &t) in threads.iter().enumerate() {
        let c = BAR_COLOURS[ti.min(BAR_COLOURS.len() - 1)];
        let label = match t {
            1 => "1 thread".to_owned(),
            t if t == cpus => format!("{t} threads (all CPUs)"),
            t => format!("{t} threads"),
        };
        let bars: Vec<(f64, f64, Option<crate::report::Spread>, bool)> = series
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let p = s.points.iter().find(|p| p.threads == t)?;
                let y0 = (n - 1 - i) as f64 + 0.12 + h * (k - 1 - ti) as f64;
                Some((y0, p.per_sec, p.spread, recommended(s)))
            })
            .filter(|(_, v, _, _)| v.is_finite())
            .collect();
        chart
            .draw_series(bars.iter().map(|&(y0, v, _, _)| {
                Rectangle::new([(0.0, y0), (v, y0 + h * 0.9)], c.filled())
            }))?;
        // A recommended row's bars are outlined in the accent colour.
        chart.draw_series(bars.iter().filter(|b| b.3).map(|&(y0, v, _, _)| {
            Rectangle::new([(0.0, y0), (v, y0 + h * 0.9)], RECOMMENDED.stroke_width(2))
        }))?;
        // The legend: the thread count's colour, top right of the panel, above the bars.
        let (lx, ly) = (panel.dim_in_pixel().0 as i32 - 200, 10 + 17 * ti as i32);
        panel.draw(&Rectangle::new(
            [(lx, ly - 6), (lx + 12, ly + 6)],
            c.filled(),
        ))?;
        panel.draw(&Text::new(label, (lx + 18, ly - 7), (FONT, 12).into_font()))?;
        // The spread: interquartile range thick, min–max thin, across the bar's middle.
        for &(y0, _, sp, _) in &bars {
            let Some(sp) = sp.filter(|sp| sp.n > 1) else {
                continue;
            };
            let y = y0 + h * 0.45;
            chart.draw_series([
                PathElement::new([(sp.min, y), (sp.max, y)], BLACK.stroke_width(1)),
                PathElement::new([(sp.q1, y), (sp.q3, y)], BLACK.stroke_width(3)),
            ])?;
        }
        // The value, right of the bar and its spread.
        chart.draw_series(bars.iter().map(|&(y0, v, sp, _)| {
            let x = top(v, sp) + xmax * 0.01;
            let style = (FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            EmptyElement::at((x, y0 + h * 0.45))
                + Text::new(format!("{}{unit}", si(v)), (2, 0), style)
        }))?;
    }
    Ok(())
}

/// Whether the headline figure marks `s` as recommended: the report says so, or (in a report
/// saved before it did) its name is one of [`RECOMMENDED`](crate::RECOMMENDED).
fn recommended(s: &Series) -> bool {
    s.recommended || crate::RECOMMENDED.contains(&s.name.as_str())
}

/// The accent colour of the recommended rows in the headline figure.
const RECOMMENDED: RGBColor = RGBColor(0x1b, 0x7a, 0x3e);

/// A headline row's name as a user reads it: the call, without the table's notes.
pub fn short_name(name: &str) -> String {
    match name {
        "rand ThreadRng (rand::rng())" => "rand::rng() (ThreadRng)".to_owned(),
        "vDSO getrandom (direct, Linux >= 6.11)" => "vDSO getrandom (Linux ≥ 6.11)".to_owned(),
        "fastrand::u64 (thread-local)" => "fastrand::u64(..)".to_owned(),
        other => other
            .split_once(" (")
            .map_or(other, |(head, _)| head)
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{colour, log_ticks, si};

    #[test]
    fn ticks_read_as_numbers() {
        assert_eq!(si(1.5e9), "1.5G");
        assert_eq!(si(250e3), "250k");
        assert_eq!(si(12.34e6), "12.3M");
        assert_eq!(si(1e6), "1M");
        assert_eq!(si(0.0), "0");
        assert_eq!(log_ticks(6, 7), [1e6, 2e6, 5e6, 1e7]);
        assert_eq!(log_ticks(1, 7).len(), 7);
    }

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
