//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! ```text
//! cargo xtask ci [--skip STEP]... [--only STEP]...   everything CI checks (see `STEPS`)
//! cargo xtask scaling [ARGS]...                       the scaling harness (README's main job)
//! cargo xtask no-std                                  library crates for thumbv7em-none-eabihf
//! cargo xtask loom                                    every loom model
//! cargo xtask fuzz [--seconds N] [--runs N] [TARGET]...  fuzz campaigns (cargo-fuzz, nightly)
//! cargo xtask stats --list | GEN [--bytes N] [--smoke] [--dieharder [ARGS]...]
//!                                                     raw output / batteries (dieharder -g 200)
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The CI steps, in order; `cargo xtask ci --only NAME` / `--skip NAME` select them.
const STEPS: &[&str] = &[
    "fmt",
    "clippy",
    "test",
    "no-default-features",
    "doc",
    "bench-build",
    "no-std",
    "loom",
    "miri",
    "sanitizers",
    "fuzz-build",
    "fuzz-smoke",
    "package",
];

/// miri runs: (package, cargo test arguments). Everything that is not FFI, inline assembly,
/// signals or `fork` (those tests carry `#[cfg_attr(miri, ignore)]`).
const MIRI: &[(&str, &[&str])] = &[
    (
        "scalrand-fastprng",
        &["--lib", "--test", "reference", "--test", "percpu"],
    ),
    // The node pools' hand-rolled try-lock and slot code (the crate's `unsafe`).
    ("scalrand-pool", &["--lib", "numa::tests"]),
];

/// ThreadSanitizer and AddressSanitizer runs over the concurrency stress tests:
/// (package, test target).
const SANITIZE: &[(&str, &str)] = &[
    ("scalrand-fastprng", "percpu"),
    ("scalrand-pool", "fortuna_concurrent"),
    ("scalrand-pool", "numa_nodes"),
];

/// Seconds each fuzz target runs in CI's smoke (`cargo xtask fuzz` defaults to 60).
const FUZZ_SMOKE_SECONDS: u64 = 30;

/// Library crates and the feature sets that must build without `std`.
const NO_STD: &[(&str, &str)] = &[
    ("scalrand-fastprng", ""),
    ("scalrand-fastprng", "alloc"),
    ("scalrand-pool", ""),
    ("scalrand-shuffle", ""),
    ("scalrand-simd-chunk", ""),
    ("scalrand-simd-chunk", "async"),
    ("scalrand", ""),
    ("scalrand-example-firmware", ""),
];
const NO_STD_TARGET: &str = "thumbv7em-none-eabihf";

/// loom models: (package, test target or `--lib`, optional test-name filter,
/// `LOOM_MAX_PREEMPTIONS`). The bound keeps each model inside loom's branch limit and CI's
/// time budget; the node-pool and Fortuna models have longer paths per interleaving.
const LOOM: &[(&str, &str, &str, u32)] = &[
    ("scalrand-fastprng", "loom_percpu", "", 3),
    ("scalrand-simd-chunk", "loom_flag", "", 3),
    ("scalrand-pool", "--lib", "numa::loom_tests", 2),
    ("scalrand-pool", "--lib", "fortuna::rng::loom", 2),
];

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(project_root());
    c
}

/// `cargo +nightly ...`, through rustup's proxy (the `CARGO` variable points at stable).
fn cargo_nightly() -> Command {
    let mut c = Command::new("cargo");
    c.arg("+nightly").current_dir(project_root());
    // Let rustup pick the toolchain from `+nightly`, not from the outer cargo's environment.
    c.env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .env_remove("RUSTC");
    c
}

fn run(step: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("\n==> [{step}] {:?}", cmd);
    let t = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("[{step}] cannot start: {e}"))?;
    eprintln!("<== [{step}] {:.1}s", t.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("[{step}] failed: {status}"))
    }
}

fn step(name: &str) -> Result<(), String> {
    match name {
        "fmt" => {
            let mut c = cargo();
            c.args(["fmt", "--all", "--", "--check"]);
            run(name, c)?;
            let mut c = cargo();
            c.args(["fmt", "--manifest-path", "fuzz/Cargo.toml", "--", "--check"]);
            run(name, c)
        }
        "clippy" => {
            let mut c = cargo();
            c.args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ]);
            run(name, c)
        }
        "test" => {
            let mut c = cargo();
            c.args(["test", "--workspace", "--all-features"]);
            run(name, c)?;
            // The simulator's seed-shape check needs release speed (about 3 s there).
            let mut c = cargo();
            c.args([
                "test",
                "--release",
                "-p",
                "scalrand-shuffle",
                "--test",
                "shape",
                "--",
                "--ignored",
            ]);
            run(name, c)
        }
        "doc" => {
            let mut c = cargo();
            c.args(["doc", "--workspace", "--no-deps", "--all-features"]);
            c.env("RUSTDOCFLAGS", "-D warnings");
            run(name, c)
        }
        "bench-build" => {
            let mut c = cargo();
            c.args(["bench", "-p", "scalrand-benches", "--no-run"]);
            run(name, c)
        }
        "no-std" => no_std(),
        "loom" => loom(),
        "miri" => miri(),
        "no-default-features" => {
            // The library crates without `std` (on the host): lints and tests still pass.
            for pkg in [
                "scalrand-fastprng",
                "scalrand-pool",
                "scalrand-shuffle",
                "scalrand-simd-chunk",
            ] {
                let mut c = cargo();
                c.args([
                    "clippy",
                    "-p",
                    pkg,
                    "--all-targets",
                    "--no-default-features",
                    "--",
                    "-D",
                    "warnings",
                ]);
                run(name, c)?;
                let mut c = cargo();
                c.args(["test", "-p", pkg, "--no-default-features"]);
                run(name, c)?;
            }
            Ok(())
        }
        "package" => {
            // Every publishable crate packages and its tarball builds on its own (cargo
            // resolves the workspace's unpublished crates through a local overlay registry).
            let mut c = cargo();
            c.args([
                "package",
                "--allow-dirty",
                "--workspace",
                "--exclude",
                "scalrand-benches",
                "--exclude",
                "xtask",
                "--exclude",
                "scalrand-example-firmware",
            ]);
            c.env(
                "CARGO_TARGET_DIR",
                project_root().join("target/package-check"),
            );
            run(name, c)
        }
        "sanitizers" => sanitizers(),
        "fuzz-smoke" => fuzz(&["--seconds".into(), FUZZ_SMOKE_SECONDS.to_string()]),
        "fuzz-build" => {
            let mut c = cargo_nightly();
            c.args(["fuzz", "build", "--fuzz-dir", "fuzz"]);
            run(name, c)
        }
        other => Err(format!(
            "unknown step {other:?}; steps: {}",
            STEPS.join(", ")
        )),
    }
}

fn no_std() -> Result<(), String> {
    for (pkg, features) in NO_STD {
        let mut c = cargo();
        c.args([
            "build",
            "-p",
            pkg,
            "--no-default-features",
            "--target",
            NO_STD_TARGET,
        ]);
        if !features.is_empty() {
            c.args(["--features", features]);
        }
        // A separate target dir keeps the host build cache intact.
        c.env("CARGO_TARGET_DIR", project_root().join("target/no-std"));
        run(&format!("no-std {pkg} [{features}]"), c)?;
    }
    Ok(())
}

fn miri() -> Result<(), String> {
    for (pkg, args) in MIRI {
        let mut c = cargo_nightly();
        c.args(["miri", "test", "-p", pkg]).args(*args);
        // Isolation off: proptest's failure persistence reads the working directory.
        c.env("MIRIFLAGS", "-Zmiri-disable-isolation")
            .env("PROPTEST_CASES", "4");
        run(&format!("miri {pkg}"), c)?;
    }
    Ok(())
}

fn sanitizers() -> Result<(), String> {
    let host = "x86_64-unknown-linux-gnu";
    for san in ["thread", "address"] {
        for (pkg, test) in SANITIZE {
            let mut c = cargo_nightly();
            c.args([
                "test",
                "-Zbuild-std",
                "--target",
                host,
                "-p",
                pkg,
                "--test",
                test,
            ]);
            c.env("RUSTFLAGS", format!("-Zsanitizer={san}"))
                .env("RUSTDOCFLAGS", format!("-Zsanitizer={san}"))
                .env(
                    "CARGO_TARGET_DIR",
                    project_root().join(format!("target/san-{san}")),
                );
            if san == "thread" {
                // Fail on the first report instead of printing and exiting 0.
                c.env("TSAN_OPTIONS", "halt_on_error=1");
            } else {
                c.env("ASAN_OPTIONS", "detect_leaks=1");
            }
            run(&format!("{san}-sanitizer {pkg} {test}"), c)?;
        }
    }
    Ok(())
}

fn loom() -> Result<(), String> {
    for (pkg, test, filter, preemptions) in LOOM {
        let mut c = cargo();
        c.args(["test", "--release", "-p", pkg]);
        if *test == "--lib" {
            c.arg("--lib");
        } else {
            c.args(["--test", test]);
        }
        if !filter.is_empty() {
            c.arg(filter);
        }
        c.env("RUSTFLAGS", "--cfg scalrand_loom")
            .env(
                "LOOM_MAX_PREEMPTIONS",
                std::env::var("LOOM_MAX_PREEMPTIONS").unwrap_or_else(|_| preemptions.to_string()),
            )
            .env("CARGO_TARGET_DIR", project_root().join("target/loom"));
        run(&format!("loom {pkg} {test} {filter}"), c)?;
    }
    Ok(())
}

fn ci(args: &[String]) -> Result<(), String> {
    let mut only = vec![];
    let mut skip = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or_else(|| format!("{a} needs a step name"))?;
        match a.as_str() {
            "--only" => only.push(v.clone()),
            "--skip" => skip.push(v.clone()),
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    for s in only.iter().chain(&skip) {
        if !STEPS.contains(&s.as_str()) {
            return Err(format!("unknown step {s:?}; steps: {}", STEPS.join(", ")));
        }
    }
    let t = Instant::now();
    for s in STEPS {
        if (!only.is_empty() && !only.iter().any(|o| o == s)) || skip.iter().any(|k| k == s) {
            continue;
        }
        step(s)?;
    }
    eprintln!(
        "\nxtask ci: all steps passed in {:.0}s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn scaling(args: &[String]) -> Result<(), String> {
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "scalrand-benches",
        "--bin",
        "scaling",
        "--",
    ]);
    c.args(args);
    run("scaling", c)
}

fn fuzz(args: &[String]) -> Result<(), String> {
    let mut seconds = 60u64;
    let mut runs: Option<u64> = None;
    let mut targets = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seconds" {
            seconds = it
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or("--seconds needs a number")?;
        } else if a == "--runs" {
            runs = Some(
                it.next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--runs needs a number")?,
            );
        } else {
            targets.push(a.clone());
        }
    }
    if targets.is_empty() {
        let out = cargo_nightly()
            .args(["fuzz", "list", "--fuzz-dir", "fuzz"])
            .output()
            .map_err(|e| format!("cargo fuzz list: {e}"))?;
        targets = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .filter(|l| !l.is_empty())
            .collect();
    }
    let root = project_root();
    for t in targets {
        // New inputs go to the (ignored) working corpus, the first directory; the committed
        // seeds (a minimised corpus of the long campaigns, plus any crash turned regression
        // input) are replayed with it before fuzzing, so even a 30 s smoke starts from the
        // campaigns' coverage.
        let corpus = root.join("fuzz/corpus").join(&t);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let seeds = root.join("fuzz/seeds").join(&t);
        let mut c = cargo_nightly();
        c.args(["fuzz", "run", "--fuzz-dir", "fuzz", &t]);
        c.arg(&corpus);
        if seeds.is_dir() {
            c.arg(&seeds);
        }
        c.args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-print_final_stats=1",
        ]);
        if let Some(n) = runs {
            // Stops at N executions or after --seconds, whichever comes first.
            c.arg(format!("-runs={n}"));
        }
        run(&format!("fuzz {t}"), c)?;
    }
    Ok(())
}

fn stats(args: &[String]) -> Result<(), String> {
    let mut c = cargo();
    c.args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "scalrand-benches",
        "--bin",
        "stats",
    ]);
    run("stats build", c)?;
    let bin = project_root().join("target/release/stats");
    let (ours, dieharder) = match args.iter().position(|a| a == "--dieharder") {
        Some(i) => (&args[..i], Some(&args[i + 1..])),
        None => (args, None),
    };
    let Some(extra) = dieharder else {
        let status = Command::new(&bin)
            .args(ours)
            .status()
            .map_err(|e| format!("stats: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err(format!("stats: {status}"))
        };
    };
    // GEN | dieharder -g 200 -a (or the given dieharder arguments)
    let mut producer = Command::new(&bin)
        .args(ours)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("stats: {e}"))?;
    let pipe = producer.stdout.take().ok_or("stats: no stdout")?;
    let mut d = Command::new("dieharder");
    d.args(["-g", "200"]);
    if extra.is_empty() {
        d.arg("-a");
    } else {
        d.args(extra);
    }
    eprintln!("==> {:?} {:?} | {:?}", bin, ours, d);
    let status = d
        .stdin(pipe)
        .status()
        .map_err(|e| format!("dieharder: {e} (apt-get install -y dieharder)"))?;
    let _ = producer.kill();
    let _ = producer.wait();
    if status.success() {
        Ok(())
    } else {
        Err(format!("dieharder: {status}"))
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("help", &[][..]),
    };
    let result = match cmd {
        "ci" => ci(rest),
        "scaling" => scaling(rest),
        "no-std" => no_std(),
        "loom" => loom(),
        "fuzz" => fuzz(rest),
        "stats" => stats(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci [--only STEP|--skip STEP]... | scaling [ARGS] | no-std | loom | fuzz [--seconds N] [--runs N] [TARGET]... | stats --list | stats GEN [--bytes N] [--smoke] [--dieharder [ARGS]...]>\n\
                 CI steps: {}",
                STEPS.join(", ")
            );
            return if cmd == "help" || cmd == "--help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
