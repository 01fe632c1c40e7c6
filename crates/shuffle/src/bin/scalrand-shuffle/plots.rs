//! `plot` and the plots of `simulate`: one plotters drawing for SVG and PNG.

use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, println};

use plotters::prelude::*;
use scalrand_shuffle::{Curve, ExperimentResult};

use crate::CliError;
use crate::args::PlotArgs;
use crate::report::SimulateReport;

pub(crate) fn plot_title(r: &SimulateReport) -> String {
    format!(
        "conflict rate vs aging: {} {} workload, {} aging, kernel {} rules, {}",
        r.preset,
        r.workload,
        r.aging,
        r.kernel.name(),
        crate::report::seeds(r.seeds)
    )
}

pub(crate) fn write_plots(
    rep: &SimulateReport,
    res: &ExperimentResult,
    svg: Option<&std::path::Path>,
    png: Option<&std::path::Path>,
) -> Result<(), CliError> {
    if svg.is_none() && png.is_none() {
        return Ok(());
    }
    register_font()?;
    let title = plot_title(rep);
    if let Some(path) = svg {
        let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
        draw(&root, &title, res).map_err(|e| CliError(format!("--svg {}: {e}", path.display())))?;
    }
    if let Some(path) = png {
        let failed = |e: &dyn std::fmt::Display| CliError(format!("--png {}: {e}", path.display()));
        let mut rgb = std::vec![0u8; 800 * 480 * 3];
        draw(
            &BitMapBackend::with_buffer(&mut rgb, (800, 480)).into_drawing_area(),
            &title,
            res,
        )
        .map_err(|e| failed(&e))?;
        write_rgb_png(path, (800, 480), &rgb).map_err(|e| failed(&e))?;
    }
    Ok(())
}

/// Encodes an RGB buffer of `size` as a PNG file at `path` with the `png` crate: plotters'
/// own PNG writer goes through the `image` crate and its JPEG, BMP and PNG codecs, most of
/// which this tool never uses.
fn write_rgb_png(
    path: &std::path::Path,
    size: (u32, u32),
    rgb: &[u8],
) -> Result<(), png::EncodingError> {
    let file = std::fs::File::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

pub(crate) fn plot(a: PlotArgs) -> Result<(), CliError> {
    if a.svg.is_none() && a.png.is_none() {
        return Err(CliError(
            "plot: give --svg PATH and/or --png PATH".to_string(),
        ));
    }
    crate::simulate::check_outputs(&[("--svg", &a.svg), ("--png", &a.png)])?;
    let text = std::fs::read_to_string(&a.report)
        .map_err(|e| CliError(format!("--report {}: {e}", a.report.display())))?;
    let rep: SimulateReport = serde_json::from_str(&text)
        .map_err(|e| CliError(format!("--report {}: {e}", a.report.display())))?;
    let c = &rep.curve;
    let curve = |mean: &[f64], min: &[f64], max: &[f64], sd: &[f64]| Curve {
        mean: mean.to_vec(),
        min: min.to_vec(),
        max: max.to_vec(),
        sd: sd.to_vec(),
        samples: Vec::new(),
    };
    let res = ExperimentResult {
        in_order: curve(
            &c.in_order,
            &c.in_order_min,
            &c.in_order_max,
            &c.in_order_sd,
        ),
        shuffled: curve(
            &c.shuffled,
            &c.shuffled_min,
            &c.shuffled_max,
            &c.shuffled_sd,
        ),
        seeds: rep.seeds,
        page_ops: rep.page_ops,
    };
    write_plots(&rep, &res, a.svg.as_deref(), a.png.as_deref())?;
    for p in [&a.svg, &a.png].into_iter().flatten() {
        println!("plot written to {}", p.display());
    }
    Ok(())
}

/// Text in the PNG is drawn with DejaVu Sans from the `dejavu` crate (no system font needed).
pub(crate) fn register_font() -> Result<(), CliError> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| CliError("the bundled DejaVu Sans font did not load".to_string()))
}

/// One drawing for both backends: mean lines with min–max bands over seeds.
pub(crate) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    r: &ExperimentResult,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let n = r.in_order.mean.len().max(2) - 1;
    let ymax = r
        .in_order
        .max
        .iter()
        .chain(&r.shuffled.max)
        .fold(0.0f64, |a, &b| a.max(b))
        .max(0.001)
        * 110.0;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("aging rounds (0 = first run after boot)")
        .y_desc("conflict rate, %")
        .x_labels(n + 1)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(e)?;
    let series: [(&Curve, RGBColor, &str); 2] = [
        (
            &r.in_order,
            RGBColor(0xc0, 0x39, 0x2b),
            "in-order (shuffle off)",
        ),
        (&r.shuffled, RGBColor(0x24, 0x71, 0xa3), "shuffled"),
    ];
    for (c, colour, label) in series {
        let mut band: Vec<(f64, f64)> = c
            .max
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, 100.0 * v))
            .collect();
        band.extend(
            c.min
                .iter()
                .enumerate()
                .rev()
                .map(|(i, &v)| (i as f64, 100.0 * v)),
        );
        chart
            .draw_series(std::iter::once(Polygon::new(band, colour.mix(0.15))))
            .map_err(e)?;
        chart
            .draw_series(LineSeries::new(
                c.mean
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (i as f64, 100.0 * v)),
                colour.stroke_width(2),
            ))
            .map_err(e)?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}
