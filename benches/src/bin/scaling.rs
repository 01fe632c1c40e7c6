//! The scaling harness behind `cargo xtask scaling`: aggregate throughput of scalrand's
//! generators and their baselines against thread count (by default the headline rows at 1
//! thread and all CPUs; `--full` every row at 1, 2, 4, ... all CPUs and at 4, 16 and 64 times the CPUs), each point measured in
//! several processes of this binary (the hidden `--child-rows` flag), printed as a table and
//! written as markdown, JSON and plots (SVG and PNG). `--help` lists
//! the options, declared in [`scalrand_benches::args`] (which xtask parses too, before it
//! builds this).

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use clap::Parser;
use scalrand_benches::args::ScalingArgs as Args;
use scalrand_benches::harness::{self, Options, ProcessFigures};
use scalrand_benches::report::Report;
use scalrand_benches::{Row, all_rows, cli, is_headline, plot};

fn main() -> ExitCode {
    let args = Args::parse();
    let result = if args.child_rows.is_empty() {
        run(&args)
    } else {
        child(&args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scaling: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The rows a run measures, with their indices into [`all_rows`]: those `--filter` matches
/// (from every row), else every row with `--full` or `--list`, else the headline rows.
fn selected(args: &Args) -> Vec<(usize, Row)> {
    all_rows()
        .into_iter()
        .enumerate()
        .filter(|(_, r)| {
            if args.filter.is_empty() {
                args.full || args.list || is_headline(r)
            } else {
                args.filter
                    .iter()
                    .any(|f| r.group.contains(f.as_str()) || r.name.contains(f.as_str()))
            }
        })
        .collect()
}

/// The thread counts to measure: `--threads`, else 1 and all CPUs, else with `--full` 1, 2,
/// 4, ... all CPUs and then 4, 16 and 64 times the CPUs (oversubscribed).
fn thread_counts(args: &Args) -> Vec<usize> {
    if !args.threads.is_empty() {
        args.threads.clone()
    } else if args.full {
        harness::full_threads()
    } else {
        let mut v = vec![1, harness::cpus()];
        v.dedup();
        v
    }
}

/// One process of a run (`--child-rows`): the rows once at every thread count, the figures
/// as JSON on stdout.
fn child(args: &Args) -> Result<(), String> {
    let all = all_rows();
    let rows = args
        .child_rows
        .iter()
        .map(|&i| {
            all.get(i).copied().ok_or_else(|| {
                format!(
                    "--child-rows: there is no row {i}: the rows are 0 to {}",
                    all.len() - 1
                )
            })
        })
        .collect::<Result<Vec<Row>, String>>()?;
    let figures = harness::measure_once(
        &rows,
        &thread_counts(args),
        Duration::from_millis(args.duration_ms()),
        args.pin,
        args.child_reverse,
    );
    let json = serde_json::to_string(&figures).map_err(|e| format!("JSON: {e}"))?;
    println!("{json}");
    Ok(())
}

/// Runs process `p` of a run: this binary again, with `--child-rows`.
fn spawn(
    args: &Args,
    indices: &[usize],
    p: usize,
    reverse: bool,
) -> Result<ProcessFigures, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let list = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut cmd = Command::new(&exe);
    cmd.arg("--child-rows")
        .arg(list(indices))
        .arg("--threads")
        .arg(list(&thread_counts(args)))
        .arg("--duration-ms")
        .arg(args.duration_ms().to_string())
        .arg("--quiet")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    if args.pin {
        cmd.arg("--pin");
    }
    if reverse {
        cmd.arg("--child-reverse");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("process {}: cannot start {}: {e}", p + 1, exe.display()))?;
    if !out.status.success() {
        return Err(format!("process {} failed: {}", p + 1, out.status));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("process {} answered something else: {e}", p + 1))
}

fn run(args: &Args) -> Result<(), String> {
    // Before anything is measured: a run that cannot write its outputs is refused now.
    args.check_filter()?;
    args.check_outputs()?;
    let report = match &args.from {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            serde_json::from_str::<Report>(&text)
                .map_err(|e| format!("{} is not a scaling report: {e}", path.display()))?
        }
        None => {
            let picked = selected(args);
            if args.list {
                for (_, r) in &picked {
                    let tag = if r.baseline { "  (baseline)" } else { "" };
                    let head = if is_headline(r) { "  [headline]" } else { "" };
                    println!("{:<16} {}{tag}{head}", r.group, r.name);
                }
                return Ok(());
            }
            if picked.is_empty() {
                return Err(format!(
                    "no row matches --filter {:?}; `--list` shows the rows",
                    args.filter
                ));
            }
            let (indices, rows): (Vec<usize>, Vec<Row>) = picked.into_iter().unzip();
            let opts = Options {
                threads: thread_counts(args),
                duration: Duration::from_millis(args.duration_ms()),
                repeat: args.repeat as usize,
                pin: args.pin,
            };
            if !args.json {
                println!(
                    "scalrand scaling harness{}: {} rows on {} CPUs, threads {:?}, {} ms per \
                     measurement, {} alternated processes (median){}",
                    if args.full { " (--full)" } else { "" },
                    rows.len(),
                    harness::cpus(),
                    opts.threads,
                    args.duration_ms(),
                    opts.repeat,
                    if args.full || !args.filter.is_empty() {
                        ""
                    } else {
                        "; --full measures every row"
                    }
                );
            }
            let bar = cli::progress(0, args.quiet);
            let mut report = harness::run(&rows, &opts, &bar, args.quiet, |p, reverse| {
                spawn(args, &indices, p, reverse)
            })?;
            report.full = args.full;
            report
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

/// Writes the outputs into `out`: the tables, the data, the headline figure and the figure of
/// every group.
fn write_all(out: &Path, report: &Report, md: &str, json: &str) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = |name: &str| out.join(name);
    for (p, text) in [
        (path("scaling.md"), md),
        (path("scaling.json"), &format!("{json}\n")),
    ] {
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    let draw = |name: &str, f: fn(&Report, &Path) -> Result<(), plot::PlotError>| {
        f(report, &path(name)).map_err(|e| format!("cannot draw {}: {e}", path(name).display()))
    };
    draw("scaling.svg", plot::write_svg)?;
    draw("scaling.png", plot::write_png)?;
    draw("scaling-groups.svg", plot::write_groups_svg)?;
    draw("scaling-groups.png", plot::write_groups_png)?;
    eprintln!(
        "wrote {} (.md, .json, .svg, .png) and {} (.svg, .png)",
        out.join("scaling").display(),
        out.join("scaling-groups").display()
    );
    Ok(())
}
