//! `cargo xtask ci`: every check CI runs, as an enum of steps in CI's order.
//!
//! This file picks the steps and runs them; [`steps`] holds the bodies of the longer steps,
//! and [`lanes`] the second lane that runs some of them in a child process.

mod lanes;
mod steps;

use std::time::{Duration, Instant};

use crate::artifacts::{build_tests, test_binary};
use crate::cmd::Result;
use crate::cmd::{Cmd, cargo, cargo_nightly};
use crate::config::{
    CAMPAIGN_VAR, FUZZ_SMOKE_SECONDS, GETRANDOM_BACKEND_RUSTFLAGS, GETRANDOM_PROGRAM_MANIFEST,
    LIB_CRATES, MUSL_TEST_TARGET, OTHER_TARGETS, SCALING_HARNESS, UNPUBLISHED,
};
use crate::step::Step;
use crate::{doc_links, flags, fresh_crate, fuzz, getrandom_suites, loom, no_std, vm};

use lanes::SecondLane;
use steps::{
    aarch64_qemu, backend_portable, backends, forget_overlay_sources, getrandom_program,
    latest_deps, miri, sanitizers, windows_wine,
};

/// Runs one step.
fn run_step(step: Step) -> Result {
    let name = step.name();
    let name = name.as_str();
    match step {
        Step::Fmt => {
            cargo(name, ["fmt", "--all", "--", "--check"]).run()?;
            for manifest in ["fuzz/Cargo.toml", GETRANDOM_PROGRAM_MANIFEST] {
                cargo(name, ["fmt", "--manifest-path", manifest, "--", "--check"]).run()?;
            }
            Ok(())
        }
        Step::Test => {
            // The long campaigns run a sample (unoptimised here; `backends` runs them
            // optimised).
            let workspace = || -> Result<Cmd> {
                Ok(steps::expect_rseq_here(
                    workspace_tests(name)?.env(CAMPAIGN_VAR, crate::config::campaign()?),
                ))
            };
            // One build, linted as it compiles (`cargo clippy --workspace --all-targets
            // --all-features -- -D warnings`, less the bench targets, which `bench-build`
            // lints), whose pool erasure test runs a second time below.
            let built = build_tests(workspace()?.arg("--no-run"))?;
            workspace()?.run()?;
            // The memory scans with glibc's rseq registration off: no section is watched, so
            // every one ends with the wipe that reaches past a signal frame (in unoptimised
            // frames, which are the deepest).
            test_binary(&built, "scalrand-pool", "numa_erasure")?
                .cmd(&format!("{name} numa_erasure, rseq off"), &[])
                .env("GLIBC_TUNABLES", "glibc.pthread.rseq=0")
                .run()?;
            // The simulator's shape check (the conflict-rate shape that Linux commit
            // e900a918b098 reports) needs release speed (about 35 s there: the server-small
            // check over several seeds). The library alone: without the `cli` feature cargo
            // does not build the command-line tool (and its plotting and image crates)
            // optimised, which this test does not run.
            cargo(name, ["test", "--release", "-p", "scalrand-shuffle"])
                .args(["--no-default-features", "--features", "std"])
                .args(["--test", "shape", "--", "--ignored"])
                .run()?;
            // (The rseq refill protocol's model check runs in `backends`' release build.)
            // Apple's fork detection (pthread_atfork with a pid window), forced on Linux.
            cargo(name, ["test", "-p", "scalrand-os"])
                .env("RUSTFLAGS", "--cfg scalrand_fork_atfork")
                .target_dir("fork-atfork")
                .run()?;
            // scalrand as getrandom's custom backend: getrandom built for it, so every
            // getrandom call of the test binary (0.3's and 0.4's) reaches the pools.
            cargo(
                name,
                ["test", "-p", "scalrand", "--features", "getrandom-backend"],
            )
            .args(["--test", "getrandom_backend"])
            .env("RUSTFLAGS", GETRANDOM_BACKEND_RUSTFLAGS)
            .target_dir("getrandom-backend")
            .run()
        }
        Step::GetrandomProgram => getrandom_program(name),
        Step::GetrandomSuites => getrandom_suites::run(),
        Step::Backends => backends(),
        Step::BackendPortable => backend_portable(),
        // The machines boot once each; the check of the checks (detection broken, routing
        // must fail) runs inside one of them after its tests.
        Step::NumaVm => vm::run(&flags::Vm {
            machine: vec![],
            break_detection: None,
            list: false,
        }),
        Step::LatestDeps => latest_deps(),
        Step::OtherTargets => {
            for (target, features) in OTHER_TARGETS {
                let mut c = cargo(
                    &format!("{name} {target}"),
                    ["clippy", "-p", "scalrand", "--target", target],
                );
                if !features.is_empty() {
                    c = c.args(["--features", features]);
                }
                c.args(["--", "-D", "warnings"])
                    .target_dir("other-targets")
                    .run()?;
            }
            // x86_64 musl runs here (Rust links its own musl): the OS layer's own declarations
            // of the C library held to the `libc` crate's musl values, and its tests.
            cargo(
                &format!("{name} {MUSL_TEST_TARGET} tests"),
                [
                    "test",
                    "-p",
                    "scalrand-os",
                    "--lib",
                    "--target",
                    MUSL_TEST_TARGET,
                ],
            )
            .target_dir("other-targets")
            .run()
        }
        Step::Aarch64Qemu => aarch64_qemu(name),
        Step::WindowsWine => windows_wine(name),
        Step::NoDefaultFeatures => {
            // The library crates without `std` (on the host): lints and tests still pass. The
            // test build lints as it compiles (it builds every target `clippy --all-targets`
            // checks: these crates have no benches or examples).
            for pkg in LIB_CRATES {
                cargo(name, ["test", "-p", pkg, "--no-default-features"])
                    .linted()?
                    .run()?;
            }
            Ok(())
        }
        Step::Doc => cargo(name, ["doc", "--workspace", "--no-deps", "--all-features"])
            .env("RUSTDOCFLAGS", "-D warnings")
            .run(),
        Step::DocLinks => doc_links::run(),
        Step::FreshCrate => fresh_crate::run(),
        // The bench targets in the `test` step's build (its features and profile: nothing
        // but the bench targets themselves to compile), each benchmark run once; then the
        // scaling harness as `cargo xtask scaling` builds it, optimised, without the criterion
        // benches' feature. `--bench '*'`, not `--benches`, which would also build and run
        // every library's and program's unit tests again.
        Step::BenchBuild => {
            workspace_tests(name)?
                .args(["--bench", "*", "--", "--test"])
                .run()?;
            cargo(name, ["build"]).args(SCALING_HARNESS).run()
        }
        Step::NoStd => no_std::run(),
        Step::Loom => loom::run(),
        Step::Miri => miri(),
        Step::Sanitizers => sanitizers(),
        Step::FuzzBuild => cargo_nightly(name, ["fuzz", "build", "--fuzz-dir", "fuzz"]).run(),
        Step::FuzzSmoke => fuzz::run(&flags::Fuzz {
            seconds: FUZZ_SMOKE_SECONDS,
            runs: None,
            quiet: true,
            jobs: 2,
            targets: vec![],
        }),
        Step::Package => {
            // Every publishable crate packages and its tarball builds on its own (cargo
            // resolves the workspace's unpublished crates through a local overlay
            // registry), as `cargo publish --dry-run --workspace` does it, with no warning.
            forget_overlay_sources()?;
            let mut c = cargo(
                name,
                ["publish", "--dry-run", "--allow-dirty", "--workspace"],
            );
            for pkg in UNPUBLISHED {
                c = c.args(["--exclude", pkg]);
            }
            steps::without_warnings(c.target_dir("package-check"))
        }
    }
}

/// Refuses a selection that contradicts itself before anything runs: a step both asked for
/// with `--only` and left out with `--skip`.
fn check(flags: &flags::Ci) -> Result {
    if let Some(s) = flags.only.iter().find(|s| flags.skip.contains(s)) {
        let s = s.name();
        return Err(format!(
            "--only {s} and --skip {s}: a step cannot be both run and left out"
        ));
    }
    // The campaign size, refused before any step starts rather than by the first test that
    // reads it.
    crate::config::campaign().map(|_| ())
}

/// The steps `--only` and `--skip` leave, in CI's order.
fn selected(flags: &flags::Ci) -> Vec<Step> {
    Step::all()
        .iter()
        .copied()
        .filter(|s| flags.only.is_empty() || flags.only.contains(s))
        .filter(|s| !flags.skip.contains(s))
        .collect()
}

/// `cargo xtask ci`.
///
/// The steps run in two lanes at once unless `--serial` is given: the first lane here, in
/// CI's order, and the second ([`Step::second_lane`]) in a child process (`cargo xtask ci
/// --serial --only …`) whose output goes to `target/ci-logs/second-lane.log` and is printed
/// whole when it ends. A lane stops at its first failed step; a failure in either stops the
/// other.
pub fn run(flags: &flags::Ci) -> Result {
    check(flags)?;
    let limit = std::env::var(crate::config::COMMAND_LIMIT_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(crate::config::COMMAND_LIMIT, Duration::from_secs);
    crate::cmd::limit_each_command(limit);
    let steps = selected(flags);
    if flags.list {
        for s in &steps {
            println!("{}", s.name());
        }
        return Ok(());
    }
    let t = Instant::now();
    let (mut first, mut second): (Vec<Step>, Vec<Step>) = if flags.serial {
        (steps, Vec::new())
    } else {
        steps.iter().partition(|s| !s.second_lane())
    };
    if first.is_empty() {
        std::mem::swap(&mut first, &mut second);
    }
    let mut lane = if second.is_empty() {
        None
    } else {
        Some(SecondLane::start(&second)?)
    };
    let mut times = Vec::new();
    let mut result = Ok(());
    for s in first {
        if let Some(l) = &mut lane
            && l.failed()
        {
            result = Err("the second lane failed (its log follows)".to_owned());
            break;
        }
        let started = Instant::now();
        let cpu = children_cpu_secs();
        result = run_step(s);
        let cpu = children_cpu_secs()
            .zip(cpu)
            .map(|(after, before)| after - before);
        times.push((s, started.elapsed().as_secs_f64(), cpu));
        if result.is_err() {
            break;
        }
    }
    // CPU time beside wall time: a step whose CPU seconds are well under twice its wall
    // seconds on a 2-core machine leaves a core idle part of the time.
    eprintln!("\nxtask ci: step times (wall, and CPU time of the processes it ran)");
    for (s, secs, cpu) in &times {
        match cpu {
            Some(c) => eprintln!("  {:<20} {:>6.0}s {:>7.0}s CPU", s.name(), secs, c),
            None => eprintln!("  {:<20} {:>6.0}s", s.name(), secs),
        }
    }
    if let Some(mut l) = lane {
        if result.is_err() {
            l.stop();
        }
        let second = l.finish();
        result = result.and(second);
    }
    let total = t.elapsed().as_secs_f64();
    match &result {
        Ok(()) => eprintln!("xtask ci: all steps passed in {total:.0}s"),
        Err(_) => eprintln!("xtask ci: stopped after {total:.0}s"),
    }
    result
}

/// User and system CPU seconds of every child process this one has waited for (Linux:
/// `cutime` and `cstime` of `/proc/self/stat`, in USER_HZ ticks, which are 100 a second on
/// every architecture Linux has); `None` elsewhere.
fn children_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces:
    // field 3 (`state`) is the first; `cutime` and `cstime` are fields 16 and 17.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i - 3)?.parse::<f64>().ok();
    Some((ticks(16)? + ticks(17)?) / 100.0)
}

/// `cargo test` over the whole workspace with every feature, linted as it builds: the
/// unoptimised build that the `test` step makes and `bench-build` reuses (and extends with the
/// bench targets).
fn workspace_tests(name: &str) -> Result<Cmd> {
    cargo(name, ["test", "--workspace", "--all-features"]).linted()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_keep_ci_order_and_names() {
        let names: Vec<String> = Step::all().iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
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
                "miri",
                "sanitizers",
                "fuzz-build",
                "fuzz-smoke",
                "package",
            ]
        );
    }

    #[test]
    fn only_and_skip_select_in_ci_order() {
        let f = flags::Ci {
            only: vec![Step::Test, Step::Fmt, Step::Miri],
            skip: vec![Step::Miri],
            list: true,
            serial: false,
        };
        assert_eq!(selected(&f), [Step::Fmt, Step::Test]);
    }
}
