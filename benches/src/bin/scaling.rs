//! The scaling harness behind `cargo xtask scaling`: aggregate throughput of every scalrand
//! generator and its baselines at 1, 2, 4, ... threads up to all CPUs, measured in one run,
//! printed as a table and written as markdown, JSON and a plot (SVG and PNG). `--help` lists
//! the options, declared in [`scalrand_benches::args`] (which xtask parses too, before it
//! builds this).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use scalrand_benches::args::ScalingArgs as Args;
use scalrand_benches::harness::{self, Options};
use scalrand_benches::report::Report;
use scalrand_benches::{Row, all_rows, cli, plot};

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
    // Before anything is measured: a run that cannot write its outputs is refused now.
    args.check_outputs()?;
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
    for w in report.warnings() {
        eprintln!("scaling: warning: {w}");
    }
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
