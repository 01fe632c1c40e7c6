//! The "every group" scaling figure: one panel per group of the report, aggregate
//! throughput (log scale) against threads (log scale), baselines dashed, the spread over the
//! processes as a bar at each point, and each panel's legend to its right.

use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::output::{PlotError, write_png_with, write_svg_with};
use super::style::{FONT, colour, log_ticks, machine, si, title};
use crate::Unit;
use crate::report::{Group, Report};

/// Width and height of one panel, in pixels.
const PANEL: (u32, u32) = (640, 340);
/// Width of a panel's legend, right of its chart.
const LEGEND: u32 = 290;
/// Height of the title line above the panels.
const TITLE: u32 = 30;
/// Panels per line.
const COLUMNS: usize = 2;

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
    write_svg_with(path, groups_size(report), |root| draw_groups(root, report))
}

/// Writes every group of `report` as a PNG picture at `path` (the same drawing as
/// [`write_groups_svg`]).
pub fn write_groups_png(report: &Report, path: &Path) -> Result<(), PlotError> {
    write_png_with(path, groups_size(report), |root| draw_groups(root, report))
}
