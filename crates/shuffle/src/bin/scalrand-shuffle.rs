//! `scalrand-shuffle`: the command-line simulator.
//!
//! ```text
//! scalrand-shuffle simulate [--preset server|server-small|java|java-order10|stream|two-instance|tiny]
//!     [--workload heap|stream|two-instance] [--zone-mib N] [--cache-mib N | --cache-bytes N]
//!     [--cache-mode page|line] [--order N] [--mode kernel|fisher-yates] [--no-pick-tail]
//!     [--kernel 5.2|5.4|5.7|5.10|...] [--aging server|synthetic] [--no-pcp] [--rounds N]
//!     [--seeds A,B,..] [--accesses N] [--svg PATH] [--json] [--quiet]
//! scalrand-shuffle bias [--mode kernel|fisher-yates] [--blocks N] [--trials T] [--seed S] [--json]
//! ```
//!
//! Errors go to stderr with exit status 2; `--json` output goes to stdout.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{eprintln, format, println};

use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::{self, default_aging, heap_for};
use scalrand_shuffle::server::ServerSpec;
use scalrand_shuffle::workload::{StreamSpec, TwoInstanceSpec};
use scalrand_shuffle::{
    BiasReport, CacheMode, Error, ExperimentConfig, ExperimentResult, KernelVersion, PAGE_SIZE,
    ShuffleMode, Workload, measure_bias, run_experiment,
};

const USAGE: &str = "usage:
  scalrand-shuffle simulate [--preset server|server-small|java|java-order10|stream|two-instance|tiny]
      [--workload heap|stream|two-instance] [--zone-mib N] [--cache-mib N | --cache-bytes N]
      [--cache-mode page|line] [--order N] [--mode kernel|fisher-yates] [--no-pick-tail]
      [--kernel 5.2|5.4|5.7|5.10|...] [--aging server|synthetic] [--no-pcp] [--rounds N]
      [--seeds A,B,..] [--accesses N] [--svg PATH] [--json] [--quiet]
  scalrand-shuffle bias [--mode kernel|fisher-yates] [--blocks N] [--trials T] [--seed S] [--json]";

/// A command-line failure: a message for stderr.
#[derive(Debug)]
struct CliError(String);

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("simulate") => simulate(&args[1..]),
        Some("bias") => bias(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(CliError(format!("expected a subcommand\n{USAGE}"))),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(msg)) => {
            eprintln!("scalrand-shuffle: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Flag parser: `--name value` pairs and bare `--switch`es.
struct Flags<'a> {
    args: &'a [String],
    used: Vec<bool>,
}

impl<'a> Flags<'a> {
    fn new(args: &'a [String]) -> Self {
        Flags {
            args,
            used: std::vec![false; args.len()],
        }
    }

    fn switch(&mut self, name: &str) -> bool {
        let mut found = false;
        for (i, a) in self.args.iter().enumerate() {
            if a == name {
                self.used[i] = true;
                found = true;
            }
        }
        found
    }

    fn value(&mut self, name: &str) -> Result<Option<&'a str>, CliError> {
        for i in 0..self.args.len() {
            if self.args[i] == name {
                self.used[i] = true;
                let Some(v) = self.args.get(i + 1) else {
                    return Err(CliError(format!("{name} needs a value")));
                };
                self.used[i + 1] = true;
                return Ok(Some(v.as_str()));
            }
        }
        Ok(None)
    }

    fn num(&mut self, name: &str) -> Result<Option<u64>, CliError> {
        match self.value(name)? {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .map(Some)
                .map_err(|_| CliError(format!("{name}: not a number: {v}"))),
        }
    }

    fn finish(&self) -> Result<(), CliError> {
        match self.used.iter().position(|u| !u) {
            Some(i) => Err(CliError(format!(
                "unknown argument {}\n{USAGE}",
                self.args[i]
            ))),
            None => Ok(()),
        }
    }
}

fn parse_mode(v: &str) -> Result<ShuffleMode, CliError> {
    match v {
        "kernel" => Ok(ShuffleMode::Kernel),
        "fisher-yates" | "fy" => Ok(ShuffleMode::FisherYates),
        _ => Err(CliError(format!(
            "--mode: expected kernel or fisher-yates, got {v}"
        ))),
    }
}

fn mode_name(m: ShuffleMode) -> &'static str {
    match m {
        ShuffleMode::Kernel => "kernel",
        ShuffleMode::FisherYates => "fisher-yates",
    }
}

fn workload_name(w: &Workload) -> &'static str {
    match w {
        Workload::Heap(_) => "heap",
        Workload::Stream(_) => "stream",
        Workload::TwoInstance(_) => "two-instance",
    }
}

/// A JSON number (null for NaN and infinities).
fn jnum(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".to_string()
    }
}

fn jarr(xs: &[f64]) -> String {
    let parts: Vec<String> = xs.iter().map(|&x| jnum(x)).collect();
    format!("[{}]", parts.join(","))
}

fn mib(v: u64, name: &str) -> Result<u64, CliError> {
    v.checked_mul(1 << 20)
        .ok_or_else(|| CliError(format!("{name} too large")))
}

fn simulate(args: &[String]) -> Result<(), CliError> {
    let mut f = Flags::new(args);
    let json = f.switch("--json");
    let quiet = f.switch("--quiet");
    let no_pick_tail = f.switch("--no-pick-tail");
    let no_pcp = f.switch("--no-pcp");
    let preset = f.value("--preset")?.unwrap_or("server");
    let mut cfg = presets::preset(preset)?;
    if let Some(v) = f.num("--cache-mib")? {
        cfg.cache_bytes = mib(v, "--cache-mib")?;
    }
    if let Some(v) = f.num("--cache-bytes")? {
        cfg.cache_bytes = v;
    }
    if let Some(v) = f.num("--zone-mib")? {
        cfg.zone_pages = mib(v, "--zone-mib")? / PAGE_SIZE;
        cfg.aging = default_aging(cfg.zone_pages);
        if cfg.server.is_some() {
            cfg.server = Some(ServerSpec::for_zone(cfg.zone_pages));
        }
    }
    if let Some(v) = f.value("--kernel")? {
        cfg.kernel = KernelVersion::parse(v)?;
    }
    if let Some(v) = f.value("--aging")? {
        cfg.server = match v {
            "server" => Some(ServerSpec::for_zone(cfg.zone_pages)),
            "synthetic" => None,
            _ => {
                return Err(CliError(format!(
                    "--aging: expected server or synthetic, got {v}"
                )));
            }
        };
        cfg.pcp = cfg.server.is_some();
    }
    if no_pcp {
        cfg.pcp = false;
    }
    if let Some(v) = f.value("--cache-mode")? {
        cfg.cache_mode = match v {
            "page" => CacheMode::PageColour,
            "line" => CacheMode::Line,
            _ => {
                return Err(CliError(format!(
                    "--cache-mode: expected page or line, got {v}"
                )));
            }
        };
    }
    if let Some(v) = f.num("--order")? {
        cfg.shuffle_order = u8::try_from(v).unwrap_or(u8::MAX);
    }
    if let Some(v) = f.value("--mode")? {
        cfg.shuffle_mode = parse_mode(v)?;
    }
    if no_pick_tail {
        cfg.pick_tail = false;
    }
    if let Some(v) = f.num("--rounds")? {
        cfg.aging_rounds =
            u32::try_from(v).map_err(|_| CliError("--rounds too large".to_string()))?;
    }
    if let Some(v) = f.value("--seeds")? {
        cfg.seeds = if v.is_empty() {
            Vec::new()
        } else {
            v.split(',')
                .map(|s| {
                    s.trim()
                        .parse::<u64>()
                        .map_err(|_| CliError(format!("--seeds: not a number: {s}")))
                })
                .collect::<Result<_, _>>()?
        };
    }
    let accesses = f.num("--accesses")?;
    let cache_pages = cfg.cache_bytes / PAGE_SIZE;
    let workload = f.value("--workload")?;
    let acc = accesses.unwrap_or(match &cfg.workload {
        Workload::Heap(h) => h.accesses,
        Workload::TwoInstance(t) => t.accesses,
        Workload::Stream(_) => 1 << 20,
    });
    let kind = workload.unwrap_or(workload_name(&cfg.workload));
    cfg.workload = match kind {
        "heap" => Workload::Heap(heap_for(cache_pages, acc)),
        "stream" => Workload::Stream(StreamSpec {
            array_pages: cache_pages / 2,
            sweeps: 4,
        }),
        "two-instance" => Workload::TwoInstance(TwoInstanceSpec {
            pages: cache_pages / 2,
            accesses: acc,
            warmup: acc / 4,
        }),
        _ => {
            return Err(CliError(format!(
                "--workload: expected heap, stream or two-instance, got {kind}"
            )));
        }
    };
    let svg = f.value("--svg")?;
    f.finish()?;

    let show = !quiet && std::io::stderr().is_terminal();
    let mut progress = |done: u64, total: u64| {
        if show {
            let width = 40;
            let filled = (done * width / total.max(1)) as usize;
            eprint_progress(filled, width as usize, done, total);
        }
    };
    let res = run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut progress)?;
    if show {
        eprintln!();
    }
    if let Some(path) = svg {
        std::fs::write(path, svg_plot(&cfg, &res))
            .map_err(|e| CliError(format!("writing {path}: {e}")))?;
    }
    if json {
        println!("{}", simulate_json(preset, &cfg, &res));
    } else {
        print_table(preset, &cfg, &res);
        if let Some(path) = svg {
            println!("plot written to {path}");
        }
    }
    Ok(())
}

fn eprint_progress(filled: usize, width: usize, done: u64, total: u64) {
    let mut e = std::io::stderr().lock();
    let bar: String = (0..width)
        .map(|i| if i < filled { '#' } else { '-' })
        .collect();
    // Progress is best effort: a failed write to stderr is not worth failing the run for.
    let _ = write!(e, "\r[{bar}] {done}/{total} measurements");
    let _ = e.flush();
}

fn simulate_json(preset: &str, cfg: &ExperimentConfig, r: &ExperimentResult) -> String {
    format!(
        concat!(
            "{{\"preset\":\"{}\",\"kernel\":\"{}\",\"aging\":\"{}\",\"pcp\":{},\"workload\":\"{}\",\"zone_pages\":{},\"cache_bytes\":{},\"cache_mode\":\"{}\",",
            "\"shuffle_order\":{},\"shuffle_mode\":\"{}\",\"pick_tail\":{},\"aging_rounds\":{},\"seeds\":{},\"page_ops\":{},",
            "\"first_run\":{{\"in_order\":{},\"shuffled\":{}}},",
            "\"aged\":{{\"in_order\":{},\"shuffled\":{}}},",
            "\"curve\":{{\"in_order\":{},\"shuffled\":{},\"in_order_min\":{},\"in_order_max\":{},",
            "\"shuffled_min\":{},\"shuffled_max\":{},\"in_order_sd\":{},\"shuffled_sd\":{}}}}}"
        ),
        preset,
        cfg.kernel.name(),
        if cfg.server.is_some() {
            "server"
        } else {
            "synthetic"
        },
        cfg.pcp,
        workload_name(&cfg.workload),
        cfg.zone_pages,
        cfg.cache_bytes,
        match cfg.cache_mode {
            CacheMode::Line => "line",
            CacheMode::PageColour => "page",
        },
        cfg.shuffle_order,
        mode_name(cfg.shuffle_mode),
        cfg.pick_tail,
        cfg.aging_rounds,
        r.seeds,
        r.page_ops,
        jnum(r.in_order.first_run()),
        jnum(r.shuffled.first_run()),
        jnum(r.in_order.aged()),
        jnum(r.shuffled.aged()),
        jarr(&r.in_order.mean),
        jarr(&r.shuffled.mean),
        jarr(&r.in_order.min),
        jarr(&r.in_order.max),
        jarr(&r.shuffled.min),
        jarr(&r.shuffled.max),
        jarr(&r.in_order.sd),
        jarr(&r.shuffled.sd),
    )
}

fn pct(x: f64) -> String {
    format!("{:6.2}%", 100.0 * x)
}

fn print_table(preset: &str, cfg: &ExperimentConfig, r: &ExperimentResult) {
    println!(
        "preset {preset}: kernel {} rules, {} aging{}, workload {}, zone {} MiB, cache {} KiB ({}), shuffle order {} ({}{}), {} seeds",
        cfg.kernel.name(),
        if cfg.server.is_some() {
            "server"
        } else {
            "synthetic"
        },
        if cfg.pcp { ", per-CPU lists" } else { "" },
        workload_name(&cfg.workload),
        (cfg.zone_pages * PAGE_SIZE) >> 20,
        cfg.cache_bytes >> 10,
        match cfg.cache_mode {
            CacheMode::Line => "64 B lines",
            CacheMode::PageColour => "page colours",
        },
        cfg.shuffle_order,
        mode_name(cfg.shuffle_mode),
        if cfg.pick_tail { " + pick_tail" } else { "" },
        r.seeds
    );
    println!("conflict rate (mean ± sd over seeds)");
    println!(
        "{:>12} {:>18} {:>18}",
        "aging round", "in-order", "shuffled"
    );
    for i in 0..r.in_order.mean.len() {
        let label = if i == 0 {
            "first run".to_string()
        } else {
            i.to_string()
        };
        let cell =
            |c: &scalrand_shuffle::Curve| format!("{} ± {:.2}", pct(c.mean[i]), 100.0 * c.sd[i]);
        println!(
            "{label:>12} {:>18} {:>18}",
            cell(&r.in_order),
            cell(&r.shuffled)
        );
    }
    println!(
        "summary: first run {} in-order / {} shuffled; aged {} in-order / {} shuffled (seed: 8% / 21% / 11%)",
        pct(r.in_order.first_run()).trim(),
        pct(r.shuffled.first_run()).trim(),
        pct(r.in_order.aged()).trim(),
        pct(r.shuffled.aged()).trim()
    );
    println!("simulated page allocations + frees: {}", r.page_ops);
}

/// A hand-written SVG line chart: conflict rate vs aging rounds, mean lines and min–max bands.
fn svg_plot(cfg: &ExperimentConfig, r: &ExperimentResult) -> String {
    let (w, h, ml, mr, mt, mb) = (640.0, 400.0, 60.0, 20.0, 40.0, 50.0);
    let n = r.in_order.mean.len().max(2);
    let ymax = r
        .in_order
        .max
        .iter()
        .chain(&r.shuffled.max)
        .fold(0.0f64, |a, &b| a.max(b))
        .max(0.01);
    let ymax = (ymax * 1.1 * 20.0).ceil() / 20.0;
    let x = |i: usize| ml + (w - ml - mr) * i as f64 / (n - 1) as f64;
    let y = |v: f64| mt + (h - mt - mb) * (1.0 - v / ymax);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    s += &format!(
        "<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">Memory-side cache conflict rate vs aging ({} workload, {} seeds)</text>\n",
        w / 2.0,
        workload_name(&cfg.workload),
        r.seeds
    );
    for k in 0..=5 {
        let v = ymax * k as f64 / 5.0;
        s += &format!(
            "<line x1=\"{ml}\" x2=\"{0}\" y1=\"{1:.1}\" y2=\"{1:.1}\" stroke=\"#ddd\"/><text x=\"{2}\" y=\"{3:.1}\" text-anchor=\"end\">{4:.0}%</text>\n",
            w - mr,
            y(v),
            ml - 6.0,
            y(v) + 4.0,
            v * 100.0
        );
    }
    for i in 0..r.in_order.mean.len() {
        s += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            x(i),
            h - mb + 18.0,
            i
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">aging rounds (0 = first run after boot)</text>\n",
        (ml + w - mr) / 2.0,
        h - 10.0
    );
    s += &format!(
        "<line x1=\"{ml}\" x2=\"{ml}\" y1=\"{mt}\" y2=\"{}\" stroke=\"black\"/>\n",
        h - mb
    );
    s += &format!(
        "<line x1=\"{ml}\" x2=\"{}\" y1=\"{1}\" y2=\"{1}\" stroke=\"black\"/>\n",
        w - mr,
        h - mb
    );
    for (curve, colour, label, ly) in [
        (&r.in_order, "#c0392b", "in-order (shuffle off)", 0.0),
        (&r.shuffled, "#2471a3", "shuffled", 16.0),
    ] {
        let mut band: Vec<String> = curve
            .max
            .iter()
            .enumerate()
            .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v)))
            .collect();
        band.extend(
            curve
                .min
                .iter()
                .enumerate()
                .rev()
                .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v))),
        );
        s += &format!(
            "<polygon points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.15\" stroke=\"none\"/>\n",
            band.join(" ")
        );
        let line: Vec<String> = curve
            .mean
            .iter()
            .enumerate()
            .map(|(i, &v)| format!("{:.1},{:.1}", x(i), y(v)))
            .collect();
        s += &format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>\n",
            line.join(" ")
        );
        s += &format!(
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{colour}\" stroke-width=\"2\"/><text x=\"{3}\" y=\"{4}\">{label}</text>\n",
            ml + 10.0,
            ml + 30.0,
            mt + 10.0 + ly,
            ml + 36.0,
            mt + 14.0 + ly
        );
    }
    s += "</svg>\n";
    s
}

fn bias(args: &[String]) -> Result<(), CliError> {
    let mut f = Flags::new(args);
    let json = f.switch("--json");
    let mode = parse_mode(f.value("--mode")?.unwrap_or("kernel"))?;
    let blocks = f.num("--blocks")?.unwrap_or(8);
    let trials = f.num("--trials")?.unwrap_or(200_000);
    let seed = f.num("--seed")?.unwrap_or(1);
    f.finish()?;
    let blocks = usize::try_from(blocks).map_err(|_| CliError("--blocks too large".to_string()))?;
    let r = measure_bias(
        mode,
        scalrand_shuffle::SHUFFLE_ORDER,
        blocks,
        trials,
        Xoroshiro128PlusPlus::seed_from_u64(seed),
    )?;
    if json {
        println!("{}", bias_json(mode, &r));
    } else {
        print_bias(mode, &r);
    }
    Ok(())
}

fn bias_json(mode: ShuffleMode, r: &BiasReport) -> String {
    let rows: Vec<String> = r
        .counts
        .iter()
        .map(|row| {
            format!(
                "[{}]",
                row.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    format!(
        concat!(
            "{{\"mode\":\"{}\",\"blocks\":{},\"trials\":{},\"chi2\":{},\"df\":{},\"chi2_p\":{},",
            "\"fixed_point_rate\":{},\"uniform_fixed_point_rate\":{},\"max_rel_dev\":{},\"counts\":[{}]}}"
        ),
        mode_name(mode),
        r.blocks,
        r.trials,
        jnum(r.chi2),
        r.df,
        jnum(r.chi2_p),
        jnum(r.fixed_point_rate),
        jnum(1.0 / r.blocks as f64),
        jnum(r.max_rel_dev),
        rows.join(",")
    )
}

fn print_bias(mode: ShuffleMode, r: &BiasReport) {
    println!(
        "{} shuffle of {} order-10 blocks, {} trials",
        mode_name(mode),
        r.blocks,
        r.trials
    );
    println!(
        "position-bias matrix (count / expected; rows: blocks in PFN order, columns: list position from head)"
    );
    let expected = r.trials as f64 / r.blocks as f64;
    if r.blocks <= 16 {
        for row in &r.counts {
            let cells: Vec<String> = row
                .iter()
                .map(|&c| format!("{:5.2}", c as f64 / expected))
                .collect();
            println!("  {}", cells.join(" "));
        }
    }
    println!(
        "chi-square {:.1} on {} df: p = {:.3e}",
        r.chi2, r.df, r.chi2_p
    );
    println!(
        "fixed-point rate {:.4} (uniform: {:.4})",
        r.fixed_point_rate,
        1.0 / r.blocks as f64
    );
    println!("largest |count/expected - 1|: {:.3}", r.max_rel_dev);
}
