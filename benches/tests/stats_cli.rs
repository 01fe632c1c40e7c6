//! The `stats` binary as a user runs it: `--help`, raw output of a seeded generator, the
//! smoke scores as JSON, and bad input.

use std::process::Command;

use scalrand_testkit::cli;

fn stats() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stats"))
}

#[test]
fn help_lists_the_flags_and_examples() {
    cli::assert_help_lists(
        stats().arg("--help"),
        &[
            "--list",
            "--bytes",
            "--seed",
            "--smoke",
            "--json",
            "--version",
            "Examples:",
        ],
    );
}

#[test]
fn raw_bytes_are_the_seeded_stream() {
    let out = stats()
        .args(["xoroshiro128plusplus", "--bytes", "1KiB", "--seed", "7"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 1024);
    let mut want = vec![0u8; 1024];
    scalrand_benches::sources::by_name("xoroshiro128plusplus", 7)
        .unwrap()
        .unwrap()(&mut want);
    assert_eq!(out.stdout, want);
}

#[test]
fn smoke_json_parses() {
    let out = stats()
        .args([
            "xoroshiro128plusplus",
            "--smoke",
            "--json",
            "--bytes",
            "256KiB",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["generator"], "xoroshiro128plusplus");
    assert_eq!(v["bytes"], 256 * 1024);
    assert_eq!(v["pass"], true);
    assert_eq!(v["scores"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    cli::assert_exits(
        stats().args(["percpu", "--bytes", "8 parsecs"]),
        2,
        "--bytes",
    );

    let out = stats().arg("no-such-generator").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("no-such-generator")
    );

    // GEN is required unless --list.
    let out = stats().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Raw bytes on a terminal are refused, with a message saying what to do; `script`
/// (util-linux) gives the tool a pseudo-terminal for stdout.
#[test]
fn raw_output_to_a_terminal_is_refused() {
    let cmd = format!("{} percpu", env!("CARGO_BIN_EXE_stats"));
    let Ok(out) = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
    else {
        eprintln!("skipped: no `script` command to give stats a terminal");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("stats: stdout is a terminal, and GEN writes raw binary there"),
        "{text}"
    );
}

#[test]
fn negative_sizes_and_seeds_are_named() {
    cli::assert_exits(
        stats().args(["percpu", "--bytes", "-1"]),
        2,
        "-1 is negative: a size",
    );
    cli::assert_exits(
        stats().args(["percpu", "--seed", "-7"]),
        2,
        "-7 is negative: a seed",
    );
}

/// The names `cargo xtask stats` checks before building (`args::GENERATORS`) are the
/// generators this tool serves, in `--list`'s order.
#[test]
fn declared_names_are_the_served_generators() {
    let served: Vec<&str> = scalrand_benches::sources::all()
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(served, scalrand_benches::args::GENERATORS);
}
