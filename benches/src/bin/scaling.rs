//! The scaling harness behind `cargo xtask scaling`: aggregate throughput of every scalrand
//! generator and its baselines at 1, 2, 4, ... threads up to all CPUs, measured in one run,
//! printed as a table and written as markdown, JSON and a plot (SVG and PNG). `--help` lists
//! the options.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use scalrand_benches::harness::{self, Options};
use scalrand_benches::report::Report;
use scalrand_benches::{Row, all_rows, cli, plot};

const EXAMPLES: &str = "\
Examples:
  cargo xtask scaling                                  every row, 1, 2, 4, ... all CPUs
  cargo xtask scaling --threads 1,2,4 --filter crypto  the crypto rows at 1, 2 and 4 threads
  cargo xtask scaling --duration-ms 400 --repeat 5 --out docs
                                                       refresh the committed tables and plots
  cargo xtask scaling --from docs/scaling.json --out target/replot
                                                       redraw a saved run without measuring
  cargo xtask scaling --from docs/scaling.json --png plot.png
                                                       the same, plus the PNG at plot.png
  cargo xtask scaling --pin --filter 'fast u64'        worker i pinned to CPU i
  cargo xtask scaling --list                           the rows, by group";

/// Aggregate throughput of scalrand's generators and their baselines against thread count.
///
/// Writes scaling.md (the tables), scaling.json (the data), scaling.svg and scaling.png (one
/// drawing) into --out.
#[derive(Debug, Parser)]
#[command(name = "scaling", version, after_help = EXAMPLES)]
struct Args {
    /// Thread counts to measure, comma-separated or repeated [default: 1, 2, 4, ... up to all
    /// CPUs]
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = cli::thread_count)]
    threads: Vec<usize>,
    /// Length of one measurement, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 300)]
    duration_ms: u64,
    /// Measurements per point; the median is reported
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Only rows whose group or name contains TEXT (repeatable: any of them)
    #[arg(long, value_name = "TEXT")]
    filter: Vec<String>,
    /// Where scaling.{md,json,svg,png} go (`docs` refreshes the committed ones)
    #[arg(long, value_name = "DIR", default_value = "target/scaling")]
    out: PathBuf,
    /// List the rows (after --filter) and exit
    #[arg(long)]
    list: bool,
    /// Print the report as JSON on stdout instead of the tables
    #[arg(long)]
    json: bool,
    /// Redraw the tables and plots of a saved run (a scaling.json) instead of measuring
    #[arg(long, value_name = "FILE", conflicts_with_all = ["threads", "list"])]
    from: Option<PathBuf>,
    /// Pin worker thread i to CPU i (mod the CPU count) while it measures: steadier figures
    /// for the per-CPU generators on a shared machine, and the thread-per-core case
    #[arg(long)]
    pin: bool,
    /// Also draw the plot as SVG at PATH (the same drawing as --out's scaling.svg)
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Also draw the plot as PNG at PATH (the same drawing as --out's scaling.png)
    #[arg(long, value_name = "PATH")]
    png: Option<PathBuf>,
    /// No progress bar and no per-point lines on stderr
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scaling: {e}");
            ExitCode::FAILURE
        }
    }
}

fn selected(filter: &[String]) -> Vec<Row> {
    all_rows()
        .into_iter()
        .filter(|r| {
            filter.is_empty()
                || filter
                    .iter()
                    .any(|f| r.group.contains(f.as_str()) || r.name.contains(f.as_str()))
        })
        .collect()
}

fn run(args: &Args) -> Result<(), String> {
    let report = match &args.from {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            serde_json::from_str::<Report>(&text)
                .map_err(|e| format!("{} is not a scaling report: {e}", path.display()))?
        }
        None => {
            let rows = selected(&args.filter);
            if args.list {
                for r in &rows {
                    let tag = if r.baseline { "  (baseline)" } else { "" };
                    println!("{:<16} {}{tag}", r.group, r.name);
                }
                return Ok(());
            }
            if rows.is_empty() {
                return Err(format!(
                    "no row matches --filter {:?}; `--list` shows the rows",
                    args.filter
                ));
            }
            let opts = Options {
                threads: if args.threads.is_empty() {
                    harness::default_threads()
                } else {
                    args.threads.clone()
                },
                duration: Duration::from_millis(args.duration_ms),
                repeat: args.repeat as usize,
                pin: args.pin,
            };
            if !args.json {
                println!(
                    "scalrand scaling harness: {} CPUs, threads {:?}, {} ms x {} runs (median) per point",
                    harness::cpus(),
                    opts.threads,
                    args.duration_ms,
                    opts.repeat
                );
            }
            let bar = cli::progress(0, args.quiet);
            harness::run(&rows, &opts, &bar, args.quiet)
        }
    };
    let md = report.markdown();
    let json = serde_json::to_string_pretty(&report).map_err(|e| format!("JSON: {e}"))?;
    if args.json {
        println!("{json}");
    } else {
        println!("\n{md}");
    }
    write_all(&args.out, &report, &md, &json)?;
    if let Some(p) = &args.svg {
        plot::write_svg(&report, p).map_err(|e| format!("cannot draw {}: {e}", p.display()))?;
    }
    if let Some(p) = &args.png {
        plot::write_png(&report, p).map_err(|e| format!("cannot draw {}: {e}", p.display()))?;
    }
    Ok(())
}

/// Writes the four outputs into `out`.
fn write_all(out: &Path, report: &Report, md: &str, json: &str) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = |ext: &str| out.join(format!("scaling.{ext}"));
    for (p, text) in [(path("md"), md), (path("json"), &format!("{json}\n"))] {
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    plot::write_svg(report, &path("svg"))
        .map_err(|e| format!("cannot draw {}: {e}", path("svg").display()))?;
    plot::write_png(report, &path("png"))
        .map_err(|e| format!("cannot draw {}: {e}", path("png").display()))?;
    eprintln!(
        "wrote {} (.md, .json, .svg, .png)",
        out.join("scaling").display()
    );
    Ok(())
}
