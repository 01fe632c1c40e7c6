//! The `scaling` binary as a user runs it: `--help`, one short measurement that writes every
//! output, a redraw from the saved JSON, and a bad flag value.

use std::path::PathBuf;
use std::process::Command;

use scalrand_testkit::cli;

use scalrand_benches::report::Report;

fn scaling() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scaling"))
}

fn out_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn help_lists_the_flags_and_examples() {
    cli::assert_help_lists(
        scaling().arg("--help"),
        &[
            "--threads",
            "--duration-ms",
            "--repeat",
            "--filter",
            "--out",
            "--list",
            "--json",
            "--from",
            "--quiet",
            "--svg",
            "--png",
            "--pin",
            "--full",
            "--version",
            "Examples:",
        ],
    );
    let out = scaling().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("cargo xtask scaling ")
    );
}

#[test]
fn a_short_run_writes_tables_json_and_both_plots() {
    let dir = out_dir("scaling-cli-run");
    let out = scaling()
        .args([
            "--filter",
            "fastrand",
            "--threads",
            "1,2",
            "--duration-ms",
            "20",
        ])
        .args(["--repeat", "1", "--pin", "--quiet", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("| fastrand::u64 (thread-local) *(baseline)* |"),
        "{stdout}"
    );

    let json = std::fs::read_to_string(dir.join("scaling.json")).unwrap();
    let report: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(report.threads, [1, 2]);
    assert!(report.pinned);
    assert_eq!(report.groups.len(), 1);
    assert_eq!(report.groups[0].series[0].points.len(), 2);
    assert!(report.groups[0].series[0].points[0].per_sec > 0.0);
    // The JSON round-trips through the public type.
    let again = serde_json::to_string_pretty(&report).unwrap();
    assert_eq!(serde_json::from_str::<Report>(&again).unwrap(), report);

    let md = std::fs::read_to_string(dir.join("scaling.md")).unwrap();
    assert!(md.contains("### fast u64"));
    assert!(md.contains("worker i pinned to CPU i"));
    let svg = std::fs::read_to_string(dir.join("scaling.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("fastrand::u64"));
    assert!(svg.contains("higher is better"));
    let groups = std::fs::read_to_string(dir.join("scaling-groups.svg")).unwrap();
    assert!(groups.contains("Fast, non-cryptographic numbers"));
    assert!(dir.join("scaling-groups.png").is_file());
    let png = std::fs::read(dir.join("scaling.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // Redrawn from the JSON, without measuring: the same report comes out on stdout.
    let redo = out_dir("scaling-cli-redo");
    let out = scaling()
        .arg("--from")
        .arg(dir.join("scaling.json"))
        .arg("--json")
        .arg("--out")
        .arg(&redo)
        .arg("--svg")
        .arg(redo.join("extra.svg"))
        .arg("--png")
        .arg(redo.join("extra.png"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, report);
    assert!(redo.join("scaling.png").is_file());
    // `--svg`/`--png` draw the same picture to paths of their own.
    assert_eq!(
        std::fs::read(redo.join("extra.svg")).unwrap(),
        std::fs::read(redo.join("scaling.svg")).unwrap()
    );
    assert_eq!(
        std::fs::read(redo.join("extra.png")).unwrap(),
        std::fs::read(redo.join("scaling.png")).unwrap()
    );
}

/// The default run: the headline rows only, at 1 thread and all CPUs, each point from every
/// process with its spread, each ratio taken inside each process.
#[test]
fn the_default_run_measures_the_headline_rows_in_processes() {
    let dir = out_dir("scaling-cli-default");
    let out = scaling()
        .args(["--duration-ms", "5", "--repeat", "3", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("process  3/3"), "{err}");
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scaling.json")).unwrap()).unwrap();
    assert!(report.processes && !report.full);
    assert_eq!(report.repeat, 3);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut want = vec![1, cpus];
    want.dedup();
    assert_eq!(report.threads, want);
    let rows: Vec<(&str, &str)> = report
        .groups
        .iter()
        .flat_map(|g| g.series.iter().map(|s| (g.name.as_str(), s.name.as_str())))
        .collect();
    let mut headline = scalrand_benches::HEADLINE.to_vec();
    // Rows a machine cannot run are left out: the vDSO row on a kernel without vDSO
    // getrandom, the AVX2 rows on a CPU without AVX-512 to set aside.
    headline.retain(|(g, n)| {
        rows.contains(&(*g, *n)) || !(n.starts_with("vDSO") || n.contains("AVX-512 set aside"))
    });
    assert_eq!(rows, headline);
    let crypto = report
        .groups
        .iter()
        .find(|g| g.name == "crypto 32B")
        .unwrap();
    let p = crypto.series[0].points[0];
    assert_eq!(p.spread.unwrap().n, 3);
    let r = crypto
        .ratios
        .iter()
        .find(|r| r.threads == 1 && r.baseline == "getrandom::fill")
        .unwrap();
    assert_eq!(r.ours, "scalrand::fill_bytes (crypto facade)");
    assert_eq!(r.runs.len(), 3);
    assert!(crypto.series[0].recommended);
    let md = std::fs::read_to_string(dir.join("scaling.md")).unwrap();
    assert!(md.contains("5 ms x 3 alternated processes"), "{md}");
    assert!(
        md.contains("median of the ratios inside each process"),
        "{md}"
    );
}

#[test]
fn a_bad_value_exits_2_naming_the_flag() {
    cli::assert_exits(scaling().args(["--threads", "1,x"]), 2, "--threads");

    cli::assert_exits(scaling().arg("--thread"), 2, "--thread");
}

/// Each bad input of the harness is refused before anything is measured, with its message.
#[test]
fn bad_inputs_are_refused_before_the_run() {
    let dir = out_dir("scaling-cli-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();
    let missing = dir.join("no-such-dir").join("plot.png");
    let missing = missing.to_str().unwrap();
    for (args, code, message) in [
        (
            &["--threads", "100000"][..],
            2,
            "100000 threads is more than the 1024 the harness starts at most",
        ),
        (&["--threads", "-4"], 2, "-4 is negative: a thread count"),
        (
            &["--duration-ms", "0"],
            2,
            "0 is not a duration in milliseconds: it is at least 1",
        ),
        (&["--repeat", "-1"], 2, "-1 is negative: a repeat count"),
        (&["--out", file], 1, "is a file, not a directory"),
        (&["--png", missing], 1, "does not exist"),
        (&["--full", "--from", file], 2, "cannot be used with"),
        (&["--full=1"], 2, "unexpected value"),
        (&["--child-rows", "x"], 2, "is not a row index"),
        (
            &["--child-rows", "100000"],
            1,
            "--child-rows: there is no row 100000",
        ),
        (&["--child-reverse"], 2, "--child-rows"),
    ] {
        let out = scaling()
            .args(["--filter", "fastrand", "--threads", "1"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} measured something");
    }
}
