//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! Laid out after rust-analyzer's xtask: the flags are declared in [`flags`], each command
//! lives in its own file, the CI steps are an enum ([`step::Step`]), the package and target
//! tables are data in [`config`], and every process starts through the small helper in
//! [`cmd`]. `cargo xtask --help` lists the commands.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

// The benchmark tools' command line, declared once in the benches package and parsed here
// too, so help and bad input are answered before the benches are built.
mod artifacts;
#[path = "../../benches/src/args.rs"]
mod bench_args;
mod build_cost;
mod ci;
mod cmd;
mod config;
mod doc_links;
mod flags;
mod fresh_crate;
mod fuzz;
mod getrandom_suites;
mod loom;
mod no_std;
mod scaling;
mod stats;
mod step;
mod vm;

fn main() -> ExitCode {
    let flags = flags::Xtask::parse();
    let result = match flags.command {
        flags::Command::Ci(f) => ci::run(&f),
        flags::Command::Scaling(f) => scaling::run(&f),
        flags::Command::NoStd => no_std::run(),
        flags::Command::Loom => loom::run(),
        flags::Command::Fuzz(f) => fuzz::run(&f),
        flags::Command::Stats(f) => stats::run(&f),
        flags::Command::Vm(f) => vm::run(&f),
        flags::Command::BuildCost(f) => build_cost::run(f.rounds as usize),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
