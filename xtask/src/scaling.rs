//! `cargo xtask scaling`: the scaling harness (`benches/src/bin/scaling.rs`) in release, with
//! the arguments passed through once they parse.
//!
//! The harness's flags are declared in `benches/src/args.rs`, which this crate includes
//! (`crate::bench_args`): `--help`, `--version` and every bad value (a thread count over the
//! cap, a zero duration, an output path that cannot be written) are answered here, before
//! cargo builds the benchmark crates.

use clap::Parser;
use clap::error::ErrorKind;

use crate::bench_args::ScalingArgs;
use crate::cmd::cargo;
use crate::{Result, flags};

/// What the command line asks for.
#[derive(Debug)]
enum Plan {
    /// Help or version text, printed; nothing to run.
    Answered(String),
    /// Build and run the harness with these (checked) arguments.
    Run(Vec<String>),
}

/// Parses and checks the harness's arguments without building anything.
fn plan(args: &[String]) -> std::result::Result<Plan, String> {
    let argv = std::iter::once("cargo xtask scaling".to_owned()).chain(args.iter().cloned());
    match ScalingArgs::try_parse_from(argv) {
        Ok(parsed) => {
            parsed.check_outputs()?;
            Ok(Plan::Run(args.to_vec()))
        }
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            Ok(Plan::Answered(e.render().to_string()))
        }
        Err(e) => Err(e.render().to_string()),
    }
}

/// `cargo xtask scaling ARGS...`.
pub fn run(flags: &flags::Scaling) -> Result {
    // The harness runs from the workspace root: relative paths are checked from there too.
    let root = crate::project_root();
    std::env::set_current_dir(&root).map_err(|e| format!("cd {}: {e}", root.display()))?;
    let args = match plan(&flags.args) {
        Ok(Plan::Answered(text)) => {
            print!("{text}");
            return Ok(());
        }
        Ok(Plan::Run(args)) => args,
        Err(message) => {
            // clap's own rendering (usage and hint included); exit 2 as clap does.
            eprint!("{}", message.trim_end_matches('\n'));
            eprintln!();
            std::process::exit(2);
        }
    };
    cargo(
        "scaling",
        [
            "run",
            "--release",
            "-p",
            "scalrand-benches",
            "--bin",
            "scaling",
            "--",
        ],
    )
    .args(&args)
    .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(args: &[&str]) -> std::result::Result<Plan, String> {
        plan(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn help_is_answered_without_a_build() {
        let Ok(Plan::Answered(help)) = plan_of(&["--threads", "1", "--help"]) else {
            panic!("--help should be answered here");
        };
        assert!(
            help.contains("Usage: cargo xtask scaling [OPTIONS]"),
            "{help}"
        );
    }

    #[test]
    fn bad_values_are_refused_before_the_build() {
        let e = plan_of(&["--threads", "100000"]).unwrap_err();
        assert!(e.contains("100000 threads is more than the 1024"), "{e}");
        let e = plan_of(&["--duration-ms", "0"]).unwrap_err();
        assert!(e.contains("0 is not a duration in milliseconds"), "{e}");
        let e = plan_of(&["--out", "Cargo.toml"]).unwrap_err();
        assert!(e.contains("is a file, not a directory"), "{e}");
        assert!(matches!(
            plan_of(&["--list", "--filter", "crypto"]),
            Ok(Plan::Run(a)) if a == ["--list", "--filter", "crypto"]
        ));
    }
}
