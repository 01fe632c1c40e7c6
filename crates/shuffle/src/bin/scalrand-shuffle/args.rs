//! Command-line arguments: the subcommands' flags (clap derive) and the size and version parsers.

use std::format;
use std::path::PathBuf;
use std::string::{String, ToString};
use std::vec::Vec;

use clap::{Args, ValueEnum};
use scalrand_shuffle::bias::MAX_BIAS_BLOCKS;
use scalrand_shuffle::calibrate::MAX_SCALE;
use scalrand_shuffle::presets::PRESETS;
use scalrand_shuffle::{BandwidthModel, KernelVersion};

pub(crate) const EXAMPLES: &str = "Examples:
  scalrand-shuffle simulate                                   # preset server: 64 GiB zone, 8 GiB cache
  scalrand-shuffle simulate --preset server --kernel 5.4 --svg plot.svg --png plot.png
  scalrand-shuffle simulate --preset server-small --seeds 1,2,3 --json
  scalrand-shuffle simulate --preset java --zone-mib 1GiB --cache-mib 128MiB --order 0
  scalrand-shuffle simulate --config experiment.json --json   # an ExperimentConfig as JSON
  scalrand-shuffle bias --mode kernel --blocks 8 --trials 200000 --json
  scalrand-shuffle plot --report run.json --svg docs/shuffle.svg --png docs/shuffle.png
  scalrand-shuffle calibrate --json --jobs 2                  # KNL STREAM, aliasing, JVM at 1/16 size on 2 threads
  scalrand-shuffle calibrate --scale 1 --near-gbps 450 --far-gbps 90";

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// Divide every size by this power of two, 1 to 1024 (1 = full size: 96 GiB zone, 16 GiB
    /// cache).
    #[arg(long, default_value_t = 16, value_parser = parse_scale, allow_hyphen_values = true)]
    pub(crate) scale: u64,
    /// Near-memory (cache) bandwidth, GB/s.
    #[arg(long, default_value_t = BandwidthModel::KNL.near_gbps, value_parser = parse_gbps, allow_hyphen_values = true)]
    pub(crate) near_gbps: f64,
    /// Far-memory bandwidth, GB/s (at most --near-gbps).
    #[arg(long, default_value_t = BandwidthModel::KNL.far_gbps, value_parser = parse_gbps, allow_hyphen_values = true)]
    pub(crate) far_gbps: f64,
    /// Seeds, comma-separated, each once (one aging history each; figures are medians).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        default_value = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
        value_parser = parse_u64,
        allow_hyphen_values = true
    )]
    pub(crate) seeds: Vec<u64>,
    /// Server aging rounds before the aged STREAM run, 1 or more.
    #[arg(long, default_value_t = 4, value_parser = parse_count_u32, allow_hyphen_values = true)]
    pub(crate) rounds: u32,
    /// STREAM passes measured (after one warm pass), 1 or more.
    #[arg(long, default_value_t = 3, value_parser = parse_count_u32, allow_hyphen_values = true)]
    pub(crate) sweeps: u32,
    /// Kernel whose rules apply: a release from 5.2 (5.2 – 5.19, 6.0 – 6.19).
    #[arg(long, value_name = "VERSION", value_parser = parse_kernel, default_value = "5.10")]
    pub(crate) kernel: KernelVersion,
    /// JVM case: shares of the accesses to eden, the survivor space, the hot old part, the
    /// cold old bulk and the miss floor, comma-separated, summing to 1 (an assumption: no
    /// public source).
    #[arg(
        long,
        value_name = "E,S,H,C,F",
        value_delimiter = ',',
        num_args = 1,
        default_value = "0.5,0.05,0.4,0.05,0",
        value_parser = parse_share,
        allow_hyphen_values = true
    )]
    pub(crate) jvm_shares: Vec<f64>,
    /// JVM case: size of the hot part of the old generation, as a fraction of the cache: above 0
    /// and at most 2, the old generation (an assumption: no public source).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.125, value_parser = parse_hot_old, allow_hyphen_values = true)]
    pub(crate) jvm_hot_old: f64,
    /// Threads the seeds run on (default: one per core; 1 runs them one after another). The
    /// results are the same for any number.
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::jobs::parse_jobs, allow_hyphen_values = true)]
    pub(crate) jobs: Option<usize>,
    /// JSON report on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar and no estimate.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Run even when the estimate is over the command's cap.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PlotArgs {
    /// A report written by `simulate --json`.
    #[arg(long, value_name = "PATH")]
    pub(crate) report: PathBuf,
    /// Write the plot as SVG.
    #[arg(long, value_name = "PATH")]
    pub(crate) svg: Option<PathBuf>,
    /// Write the plot as PNG (same drawing).
    #[arg(long, value_name = "PATH")]
    pub(crate) png: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum WorkloadArg {
    Heap,
    Stream,
    TwoInstance,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CacheModeArg {
    /// One set per 4 KiB page colour (fast).
    Page,
    /// One set per 64-byte line.
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// The kernel's `__shuffle_zone`, bias included.
    Kernel,
    /// An unbiased Fisher–Yates permutation.
    #[value(alias = "fy")]
    FisherYates,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgingArg {
    /// Page cache + reclaim, processes, per-CPU lists.
    Server,
    /// Mixed-order synthetic churn.
    Synthetic,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// Named experiment.
    #[arg(long, default_value = "server", value_parser = preset_values())]
    pub(crate) preset: String,
    /// Start from an ExperimentConfig in JSON (as `--dump-config` prints); flags override it.
    #[arg(long, value_name = "PATH", conflicts_with = "preset")]
    pub(crate) config: Option<PathBuf>,
    /// Print the resolved ExperimentConfig as JSON and exit.
    #[arg(long)]
    pub(crate) dump_config: bool,
    /// Measured workload (default: the preset's).
    #[arg(long, value_enum)]
    pub(crate) workload: Option<WorkloadArg>,
    /// Zone size: a plain number of MiB (0.5 is 512 KiB), or a size with a binary unit: 64GiB,
    /// 64G, 512MiB, 512M (B, K/KiB, M/MiB, G/GiB, T/TiB); decimal units (KB, MB, GB, TB) are
    /// refused. A whole number of 4 KiB pages.
    #[arg(long, value_name = "SIZE", value_parser = parse_mib, allow_hyphen_values = true)]
    pub(crate) zone_mib: Option<u64>,
    /// Cache size: a plain number of MiB, or a size with a binary unit: 8GiB, 8G, 64MiB, 64M;
    /// decimal units (KB, MB, GB, TB) are refused.
    #[arg(long, value_name = "SIZE", value_parser = parse_mib, conflicts_with = "cache_bytes", allow_hyphen_values = true)]
    pub(crate) cache_mib: Option<u64>,
    /// Cache size: a plain number of bytes, or a size with a binary unit: 64KiB, 64K; decimal
    /// units (KB, MB, GB, TB) are refused.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes, allow_hyphen_values = true)]
    pub(crate) cache_bytes: Option<u64>,
    /// Cache model granularity.
    #[arg(long, value_enum)]
    pub(crate) cache_mode: Option<CacheModeArg>,
    /// Shuffle order (0..=10; the kernel's is 10).
    #[arg(long, value_parser = parse_order, allow_hyphen_values = true)]
    pub(crate) order: Option<u8>,
    /// Shuffle used in the shuffled runs.
    #[arg(long, value_enum)]
    pub(crate) mode: Option<ModeArg>,
    /// No coin for frees at the shuffle order.
    #[arg(long)]
    pub(crate) no_pick_tail: bool,
    /// Kernel whose rules apply: a release from 5.2 (5.2 – 5.19, 6.0 – 6.19; 5.2–5.6, 5.7–5.9,
    /// 5.10+ differ).
    #[arg(long, value_name = "VERSION", value_parser = parse_kernel)]
    pub(crate) kernel: Option<KernelVersion>,
    /// Aging between measurements (default: the preset's).
    #[arg(long, value_enum)]
    pub(crate) aging: Option<AgingArg>,
    /// No per-CPU page lists.
    #[arg(long)]
    pub(crate) no_pcp: bool,
    /// Aging rounds, 1 or more (the first run after boot is measured before them; the aged
    /// figures are the last round's).
    #[arg(long, value_parser = parse_count_u32, allow_hyphen_values = true)]
    pub(crate) rounds: Option<u32>,
    /// Server aging: compact the zone after every N rounds (default: never).
    #[arg(long, value_name = "N", value_parser = parse_compact_every, allow_hyphen_values = true)]
    pub(crate) compact_every: Option<u32>,
    /// Seeds, comma-separated, each once.
    #[arg(long, value_delimiter = ',', num_args = 1, value_parser = parse_u64, allow_hyphen_values = true)]
    pub(crate) seeds: Option<Vec<u64>>,
    /// Measured accesses per run, 1 or more (a whole number; 1e6 is read as 1000000). The heap
    /// and two-instance workloads only: the stream workload sweeps its arrays instead.
    #[arg(long, value_parser = parse_count, allow_hyphen_values = true)]
    pub(crate) accesses: Option<u64>,
    /// Write the plot as SVG.
    #[arg(long, value_name = "PATH")]
    pub(crate) svg: Option<PathBuf>,
    /// Write the plot as PNG (same drawing).
    #[arg(long, value_name = "PATH")]
    pub(crate) png: Option<PathBuf>,
    /// Threads the seeds run on (default: one per core; 1 runs them one after another). The
    /// results are the same for any number.
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::jobs::parse_jobs, allow_hyphen_values = true)]
    pub(crate) jobs: Option<usize>,
    /// JSON report on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar and no estimate.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Run even when the estimate is over the command's cap.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct BiasArgs {
    /// Shuffle to measure.
    #[arg(long, value_enum, default_value = "kernel")]
    pub(crate) mode: ModeArg,
    /// Order-10 blocks in the zone, 2 to 65536.
    #[arg(long, default_value_t = 8, value_parser = parse_blocks, allow_hyphen_values = true)]
    pub(crate) blocks: usize,
    /// Shuffles run, 1 or more (a whole number; 1e6 is read as 1000000).
    #[arg(long, default_value_t = 200_000, value_parser = parse_count, allow_hyphen_values = true)]
    pub(crate) trials: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 1, value_parser = parse_u64, allow_hyphen_values = true)]
    pub(crate) seed: u64,
    /// JSON report on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress bar and no estimate.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Run even when the estimate is over the command's cap.
    #[arg(long)]
    pub(crate) force: bool,
}

/// The presets with a line each for `--help` (the names are the library's [`PRESETS`]).
fn preset_values() -> clap::builder::PossibleValuesParser {
    let help = |name: &str| match name {
        "server" => {
            "a 64 GiB zone, 8 GiB cache, Java-like heap, kernel shuffle at order 10, aged as a server (8 rounds, 5 seeds)"
        }
        "server-small" => "the server preset at 1/16 the size, for quick runs",
        "java" => {
            "a 512 MiB zone and 64 MiB cache, Java-like heap, shuffled at order 0, synthetic aging"
        }
        "java-order10" => "the java preset shuffled at the kernel's order 10",
        "stream" => "the java preset with STREAM-like sweeps over arrays half the cache",
        "two-instance" => "two instances in two cache-sized nodes whose bases alias in the cache",
        "tiny" => "a 32 MiB zone and 4 MiB cache, 3 rounds, 2 seeds: for tests",
        _ => "",
    };
    clap::builder::PossibleValuesParser::new(
        PRESETS.map(|n| clap::builder::PossibleValue::new(n).help(help(n))),
    )
}

/// A size: a number, whole or with a fraction, and a binary unit (`K`/`KiB`, `M`/`MiB`,
/// `G`/`GiB`, `T`/`TiB`, `B`) or none, which is `plain` (a number of bytes or of MiB). A
/// decimal unit (`KB`, `MB`, `GB`, `TB`) is refused rather than read as its binary neighbour,
/// and so is a size that is not a whole number of bytes.
fn size(s: &str, plain: Plain) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("`{s}` is negative: a size is 0 or more"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" => plain.bytes(),
        "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        d @ ("kb" | "mb" | "gb" | "tb") => {
            let binary = format!("{}iB", d[..1].to_ascii_uppercase());
            return Err(format!(
                "`{unit}` is a decimal unit, and sizes here are binary: give {binary} or {}, \
                 or a plain number of {}",
                &binary[..1],
                plain.name()
            ));
        }
        _ => {
            return Err(format!(
                "unknown unit `{unit}` (use B, KiB, MiB, GiB, TiB; K, M, G, T for short)"
            ));
        }
    };
    let too_large = || format!("`{s}` is out of range");
    if !num.is_empty() && num.chars().all(|c| c.is_ascii_digit()) {
        let n: u64 = num.parse().map_err(|_| too_large())?;
        return n
            .checked_mul(mult)
            .filter(|&b| b < 1 << 63)
            .ok_or_else(too_large);
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 64GiB, 512MiB)"))?;
    let bytes = v * mult as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < 2f64.powi(63)) {
        return Err(too_large());
    }
    if bytes.fract() != 0.0 {
        return Err(format!("`{s}` is not a whole number of bytes ({bytes} B)"));
    }
    Ok(bytes as u64)
}

/// What a size without a unit counts.
#[derive(Clone, Copy)]
enum Plain {
    Bytes,
    Mib,
}

impl Plain {
    fn bytes(self) -> u64 {
        match self {
            Plain::Bytes => 1,
            Plain::Mib => 1 << 20,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Plain::Bytes => "bytes",
            Plain::Mib => "MiB",
        }
    }
}

/// `--cache-bytes`: a size in bytes, `64KiB`, `1.5MiB`, or a plain number of bytes.
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    size(s, Plain::Bytes)
}

/// `--zone-mib`, `--cache-mib`: a size in bytes, `64GiB`, `512M`, or a plain number of MiB
/// (`0.5` is 512 KiB).
pub(crate) fn parse_mib(s: &str) -> Result<u64, String> {
    size(s, Plain::Mib)
}

/// `--compact-every N`: a whole number of rounds, 1 or more.
pub(crate) fn parse_compact_every(s: &str) -> Result<u32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if (1..=i64::from(u32::MAX)).contains(&n) => Ok(n as u32),
        Ok(n) if n < 1 => Err(format!(
            "`{s}` rounds cannot space anything: --compact-every is a number of rounds, 1 or more"
        )),
        Ok(_) => Err(format!("`{s}` is more than {} rounds", u32::MAX)),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: --compact-every is a number of rounds, 1 or more"
        )),
    }
}

/// The first seed given more than once: each seed is one run, so a repeat would count one
/// history twice.
pub(crate) fn repeated_seed(seeds: &[u64]) -> Option<u64> {
    let mut seen = std::collections::BTreeSet::new();
    seeds.iter().copied().find(|&s| !seen.insert(s))
}

pub(crate) fn parse_kernel(s: &str) -> Result<KernelVersion, String> {
    KernelVersion::parse(s).map_err(|e| e.to_string())
}

/// A whole number from `min` to `max`; `1e6`-style powers of ten are read. A negative number,
/// text, and a value below `min` or above `max` are each refused with what they are (clap's
/// message names the flag).
fn whole(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let t = s.trim();
    let too_small = || format!("must be at least {min}, got {t}");
    if t.strip_prefix('-').is_some_and(|n| number(n).is_ok()) {
        return Err(too_small());
    }
    let not_whole = || format!("`{t}` is not a whole number (e.g. 1000 or 1e6)");
    let too_large = || format!("`{t}` is more than {max}, the most this flag takes");
    let digits = |d: &str| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit());
    let (mantissa, exponent) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (t, None),
    };
    if !digits(mantissa) || exponent.is_some_and(|e| !digits(e)) {
        return Err(not_whole());
    }
    let mut n: u64 = mantissa.parse().map_err(|_| too_large())?;
    if let Some(e) = exponent {
        let e: u32 = e.parse().map_err(|_| too_large())?;
        if n != 0 {
            let scale = 10u64.checked_pow(e).ok_or_else(too_large)?;
            n = n.checked_mul(scale).ok_or_else(too_large)?;
        }
    }
    if n < min {
        return Err(too_small());
    }
    if n > max {
        return Err(too_large());
    }
    Ok(n)
}

/// A whole number flag of 64 bits, 0 or more (`--seeds`, `--seed`).
pub(crate) fn parse_u64(s: &str) -> Result<u64, String> {
    whole(s, 0, u64::MAX)
}

/// A count of 64 bits, 1 or more (`--accesses`, `--trials`).
pub(crate) fn parse_count(s: &str) -> Result<u64, String> {
    whole(s, 1, u64::MAX)
}

/// A count of 32 bits, 1 or more (`--rounds`, `--sweeps`).
pub(crate) fn parse_count_u32(s: &str) -> Result<u32, String> {
    let n = whole(s, 1, u64::from(u32::MAX))?;
    u32::try_from(n).map_err(|_| format!("`{s}` does not fit in 32 bits"))
}

/// `--blocks`: 2 to [`MAX_BIAS_BLOCKS`].
pub(crate) fn parse_blocks(s: &str) -> Result<usize, String> {
    let n = whole(s, 2, MAX_BIAS_BLOCKS as u64)?;
    usize::try_from(n).map_err(|_| format!("`{s}` does not fit in a machine word"))
}

/// `--scale`: a power of two from 1 to [`MAX_SCALE`].
pub(crate) fn parse_scale(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || format!("must be a power of two from 1 to {MAX_SCALE}, got {t}");
    if t.strip_prefix('-').is_some_and(|n| number(n).is_ok()) {
        return Err(bad());
    }
    match whole(s, 0, u64::MAX)? {
        n if n.is_power_of_two() && n <= MAX_SCALE => Ok(n),
        _ => Err(bad()),
    }
}

/// `--order`: 0 to the kernel's largest shuffle order, 10.
pub(crate) fn parse_order(s: &str) -> Result<u8, String> {
    let n = whole(s, 0, u64::from(scalrand_shuffle::MAX_ORDER))?;
    u8::try_from(n).map_err(|_| format!("`{s}` is not an order"))
}

/// A decimal number, or what the text is not.
fn number(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("`{}` is not a number", s.trim()))
}

/// `--near-gbps`, `--far-gbps`: a bandwidth above 0.
pub(crate) fn parse_gbps(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "must be a bandwidth above 0 (GB/s), got {}",
            s.trim()
        ))
    }
}

/// One of `--jvm-shares`: a share from 0 to 1.
pub(crate) fn parse_share(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("each share must be from 0 to 1, got {}", s.trim()))
    }
}

/// `--jvm-hot-old`: a fraction of the cache above 0 (its upper bound, the old generation's
/// size, is checked with the rest of the configuration).
pub(crate) fn parse_hot_old(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "the hot old part must be above 0 (a fraction of the cache), got {}",
            s.trim()
        ))
    }
}
