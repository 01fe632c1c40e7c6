//! `cargo xtask ci`: every check CI runs, as an enum of steps in CI's order.

use std::time::Instant;

use crate::artifacts::build_tests;
use crate::cmd::Result;
use crate::cmd::{Cmd, cargo, cargo_nightly, run_parallel};
use crate::config::{
    BACKEND_TESTS, BACKENDS, DEFAULT_BACKEND_RELEASE_TESTS, EMULATED_LINKER, EMULATED_POOL_TESTS,
    EMULATED_RUNNER, EMULATED_TARGET, EMULATED_TESTS, FUZZ_SMOKE_SECONDS,
    GETRANDOM_BACKEND_RUSTFLAGS, LATEST_DEPS_TESTS, LIB_CRATES, MIRI, OTHER_TARGETS, SANITIZE,
    SANITIZER_HOST, SANITIZERS, SCALING_HARNESS, UNPUBLISHED, WINE_DLL_CC, WINE_RUNNER, WINE_SHIM,
    WINE_TARGET, WINE_TESTS,
};
use crate::step::Step;
use crate::{doc_links, flags, fresh_crate, fuzz, loom, no_std, vm};

/// Runs one step.
fn run_step(step: Step) -> Result {
    let name = step.name();
    let name = name.as_str();
    match step {
        Step::Fmt => {
            cargo(name, ["fmt", "--all", "--", "--check"]).run()?;
            cargo(
                name,
                ["fmt", "--manifest-path", "fuzz/Cargo.toml", "--", "--check"],
            )
            .run()
        }
        Step::Clippy => cargo(
            name,
            [
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
        )
        .run(),
        Step::Test => {
            cargo(name, ["test", "--workspace", "--all-features"]).run()?;
            // The simulator's shape check (the conflict-rate shape that Linux commit
            // e900a918b098 reports) needs release speed (about 35 s there: the server-small
            // check over several seeds).
            cargo(
                name,
                [
                    "test",
                    "--release",
                    "-p",
                    "scalrand-shuffle",
                    "--test",
                    "shape",
                    "--",
                    "--ignored",
                ],
            )
            .run()?;
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
        Step::Backends => backends(),
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
            Ok(())
        }
        Step::Aarch64Qemu => {
            let env_target = EMULATED_TARGET.to_uppercase().replace('-', "_");
            let emulated = |c: Cmd| {
                c.env(
                    &format!("CARGO_TARGET_{env_target}_LINKER"),
                    EMULATED_LINKER,
                )
                .env(
                    &format!("CARGO_TARGET_{env_target}_RUNNER"),
                    EMULATED_RUNNER,
                )
                .target_dir("aarch64-qemu")
            };
            let base = ["test", "--release", "--target", EMULATED_TARGET];
            let mut c = cargo(name, base).args(["--lib", "--tests"]);
            for p in EMULATED_TESTS {
                c = c.args(["-p", p]);
            }
            emulated(c).run()?;
            let mut c = cargo(name, base).args(["-p", "scalrand-pool", "--lib"]);
            for t in EMULATED_POOL_TESTS {
                c = c.args(["--test", t]);
            }
            emulated(c).run()
        }
        Step::WindowsWine => windows_wine(name),
        Step::NoDefaultFeatures => {
            // The library crates without `std` (on the host): lints and tests still pass.
            for pkg in LIB_CRATES {
                cargo(name, ["clippy", "-p", pkg, "--all-targets"])
                    .args(["--no-default-features", "--", "-D", "warnings"])
                    .run()?;
                cargo(name, ["test", "-p", pkg, "--no-default-features"]).run()?;
            }
            Ok(())
        }
        Step::Doc => cargo(name, ["doc", "--workspace", "--no-deps", "--all-features"])
            .env("RUSTDOCFLAGS", "-D warnings")
            .run(),
        Step::DocLinks => doc_links::run(),
        Step::FreshCrate => fresh_crate::run(),
        // The workspace's release build (`cargo bench`'s own profile would build every
        // dependency once more, with debug info), each benchmark run once; then the scaling
        // harness as `cargo xtask scaling` builds it, without the criterion benches' feature.
        Step::BenchBuild => {
            cargo(
                name,
                ["test", "--release", "--benches", "-p", "scalrand-benches"],
            )
            .args(["--", "--test"])
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
            // registry).
            forget_overlay_sources()?;
            let mut c = cargo(name, ["package", "--allow-dirty", "--workspace"]);
            for pkg in UNPUBLISHED {
                c = c.args(["--exclude", pkg]);
            }
            c.target_dir("package-check").run()
        }
    }
}

/// Removes what earlier `cargo package` runs left of the workspace's crates as registry
/// crates: the sources cargo extracted from the overlay registry
/// (`$CARGO_HOME/registry/src/<overlay hash>/<name>-<version>`) and the build directory that
/// compiled them (cargo treats a registry crate of one version as immutable and reuses both).
/// Without this a second run on one machine verifies against the first run's code; a fresh
/// CI machine has neither.
fn forget_overlay_sources() -> Result {
    let built = crate::cmd::project_root()
        .join("target")
        .join("package-check");
    if built.exists() {
        std::fs::remove_dir_all(&built)
            .map_err(|e| format!("removing {}: {e}", built.display()))?;
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&src) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        // The real registries' directories are named after their index host; overlays are
        // named by a bare hash (`-<hex>`).
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(crates) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for krate in crates.flatten() {
            if krate.file_name().to_string_lossy().starts_with("scalrand") {
                std::fs::remove_dir_all(krate.path())
                    .map_err(|e| format!("removing {}: {e}", krate.path().display()))?;
            }
        }
    }
    Ok(())
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
    Ok(())
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

/// The second lane of [`run`]: this program again, in a process group of its own (so that
/// stopping it stops the builds and tests it started), running its steps with `--serial`.
struct SecondLane {
    child: std::process::Child,
    log: std::path::PathBuf,
    names: String,
    status: Option<std::process::ExitStatus>,
}

impl SecondLane {
    fn start(steps: &[Step]) -> Result<Self> {
        use std::os::unix::process::CommandExt;
        let dir = crate::cmd::project_root().join("target/ci-logs");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = dir.join("second-lane.log");
        let io = |e: std::io::Error| format!("{}: {e}", log.display());
        let out = std::fs::File::create(&log).map_err(io)?;
        let err = out.try_clone().map_err(io)?;
        let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let names: Vec<String> = steps.iter().map(|s| s.name()).collect();
        let mut c = std::process::Command::new(exe);
        c.args(["ci", "--serial"]);
        for n in &names {
            c.args(["--only", n]);
        }
        c.current_dir(crate::cmd::project_root())
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let names = names.join(", ");
        eprintln!("==> [second lane] {names} > {}", log.display());
        let child = c
            .spawn()
            .map_err(|e| format!("[second lane] cannot start: {e}"))?;
        Ok(Self {
            child,
            log,
            names,
            status: None,
        })
    }

    /// Whether the lane has ended with a failure (without waiting).
    fn failed(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status.is_some_and(|s| !s.success())
    }

    /// Stops the lane if it still runs: its whole process group gets SIGTERM.
    fn stop(&mut self) {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        if self.status.is_some() {
            return;
        }
        eprintln!("==> [second lane] stopped: the first lane failed");
        let _ = std::process::Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.child.id())])
            .status();
    }

    /// Waits for the lane, prints its log, and returns its result.
    fn finish(mut self) -> Result {
        let status = match self.status {
            Some(s) => s,
            None => self
                .child
                .wait()
                .map_err(|e| format!("[second lane] waiting: {e}"))?,
        };
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        eprintln!("\n---- [second lane: {}] ----\n{text}", self.names);
        eprintln!("<== [second lane] {status}");
        if status.success() {
            Ok(())
        } else {
            Err(format!("[second lane] failed: {status}"))
        }
    }
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

/// The miri runs, two at a time: the interpreter keeps one core busy per run (cargo's build
/// lock orders the builds).
fn miri() -> Result {
    let runs = MIRI
        .iter()
        .map(|(pkg, args)| {
            cargo_nightly(&format!("miri {pkg}"), ["miri", "test", "-p", pkg])
                .args(*args)
                // Isolation off: proptest's failure persistence reads the working directory.
                .env("MIRIFLAGS", "-Zmiri-disable-isolation")
                .env("PROPTEST_CASES", "4")
        })
        .collect();
    run_parallel(runs, 2, &crate::cmd::project_root().join("target/ci-logs"))
}

/// Tests [`WINE_TESTS`] on [`WINE_TARGET`] under wine. The wine prefix is the step's own,
/// `target/windows-wine/wine-prefix`, made on first use; every run compiles [`WINE_SHIM`] into
/// its `system32` as `bcryptprimitives.dll`. Debug builds: the tests run at native speed, so
/// the shorter compile wins.
fn windows_wine(name: &str) -> Result {
    let dir = crate::cmd::project_root()
        .join("target")
        .join("windows-wine");
    let prefix = dir.join("wine-prefix");
    // Made by a `wineboot` that ran to the end; a prefix without it is half made.
    let ready = dir.join("wine-prefix.ready");
    let wine = |c: Cmd| {
        c.env("WINEPREFIX", &prefix)
            // No debug channels; no offer to install wine-mono or wine-gecko (neither is used).
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
    };
    if !ready.exists() {
        if prefix.exists() {
            std::fs::remove_dir_all(&prefix)
                .map_err(|e| format!("removing {}: {e}", prefix.display()))?;
        }
        std::fs::create_dir_all(&prefix)
            .map_err(|e| format!("creating {}: {e}", prefix.display()))?;
        wine(Cmd::new(&format!("{name} prefix"), WINE_RUNNER).args(["wineboot", "--init"]))
            .run()?;
        // The registry reaches disk when the prefix's wineserver exits.
        wine(Cmd::new(&format!("{name} prefix"), "wineserver").arg("--wait")).run()?;
        std::fs::write(&ready, "").map_err(|e| format!("{}: {e}", ready.display()))?;
    }
    let dll = prefix.join("drive_c/windows/system32/bcryptprimitives.dll");
    Cmd::new(&format!("{name} shim"), WINE_DLL_CC)
        .args(["-O2", "-shared", "-s", "-o"])
        .arg(&dll)
        .arg(WINE_SHIM)
        .arg("-ladvapi32")
        .run()?;
    let env_target = WINE_TARGET.to_uppercase().replace('-', "_");
    let test = |label: &str, extra: &[&str]| {
        let mut c = cargo(label, ["test", "--target", WINE_TARGET, "--lib", "--tests"]).args(extra);
        for p in WINE_TESTS {
            c = c.args(["-p", p]);
        }
        wine(c)
            .env(&format!("CARGO_TARGET_{env_target}_RUNNER"), WINE_RUNNER)
            .target_dir("windows-wine")
            .run()
    };
    test(&format!("{name} build"), &["--no-run"])?;
    // A wineserver started by a test program exits 3 s after its last client, and a program
    // that connects while it exits fails ("recvmsg: Connection reset by peer"). So one server
    // that outlives the gaps between test binaries serves them all, in place of any server
    // already running there (a second one would refuse to start), and is stopped afterwards.
    let server = |arg: &str| wine(Cmd::new(&format!("{name} server"), "wineserver").arg(arg)).run();
    // `--kill` exits 1 where no server runs: nothing to stop.
    let _ = server("--kill");
    server("--persistent=120")?;
    let tested = test(name, &[]);
    let _ = server("--kill");
    tested
}

/// The pool's [`BACKEND_TESTS`] once per forced backend, and with the default backend only
/// [`DEFAULT_BACKEND_RELEASE_TESTS`] (the `test` step ran the others), all in the workspace's
/// release build that the `test`, `numa-vm` and `bench-build` steps share: the backend is
/// forced through the pool's build script, so each one rebuilds the pool and its tests, not
/// the dependencies; then the fork-mid-read and register tests again with rseq off. What
/// runs no ChaCha code (Fortuna's AES reads) runs with the default backend only, and what
/// never takes the restartable sequence (Fortuna's reads) is not run again with rseq off.
fn backends() -> Result {
    for backend in BACKENDS {
        let (label, tests) = if backend.is_empty() {
            ("backend default".to_owned(), DEFAULT_BACKEND_RELEASE_TESTS)
        } else {
            (format!("backend {backend}"), BACKEND_TESTS)
        };
        let mut c = cargo(
            &label,
            ["test", "--release", "-p", "scalrand-pool", "--lib"],
        )
        // The pool as `numa-vm` builds it.
        .args(["--features", "scalrand-pool/hwloc"]);
        // Unset, not empty, for the default: the other steps' builds leave it unset, and a
        // change of its value reruns the build script and rebuilds the pool.
        c = if backend.is_empty() {
            c.env_remove("SCALRAND_CHACHA_BACKEND")
        } else {
            c.env("SCALRAND_CHACHA_BACKEND", backend)
        };
        for t in tests {
            c = c.args(["--test", t]);
        }
        if backend.is_empty() {
            // The facade's fork-mid-read test needs an optimised build too.
            c = c.args(["-p", "scalrand"]);
        } else {
            // Fortuna's AES reads run no ChaCha code: the default build covers them.
            c = c.args(["--", "--skip", "fortuna_concurrent_reads_aes"]);
        }
        c.run()?;
    }
    // A fork from another thread in the middle of a read, and the registers after every
    // key-deriving call, with glibc's rseq registration off (the locked slots serve every
    // read): the default backend's build, run again.
    cargo(
        "backend default, rseq off",
        ["test", "--release", "-p", "scalrand-pool"],
    )
    .args(["--features", "scalrand-pool/hwloc"])
    .args(["--test", "fork_mid_read", "--test", "key_registers"])
    // Fortuna never takes the restartable sequence: its mid-read forks ran above.
    .args(["--", "--skip", "fortuna_concurrent_reads"])
    .env_remove("SCALRAND_CHACHA_BACKEND")
    .env("GLIBC_TUNABLES", "glibc.pthread.rseq=0")
    .run()
}

/// Copies the workspace (without `target/`) to `target/latest-deps/src`, runs `cargo update`
/// there and tests [`LATEST_DEPS_TESTS`] against what it resolved.
fn latest_deps() -> Result {
    let root = crate::cmd::project_root();
    let copy = root.join("target/latest-deps/src");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).map_err(|e| format!("{}: {e}", copy.display()))?;
    }
    copy_tree(&root, &root, &copy).map_err(|e| format!("copying the workspace: {e}"))?;
    cargo("latest-deps update", ["update"])
        .current_dir(&copy)
        .run()?;
    // One build of the tested packages' library and test targets (the features they
    // resolve to together, as a program that uses all three gets them), then each test
    // binary of that build.
    let mut build = cargo(
        "latest-deps build",
        ["test", "--lib", "--tests", "--no-run"],
    );
    for pkg in LATEST_DEPS_TESTS {
        build = build.args(["-p", pkg]);
    }
    let built = build_tests(
        build
            .current_dir(&copy)
            .env("CARGO_TARGET_DIR", root.join("target/latest-deps/target")),
    )?;
    let mut ran = 0;
    for b in built
        .iter()
        .filter(|b| LATEST_DEPS_TESTS.contains(&b.package.as_str()))
    {
        b.run(&format!("latest-deps test {} {}", b.package, b.target), &[])?;
        ran += 1;
    }
    if ran == 0 {
        return Err("latest-deps: no test binary of the tested packages was built".into());
    }
    Ok(())
}

/// Copies `from` (under the workspace `root`) to `to`, leaving out the root's `target/`,
/// `.git/` and `fuzz/` (its own workspace).
fn copy_tree(
    root: &std::path::Path,
    from: &std::path::Path,
    to: &std::path::Path,
) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if from == root && ["target", ".git", "fuzz"].iter().any(|n| name == *n) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            copy_tree(root, &path, &to.join(&name))?;
        } else {
            std::fs::copy(&path, to.join(&name))?;
        }
    }
    Ok(())
}

fn sanitizers() -> Result {
    for san in SANITIZERS {
        for (pkg, test) in SANITIZE {
            let c = cargo_nightly(
                &format!("{san}-sanitizer {pkg} {test}"),
                ["test", "-Zbuild-std", "--target", SANITIZER_HOST],
            )
            .args(["-p", pkg, "--test", test])
            .env("RUSTFLAGS", format!("-Zsanitizer={san}"))
            .env("RUSTDOCFLAGS", format!("-Zsanitizer={san}"))
            .target_dir(&format!("san-{san}"));
            let c = if *san == "thread" {
                // Fail on the first report instead of printing and exiting 0.
                c.env("TSAN_OPTIONS", "halt_on_error=1")
            } else {
                c.env("ASAN_OPTIONS", "detect_leaks=1")
            };
            c.run()?;
        }
    }
    Ok(())
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
                "clippy",
                "test",
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
