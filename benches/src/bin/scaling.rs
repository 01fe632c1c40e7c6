//! The scaling harness behind `cargo xtask scaling`: aggregate throughput of every scalrand
//! generator and its baselines at 1, 2, 4, ... threads up to all CPUs, measured in one run,
//! printed as a table and drawn as an SVG plot.
//!
//! ```text
//! scaling [--threads 1,2,4] [--duration-ms 300] [--repeat 3] [--filter TEXT]
//!         [--out DIR] [--list]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scalrand_benches::{Row, Unit, all_rows};

struct Args {
    threads: Vec<usize>,
    duration: Duration,
    repeat: usize,
    filter: Vec<String>,
    out: PathBuf,
    list: bool,
}

const USAGE: &str = "usage: cargo xtask scaling [--threads 1,2,4] [--duration-ms MS] [--repeat N] \
     [--filter TEXT]... [--out DIR] [--list]
  --threads      thread counts to measure (default: 1, 2, 4, ... up to all CPUs)
  --duration-ms  length of one measurement (default 300)
  --repeat       measurements per point, the median is reported (default 3)
  --filter       only rows whose group or name contains TEXT (repeatable)
  --out          where scaling.svg and scaling.md go (default target/scaling; `docs` refreshes
                 the committed plot)
  --list         list the rows and exit";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

fn default_threads() -> Vec<usize> {
    let max = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut v = vec![];
    let mut t = 1;
    while t < max {
        v.push(t);
        t *= 2;
    }
    v.push(max);
    v
}

fn parse_args() -> Args {
    let mut a = Args {
        threads: default_threads(),
        duration: Duration::from_millis(300),
        repeat: 3,
        filter: vec![],
        out: PathBuf::from("target/scaling"),
        list: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--threads" => {
                a.threads = val()
                    .split(',')
                    .map(|s| s.trim().parse().unwrap_or_else(|_| usage()))
                    .filter(|&t| t > 0)
                    .collect();
                if a.threads.is_empty() {
                    usage();
                }
            }
            "--duration-ms" => {
                a.duration = Duration::from_millis(val().parse().unwrap_or_else(|_| usage()))
            }
            "--repeat" => a.repeat = val().parse::<usize>().unwrap_or_else(|_| usage()).max(1),
            "--filter" => a.filter.push(val()),
            "--out" => a.out = PathBuf::from(val()),
            "--list" => a.list = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            _ => usage(),
        }
    }
    a
}

/// Runs one row at `threads` threads for `duration`; returns aggregate units per second.
fn measure(row: &Row, threads: usize, duration: Duration) -> f64 {
    let worker = (row.make)();
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (worker, stop, barrier) = (&worker, &stop, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    let units = worker(t, stop);
                    units as f64 / start.elapsed().as_secs_f64()
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().expect("worker panicked"))
            .sum()
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn human(x: f64, unit: Unit) -> String {
    match unit {
        Unit::Ops => format!("{:.1} M/s", x / 1e6),
        Unit::Bytes => format!("{:.0} MB/s", x / 1e6),
    }
}

struct Series {
    name: &'static str,
    baseline: bool,
    unit: Unit,
    points: Vec<(usize, f64)>,
}

fn main() {
    let args = parse_args();
    let rows: Vec<Row> = all_rows()
        .into_iter()
        .filter(|r| {
            args.filter.is_empty()
                || args
                    .filter
                    .iter()
                    .any(|f| r.group.contains(f.as_str()) || r.name.contains(f.as_str()))
        })
        .collect();
    if args.list {
        for r in &rows {
            println!(
                "{:<16} {}{}",
                r.group,
                r.name,
                if r.baseline { "  (baseline)" } else { "" }
            );
        }
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "scalrand scaling harness: {cpus} CPUs, threads {:?}, {} ms x {} runs (median) per point",
        args.threads,
        args.duration.as_millis(),
        args.repeat
    );
    let mut groups: BTreeMap<&str, Vec<Series>> = BTreeMap::new();
    let mut order: Vec<&str> = vec![];
    for row in &rows {
        if !order.contains(&row.group) {
            order.push(row.group);
        }
        let mut points = vec![];
        for &t in &args.threads {
            let runs = (0..args.repeat)
                .map(|_| measure(row, t, args.duration))
                .collect();
            let v = median(runs);
            eprintln!(
                "  {:<14} {:<40} {:>3} threads  {}",
                row.group,
                row.name,
                t,
                human(v, row.unit)
            );
            points.push((t, v));
        }
        groups.entry(row.group).or_default().push(Series {
            name: row.name,
            baseline: row.baseline,
            unit: row.unit,
            points,
        });
    }

    let mut md = String::new();
    let _ = writeln!(
        md,
        "Measured by `cargo xtask scaling` on {cpus} CPUs ({} ms x {} runs, median).\n",
        args.duration.as_millis(),
        args.repeat
    );
    for g in &order {
        let series = &groups[g];
        let _ = writeln!(md, "### {g}\n");
        let mut header = String::from("| generator |");
        let mut sep = String::from("|---|");
        for &t in &args.threads {
            let _ = write!(header, " {t} thr |");
            sep.push_str("---:|");
        }
        let maxt = args.threads.iter().copied().max().unwrap_or(1);
        let _ = write!(header, " {maxt}/1 thr |");
        sep.push_str("---:|");
        let _ = writeln!(md, "{header}\n{sep}");
        for s in series {
            let mut line = format!(
                "| {}{} |",
                s.name,
                if s.baseline { " *(baseline)*" } else { "" }
            );
            for &(_, v) in &s.points {
                let _ = write!(line, " {} |", human(v, s.unit));
            }
            let first = s.points.first().map_or(1.0, |p| p.1);
            let last = s.points.last().map_or(1.0, |p| p.1);
            let _ = write!(line, " {:.2}x |", last / first);
            let _ = writeln!(md, "{line}");
        }
        // Ratios of every scalrand row against every baseline at the largest thread count.
        let ours: Vec<&Series> = series.iter().filter(|s| !s.baseline).collect();
        let base: Vec<&Series> = series.iter().filter(|s| s.baseline).collect();
        if !ours.is_empty() && !base.is_empty() {
            let _ = writeln!(md, "\nRatios at {maxt} threads (ours / baseline):\n");
            for o in &ours {
                let ov = o.points.last().map_or(0.0, |p| p.1);
                let parts: Vec<String> = base
                    .iter()
                    .map(|b| {
                        let bv = b.points.last().map_or(f64::NAN, |p| p.1);
                        format!("{:.2}x {}", ov / bv, b.name)
                    })
                    .collect();
                let _ = writeln!(md, "- {}: {}", o.name, parts.join(", "));
            }
        }
        md.push('\n');
    }
    println!("\n{md}");

    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("cannot create {}: {e}", args.out.display());
        std::process::exit(1);
    }
    let svg = plot(&order, &groups, &args.threads, cpus);
    let svg_path = args.out.join("scaling.svg");
    let md_path = args.out.join("scaling.md");
    for (path, text) in [(&svg_path, &svg), (&md_path, &md)] {
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    }
    println!("wrote {} and {}", svg_path.display(), md_path.display());
}

const COLOURS: [&str; 8] = [
    "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666",
];

/// One panel per group: throughput (log scale) against threads (log2 scale).
fn plot(
    order: &[&str],
    groups: &BTreeMap<&str, Vec<Series>>,
    threads: &[usize],
    cpus: usize,
) -> String {
    let (pw, ph) = (600.0, 340.0);
    let (ml, mr, mt, mb) = (70.0, 290.0, 40.0, 45.0);
    let cols = 2usize.min(order.len().max(1));
    let rows = order.len().div_ceil(cols).max(1);
    let (w, h) = (pw * cols as f64, ph * rows as f64 + 30.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14">scalrand: aggregate throughput vs threads ({cpus} CPUs; dashed = baseline)</text>"#
    );
    let tmin = threads.iter().copied().min().unwrap_or(1).max(1) as f64;
    let tmax = threads.iter().copied().max().unwrap_or(1).max(2) as f64;
    for (gi, g) in order.iter().enumerate() {
        let (ox, oy) = ((gi % cols) as f64 * pw, 30.0 + (gi / cols) as f64 * ph);
        let series = &groups[g];
        let vals: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|v| *v > 0.0)
            .collect();
        let vmin = vals.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
        let vmax = vals.iter().copied().fold(0.0, f64::max).max(vmin * 10.0);
        let (lo, hi) = (vmin.log10().floor(), vmax.log10().ceil());
        let (x0, x1, y0, y1) = (ox + ml, ox + pw - mr, oy + mt, oy + ph - mb);
        let x1 = x1.max(x0 + 100.0);
        let xs = |t: f64| {
            x0 + (t.log2() - tmin.log2()) / (tmax.log2() - tmin.log2()).max(1e-9) * (x1 - x0)
        };
        let ys = |v: f64| y1 - (v.max(1.0).log10() - lo) / (hi - lo).max(1e-9) * (y1 - y0);
        let unit = series.first().map_or(Unit::Ops, |s| s.unit);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-size="13" font-weight="bold">{g}</text>"#,
            x0,
            oy + 25.0
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
            x1 - x0,
            y1 - y0
        );
        let mut e = lo;
        while e <= hi {
            let y = ys(10f64.powf(e));
            let label = match unit {
                Unit::Ops => format!("{} op/s", si(10f64.powf(e))),
                Unit::Bytes => format!("{}B/s", si(10f64.powf(e))),
            };
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" x2="{x1}" y1="{y}" y2="{y}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{label}</text>"##,
                x0 - 4.0,
                y + 4.0
            );
            e += 1.0;
        }
        for &t in threads {
            let x = xs(t as f64);
            let _ = writeln!(
                s,
                r#"<text x="{x}" y="{}" text-anchor="middle">{t}</text>"#,
                y1 + 15.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">threads</text>"#,
            (x0 + x1) / 2.0,
            y1 + 32.0
        );
        for (si_, ser) in series.iter().enumerate() {
            let c = COLOURS[si_ % COLOURS.len()];
            let pts: Vec<String> = ser
                .points
                .iter()
                .map(|&(t, v)| format!("{:.1},{:.1}", xs(t as f64), ys(v)))
                .collect();
            let dash = if ser.baseline {
                r#" stroke-dasharray="5,3""#
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
                pts.join(" ")
            );
            for &(t, v) in &ser.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                    xs(t as f64),
                    ys(v)
                );
            }
            let ly = y0 + 14.0 * si_ as f64 + 8.0;
            let _ = writeln!(
                s,
                r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
                x1 + 8.0,
                x1 + 24.0,
                x1 + 28.0,
                ly + 4.0,
                xml(ser.name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn si(v: f64) -> String {
    for (d, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= d {
            return format!("{}{p}", (v / d).round());
        }
    }
    format!("{}", v.round())
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
