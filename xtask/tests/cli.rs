//! `cargo xtask` as a user runs it: `--help` lists the commands, `ci --list` selects steps
//! without running them, and a bad step name exits 2 naming the flag.

use std::process::Command;

fn xtask() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
}

#[test]
fn help_lists_every_command() {
    let out = xtask().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for cmd in [
        "ci",
        "scaling",
        "no-std",
        "loom",
        "fuzz",
        "stats",
        "Examples:",
    ] {
        assert!(help.contains(cmd), "{cmd} missing from:\n{help}");
    }
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
            "clippy",
            "test",
            "no-default-features",
            "doc",
            "doc-links",
            "fresh-crate",
            "bench-build",
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

    let out = xtask()
        .args(["fuzz", "--seconds", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--seconds"));

    let out = xtask().arg("no-such-command").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
