//! `cargo xtask no-std`: every library crate (and the firmware example) built for a bare-metal
//! target, and linted there with `clippy -D warnings`, with each feature set that must work
//! without `std` (`config::NO_STD`).

use crate::cmd::Result;
use crate::cmd::cargo;
use crate::config::{NO_STD, NO_STD_TARGET};

/// `cargo xtask no-std`.
pub fn run() -> Result {
    for (pkg, features) in NO_STD {
        let mut c = cargo(
            &format!("no-std {pkg} [{features}]"),
            ["build", "-p", pkg, "--no-default-features"],
        )
        .args(["--target", NO_STD_TARGET]);
        if !features.is_empty() {
            c = c.args(["--features", features]);
        }
        // A separate target dir keeps the host build cache intact.
        c.target_dir("no-std").run()?;
        let mut c = cargo(
            &format!("no-std clippy {pkg} [{features}]"),
            ["clippy", "-p", pkg, "--no-default-features"],
        )
        .args(["--target", NO_STD_TARGET]);
        if !features.is_empty() {
            c = c.args(["--features", features]);
        }
        c.args(["--", "-D", "warnings"])
            .target_dir("no-std")
            .run()?;
    }
    Ok(())
}
