//! `cargo xtask scaling`: the scaling harness (`benches/src/bin/scaling.rs`) in release, with
//! the arguments passed through once they parse.
//!
//! The harness is built without scalrand-benches' default `criterion` feature: the criterion
//! benches' own dependencies (criterion, tokio, sha2, blake3, the shuffle and chunked-hashing
//! crates) are not built, which roughly halves a build from scratch.
//!
//! The harness's flags are declared in `benches/src/args.rs`, which this crate includes
//! (`crate::bench_args`): `--help`, `--version` and every bad value (a thread count over the
//! cap, a zero duration, a `--filter` that matches no row, an output path that cannot be
//! written) are answered here, before cargo builds the benchmark crates.

use clap::Parser;
use clap::error::ErrorKind;

use crate::bench_args::ScalingArgs;
use crate::cmd::Result;
use crate::cmd::cargo;
use crate::config::SCALING_HARNESS;
use crate::flags;

/// What the command line asks for.
#[derive(Debug)]
enum Plan {
    /// Help or version text, printed; nothing to run.
    Answered(String),
    /// Build and run the harness with these (checked) arguments; the line says what the run
    /// will do.
    Run(Vec<String>, String),
}

/// Parses and checks the harness's arguments without building anything.
fn plan(args: &[String]) -> std::result::Result<Plan, String> {
    let argv = std::iter::once("cargo xtask scaling".to_owned()).chain(args.iter().cloned());
    match ScalingArgs::try_parse_from(argv) {
        Ok(parsed) => {
            parsed.check_filter()?;
            parsed.check_outputs()?;
            Ok(Plan::Run(args.to_vec(), announce(&parsed)))
        }
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            Ok(Plan::Answered(e.render().to_string()))
        }
        Err(e) => Err(e.render().to_string()),
    }
}

/// What a run will do, in one line, printed before cargo starts building.
fn announce(args: &ScalingArgs) -> String {
    let what = if args.list {
        "then list the rows".to_owned()
    } else if let Some(from) = &args.from {
        format!("then redraw {} into {}", from.display(), args.out.display())
    } else {
        let rows = if !args.filter.is_empty() {
            format!("the rows matching {:?}", args.filter)
        } else if args.full {
            "every row".to_owned()
        } else {
            "the headline rows (--full: every row)".to_owned()
        };
        let threads = if !args.threads.is_empty() {
            format!("{:?} threads", args.threads)
        } else if args.full {
            "1, 2, 4, ... all CPUs and 4, 16 and 64 times the CPUs".to_owned()
        } else {
            "1 thread and all CPUs".to_owned()
        };
        format!(
            "then measure {rows} at {threads}, {} ms per point in each of {} processes, into {}",
            args.duration_ms(),
            args.repeat,
            args.out.display()
        )
    };
    format!(
        "cargo xtask scaling: building the harness (release, without the criterion benches' \
         dependencies), {what}"
    )
}

/// `cargo xtask scaling ARGS...`.
pub fn run(flags: &flags::Scaling) -> Result {
    // The harness runs from the workspace root: relative paths are checked from there too.
    let root = crate::cmd::project_root();
    std::env::set_current_dir(&root).map_err(|e| format!("cd {}: {e}", root.display()))?;
    let args = match plan(&flags.args) {
        Ok(Plan::Answered(text)) => {
            print!("{text}");
            return Ok(());
        }
        Ok(Plan::Run(args, line)) => {
            eprintln!("{line}");
            args
        }
        Err(message) => {
            // clap's own rendering (usage and hint included); exit 2 as clap does.
            eprint!("{}", message.trim_end_matches('\n'));
            eprintln!();
            std::process::exit(2);
        }
    };
    cargo("scaling", ["run"])
        .args(SCALING_HARNESS)
        .arg("--")
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
        let e = plan_of(&["--full", "--from", "docs/scaling.json"]).unwrap_err();
        assert!(e.contains("cannot be used with"), "{e}");
        let e = plan_of(&["--full", "--full"]).unwrap_err();
        assert!(e.contains("cannot be used multiple times"), "{e}");
        let e = plan_of(&["--filter", "nosuch"]).unwrap_err();
        assert!(e.contains("--filter \"nosuch\" matches no row"), "{e}");
        let e = plan_of(&["--filter", "crypto", "--filter", "nosuch"]).unwrap_err();
        assert!(e.contains("\"nosuch\""), "{e}");
        assert!(matches!(
            plan_of(&["--list", "--filter", "crypto"]),
            Ok(Plan::Run(a, _)) if a == ["--list", "--filter", "crypto"]
        ));
    }

    #[test]
    fn the_run_is_announced_before_the_build() {
        let Ok(Plan::Run(_, line)) = plan_of(&[]) else {
            panic!("a plain run should run");
        };
        assert!(
            line.contains("the headline rows (--full: every row) at 1 thread and all CPUs"),
            "{line}"
        );
        assert!(
            line.contains("100 ms per point in each of 15 processes"),
            "{line}"
        );
        let Ok(Plan::Run(_, line)) = plan_of(&["--full", "--repeat", "3"]) else {
            panic!("--full should run");
        };
        assert!(
            line.contains(
                "every row at 1, 2, 4, ... all CPUs and 4, 16 and 64 times the CPUs, 200 ms per \
                 point in each of 3"
            ),
            "{line}"
        );
    }
}
