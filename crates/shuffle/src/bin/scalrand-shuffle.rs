//! `scalrand-shuffle`: the command-line simulator (`--help` lists every flag with examples).
//!
//! Errors go to stderr with exit status 2; `--json` output goes to stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{eprint, eprintln, format, println};

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use plotters::prelude::*;
use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::{self, PRESETS, default_aging, heap_for};
use scalrand_shuffle::server::ServerSpec;
use scalrand_shuffle::workload::{StreamSpec, TwoInstanceSpec};
use scalrand_shuffle::{
    BandwidthModel, BiasReport, CacheMode, CalibrateConfig, Curve, ExperimentConfig,
    ExperimentResult, KernelVersion, PAGE_SIZE, ShuffleMode, Workload, measure_bias, run_calibrate,
    run_experiment,
};
use serde::{Deserialize, Serialize};

const EXAMPLES: &str = "Examples:
  scalrand-shuffle simulate                                   # preset server: 64 GiB zone, 8 GiB cache
  scalrand-shuffle simulate --preset server --kernel 5.4 --svg plot.svg --png plot.png
  scalrand-shuffle simulate --preset server-small --seeds 1,2,3 --json
  scalrand-shuffle simulate --preset java --zone-mib 1GiB --cache-mib 128MiB --order 0
  scalrand-shuffle simulate --config experiment.json --json   # an ExperimentConfig as JSON
  scalrand-shuffle bias --mode kernel --blocks 8 --trials 200000 --json
  scalrand-shuffle plot --report run.json --svg docs/shuffle.svg --png docs/shuffle.png
  scalrand-shuffle calibrate --json                           # KNL STREAM + aliasing at 1/16 size
  scalrand-shuffle calibrate --scale 1 --near-gbps 450 --far-gbps 90";

/// Simulator of Linux's free-list shuffle (mm/shuffle.c) with a memory-side-cache model.
#[derive(Debug, Parser)]
#[command(name = "scalrand-shuffle", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Boot a zone in-order and shuffled, age it, measure a workload's cache conflicts.
    #[command(after_help = EXAMPLES)]
    Simulate(SimulateArgs),
    /// Measure the shuffle's position bias (chi-square against uniform).
    #[command(after_help = EXAMPLES)]
    Bias(BiasArgs),
    /// Redraw the plot of a saved `simulate --json` report (SVG and/or PNG).
    #[command(after_help = EXAMPLES)]
    Plot(PlotArgs),
    /// Hold the model against public measurements: KNL STREAM fresh and aged, the
    /// two-instance aliasing case; near-memory miss ratios and modelled bandwidth.
    #[command(after_help = EXAMPLES)]
    Calibrate(CalibrateArgs),
}

#[derive(Debug, Args)]
struct CalibrateArgs {
    /// Divide every size by this power of two (1 = full size: 96 GiB zone, 16 GiB cache).
    #[arg(long, default_value_t = 16)]
    scale: u64,
    /// Near-memory (cache) bandwidth, GB/s.
    #[arg(long, default_value_t = BandwidthModel::KNL.near_gbps)]
    near_gbps: f64,
    /// Far-memory bandwidth, GB/s.
    #[arg(long, default_value_t = BandwidthModel::KNL.far_gbps)]
    far_gbps: f64,
    /// Seeds, comma-separated (one aging history each; figures are medians).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        default_value = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"
    )]
    seeds: Vec<u64>,
    /// Server aging rounds before the aged STREAM run.
    #[arg(long, default_value_t = 4)]
    rounds: u32,
    /// STREAM passes measured (after one warm pass).
    #[arg(long, default_value_t = 3)]
    sweeps: u32,
    /// Kernel whose rules apply: any major.minor from 5.2.
    #[arg(long, value_name = "VERSION", value_parser = parse_kernel, default_value = "5.10")]
    kernel: KernelVersion,
    /// JSON report on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct PlotArgs {
    /// A report written by `simulate --json`.
    #[arg(long, value_name = "PATH")]
    report: PathBuf,
    /// Write the plot as SVG.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Write the plot as PNG (same drawing).
    #[arg(long, value_name = "PATH")]
    png: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum WorkloadArg {
    Heap,
    Stream,
    TwoInstance,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CacheModeArg {
    /// One set per 4 KiB page colour (fast).
    Page,
    /// One set per 64-byte line.
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    /// The kernel's `__shuffle_zone`, bias included.
    Kernel,
    /// An unbiased Fisher–Yates permutation.
    #[value(alias = "fy")]
    FisherYates,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum AgingArg {
    /// Page cache + reclaim, processes, per-CPU lists.
    Server,
    /// Mixed-order synthetic churn.
    Synthetic,
}

#[derive(Debug, Args)]
struct SimulateArgs {
    /// Named experiment.
    #[arg(long, default_value = "server", value_parser = clap::builder::PossibleValuesParser::new(PRESETS))]
    preset: String,
    /// Start from an ExperimentConfig in JSON (as `--dump-config` prints); flags override it.
    #[arg(long, value_name = "PATH", conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// Print the resolved ExperimentConfig as JSON and exit.
    #[arg(long)]
    dump_config: bool,
    /// Measured workload (default: the preset's).
    #[arg(long, value_enum)]
    workload: Option<WorkloadArg>,
    /// Zone size: a number of MiB or a size like 64GiB, 512MiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_mib)]
    zone_mib: Option<u64>,
    /// Cache size: a number of MiB or a size like 8GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_mib, conflicts_with = "cache_bytes")]
    cache_mib: Option<u64>,
    /// Cache size in bytes (or with a unit: 64KiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    cache_bytes: Option<u64>,
    /// Cache model granularity.
    #[arg(long, value_enum)]
    cache_mode: Option<CacheModeArg>,
    /// Shuffle order (0..=10; the kernel's is 10).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=10))]
    order: Option<u8>,
    /// Shuffle used in the shuffled runs.
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// No coin for frees at the shuffle order.
    #[arg(long)]
    no_pick_tail: bool,
    /// Kernel whose rules apply: any major.minor from 5.2 (5.2–5.6, 5.7–5.9, 5.10+ differ).
    #[arg(long, value_name = "VERSION", value_parser = parse_kernel)]
    kernel: Option<KernelVersion>,
    /// Aging between measurements (default: the preset's).
    #[arg(long, value_enum)]
    aging: Option<AgingArg>,
    /// No per-CPU page lists.
    #[arg(long)]
    no_pcp: bool,
    /// Aging rounds.
    #[arg(long)]
    rounds: Option<u32>,
    /// Seeds, comma-separated.
    #[arg(long, value_delimiter = ',', num_args = 1)]
    seeds: Option<Vec<u64>>,
    /// Measured accesses per run.
    #[arg(long)]
    accesses: Option<u64>,
    /// Write the plot as SVG.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Write the plot as PNG (same drawing).
    #[arg(long, value_name = "PATH")]
    png: Option<PathBuf>,
    /// JSON report on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct BiasArgs {
    /// Shuffle to measure.
    #[arg(long, value_enum, default_value = "kernel")]
    mode: ModeArg,
    /// Order-10 blocks in the zone (≥ 2).
    #[arg(long, default_value_t = 8)]
    blocks: usize,
    /// Shuffles run.
    #[arg(long, default_value_t = 200_000)]
    trials: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// JSON report on stdout.
    #[arg(long)]
    json: bool,
}

/// `64GiB`, `512MiB`, `1.5GiB`, `4096KiB`, or a bare number of bytes.
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        "t" | "tib" | "tb" => 1 << 40,
        u => return Err(format!("unknown unit `{u}` (use B, KiB, MiB, GiB, TiB)")),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 64GiB, 512MiB)"))?;
    let bytes = v * mult as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < 2f64.powi(63)) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(bytes as u64)
}

/// A size in MiB: a bare number is MiB (the flag's old meaning), a unit converts.
fn parse_mib(s: &str) -> Result<u64, String> {
    if s.trim().chars().all(|c| c.is_ascii_digit()) {
        let v: u64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is too large"))?;
        return v
            .checked_mul(1 << 20)
            .ok_or_else(|| format!("`{s}` MiB is too large"));
    }
    parse_bytes(s)
}

fn parse_kernel(s: &str) -> Result<KernelVersion, String> {
    KernelVersion::parse(s).map_err(|e| e.to_string())
}

/// A command-line failure: a message for stderr.
#[derive(Debug)]
struct CliError(String);

impl From<scalrand_shuffle::Error> for CliError {
    fn from(e: scalrand_shuffle::Error) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Best effort: nothing to do if stdout is closed.
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let msg = e.render().to_string();
            let msg = msg.strip_prefix("error: ").unwrap_or(&msg);
            eprint!("scalrand-shuffle: {msg}");
            return ExitCode::from(2);
        }
    };
    let res = match cli.command {
        Command::Simulate(a) => simulate(a),
        Command::Bias(a) => bias(a),
        Command::Plot(a) => plot(a),
        Command::Calibrate(a) => calibrate(a),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(msg)) => {
            eprintln!("scalrand-shuffle: {msg}");
            ExitCode::from(2)
        }
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

fn build_config(a: &SimulateArgs) -> Result<ExperimentConfig, CliError> {
    let mut cfg = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError(format!("--config {}: {e}", path.display())))?;
            serde_json::from_str(&text)
                .map_err(|e| CliError(format!("--config {}: {e}", path.display())))?
        }
        None => presets::preset(&a.preset)?,
    };
    if let Some(v) = a.cache_mib {
        cfg.cache_bytes = v;
    }
    if let Some(v) = a.cache_bytes {
        cfg.cache_bytes = v;
    }
    if let Some(v) = a.zone_mib {
        cfg.zone_pages = v / PAGE_SIZE;
        cfg.aging = default_aging(cfg.zone_pages);
        if cfg.server.is_some() {
            cfg.server = Some(ServerSpec::for_zone(cfg.zone_pages));
        }
    }
    if let Some(m) = a.cache_mode {
        cfg.cache_mode = match m {
            CacheModeArg::Page => CacheMode::PageColour,
            CacheModeArg::Line => CacheMode::Line,
        };
    }
    if let Some(o) = a.order {
        cfg.shuffle_order = o;
    }
    if let Some(m) = a.mode {
        cfg.shuffle_mode = match m {
            ModeArg::Kernel => ShuffleMode::Kernel,
            ModeArg::FisherYates => ShuffleMode::FisherYates,
        };
    }
    if a.no_pick_tail {
        cfg.pick_tail = false;
    }
    if let Some(k) = a.kernel {
        cfg.kernel = k;
    }
    if let Some(g) = a.aging {
        cfg.server = match g {
            AgingArg::Server => Some(ServerSpec::for_zone(cfg.zone_pages)),
            AgingArg::Synthetic => None,
        };
        cfg.pcp = cfg.server.is_some();
    }
    if a.no_pcp {
        cfg.pcp = false;
    }
    if let Some(r) = a.rounds {
        cfg.aging_rounds = r;
    }
    if let Some(s) = &a.seeds {
        cfg.seeds = s.clone();
    }
    let cache_pages = cfg.cache_bytes / PAGE_SIZE;
    let acc = a.accesses.unwrap_or(match &cfg.workload {
        Workload::Heap(h) => h.accesses,
        Workload::TwoInstance(t) => t.accesses,
        Workload::Stream(_) => 1 << 20,
    });
    let kind = a.workload.unwrap_or(match cfg.workload {
        Workload::Heap(_) => WorkloadArg::Heap,
        Workload::Stream(_) => WorkloadArg::Stream,
        Workload::TwoInstance(_) => WorkloadArg::TwoInstance,
    });
    // The workload follows the cache size (a config file's workload is kept unless a size,
    // the workload or the accesses were given).
    let resize = a.config.is_none()
        || a.workload.is_some()
        || a.accesses.is_some()
        || a.cache_mib.is_some()
        || a.cache_bytes.is_some();
    if resize {
        cfg.workload = match kind {
            WorkloadArg::Heap => Workload::Heap(heap_for(cache_pages, acc)),
            WorkloadArg::Stream => Workload::Stream(StreamSpec {
                array_pages: cache_pages / 2,
                sweeps: 4,
            }),
            WorkloadArg::TwoInstance => Workload::TwoInstance(TwoInstanceSpec {
                pages: cache_pages / 2,
                accesses: acc,
                warmup: acc / 4,
            }),
        };
    }
    Ok(cfg)
}

/// The `--json` report of `simulate` (the field names the README documents).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct SimulateReport {
    preset: String,
    kernel: KernelVersion,
    aging: String,
    pcp: bool,
    workload: String,
    zone_pages: u64,
    cache_bytes: u64,
    cache_mode: String,
    shuffle_order: u8,
    shuffle_mode: String,
    pick_tail: bool,
    aging_rounds: u32,
    seeds: usize,
    #[serde(default)]
    page_ops: u64,
    first_run: Pair,
    aged: Pair,
    curve: CurveReport,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Pair {
    in_order: f64,
    shuffled: f64,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct CurveReport {
    in_order: Vec<f64>,
    shuffled: Vec<f64>,
    in_order_min: Vec<f64>,
    in_order_max: Vec<f64>,
    shuffled_min: Vec<f64>,
    shuffled_max: Vec<f64>,
    in_order_sd: Vec<f64>,
    shuffled_sd: Vec<f64>,
}

fn report(preset: &str, cfg: &ExperimentConfig, r: &ExperimentResult) -> SimulateReport {
    SimulateReport {
        preset: preset.to_string(),
        kernel: cfg.kernel,
        aging: if cfg.server.is_some() {
            "server"
        } else {
            "synthetic"
        }
        .to_string(),
        pcp: cfg.pcp,
        workload: workload_name(&cfg.workload).to_string(),
        zone_pages: cfg.zone_pages,
        cache_bytes: cfg.cache_bytes,
        cache_mode: match cfg.cache_mode {
            CacheMode::Line => "line",
            CacheMode::PageColour => "page",
        }
        .to_string(),
        shuffle_order: cfg.shuffle_order,
        shuffle_mode: mode_name(cfg.shuffle_mode).to_string(),
        pick_tail: cfg.pick_tail,
        aging_rounds: cfg.aging_rounds,
        seeds: r.seeds,
        page_ops: r.page_ops,
        first_run: Pair {
            in_order: r.in_order.first_run(),
            shuffled: r.shuffled.first_run(),
        },
        aged: Pair {
            in_order: r.in_order.aged(),
            shuffled: r.shuffled.aged(),
        },
        curve: CurveReport {
            in_order: r.in_order.mean.clone(),
            shuffled: r.shuffled.mean.clone(),
            in_order_min: r.in_order.min.clone(),
            in_order_max: r.in_order.max.clone(),
            shuffled_min: r.shuffled.min.clone(),
            shuffled_max: r.shuffled.max.clone(),
            in_order_sd: r.in_order.sd.clone(),
            shuffled_sd: r.shuffled.sd.clone(),
        },
    }
}

fn calibrate(a: CalibrateArgs) -> Result<(), CliError> {
    let cfg = CalibrateConfig {
        scale: a.scale,
        bandwidth: BandwidthModel {
            near_gbps: a.near_gbps,
            far_gbps: a.far_gbps,
        },
        seeds: a.seeds,
        aging_rounds: a.rounds,
        sweeps: a.sweeps,
        kernel: a.kernel,
    };
    cfg.validate()?;
    let target = if a.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(cfg.seeds.len() as u64 * 7), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    let res = run_calibrate::<Xoroshiro128PlusPlus>(&cfg, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    let r = res?;
    if a.json {
        let text = serde_json::to_string(&r).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    let k = &r.knl_stream;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    println!(
        "bandwidth model: near {} GB/s, far {} GB/s; scale 1/{} ({:.2} GiB zone, {:.2} GiB cache), {} seeds (medians)",
        cfg.bandwidth.near_gbps,
        cfg.bandwidth.far_gbps,
        cfg.scale,
        gib(k.zone_bytes),
        gib(k.cache_bytes),
        cfg.seeds.len()
    );
    println!(
        "KNL STREAM   fresh: miss {:.3} -> {:.0} GB/s (published {:.0})   aged: miss {:.3} -> {:.0} GB/s (published {:.0})",
        k.fresh_miss_ratio,
        k.fresh_gbps,
        k.target_fresh_gbps,
        k.aged_miss_ratio,
        k.aged_gbps,
        k.target_aged_gbps
    );
    let al = &r.aliasing;
    println!(
        "aliasing     in-order: miss {:.3} -> {:.0} GB/s   shuffled: miss {:.3} -> {:.0} GB/s ({:.2}x)   zonesort: miss {:.3} -> {:.0} GB/s",
        al.in_order_miss_ratio,
        al.in_order_gbps,
        al.shuffled_miss_ratio,
        al.shuffled_gbps,
        al.shuffle_speedup,
        al.zonesort_miss_ratio,
        al.zonesort_gbps
    );
    for pt in &al.smaller_instances {
        println!(
            "  instances of {:.3} of the cache: in-order {:.0}, shuffled {:.0} GB/s ({:.2}x), zonesort {:.0} GB/s",
            pt.instance_pages as f64 / (k.cache_bytes / scalrand_shuffle::PAGE_SIZE) as f64,
            pt.in_order_gbps,
            pt.shuffled_gbps,
            pt.shuffle_speedup,
            pt.zonesort_gbps
        );
    }
    let pct = |x: f64| x * 100.0;
    for (name, p) in [
        ("in-order", &r.jvm.in_order),
        ("shuffle", &r.jvm.shuffle),
        ("zonesort", &r.jvm.zonesort),
    ] {
        println!(
            "JVM {name:<9} conflict rate  fresh: {:.2}% (p10 {:.2}, p90 {:.2})   aged: {:.2}% (p10 {:.2}, p90 {:.2})",
            pct(p.fresh.median),
            pct(p.fresh.p10),
            pct(p.fresh.p90),
            pct(p.aged.median),
            pct(p.aged.p10),
            pct(p.aged.p90)
        );
    }
    Ok(())
}

fn simulate(a: SimulateArgs) -> Result<(), CliError> {
    let cfg = build_config(&a)?;
    if a.dump_config {
        let text = serde_json::to_string_pretty(&cfg).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    cfg.validate()?;
    let total = 2 * cfg.seeds.len() as u64 * (u64::from(cfg.aging_rounds) + 1);
    // indicatif's stderr target draws nothing when stderr is not a terminal.
    let target = if a.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} measurements, {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    let res = run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    let res = res?;
    let preset = if a.config.is_some() {
        "config"
    } else {
        a.preset.as_str()
    };
    let rep = report(preset, &cfg, &res);
    write_plots(&rep, &res, a.svg.as_deref(), a.png.as_deref())?;
    if a.json {
        let text = serde_json::to_string(&rep).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
    } else {
        print_table(preset, &cfg, &res);
        for p in [&a.svg, &a.png].into_iter().flatten() {
            println!("plot written to {}", p.display());
        }
    }
    Ok(())
}

fn plot_title(r: &SimulateReport) -> String {
    format!(
        "conflict rate vs aging: {} {} workload, {} aging, kernel {} rules, {} seeds",
        r.preset,
        r.workload,
        r.aging,
        r.kernel.name(),
        r.seeds
    )
}

fn write_plots(
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
        draw(&root, &title, res).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = png {
        let root = BitMapBackend::new(path, (800, 480)).into_drawing_area();
        draw(&root, &title, res).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

fn plot(a: PlotArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&a.report)
        .map_err(|e| CliError(format!("--report {}: {e}", a.report.display())))?;
    let rep: SimulateReport = serde_json::from_str(&text)
        .map_err(|e| CliError(format!("--report {}: {e}", a.report.display())))?;
    if a.svg.is_none() && a.png.is_none() {
        return Err(CliError(
            "plot: give --svg PATH and/or --png PATH".to_string(),
        ));
    }
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
fn register_font() -> Result<(), CliError> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| CliError("the bundled DejaVu Sans font did not load".to_string()))
}

/// One drawing for both backends: mean lines with min–max bands over seeds.
fn draw<DB: DrawingBackend>(
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
        let cell = |c: &Curve| format!("{} ± {:.2}", pct(c.mean[i]), 100.0 * c.sd[i]);
        println!(
            "{label:>12} {:>18} {:>18}",
            cell(&r.in_order),
            cell(&r.shuffled)
        );
    }
    println!(
        "summary: first run {} in-order / {} shuffled; aged {} in-order / {} shuffled (Linux e900a918b098 on hardware: 8% / 21% / 11%)",
        pct(r.in_order.first_run()).trim(),
        pct(r.shuffled.first_run()).trim(),
        pct(r.in_order.aged()).trim(),
        pct(r.shuffled.aged()).trim()
    );
    println!("simulated page allocations + frees: {}", r.page_ops);
}

/// The `--json` report of `bias`.
#[derive(Debug, Serialize)]
struct BiasJson<'a> {
    mode: &'static str,
    blocks: usize,
    trials: u64,
    chi2: f64,
    df: u64,
    chi2_p: f64,
    fixed_point_rate: f64,
    uniform_fixed_point_rate: f64,
    max_rel_dev: f64,
    counts: &'a [Vec<u64>],
}

fn bias(a: BiasArgs) -> Result<(), CliError> {
    let mode = match a.mode {
        ModeArg::Kernel => ShuffleMode::Kernel,
        ModeArg::FisherYates => ShuffleMode::FisherYates,
    };
    let r = measure_bias(
        mode,
        scalrand_shuffle::SHUFFLE_ORDER,
        a.blocks,
        a.trials,
        Xoroshiro128PlusPlus::seed_from_u64(a.seed),
    )?;
    if a.json {
        let j = BiasJson {
            mode: mode_name(mode),
            blocks: r.blocks,
            trials: r.trials,
            chi2: r.chi2,
            df: r.df,
            chi2_p: r.chi2_p,
            fixed_point_rate: r.fixed_point_rate,
            uniform_fixed_point_rate: 1.0 / r.blocks as f64,
            max_rel_dev: r.max_rel_dev,
            counts: &r.counts,
        };
        println!(
            "{}",
            serde_json::to_string(&j).map_err(|e| CliError(e.to_string()))?
        );
    } else {
        print_bias(mode, &r);
    }
    Ok(())
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
