//! `cargo xtask loom`: every loom model (`config::LOOM`), optimised (the `loom` profile), with the crates' atomics
//! swapped for loom's through `--cfg` (`config::LOOM_CFG`).

use crate::cmd::Result;
use crate::cmd::cargo;
use crate::config::{LOOM, LOOM_CFG};

/// `cargo xtask loom`. `LOOM_MAX_PREEMPTIONS` in the environment overrides every model's
/// bound. First every target of the OS layer is linted under the cfg: the cfg compiles parts
/// of it out (rseq, fork detection), and a test that reaches for one breaks only here.
pub fn run() -> Result {
    let rustflags = format!("--cfg {LOOM_CFG}");
    cargo(
        "loom: clippy scalrand-os, every target",
        [
            "clippy",
            "--profile",
            "loom",
            "-p",
            "scalrand-os",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )
    .env("RUSTFLAGS", &rustflags)
    .target_dir("loom")
    .run()?;
    for (pkg, test, filter, preemptions) in LOOM {
        let mut c = cargo(
            &format!("loom {pkg} {test} {filter}"),
            ["test", "--profile", "loom", "-p", pkg],
        );
        c = if *test == "--lib" {
            c.arg("--lib")
        } else {
            c.args(["--test", test])
        };
        if !filter.is_empty() {
            c = c.arg(filter);
        }
        let bound =
            std::env::var("LOOM_MAX_PREEMPTIONS").unwrap_or_else(|_| preemptions.to_string());
        c.env("RUSTFLAGS", &rustflags)
            .env("LOOM_MAX_PREEMPTIONS", bound)
            .target_dir("loom")
            .run()?;
    }
    Ok(())
}
