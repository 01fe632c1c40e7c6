//! `cargo xtask` as a user runs it: `--help` lists the commands, `ci --list` selects steps
//! without running them, and a bad step name exits 2 naming the flag.

use std::process::Command;

// scalrand-testkit's command-line harness, included as a file: xtask keeps its dependencies
// few, and the file needs only std.
#[allow(dead_code)]
#[path = "../../crates/testkit/src/cli.rs"]
mod cli;

fn xtask() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
}

#[test]
fn help_lists_every_command() {
    cli::assert_help_lists(
        xtask().arg("--help"),
        &[
            "ci",
            "scaling",
            "no-std",
            "loom",
            "fuzz",
            "stats",
            "vm",
            "Examples:",
        ],
    );
    let out = xtask().args(["ci", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("no-default-features") && help.contains("fuzz-smoke"));
}

#[test]
fn ci_list_prints_the_selected_steps_in_order() {
    let out = xtask()
        .args(["ci", "--list", "--skip", "miri", "--skip", "sanitizers"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let steps = String::from_utf8(out.stdout).unwrap();
    let steps: Vec<&str> = steps.lines().collect();
    assert_eq!(
        steps,
        [
            "fmt",
            "test",
            "getrandom-program",
            "getrandom-suites",
            "backend-portable",
            "backends",
            "latest-deps",
            "aarch64-qemu",
            "windows-wine",
            "other-targets",
            "no-default-features",
            "doc",
            "doc-links",
            "fresh-crate",
            "bench-build",
            "numa-vm",
            "no-std",
            "loom",
            "fuzz-build",
            "fuzz-smoke",
            "package",
        ]
    );
    let out = xtask()
        .args(["ci", "--list", "--only", "package", "--only", "fmt"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "fmt\npackage\n");
}

#[test]
fn a_bad_step_exits_2_naming_the_flag() {
    let out = xtask().args(["ci", "--only", "clipy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--only") && err.contains("clipy"), "{err}");

    cli::assert_exits(xtask().args(["fuzz", "--seconds", "soon"]), 2, "--seconds");

    let out = xtask().arg("no-such-command").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// xtask with a cargo that cannot start: any attempt to build fails loudly, so a command
/// that succeeds, or fails with its own message, answered without building.
fn xtask_without_cargo() -> Command {
    let mut c = xtask();
    c.env("CARGO", "/nonexistent/cargo");
    c
}

#[test]
fn scaling_help_answers_without_building() {
    let out = xtask_without_cargo()
        .args(["scaling", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        help.contains("Usage: cargo xtask scaling [OPTIONS]"),
        "{help}"
    );
    assert!(help.contains("--duration-ms"));
    assert!(help.contains("--full"));
    assert!(
        !help.contains("--child-rows"),
        "the internal flag is hidden: {help}"
    );
}

#[test]
fn scaling_refuses_bad_values_before_building() {
    for (args, message) in [
        (
            &["--threads", "100000"][..],
            "100000 threads is more than the 1024 the harness starts at most",
        ),
        (&["--threads", "-4"], "-4 is negative: a thread count"),
        (
            &["--duration-ms", "0"],
            "0 is not a duration in milliseconds: it is at least 1",
        ),
        (&["--out", "Cargo.toml"], "is a file, not a directory"),
        (
            &["--png", "no-such-dir/x.png"],
            "the directory no-such-dir does not exist",
        ),
        (
            &["--full", "--from", "docs/scaling.json"],
            "cannot be used with",
        ),
        (&["--full", "--full"], "cannot be used multiple times"),
        (&["--full=no"], "unexpected value"),
    ] {
        let out = xtask_without_cargo()
            .arg("scaling")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            !err.contains("/nonexistent/cargo"),
            "{args:?} tried to build: {err}"
        );
    }
}

/// `stats GEN` on a terminal: refused before the tool is built. `script` (util-linux) gives
/// the command a pseudo-terminal for stdout.
#[test]
fn stats_refuses_a_terminal() {
    let cmd = format!(
        "CARGO=/nonexistent/cargo {} stats percpu",
        env!("CARGO_BIN_EXE_xtask")
    );
    let Ok(out) = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
    else {
        eprintln!("skipped: no `script` command to give xtask a terminal");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("stdout is a terminal"), "{text}");
    assert!(
        !text.contains("/nonexistent/cargo"),
        "tried to build: {text}"
    );
}

/// Every argument is checked before anything is built: an unknown generator, fuzz target, a
/// zero or negative fuzz budget, and a step both asked for and left out are refused with a
/// message naming them, and no cargo (not even rustup's `cargo +nightly`, off the `PATH`
/// here) is started.
#[test]
fn arguments_are_checked_before_building() {
    for (args, code, message) in [
        (&["stats", "bogus"][..], Some(2), "bogus"),
        (&["stats", "bogus", "--smoke"], Some(2), "percpu"),
        (&["fuzz", "numa_pool"], Some(1), "no target \"numa_pool\""),
        (
            &["fuzz", "numa_pools", "nope"],
            Some(1),
            "fuzz/Cargo.toml declares",
        ),
        (
            &["fuzz", "--seconds", "0"],
            Some(2),
            "0 is not a number of seconds",
        ),
        (&["fuzz", "--runs", "-1"], Some(2), "-1 is negative"),
        (
            &["ci", "--only", "fmt", "--skip", "fmt"],
            Some(1),
            "--only fmt and --skip fmt",
        ),
    ] {
        let out = xtask_without_cargo()
            .env("PATH", "/nonexistent")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), code, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            !err.contains("/nonexistent/cargo") && !err.contains("cargo +nightly"),
            "{args:?} tried to build: {err}"
        );
    }
    // A campaign size the tests would refuse, refused before the first step (and before
    // `vm` builds anything).
    for args in [&["ci", "--only", "test"][..], &["vm"]] {
        let out = xtask_without_cargo()
            .env("PATH", "/nonexistent")
            .env("SCALRAND_CAMPAIGN", "most")
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("SCALRAND_CAMPAIGN=\"most\"") && err.contains("`full` or `sample`"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("==>"), "{args:?} started a command: {err}");
    }
}

#[test]
fn vm_machines_and_breakage_are_checked_before_building() {
    let out = xtask().args(["vm", "--list"]).output().unwrap();
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    assert!(
        list.contains("four-nodes") && list.contains("uneven"),
        "{list}"
    );

    let out = xtask()
        .args(["vm", "--machine", "eight-nodes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("eight-nodes") && err.contains("four-nodes") && err.contains("uneven"),
        "{err}"
    );

    let out = xtask()
        .args(["vm", "--break-detection", "sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("sideways") && err.contains("shuffle"), "{err}");
}
