//! The headline scaling figure: `scalrand::fill_bytes` and the pools at ChaCha12 against
//! rand's `ThreadRng`, the vDSO getrandom and `getrandom::fill` on 32-byte reads, and
//! `scalrand::fast` against `fastrand`, as bars of the median over the run's processes with
//! their interquartile range and min–max, one bar per thread count, on linear axes, the
//! recommended rows marked. Each scalrand bar prints its ratio to its group's baseline
//! (`HEADLINE_BASELINES`), and each cipher row names its rounds and key erasure under its name.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::groups::{draw_groups, groups_size};
use super::output::{PlotError, write_png_with, write_svg_with};
use super::style::{FONT, machine, si, title};
use crate::report::{Group, Report, Series};
use crate::{HEADLINE, Unit};

/// The groups the headline figure shows, in its order.
const HEADLINE_GROUPS: [&str; 2] = ["crypto 32B", "fast u64"];

/// Width and height of one headline chart, in pixels.
const HEADLINE_CHART: (u32, u32) = (760, 460);
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
    // The baseline this group's scalrand bars are divided by, where it is drawn.
    let base = crate::headline_baseline(&group.name)
        .filter(|b| series.iter().any(|s| s.name == *b && s.baseline));
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
    let caption = match base {
        Some(b) => format!(
            "{} — ratios to {}",
            title(&group.name),
            short_name(b).replace(" (ThreadRng)", "")
        ),
        None => title(&group.name),
    };
    let mut chart = ChartBuilder::on(panel)
        .caption(caption, (FONT, 14).into_font().style(FontStyle::Bold))
        .margin(12)
        .margin_top(30)
        .x_label_area_size(40)
        .y_label_area_size(200)
        .build_cartesian_2d(0.0..xmax * 1.55, 0.0..n as f64)?;
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
    // Under a cipher row's name, what it runs (rounds, key erasure); under that, or under
    // the name, the recommended row's mark.
    chart.draw_series(series.iter().enumerate().filter_map(|(i, s)| {
        let what = crate::what_it_is(&s.name)?;
        let style = (FONT, 11)
            .into_font()
            .color(&RGBColor(0x55, 0x55, 0x55))
            .pos(Pos::new(HPos::Right, VPos::Top));
        Some(EmptyElement::at((0.0, centre(i))) + Text::new(what.to_owned(), (-8, 9), style))
    }))?;
    chart.draw_series(
        series
            .iter()
            .enumerate()
            .filter(|(_, s)| recommended(s))
            .map(|(i, s)| {
                let style = (FONT, 12)
                    .into_font()
                    .color(&RECOMMENDED)
                    .pos(Pos::new(HPos::Right, VPos::Top));
                let dy = if crate::what_it_is(&s.name).is_some() {
                    23
                } else {
                    10
                };
                EmptyElement::at((0.0, centre(i)))
                    + Text::new("★ recommended".to_owned(), (-8, dy), style)
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
        let bars: Vec<Bar> = series
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let p = s.points.iter().find(|p| p.threads == t)?;
                let y0 = (n - 1 - i) as f64 + 0.12 + h * (k - 1 - ti) as f64;
                let ratio = base
                    .filter(|_| !s.baseline)
                    .and_then(|b| group.ratio_to(&s.name, b, t))
                    .map(|(r, _)| r);
                Some((y0, p.per_sec, p.spread, recommended(s), ratio))
            })
            .filter(|(_, v, _, _, _)| v.is_finite())
            .collect();
        chart.draw_series(
            bars.iter().map(|&(y0, v, _, _, _)| {
                Rectangle::new([(0.0, y0), (v, y0 + h * 0.9)], c.filled())
            }),
        )?;
        // A recommended row's bars are outlined in the accent colour.
        chart.draw_series(bars.iter().filter(|b| b.3).map(|&(y0, v, _, _, _)| {
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
        for &(y0, _, sp, _, _) in &bars {
            let Some(sp) = sp.filter(|sp| sp.n > 1) else {
                continue;
            };
            let y = y0 + h * 0.45;
            chart.draw_series([
                PathElement::new([(sp.min, y), (sp.max, y)], BLACK.stroke_width(1)),
                PathElement::new([(sp.q1, y), (sp.q3, y)], BLACK.stroke_width(3)),
            ])?;
        }
        // The value, right of the bar and its spread; a scalrand bar's ratio to the baseline
        // after it.
        chart.draw_series(bars.iter().map(|&(y0, v, sp, _, ratio)| {
            let x = top(v, sp) + xmax * 0.01;
            let style = (FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            let text = match ratio {
                Some(r) => format!("{}{unit}  {}", si(v), ratio_label(r)),
                None => format!("{}{unit}", si(v)),
            };
            EmptyElement::at((x, y0 + h * 0.45)) + Text::new(text, (2, 0), style)
        }))?;
    }
    Ok(())
}

/// One headline bar: where it starts (y), its value, its spread over the processes, whether its
/// row is recommended, and its ratio to the group's baseline (scalrand rows).
type Bar = (f64, f64, Option<crate::report::Spread>, bool, Option<f64>);

/// A bar's ratio to its baseline as printed after its value: `0.82×`.
fn ratio_label(r: f64) -> String {
    format!("{r:.2}×")
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
        "scalrand NodePools, ChaCha12 output (with_rounds)" => {
            "NodePools::with_rounds(ChaCha12)".to_owned()
        }
        other => other
            .split_once(" (")
            .map_or(other, |(head, _)| head)
            .to_owned(),
    }
}

/// Writes the headline figure of `report` as an SVG picture at `path`.
pub fn write_svg(report: &Report, path: &Path) -> Result<(), PlotError> {
    write_svg_with(path, size(report), |root| draw(root, report))
}

/// Writes the headline figure of `report` as a PNG picture at `path` (the same drawing as
/// [`write_svg`]).
pub fn write_png(report: &Report, path: &Path) -> Result<(), PlotError> {
    write_png_with(path, size(report), |root| draw(root, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Point, Ratio, Spread};

    /// The headline figure prints each scalrand bar's ratio to its group's baseline (from the
    /// per-process ratios where the run kept them) and, under each cipher row's name, its
    /// rounds and key erasure; the caption names the baseline.
    #[test]
    fn bars_print_their_ratio_and_rows_their_rounds() {
        let point = |threads, per_sec| Point {
            threads,
            per_sec,
            spread: None,
        };
        let series = |name: &str, baseline, a, b| Series {
            name: name.to_owned(),
            baseline,
            recommended: false,
            points: vec![point(1, a), point(2, b)],
        };
        let runs = vec![0.81, 0.82, 0.83];
        let report = Report {
            cpus: 2,
            cpu_model: None,
            backend: None,
            threads: vec![1, 2],
            duration_ms: 100,
            repeat: 3,
            processes: true,
            full: false,
            pinned: false,
            groups: vec![Group {
                name: "crypto 32B".to_owned(),
                unit: Unit::Bytes,
                series: vec![
                    series("scalrand::fill_bytes (crypto facade)", false, 820e6, 1560e6),
                    series(
                        "scalrand NodePools, ChaCha12 output (with_rounds)",
                        false,
                        1100e6,
                        2300e6,
                    ),
                    series("rand ThreadRng (rand::rng())", true, 1000e6, 2000e6),
                ],
                ratios: vec![Ratio {
                    ours: "scalrand::fill_bytes (crypto facade)".to_owned(),
                    baseline: "rand ThreadRng (rand::rng())".to_owned(),
                    threads: 1,
                    spread: Spread::of(&runs).unwrap(),
                    runs,
                }],
            }],
        };
        let path = std::env::temp_dir().join(format!("headline-{}.svg", std::process::id()));
        write_svg(&report, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // The per-process ratio at 1 thread, the ratios of the medians elsewhere.
        for want in ["0.82×", "0.78×", "1.10×", "1.15×"] {
            assert!(svg.contains(want), "no {want} in the figure");
        }
        // The baseline's own bars carry no ratio.
        assert!(!svg.contains("1.00×"));
        for want in [
            "ChaCha20, fast key erasure",
            "ChaCha12, fast key erasure",
            "ChaCha12, no key erasure",
            "ratios to rand::rng()",
        ] {
            assert!(svg.contains(want), "no {want:?} in the figure");
        }
    }
}
