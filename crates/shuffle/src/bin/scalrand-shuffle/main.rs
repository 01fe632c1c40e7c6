//! `scalrand-shuffle`: the command-line simulator (`--help` lists every flag with examples).
//!
//! Errors go to stderr with exit status 2; `--json` output goes to stdout.

mod args;
mod bias;
mod calibrate;
mod estimate;
mod jobs;
mod plots;
mod report;
mod simulate;

use std::process::ExitCode;
use std::string::{String, ToString};
use std::{eprint, eprintln, format};

use clap::{Parser, Subcommand};

use crate::args::{BiasArgs, CalibrateArgs, EXAMPLES, PlotArgs, SimulateArgs};

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
        Command::Simulate(a) => simulate::simulate(a),
        Command::Bias(a) => bias::bias(a),
        Command::Plot(a) => plots::plot(a),
        Command::Calibrate(a) => calibrate::calibrate(a),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(msg)) => {
            eprintln!("scalrand-shuffle: {msg}");
            ExitCode::from(2)
        }
    }
}
