//! `cargo xtask scaling`: the scaling harness (`benches/src/bin/scaling.rs`) in release, with
//! the arguments passed through.

use crate::cmd::cargo;
use crate::{Result, flags};

/// `cargo xtask scaling ARGS...`.
pub fn run(flags: &flags::Scaling) -> Result {
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
    .args(&flags.args)
    .run()
}
