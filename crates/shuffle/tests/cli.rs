//! The `scalrand-shuffle` binary, run with small flags; its `--json` parsed with serde_json.

// The binary needs the `cli` feature; without it cargo would run a stale build, if any.
#![cfg(feature = "cli")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use std::process::Command;

use scalrand_testkit::cli;
use scalrand_testkit::cli::output;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scalrand-shuffle"))
}

/// Runs the tool with `args` and checks that it refused them before doing any work: exit
/// status 2, nothing on stdout, a `scalrand-shuffle: ` message on stderr containing `want`,
/// within 5 seconds.
fn assert_refused(args: &[&str], want: &str) {
    let out = output_within(args, 5);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("scalrand-shuffle: "), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
}

/// Runs the tool with `args`; one still running after `secs` seconds is killed and the test
/// fails (a refusal that does the work instead never finishes otherwise).
fn output_within(args: &[&str], secs: u64) -> std::process::Output {
    cli::output_within(bin().args(args), secs)
}

fn run_json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&cli::stdout_of(bin().args(args))).unwrap()
}

fn frac(v: &serde_json::Value) -> f64 {
    let x = v.as_f64().unwrap();
    assert!((0.0..=1.0).contains(&x), "{x} is not a fraction");
    x
}

#[test]
fn simulate_json_shape() {
    let v = run_json(&[
        "simulate",
        "--preset",
        "tiny",
        "--rounds",
        "2",
        "--seeds",
        "1,2",
        "--accesses",
        "4000",
        "--json",
    ]);
    for k in ["first_run", "aged"] {
        frac(&v[k]["in_order"]);
        frac(&v[k]["shuffled"]);
    }
    assert_eq!(v["seeds"], 2);
    assert_eq!(v["curve"]["in_order"].as_array().unwrap().len(), 3);
    assert_eq!(v["curve"]["in_order"][0], v["first_run"]["in_order"]);
    assert_eq!(v["curve"]["shuffled"][2], v["aged"]["shuffled"]);
}

#[test]
fn simulate_is_reproducible_and_seed_dependent() {
    let args = [
        "simulate",
        "--preset",
        "tiny",
        "--rounds",
        "1",
        "--seeds",
        "5",
        "--accesses",
        "3000",
        "--json",
    ];
    assert_eq!(run_json(&args), run_json(&args));
    let other = run_json(&[
        "simulate",
        "--preset",
        "tiny",
        "--rounds",
        "1",
        "--seeds",
        "6",
        "--accesses",
        "3000",
        "--json",
    ]);
    assert_ne!(run_json(&args)["curve"], other["curve"]);
}

#[test]
fn simulate_two_instance_and_stream_and_line_mode() {
    for w in ["two-instance", "stream"] {
        let v = run_json(&[
            "simulate",
            "--preset",
            "tiny",
            "--workload",
            w,
            "--rounds",
            "1",
            "--seeds",
            "1",
            "--json",
        ]);
        assert_eq!(v["workload"], w);
        frac(&v["aged"]["in_order"]);
    }
    let v = run_json(&[
        "simulate",
        "--preset",
        "tiny",
        "--cache-mode",
        "line",
        "--rounds",
        "1",
        "--seeds",
        "1",
        "--accesses",
        "2000",
        "--json",
    ]);
    assert_eq!(v["cache_mode"], "line");
    assert_eq!(v["curve"]["in_order"].as_array().unwrap().len(), 2);
}

#[test]
fn simulate_table_and_svg() {
    let dir = std::env::temp_dir().join(format!("scalrand-shuffle-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("plot.svg");
    let png = dir.join("plot.png");
    let out = output(
        bin()
            .args([
                "simulate",
                "--preset",
                "tiny",
                "--rounds",
                "2",
                "--seeds",
                "1",
                "--accesses",
                "2000",
                "--svg",
            ])
            .arg(&svg)
            .arg("--png")
            .arg(&png),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same drawing as a PNG (signature, then an 800 x 480 IHDR).
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[16..24], &[0, 0, 3, 32, 0, 0, 1, 224]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("first run") && text.contains("in-order") && text.contains("shuffled"),
        "{text}"
    );
    // One seed is "1 seed", in the table's header and in the plot's title.
    assert!(
        text.contains(", 1 seed\n") && !text.contains("1 seeds"),
        "{text}"
    );
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.trim_end().ends_with("</svg>"));
    assert!(
        plot.contains("rules, 1 seed\n") && !plot.contains("1 seeds"),
        "{plot}"
    );
    // Two mean lines (and the legend's two sample lines), two min–max bands.
    assert!(plot.matches("<polyline").count() >= 2, "{plot}");
    assert_eq!(plot.matches("<polygon").count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bias_json() {
    let v = run_json(&[
        "bias",
        "--mode",
        "fisher-yates",
        "--blocks",
        "4",
        "--trials",
        "20000",
        "--json",
    ]);
    assert!(v["chi2_p"].as_f64().unwrap() > 0.001);
    assert!((frac(&v["fixed_point_rate"]) - 0.25).abs() < 0.02);
    let v = run_json(&[
        "bias", "--mode", "kernel", "--blocks", "6", "--trials", "20000", "--json",
    ]);
    assert!(v["chi2_p"].as_f64().unwrap() < 1e-6);
    let counts = v["counts"].as_array().unwrap();
    assert_eq!(counts.len(), 6);
    for row in counts {
        assert_eq!(
            row.as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .sum::<u64>(),
            20000
        );
    }
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for args in [
        &["simulate", "--cache-bytes", "1000", "--preset", "tiny"][..],
        &["simulate", "--order", "11", "--preset", "tiny"],
        &["simulate", "--seeds", "", "--preset", "tiny"],
        &["simulate", "--preset", "nope"],
        &["simulate", "--frobnicate"],
        &["bias", "--blocks", "1"],
        &["bias", "--mode", "bogo"],
        &["bias", "--trials"],
        &[],
    ] {
        let out = output(bin().args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("scalrand-shuffle: "),
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// `calibrate`'s bad inputs are refused before any zone is built: each answers at once with a
/// message naming the problem (even at `--scale 1`, whose run would take minutes).
#[test]
fn calibrate_bad_input_exits_2_before_work() {
    for (args, needle) in [
        (&["calibrate", "--scale", "3"][..], "power of two"),
        (&["calibrate", "--frobnicate"], "frobnicate"),
        (&["calibrate", "--scale", "0"], "power of two"),
        (&["calibrate", "--scale", "2048"], "power of two"),
        (
            &["calibrate", "--scale", "1", "--near-gbps", "0"],
            "above 0",
        ),
        (&["calibrate", "--scale", "1", "--far-gbps=-5"], "above 0"),
        (
            &["calibrate", "--scale", "1", "--near-gbps", "NaN"],
            "above 0",
        ),
        (
            &["calibrate", "--scale", "1", "--far-gbps", "500"],
            "must not exceed",
        ),
        (
            &["calibrate", "--scale", "1", "--rounds", "0"],
            "must be at least 1",
        ),
        (&["calibrate", "--scale", "1", "--sweeps", "0"], "sweep"),
        (&["calibrate", "--scale", "1", "--seeds", ""], "seed"),
        (&["calibrate", "--scale", "1", "--kernel", "4.19"], "kernel"),
        (
            &["calibrate", "--scale", "1", "--jvm-shares", "0.5,0.5"],
            "five numbers",
        ),
        (
            &[
                "calibrate",
                "--scale",
                "1",
                "--jvm-shares",
                "0.5,0.5,0.5,0,0",
            ],
            "sum to 1",
        ),
        (
            &["calibrate", "--scale", "1", "--jvm-hot-old", "0"],
            "hot old",
        ),
        (
            &["calibrate", "--scale", "1", "--jvm-hot-old", "2.5"],
            "--jvm-hot-old must be at most 2",
        ),
    ] {
        assert_refused(args, needle);
    }
}

#[test]
fn calibrate_json_shape() {
    let v = run_json(&[
        "calibrate",
        "--scale",
        "1024",
        "--seeds",
        "1,2",
        "--rounds",
        "1",
        "--json",
    ]);
    let k = &v["knl_stream"];
    for key in ["fresh_miss_ratio", "aged_miss_ratio"] {
        frac(&k[key]);
    }
    let (fresh, aged) = (
        k["fresh_gbps"].as_f64().unwrap(),
        k["aged_gbps"].as_f64().unwrap(),
    );
    assert!((90.0..=400.0).contains(&fresh) && (90.0..=400.0).contains(&aged));
    assert_eq!(k["target_fresh_gbps"], 336.0);
    assert_eq!(k["target_aged_gbps"], 117.0);
    assert_eq!(k["aged_miss_ratios"].as_array().unwrap().len(), 2);
    let a = &v["aliasing"];
    for p in ["in_order", "shuffled", "zonesort"] {
        frac(&a[format!("{p}_miss_ratio")]);
        a[format!("{p}_gbps")].as_f64().unwrap();
    }
    assert_eq!(a["smaller_instances"].as_array().unwrap().len(), 2);
    for p in ["in_order", "shuffle", "zonesort"] {
        for when in ["fresh", "aged"] {
            let d = &v["jvm"][p][when];
            let (lo, mid, hi) = (frac(&d["p10"]), frac(&d["median"]), frac(&d["p90"]));
            assert!(lo <= mid && mid <= hi, "{p} {when}: {d}");
        }
    }
    assert_eq!(v["config"]["scale"], 1024);
    assert_eq!(v["config"]["kernel"], "5.10");
    let j = &v["config"]["jvm"];
    let shares: Vec<f64> = ["eden", "survivor", "hot_old", "cold_old", "miss_floor"]
        .iter()
        .map(|k| frac(&j[k]))
        .collect();
    assert_eq!(shares, vec![0.5, 0.05, 0.4, 0.05, 0.0]);
    assert_eq!(j["hot_old_of_cache"], 0.125);
    // The JVM flags reach the JVM case: with every access in the miss floor, every policy's
    // conflict rate is 1 at every percentile.
    let v = run_json(&[
        "calibrate",
        "--scale",
        "1024",
        "--seeds",
        "1,2",
        "--rounds",
        "1",
        "--jvm-shares",
        "0,0,0,0,1",
        "--json",
    ]);
    for p in ["in_order", "shuffle", "zonesort"] {
        for when in ["fresh", "aged"] {
            for q in ["p10", "median", "p90"] {
                assert_eq!(v["jvm"][p][when][q], 1.0, "{p} {when} {q}");
            }
        }
    }
}

/// The one end-to-end check of the clap front end: help with examples, the version, a good
/// run whose JSON parses and round-trips, and a bad flag named in a status-2 error.
#[test]
fn help_version_good_run_and_bad_flag() {
    cli::assert_help_lists(
        bin().arg("--help"),
        &[
            "simulate",
            "bias",
            "Examples:",
            "--preset server --kernel 5.4",
        ],
    );
    cli::assert_help_lists(
        bin().args(["simulate", "--help"]),
        &[
            "--zone-mib <SIZE>",
            "--kernel <VERSION>",
            "--no-pcp",
            "--png <PATH>",
        ],
    );
    let out = output(bin().arg("--version"));
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("scalrand-shuffle {}", env!("CARGO_PKG_VERSION"))
    );
    // A good run with typed sizes; the JSON parses and survives a round trip.
    let out = output(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--zone-mib",
        "32MiB",
        "--cache-mib",
        "4MiB",
        "--kernel",
        "5.4",
        "--rounds",
        "1",
        "--seeds",
        "1,2",
        "--accesses",
        "2000",
        "--json",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["zone_pages"], 8192);
    assert_eq!(v["cache_bytes"], 4 << 20);
    assert_eq!(v["kernel"], "5.2");
    let again: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
    assert_eq!(again, v);
    // `plot` redraws from the saved report.
    let dir = std::env::temp_dir().join(format!("scalrand-shuffle-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (report, svg) = (dir.join("run.json"), dir.join("run.svg"));
    std::fs::write(&report, &out.stdout).unwrap();
    let out = output(
        bin()
            .args(["plot", "--report"])
            .arg(&report)
            .arg("--svg")
            .arg(&svg),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("kernel 5.2 rules")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // A bad flag and a bad size: status 2, the flag named.
    for (args, flag) in [
        (&["simulate", "--frobnicate"][..], "--frobnicate"),
        (&["simulate", "--zone-mib", "12parsecs"], "--zone-mib"),
        (&["simulate", "--kernel", "4.19"], "--kernel"),
    ] {
        let out = output(bin().args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("scalrand-shuffle: ") && err.contains(flag),
            "{err}"
        );
    }
}

/// Bad sizes and output paths are refused before any zone is built, each with a message that
/// names the problem: a negative size (not "unexpected argument"), an output directory that
/// does not exist (not after the whole run), and a zone whose memory estimate is more than
/// the machine has available (with the estimate).
#[test]
fn simulate_refuses_before_work() {
    let cases: [(&[&str], &str); 5] = [
        (&["simulate", "--zone-mib", "-5"], "negative"),
        (
            &["simulate", "--cache-mib", "-1", "--preset", "tiny"],
            "negative",
        ),
        (
            &["simulate", "--cache-bytes", "-64KiB", "--preset", "tiny"],
            "negative",
        ),
        (
            &[
                "simulate",
                "--preset",
                "tiny",
                "--svg",
                "/nonexistent-dir/x.svg",
            ],
            "does not exist",
        ),
        (
            &[
                "simulate",
                "--preset",
                "tiny",
                "--png",
                "/nonexistent-dir/x.png",
            ],
            "does not exist",
        ),
    ];
    for (args, want) in cases {
        assert_refused(args, want);
    }
    // A zone far larger than this machine's memory: refused with the estimate.
    let avail_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kib| kib >> 20);
    if let Some(avail) = avail_gib {
        // 17 bytes per 4 KiB page: a zone of 256 × the available GiB needs over 1 × it.
        let zone = format!("{}GiB", (avail + 1) * 256);
        let t = std::time::Instant::now();
        let out = output(bin().args(["simulate", "--preset", "tiny", "--zone-mib", &zone]));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("needs about") && err.contains("available"),
            "{err}"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
    }
}

/// `simulate --help` says what each preset is, not only its name.
#[test]
fn help_describes_every_preset() {
    let out = output(bin().args(["simulate", "--help"]));
    let help = String::from_utf8_lossy(&out.stdout);
    for (name, words) in [
        ("server", "64 GiB zone"),
        ("server-small", "1/16"),
        ("java", "order 0"),
        ("java-order10", "order 10"),
        ("stream", "STREAM"),
        ("two-instance", "alias"),
        ("tiny", "for tests"),
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("- {name}:")))
            .unwrap_or_else(|| panic!("no line for preset {name} in:\n{help}"));
        assert!(line.contains(words), "{line}");
    }
}

/// `--jobs N` of `subcommand` is refused at once, with exit status 2 and a message containing
/// `needle`, before any zone is built (at `--scale 1` or the `server` preset a run would take
/// minutes).
fn jobs_refused(subcommand: &str, jobs: &str, needle: &str) {
    let big = if subcommand == "calibrate" {
        ["--scale", "1"]
    } else {
        ["--preset", "server"]
    };
    let t = std::time::Instant::now();
    let out = output(bin().args([subcommand, big[0], big[1], "--jobs", jobs]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{subcommand} --jobs {jobs}: {err}"
    );
    assert!(err.starts_with("scalrand-shuffle: "), "{err}");
    assert!(err.contains("--jobs") && err.contains(needle), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        t.elapsed().as_secs() < 5,
        "{subcommand} --jobs {jobs} did work first"
    );
}

#[test]
fn jobs_zero_is_refused() {
    jobs_refused("simulate", "0", "1 or more");
    jobs_refused("calibrate", "0", "1 or more");
}

#[test]
fn jobs_negative_is_refused() {
    jobs_refused("simulate", "-2", "negative");
    jobs_refused("calibrate", "-2", "negative");
}

#[test]
fn jobs_not_a_number_is_refused() {
    jobs_refused("simulate", "many", "not a whole number");
    jobs_refused("calibrate", "1.5", "not a whole number");
}

#[test]
fn jobs_above_the_limit_is_refused() {
    jobs_refused("simulate", "1025", "1024");
    jobs_refused("calibrate", "99999999999999999999", "not a whole number");
    jobs_refused("calibrate", "4096", "1024");
}

/// One thread or several: the same report, bit for bit.
#[test]
fn jobs_do_not_change_the_results() {
    let sim = |jobs: &str| {
        run_json(&[
            "simulate",
            "--preset",
            "tiny",
            "--rounds",
            "1",
            "--seeds",
            "1,2,3",
            "--accesses",
            "3000",
            "--jobs",
            jobs,
            "--json",
        ])
    };
    let one = sim("1");
    assert_eq!(one, sim("3"));
    assert_eq!(one, sim("2"));
    let cal = |jobs: &str| {
        run_json(&[
            "calibrate",
            "--scale",
            "1024",
            "--seeds",
            "1,2,3",
            "--rounds",
            "1",
            "--sweeps",
            "1",
            "-j",
            jobs,
            "--json",
        ])
    };
    assert_eq!(cal("1"), cal("3"));
}

/// `--compact-every` takes a whole number of rounds, 1 or more, and needs the server aging;
/// anything else is refused at once with exit status 2 and a message naming the problem.
#[test]
fn compact_every_refused_before_work() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["simulate", "--preset", "tiny", "--compact-every", "0"],
            "1 or more",
        ),
        (
            &["simulate", "--preset", "tiny", "--compact-every", "-3"],
            "1 or more",
        ),
        (
            &["simulate", "--preset", "tiny", "--compact-every", "two"],
            "not a whole number",
        ),
        (
            &[
                "simulate",
                "--preset",
                "tiny",
                "--aging",
                "synthetic",
                "--compact-every",
                "2",
            ],
            "needs the server aging",
        ),
    ];
    for (args, want) in cases {
        assert_refused(args, want);
    }
    // A good value is accepted and lands in the resolved config.
    let out = output(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--aging",
        "server",
        "--compact-every",
        "2",
        "--dump-config",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cfg["server"]["compact_every"], 2);
    let out = output(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--aging",
        "server",
        "--dump-config",
    ]));
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("compact"));
}

/// `assert_refused`, and the message also contains `flag`: the refusal names what was wrong.
fn assert_refused_naming(args: &[&str], flag: &str, want: &str) {
    assert_refused(args, want);
    let out = output_within(args, 5);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(flag), "{args:?} does not name {flag}: {err}");
}

/// Every numeric flag refuses a negative value with a message naming the flag and its least
/// value, not clap's "unexpected argument '-1' found".
#[test]
fn negative_numbers_are_refused_naming_the_flag() {
    let at_least_0 = "must be at least 0, got -1";
    let at_least_1 = "must be at least 1, got -1";
    for (args, flag, want) in [
        (&["simulate", "--order", "-1"][..], "--order", at_least_0),
        (&["simulate", "--rounds", "-1"], "--rounds", at_least_1),
        (&["simulate", "--seeds", "-1"], "--seeds", at_least_0),
        (&["simulate", "--seeds", "1,-1"], "--seeds", at_least_0),
        (&["simulate", "--accesses", "-1"], "--accesses", at_least_1),
        (
            &["bias", "--blocks", "-1"],
            "--blocks",
            "must be at least 2, got -1",
        ),
        (&["bias", "--trials", "-1"], "--trials", at_least_1),
        (&["bias", "--seed", "-1"], "--seed", at_least_0),
        (
            &["calibrate", "--scale", "-1"],
            "--scale",
            "must be a power of two from 1 to 1024, got -1",
        ),
        (&["calibrate", "--seeds", "-1"], "--seeds", at_least_0),
        (&["calibrate", "--rounds", "-1"], "--rounds", at_least_1),
        (&["calibrate", "--sweeps", "-1"], "--sweeps", at_least_1),
        (
            &["calibrate", "--near-gbps", "-1"],
            "--near-gbps",
            "above 0 (GB/s), got -1",
        ),
        (
            &["calibrate", "--far-gbps", "-1"],
            "--far-gbps",
            "above 0 (GB/s), got -1",
        ),
        (
            &["calibrate", "--jvm-shares", "-0.5,0.5,1,0,0"],
            "--jvm-shares",
            "from 0 to 1, got -0.5",
        ),
        (
            &["calibrate", "--jvm-hot-old", "-1"],
            "--jvm-hot-old",
            "above 0",
        ),
    ] {
        assert_refused_naming(args, flag, want);
    }
    // Not a number at all, and a flag where the value should be: named as such.
    assert_refused_naming(
        &["simulate", "--order", "--json"],
        "--order",
        "is not a whole number",
    );
    assert_refused_naming(
        &["bias", "--trials", "many"],
        "--trials",
        "is not a whole number",
    );
}

/// `--kernel` takes the released kernels only, and its refusal lists them.
#[test]
fn kernel_takes_known_releases_only() {
    for (sub, v) in [
        ("simulate", "99.0"),
        ("simulate", "5.20"),
        ("calibrate", "6.20"),
    ] {
        assert_refused_naming(&[sub, "--kernel", v], "--kernel", "5.2 – 5.19, 6.0 – 6.19");
    }
    let out = output(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--kernel",
        "6.8",
        "--dump-config",
    ]));
    assert!(out.status.success());
    let cfg: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cfg["kernel"], "5.10");
}

/// Long runs say what they will cost (stderr) before they start, and one over its command's
/// cap is refused unless `--force`.
#[test]
fn long_runs_are_estimated_and_capped() {
    for (args, unit) in [
        (
            &["bias", "--trials", "100000000000000"][..],
            "shuffle steps",
        ),
        (
            &["simulate", "--preset", "tiny", "--rounds", "1000000000"],
            "work units",
        ),
        (
            &["simulate", "--preset", "tiny", "--accesses", "1e18"],
            "work units",
        ),
        (
            &[
                "calibrate",
                "--scale",
                "1",
                "--seeds",
                "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80",
            ],
            "work units",
        ),
    ] {
        assert_refused(args, "over the cap");
        let out = output_within(args, 5);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(unit) && err.contains("CPU time") && err.contains("--force"),
            "{args:?}: {err}"
        );
    }
    // A small run prints its estimate too (and `--quiet` does not).
    let out = output(bin().args(["bias", "--blocks", "4", "--trials", "1000", "--json"]));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("estimate: 4000 shuffle steps"), "{err}");
    let out = output(bin().args([
        "bias", "--blocks", "4", "--trials", "1000", "--json", "--quiet",
    ]));
    assert!(out.status.success() && out.stderr.is_empty());
    // `--force` runs past the cap: still running (not refused) after two seconds.
    let mut child = bin()
        .args(["bias", "--trials", "100000000000000", "--force"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let status = child.try_wait().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(status.is_none(), "--force did not run: {status:?}");
}

/// A size given with a unit is parsed; one that cannot make a run, or an unknown unit, is
/// refused naming the flag and the form it expects (not "heap does not fit in the zone").
#[test]
fn sizes_with_units_are_parsed_or_refused_by_flag() {
    assert_refused_naming(
        &["simulate", "--cache-mib", "64GiB"],
        "--cache-mib",
        "must be smaller than the zone",
    );
    assert_refused_naming(
        &["simulate", "--preset", "tiny", "--cache-mib", "16MiB"],
        "--cache-mib",
        "does not fit in the zone",
    );
    assert_refused_naming(
        &["simulate", "--preset", "tiny", "--cache-bytes", "1TiB"],
        "--cache-bytes",
        "must be smaller than the zone",
    );
    assert_refused_naming(
        &["simulate", "--zone-mib", "64XB"],
        "--zone-mib",
        "use B, KiB, MiB, GiB, TiB",
    );
    let out = output(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--zone-mib",
        "1GiB",
        "--cache-mib",
        "64MiB",
        "--dump-config",
    ]));
    assert!(out.status.success());
    let cfg: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cfg["cache_bytes"], 64 << 20);
    assert_eq!(cfg["zone_pages"], (1 << 30) / 4096);
}

/// `bias` draws a progress bar on a terminal (`script`, from util-linux, gives it one) and
/// none when stderr is a pipe.
#[test]
fn bias_shows_progress_on_a_terminal_only() {
    let cmd = format!(
        "{} bias --blocks 64 --trials 300000 --json",
        env!("CARGO_BIN_EXE_scalrand-shuffle")
    );
    let Ok(out) = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
    else {
        eprintln!("skipped: no `script` command to give the tool a terminal");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("/300000 shuffles"),
        "no progress bar in: {text}"
    );
    let out = output(bin().args(["bias", "--blocks", "64", "--trials", "30000", "--json"]));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("shuffles,"));
}

/// A zone or cache size the model cannot hold is refused naming the flag that set it: a zone
/// of no whole page (`0`, `1KiB`) or above the model's 2^31 pages (`16TiB`), a cache of zero
/// bytes or not a whole number of its units.
#[test]
fn simulate_size_refusals_name_the_flag() {
    for (args, flag) in [
        (&["simulate", "--zone-mib", "16TiB"][..], "--zone-mib"),
        (&["simulate", "--zone-mib", "0"], "--zone-mib"),
        (&["simulate", "--zone-mib", "1KiB"], "--zone-mib"),
        (
            &["simulate", "--preset", "tiny", "--cache-mib", "0"],
            "--cache-mib",
        ),
        (
            &["simulate", "--preset", "tiny", "--cache-bytes", "0"],
            "--cache-bytes",
        ),
        (
            &["simulate", "--preset", "tiny", "--cache-bytes", "100"],
            "--cache-bytes",
        ),
    ] {
        assert_refused(args, flag);
    }
}

/// A count that must be 1 or more (2 or more for `--blocks`) refuses 0 with clap's message
/// naming the flag, before any work: `--accesses`, `--rounds`, `--trials`, `--sweeps`,
/// `--blocks`; `--rounds 0` too, whose run would have no aged measurement.
#[test]
fn counts_below_their_minimum_are_refused_naming_the_flag() {
    for (args, flag, want) in [
        (
            &["simulate", "--preset", "tiny", "--accesses", "0"][..],
            "--accesses",
            "must be at least 1, got 0",
        ),
        (
            &[
                "simulate",
                "--preset",
                "tiny",
                "--workload",
                "two-instance",
                "--accesses",
                "0",
            ],
            "--accesses",
            "must be at least 1, got 0",
        ),
        (
            &["simulate", "--preset", "tiny", "--rounds", "0"],
            "--rounds",
            "must be at least 1, got 0",
        ),
        (
            &["bias", "--blocks", "1"],
            "--blocks",
            "must be at least 2, got 1",
        ),
        (
            &["bias", "--blocks", "0"],
            "--blocks",
            "must be at least 2, got 0",
        ),
        (
            &["bias", "--blocks", "65537"],
            "--blocks",
            "`65537` is more than 65536, the most this flag takes",
        ),
        (
            &["bias", "--trials", "0"],
            "--trials",
            "must be at least 1, got 0",
        ),
        (
            &["calibrate", "--scale", "1", "--rounds", "0"],
            "--rounds",
            "must be at least 1, got 0",
        ),
        (
            &["calibrate", "--scale", "1", "--sweeps", "0"],
            "--sweeps",
            "must be at least 1, got 0",
        ),
    ] {
        assert_refused_naming(args, flag, want);
    }
}

/// `--rounds 0` in a `--config` file is refused too, naming the file.
#[test]
fn zero_rounds_in_a_config_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("scalrand-shuffle-rounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zero-rounds.json");
    let mut cfg: serde_json::Value = serde_json::from_str(&cli::stdout_of(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--dump-config",
    ])))
    .unwrap();
    cfg["aging_rounds"] = 0.into();
    std::fs::write(&path, cfg.to_string()).unwrap();
    let p = path.to_str().unwrap();
    assert_refused_naming(
        &["simulate", "--config", p],
        "--config",
        "aging_rounds must be at least 1",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `calibrate`'s refusals name the flag: a `--scale` that is not a power of two in 1 ..= 1024,
/// a `--far-gbps` above `--near-gbps`, `--jvm-shares` that do not sum to 1, a `--jvm-hot-old`
/// larger than the old generation.
#[test]
fn calibrate_refusals_name_the_flag() {
    let scale = "must be a power of two from 1 to 1024";
    for (args, flag, want) in [
        (&["calibrate", "--scale", "0"][..], "--scale", scale),
        (&["calibrate", "--scale", "3"], "--scale", scale),
        (&["calibrate", "--scale", "2048"], "--scale", scale),
        (
            &["calibrate", "--scale", "1", "--far-gbps", "500"],
            "--far-gbps",
            "--far-gbps (500 GB/s) must not exceed --near-gbps (400 GB/s)",
        ),
        (
            &["calibrate", "--scale", "1", "--near-gbps", "50"],
            "--near-gbps",
            "--far-gbps (90 GB/s) must not exceed --near-gbps (50 GB/s)",
        ),
        (
            &[
                "calibrate",
                "--scale",
                "1",
                "--jvm-shares",
                "0.5,0.5,0.5,0,0",
            ],
            "--jvm-shares",
            "--jvm-shares must sum to 1, got 1.5",
        ),
        (
            &["calibrate", "--scale", "1", "--jvm-hot-old", "2.5"],
            "--jvm-hot-old",
            "--jvm-hot-old must be at most 2 (the old generation, in caches), got 2.5",
        ),
    ] {
        assert_refused_naming(args, flag, want);
    }
}

/// A seed given twice would run the same history twice and count it as two seeds: refused,
/// naming `--seeds` (or the `--config` file) and the seed.
#[test]
fn duplicate_seeds_are_refused() {
    for args in [
        &["simulate", "--preset", "tiny", "--seeds", "1,1"][..],
        &["simulate", "--preset", "tiny", "--seeds", "1,2,3,1"],
        &[
            "simulate",
            "--preset",
            "tiny",
            "--seeds",
            "1,1",
            "--dump-config",
        ],
        &["calibrate", "--scale", "1", "--seeds", "2,1,1e0"],
    ] {
        assert_refused_naming(args, "--seeds", "seed 1 is given twice");
    }
    let dir = std::env::temp_dir().join(format!("scalrand-shuffle-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("twice.json");
    let mut cfg: serde_json::Value = serde_json::from_str(&cli::stdout_of(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--dump-config",
    ])))
    .unwrap();
    cfg["seeds"] = serde_json::json!([4, 4]);
    std::fs::write(&path, cfg.to_string()).unwrap();
    assert_refused_naming(
        &["simulate", "--config", path.to_str().unwrap()],
        "--config",
        "seed 4 is given twice",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A zone too small for the cache or for the workload sized from the cache is refused naming
/// `--zone-mib` (not "heap does not fit in the zone's free memory" once the run starts).
#[test]
fn zone_too_small_for_its_workload_is_refused_naming_the_flag() {
    for (args, want) in [
        (
            &["simulate", "--preset", "tiny", "--zone-mib", "1"][..],
            "--zone-mib: the zone (1.0 MiB) must be larger than the cache (4.0 MiB, the preset's cache)",
        ),
        (
            &["simulate", "--preset", "tiny", "--zone-mib", "8"],
            "--zone-mib: the heap the workload sizes from the cache (12.0 MiB) does not fit in the zone (8.0 MiB)",
        ),
        (
            &[
                "simulate",
                "--preset",
                "tiny",
                "--workload",
                "stream",
                "--zone-mib",
                "5",
            ],
            "--zone-mib: the stream arrays the workload sizes from the cache (6.0 MiB) do not fit in the zone (5.0 MiB)",
        ),
    ] {
        assert_refused_naming(args, "--zone-mib", want);
    }
}

/// Sizes take binary units only (K/KiB, M/MiB, G/GiB, T/TiB, B); a decimal unit (`64GB`) is
/// refused naming the flag, not read as GiB. A plain number of `--zone-mib`/`--cache-mib` is
/// MiB, fractions included; a size that is not a whole number of bytes, or a zone that is not
/// a whole number of pages, is refused.
#[test]
fn sizes_take_binary_units_only() {
    for (args, flag, want) in [
        (
            &["simulate", "--zone-mib", "64GB"][..],
            "--zone-mib",
            "`GB` is a decimal unit",
        ),
        (
            &["simulate", "--preset", "tiny", "--cache-mib", "2MB"],
            "--cache-mib",
            "`MB` is a decimal unit",
        ),
        (
            &["simulate", "--preset", "tiny", "--cache-bytes", "64kb"],
            "--cache-bytes",
            "`kb` is a decimal unit",
        ),
        (
            &["simulate", "--preset", "tiny", "--cache-bytes", "1.5"],
            "--cache-bytes",
            "not a whole number of bytes",
        ),
        (
            &["simulate", "--preset", "tiny", "--zone-mib", "0.3"],
            "--zone-mib",
            "not a whole number of bytes",
        ),
        (
            &["simulate", "--preset", "tiny", "--zone-mib", "40002KiB"],
            "--zone-mib",
            "not a whole number of 4096-byte pages",
        ),
    ] {
        assert_refused_naming(args, flag, want);
    }
    let resolved = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["simulate", "--preset", "tiny", "--dump-config"];
        args.extend_from_slice(extra);
        serde_json::from_str(&cli::stdout_of(bin().args(&args))).unwrap()
    };
    assert_eq!(
        resolved(&["--zone-mib", "48.5"])["zone_pages"],
        48 * 256 + 128
    );
    assert_eq!(resolved(&["--zone-mib", "1G"])["zone_pages"], 256 * 1024);
    assert_eq!(resolved(&["--cache-mib", "1.5"])["cache_bytes"], 3 << 19);
    assert_eq!(resolved(&["--cache-mib", "2M"])["cache_bytes"], 2 << 20);
    let help = cli::stdout_of(bin().args(["simulate", "--help"]));
    assert!(
        help.contains("decimal units (KB, MB, GB, TB) are refused"),
        "{help}"
    );
}

/// `--accesses` does not apply to the stream workload (it sweeps its arrays): refused, not
/// ignored.
#[test]
fn accesses_with_the_stream_workload_is_refused() {
    assert_refused_naming(
        &[
            "simulate",
            "--preset",
            "tiny",
            "--workload",
            "stream",
            "--accesses",
            "1000",
        ],
        "--accesses",
        "does not apply to the stream workload",
    );
    assert_refused_naming(
        &["simulate", "--preset", "stream", "--accesses", "1000"],
        "--accesses",
        "does not apply to the stream workload",
    );
}

/// `plot` refuses an `--svg`/`--png` in a directory that does not exist, or naming a
/// directory, naming the flag.
#[test]
fn plot_output_refusals_name_the_flag() {
    let dir = std::env::temp_dir().join(format!("scalrand-shuffle-plotout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("run.json");
    let text = cli::stdout_of(bin().args([
        "simulate",
        "--preset",
        "tiny",
        "--rounds",
        "1",
        "--seeds",
        "1",
        "--accesses",
        "1000",
        "--json",
        "--quiet",
    ]));
    std::fs::write(&report, text).unwrap();
    let r = report.to_str().unwrap();
    let d = dir.to_str().unwrap();
    assert_refused_naming(
        &["plot", "--report", r, "--svg", "/nonexistent-dir/x.svg"],
        "--svg",
        "directory /nonexistent-dir does not exist",
    );
    assert_refused_naming(
        &["plot", "--report", r, "--png", d],
        "--png",
        "is a directory",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
