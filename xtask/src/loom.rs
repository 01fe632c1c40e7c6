//! `cargo xtask loom`: every loom model (`config::LOOM`), in release, with the crates' atomics
//! swapped for loom's through `--cfg` (`config::LOOM_CFG`).

use crate::Result;
use crate::cmd::cargo;
use crate::config::{LOOM, LOOM_CFG};

/// `cargo xtask loom`. `LOOM_MAX_PREEMPTIONS` in the environment overrides every model's
/// bound.
pub fn run() -> Result {
    let rustflags = format!("--cfg {LOOM_CFG}");
    for (pkg, test, filter, preemptions) in LOOM {
        let mut c = cargo(
            &format!("loom {pkg} {test} {filter}"),
            ["test", "--release", "-p", pkg],
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
