//! `cargo xtask stats`: a generator's raw output (the `stats` binary of the benches, in
//! release), its smoke scores, or that output piped into `dieharder -g 200`.

use std::io::IsTerminal;

use crate::cmd::Result;
use crate::cmd::{Cmd, cargo};
use crate::{bench_args, flags};

/// `cargo xtask stats`.
pub fn run(flags: &flags::Stats) -> Result {
    // Raw bytes to a terminal are refused before the tool is built.
    let raw = !flags.list && !flags.smoke && flags.dieharder.is_none();
    bench_args::refuse_terminal(raw, std::io::stdout().is_terminal())?;
    let mut producer = cargo(
        "stats",
        [
            "run",
            "--quiet",
            "--release",
            "-p",
            "scalrand-benches",
            // The tool needs none of the criterion benches' dependencies (as `scaling`).
            "--no-default-features",
            "--bin",
            "stats",
            "--",
        ],
    );
    if flags.list {
        producer = producer.arg("--list");
    }
    if let Some(g) = &flags.generator {
        producer = producer.arg(g);
    }
    if let Some(b) = flags.bytes {
        producer = producer.args(["--bytes".to_owned(), b.to_string()]);
    }
    if let Some(s) = flags.seed {
        producer = producer.args(["--seed".to_owned(), s.to_string()]);
    }
    if flags.smoke {
        producer = producer.arg("--smoke");
    }
    if flags.json {
        producer = producer.arg("--json");
    }
    let Some(extra) = &flags.dieharder else {
        return producer.run();
    };
    // GEN | dieharder -g 200 -a (or the given dieharder arguments)
    let mut child = producer.spawn_piped()?;
    let pipe = child.stdout.take().ok_or("stats: no stdout")?;
    let d = Cmd::new("dieharder", "dieharder").args(["-g", "200"]);
    let d = if extra.is_empty() {
        d.arg("-a")
    } else {
        d.args(extra)
    };
    let result = d
        .stdin(pipe)
        .run()
        .map_err(|e| format!("{e} (dieharder comes from `apt-get install -y dieharder`)"));
    let _ = child.kill();
    let _ = child.wait();
    result
}
