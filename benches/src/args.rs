//! The command line of the `scaling` harness and the checks the `scaling` and `stats` tools
//! make of their input, declared once.
//!
//! The tools parse their arguments with these declarations, and `cargo xtask` includes this
//! file (`#[path]`) and parses the same declarations *before* it builds the benchmark crates:
//! `cargo xtask scaling --help` answers at once, and a bad flag is refused before any build
//! or measurement. So this file uses only `clap` and `std`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Parser;

/// The most threads one `--threads` value may ask for. Each is a real OS thread, started
/// together for every point; far more than a machine's CPUs measures the scheduler, not the
/// generators (and 100,000 exhausts the process's memory maps before it starts).
pub const MAX_THREADS: usize = 1024;

/// Every row of the scaling harness by (group, name), in table order: what `--filter` picks
/// from. The rows are built in `rows/`; the names are here so that `cargo xtask scaling`
/// refuses a filter that matches none before it builds the harness (a test holds the two
/// lists equal; the vDSO rows exist on Linux only).
pub const ROWS: &[(&str, &str)] = &[
    ("fast u64", "scalrand::fast::u64(..)"),
    ("fast u64", "scalrand::fast::with (scoped, 1024 per call)"),
    ("fast u64", "PerCpuWyRand (&self)"),
    ("fast u64", "PerCpu<Xoroshiro128++> (&self)"),
    ("fast u64", "PerCpu<Xoroshiro128++> try-lock path"),
    ("fast u64", "Mutex<Xoroshiro128PlusPlus>"),
    ("fast u64", "thread-local rand_xoshiro"),
    ("fast u64", "fastrand::u64 (thread-local)"),
    ("fast u64", "thread-local rand SmallRng"),
    ("fortuna 4KiB", "scalrand Fortuna<AES> Concurrent"),
    ("fortuna 4KiB", "scalrand Fortuna<AES> Locked"),
    (
        "fortuna 4KiB",
        "raw AES-256-CTR (aes crate, key per thread)",
    ),
    (
        "fortuna ChaCha20 4KiB",
        "scalrand Fortuna<ChaCha20> Concurrent",
    ),
    ("fortuna ChaCha20 4KiB", "scalrand Fortuna<ChaCha20> Locked"),
    (
        "fortuna ChaCha20 4KiB",
        "raw ChaCha20 (chacha20 crate, key per thread)",
    ),
    ("crypto 32B", "scalrand NodePools (detected topology)"),
    ("crypto 32B", "scalrand::fill_bytes (crypto facade)"),
    (
        "crypto 32B",
        "scalrand NodePools, ChaCha12 output (with_rounds)",
    ),
    ("crypto 32B", "Mutex<ChaCha20Rng>"),
    ("crypto 32B", "rand ThreadRng (rand::rng())"),
    ("crypto 32B", "getrandom::fill"),
    ("crypto 32B", "vDSO getrandom (direct, Linux >= 6.11)"),
    (
        "crypto 32B",
        "raw ChaCha20 keystream per thread, 4 KiB buffer",
    ),
    (
        "crypto 32B",
        "raw ChaCha12 keystream per thread, 4 KiB buffer",
    ),
    (
        "crypto 32B",
        "raw ChaCha8 keystream per thread, 4 KiB buffer",
    ),
    (
        "crypto 32B",
        "scalrand::fill_bytes, AVX2 (AVX-512 set aside)",
    ),
    (
        "crypto 32B",
        "scalrand NodePools, ChaCha12 output, AVX2 (AVX-512 set aside)",
    ),
    ("crypto 4KiB", "scalrand NodePools (detected topology)"),
    ("crypto 4KiB", "scalrand::fill_bytes (crypto facade)"),
    (
        "crypto 4KiB",
        "scalrand NodePools, ChaCha12 output (with_rounds)",
    ),
    ("crypto 4KiB", "Mutex<ChaCha20Rng>"),
    ("crypto 4KiB", "rand ThreadRng (rand::rng())"),
    ("crypto 4KiB", "getrandom::fill"),
    ("crypto 4KiB", "vDSO getrandom (direct, Linux >= 6.11)"),
    ("crypto 4KiB", "raw ChaCha20 keystream per thread"),
    ("crypto 4KiB", "raw ChaCha12 keystream per thread"),
    ("crypto 4KiB", "raw ChaCha8 keystream per thread"),
    (
        "numa 4x4 explicit topology 32B",
        "NodePools, 4 nodes x 4 CPUs, thread i = CPU i",
    ),
    (
        "numa 4x4 explicit topology 32B",
        "one global lock (Mutex<ChaCha20Rng>)",
    ),
];

/// The generators the `stats` tool serves, by name, in `stats --list`'s order. They are
/// built in `sources.rs`; the names are here so that `cargo xtask stats` refuses an unknown
/// one before it builds the tool (a test holds the two lists equal).
pub const GENERATORS: &[&str] = &[
    "xoroshiro128plus",
    "xoroshiro128plus-low",
    "xoroshiro128plusplus",
    "xoroshiro128starstar",
    "percpu",
    "fast-threads",
    "fortuna-aes-concurrent",
    "fortuna-aes-locked",
    "fortuna-chacha-concurrent",
    "fortuna-chacha-locked",
    "nodepools",
    "crypto-threads",
];

/// Measurement length of the quick default run, in milliseconds.
pub const QUICK_DURATION_MS: u64 = 100;
/// Measurement length of a `--full` run, in milliseconds.
pub const FULL_DURATION_MS: u64 = 200;
/// Alternated processes per point, in either mode: single processes on a shared machine land
/// in one of two speed modes (about ±30%), so a figure is the median of many.
pub const DEFAULT_PROCESSES: u32 = 15;

const EXAMPLES: &str = "\
Examples:
  cargo xtask scaling                                  the headline rows at 1 thread and all
                                                       CPUs: about a minute, build included
  cargo xtask scaling --full                           every row at 1, 2, 4, ... all CPUs,
                                                       then 4x, 16x and 64x the CPUs
  cargo xtask scaling --threads 1,2,4 --filter crypto  the crypto rows at 1, 2 and 4 threads
  cargo xtask scaling --full --pin --out docs          refresh the committed tables and plots
  cargo xtask scaling --from docs/scaling.json --out target/replot
                                                       redraw a saved run without measuring
  cargo xtask scaling --from docs/scaling.json --png plot.png
                                                       the same, plus the headline PNG
  cargo xtask scaling --pin --filter 'fast u64'        worker i pinned to CPU i
  cargo xtask scaling --list                           every row, by group; [headline] marks
                                                       the rows of the default run";

/// Aggregate throughput of scalrand's generators and their baselines against thread count.
///
/// By default a quick run: the headline rows (scalrand::fill_bytes against rand::rng(), the
/// vDSO getrandom and getrandom::fill on 32-byte reads; scalrand::fast against fastrand) at
/// 1 thread and at all CPUs. `--full` measures every row at every thread count. Each point is
/// the median of several processes (`--repeat`), the order of the rows reversed in every
/// other one; each ratio is taken inside one process.
///
/// Writes scaling.md (the tables), scaling.json (the data), scaling.svg and scaling.png (the
/// headline figure) and scaling-groups.svg and scaling-groups.png (every group) into --out.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask scaling",
    bin_name = "cargo xtask scaling",
    version,
    after_help = EXAMPLES
)]
pub struct ScalingArgs {
    /// Every row at every thread count, 200 ms per measurement: the long run [default: the
    /// headline rows at 1 thread and all CPUs, 100 ms per measurement]
    #[arg(long)]
    pub full: bool,
    /// Thread counts to measure, comma-separated or repeated, each 1 to 1024 [default: 1 and
    /// all CPUs; with --full 1, 2, 4, ... up to all CPUs, then 4, 16 and 64 times the CPUs]
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = thread_count,
          allow_negative_numbers = true)]
    pub threads: Vec<usize>,
    /// Length of one measurement, in milliseconds (at least 1) [default: 100; with --full 200]
    #[arg(long, value_name = "MS",
          value_parser = at_least_one::<u64>("a duration in milliseconds"),
          allow_negative_numbers = true)]
    pub duration_ms: Option<u64>,
    /// Processes per point (at least 1), each measuring every point once, the order of the
    /// rows reversed in every other one; the median is reported, with the spread
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PROCESSES,
          value_parser = at_least_one::<u32>("a repeat count"), allow_negative_numbers = true)]
    pub repeat: u32,
    /// Only rows whose group or name contains TEXT (repeatable: any of them), chosen from
    /// every row, not only the headline ones
    #[arg(long, value_name = "TEXT")]
    pub filter: Vec<String>,
    /// Where scaling.{md,json,svg,png} and scaling-groups.{svg,png} go (`docs` refreshes the
    /// committed ones); checked before the run
    #[arg(long, value_name = "DIR", default_value = "target/scaling")]
    pub out: PathBuf,
    /// List every row (after --filter), `[headline]` marking the default run's, and exit
    #[arg(long)]
    pub list: bool,
    /// Print the report as JSON on stdout instead of the tables
    #[arg(long)]
    pub json: bool,
    /// Redraw the tables and plots of a saved run (a scaling.json) instead of measuring
    #[arg(long, value_name = "FILE", conflicts_with_all = ["threads", "list", "full"])]
    pub from: Option<PathBuf>,
    /// Pin worker thread i to CPU i (mod the CPU count) while it measures: steadier figures
    /// for the per-CPU generators on a shared machine, and the thread-per-core case
    #[arg(long)]
    pub pin: bool,
    /// Also draw the headline figure as SVG at PATH (the same drawing as --out's scaling.svg)
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Also draw the headline figure as PNG at PATH (the same drawing as --out's scaling.png)
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,
    /// No progress bar and no per-process or per-point lines on stderr
    #[arg(long, short)]
    pub quiet: bool,
    /// Internal: measure these rows (indices into every row) once, in this process, and print
    /// the figures as JSON; the harness starts itself so for every process
    #[arg(long, value_name = "I,I,...", value_delimiter = ',', hide = true,
          value_parser = row_index, allow_negative_numbers = true,
          conflicts_with_all = ["from", "list", "full"])]
    pub child_rows: Vec<usize>,
    /// Internal: with --child-rows, measure the points in reverse order
    #[arg(long, hide = true, requires = "child_rows")]
    pub child_reverse: bool,
}

/// An index into every row, as the harness passes to the processes it starts.
///
/// # Errors
/// A message for a negative number, text, or an index that does not fit in `usize`.
pub fn row_index(s: &str) -> Result<usize, String> {
    let n = whole(s, "a row index")?;
    usize::try_from(n).map_err(|_| format!("{n} is too large for a row index"))
}

impl ScalingArgs {
    /// The length of one measurement: `--duration-ms`, else the mode's default.
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms.unwrap_or(if self.full {
            FULL_DURATION_MS
        } else {
            QUICK_DURATION_MS
        })
    }

    /// Refuses a `--filter` that matches no row's group or name ([`ROWS`]), before anything
    /// is measured (and, from xtask, before anything is built).
    ///
    /// # Errors
    /// A message naming the filter that matches nothing.
    pub fn check_filter(&self) -> Result<(), String> {
        for f in &self.filter {
            let f = f.as_str();
            if !ROWS.iter().any(|(g, n)| g.contains(f) || n.contains(f)) {
                return Err(format!(
                    "--filter {f:?} matches no row's group or name; `cargo xtask scaling \
                     --list` shows the rows"
                ));
            }
        }
        Ok(())
    }

    /// Checks that the run's outputs can be written, before anything is measured (and, from
    /// xtask, before anything is built). `--out` is created if it is missing.
    ///
    /// # Errors
    /// A message naming the flag and the path that cannot be written.
    pub fn check_outputs(&self) -> Result<(), String> {
        if self.list || !self.child_rows.is_empty() {
            return Ok(());
        }
        writable_dir("--out", &self.out)?;
        for (flag, path) in [("--svg", &self.svg), ("--png", &self.png)] {
            if let Some(p) = path {
                writable_file(flag, p)?;
            }
        }
        Ok(())
    }
}

/// `n` if `s` is a whole number from 0 to `u64::MAX`, or a message that says what is wrong
/// with it, naming a negative number as such.
fn whole(s: &str, what: &str) -> Result<u64, String> {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix('-')
        && !rest.is_empty()
        && rest.chars().all(|c| c.is_ascii_digit())
    {
        return Err(format!("{t} is negative: {what} is a whole number"));
    }
    t.parse::<u64>()
        .map_err(|_| format!("{s:?} is not {what}: expected a whole number like 4"))
}

/// One thread count: a whole number from 1 to [`MAX_THREADS`] (`--threads 1,2,4` splits on
/// commas first).
///
/// # Errors
/// A message for 0, a negative number, a count over [`MAX_THREADS`] or text.
pub fn thread_count(s: &str) -> Result<usize, String> {
    let n = whole(s, "a thread count")?;
    if n == 0 {
        return Err("a thread count is at least 1".to_owned());
    }
    match usize::try_from(n) {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        _ => Err(format!(
            "{n} threads is more than the {MAX_THREADS} the harness starts at most"
        )),
    }
}

/// A value parser for a whole number of at least 1, named `what` in its messages.
pub fn at_least_one<T>(what: &'static str) -> impl Fn(&str) -> Result<T, String> + Clone
where
    T: TryFrom<u64>,
{
    move |s| {
        let n = whole(s, what)?;
        if n == 0 {
            return Err(format!("0 is not {what}: it is at least 1"));
        }
        T::try_from(n).map_err(|_| format!("{n} is too large for {what}"))
    }
}

/// A seed: a whole number from 0 to 2^64 - 1.
///
/// # Errors
/// A message for a negative number or text.
pub fn seed(s: &str) -> Result<u64, String> {
    whole(s, "a seed")
}

/// A byte count: a whole number with an optional binary suffix, `4096`, `64KiB`, `8MiB`,
/// `1GiB` (`K`, `M`, `G` and `T` alone mean the same; a trailing `B` is allowed).
///
/// # Errors
/// A message for a negative number, an unknown suffix, text, or a size over 64 bits.
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("{t} is negative: a size is 0 or more bytes"));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size: expected a number like 4096 or 8MiB"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "unknown size suffix {other:?}: use KiB, MiB, GiB or TiB"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} does not fit in 64 bits"))
}

/// Refuses to write a generator's raw bytes to a terminal: they are binary, endless by
/// default, and garble it. `raw` is whether the command would write raw bytes to stdout.
///
/// # Errors
/// The message that says what to do instead.
pub fn refuse_terminal(raw: bool, stdout_is_terminal: bool) -> Result<(), String> {
    if raw && stdout_is_terminal {
        return Err(
            "stdout is a terminal, and GEN writes raw binary there: redirect it \
                    (> out.bin), pipe it (| dieharder -g 200 -a), or add --smoke for the \
                    quick scores"
                .to_owned(),
        );
    }
    Ok(())
}

/// `dir` exists or can be created, is a directory, and takes a new file.
fn writable_dir(flag: &str, dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{flag} {}: is a file, not a directory",
            dir.display()
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("{flag} {}: cannot create it: {e}", dir.display()))?;
    let probe = dir.join(format!(".scaling-write-check-{}", std::process::id()));
    let written = std::fs::File::create(&probe).and_then(|mut f| f.write_all(b"x"));
    let _ = std::fs::remove_file(&probe);
    written.map_err(|e| format!("{flag} {}: cannot write there: {e}", dir.display()))
}

/// `file` is not a directory and its directory exists and takes a new file.
fn writable_file(flag: &str, file: &Path) -> Result<(), String> {
    if file.is_dir() {
        return Err(format!(
            "{flag} {}: is a directory, not a file",
            file.display()
        ));
    }
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!(
            "{flag} {}: the directory {} does not exist",
            file.display(),
            parent.display()
        ));
    }
    writable_dir(flag, parent)
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    fn parse(args: &[&str]) -> Result<ScalingArgs, clap::Error> {
        ScalingArgs::try_parse_from(
            std::iter::once("cargo xtask scaling").chain(args.iter().copied()),
        )
    }

    fn message(args: &[&str]) -> String {
        parse(args)
            .map(|a| format!("{a:?}"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn thread_counts_are_capped_and_named() {
        assert_eq!(thread_count(" 4"), Ok(4));
        assert_eq!(thread_count("1024"), Ok(1024));
        assert_eq!(
            thread_count("100000"),
            Err("100000 threads is more than the 1024 the harness starts at most".to_owned())
        );
        assert_eq!(
            thread_count("0"),
            Err("a thread count is at least 1".to_owned())
        );
        assert_eq!(
            thread_count("-4"),
            Err("-4 is negative: a thread count is a whole number".to_owned())
        );
        assert!(
            thread_count("x")
                .unwrap_err()
                .contains("not a thread count")
        );
        assert!(thread_count("99999999999999999999999").is_err());
    }

    #[test]
    fn bad_flags_are_refused_with_their_message() {
        assert!(message(&["--threads", "100000"]).contains("more than the 1024"));
        assert!(message(&["--threads", "1,100000"]).contains("more than the 1024"));
        assert!(message(&["--threads", "-4"]).contains("-4 is negative"));
        assert!(message(&["--duration-ms", "0"]).contains("0 is not a duration"));
        assert!(message(&["--duration-ms", "-5"]).contains("-5 is negative"));
        assert!(message(&["--repeat", "0"]).contains("0 is not a repeat count"));
        assert!(message(&["--full", "--from", "x.json"]).contains("cannot be used with"));
        assert!(message(&["--full", "--full"]).contains("cannot be used multiple times"));
        assert!(message(&["--full=yes"]).contains("unexpected value"));
        assert!(message(&["--child-rows", "-1"]).contains("-1 is negative: a row index"));
        assert!(message(&["--child-reverse"]).contains("--child-rows"));
        let ok = parse(&["--threads", "1,2", "--duration-ms", "1"]).unwrap();
        assert_eq!(ok.threads, [1, 2]);
        assert_eq!(ok.duration_ms(), 1);
        assert_eq!(parse(&[]).unwrap().duration_ms(), QUICK_DURATION_MS);
        assert_eq!(parse(&["--full"]).unwrap().duration_ms(), FULL_DURATION_MS);
        assert_eq!(parse(&[]).unwrap().repeat, DEFAULT_PROCESSES);
    }

    #[test]
    fn help_names_the_command_users_type() {
        let e = parse(&["--help"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DisplayHelp);
        let help = e.to_string();
        assert!(
            help.contains("Usage: cargo xtask scaling [OPTIONS]"),
            "{help}"
        );
        assert!(help.contains("Examples:"));
    }

    #[test]
    fn sizes_and_seeds() {
        assert_eq!(byte_size("4096"), Ok(4096));
        assert_eq!(byte_size("64KiB"), Ok(64 << 10));
        assert_eq!(byte_size("8MiB"), Ok(8 << 20));
        assert_eq!(byte_size("1g"), Ok(1 << 30));
        assert_eq!(byte_size("0"), Ok(0));
        assert_eq!(
            byte_size("-1"),
            Err("-1 is negative: a size is 0 or more bytes".to_owned())
        );
        assert!(byte_size("8 parsecs").is_err());
        assert!(byte_size("MiB").is_err());
        assert!(byte_size("99999999999TiB").is_err());
        assert_eq!(seed("7"), Ok(7));
        assert_eq!(
            seed("-1"),
            Err("-1 is negative: a seed is a whole number".to_owned())
        );
    }

    #[test]
    fn raw_output_is_refused_on_a_terminal_only() {
        let e = refuse_terminal(true, true).unwrap_err();
        assert!(e.starts_with("stdout is a terminal"), "{e}");
        assert!(refuse_terminal(true, false).is_ok());
        assert!(refuse_terminal(false, true).is_ok());
    }

    #[test]
    fn output_paths_are_checked_before_the_run() {
        let tmp = std::env::temp_dir().join(format!("scaling-args-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let file = tmp.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let out = |extra: &[&str]| {
            let mut v = vec!["--out", tmp.to_str().unwrap()];
            v.extend_from_slice(extra);
            parse(&v).unwrap().check_outputs()
        };
        assert!(out(&[]).is_ok());
        let e = parse(&["--out", file.to_str().unwrap()])
            .unwrap()
            .check_outputs();
        assert!(e.unwrap_err().ends_with("is a file, not a directory"));
        let missing = tmp.join("no-such-dir").join("plot.png");
        let e = out(&["--png", missing.to_str().unwrap()]).unwrap_err();
        assert!(
            e.starts_with("--png ") && e.contains("does not exist"),
            "{e}"
        );
        let e = out(&["--svg", tmp.to_str().unwrap()]).unwrap_err();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
