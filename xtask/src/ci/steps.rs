//! The `ci` steps whose bodies are more than a few commands: getrandom-program, miri,
//! aarch64-qemu, windows-wine, backends, latest-deps, sanitizers, and the clean-up before
//! package.

use crate::artifacts::{TestBinary, build_tests, test_binary};
use crate::cmd::Result;
use crate::cmd::{Cmd, cargo, cargo_nightly, run_parallel};
use crate::config::{
    BACKEND_TESTS, BACKENDS, CAMPAIGN_VAR, DEFAULT_BACKEND_RELEASE_TESTS, EMULATED_LINKER,
    EMULATED_POOL_TESTS, EMULATED_RUNNER, EMULATED_TARGET, EMULATED_TESTS, EXPECT_RSEQ_VAR,
    GETRANDOM_PROGRAM_MANIFEST, GETRANDOM_PROGRAM_OVERRIDE, GETRANDOM_PROGRAM_REFUSAL,
    LATEST_DEPS_TESTS, MIRI, RSEQ_GLIBC, SANITIZE, SANITIZER_HOST, SANITIZERS, SOFT_AES_BACKEND,
    WINE_DLL_CC, WINE_RUNNER, WINE_SHIM, WINE_TARGET, WINE_TESTS,
};

/// Sets [`EXPECT_RSEQ_VAR`] on `c` where this machine runs scalrand's restartable sequences:
/// x86_64, glibc [`RSEQ_GLIBC`] or later (`getconf GNU_LIBC_VERSION`), and no
/// `GLIBC_TUNABLES` in this environment that could switch rseq off. Elsewhere `c` is left as
/// it is, and the rseq tests report that they have nothing to check.
pub(super) fn expect_rseq_here(c: Cmd) -> Cmd {
    let glibc = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            let v = s.trim().strip_prefix("glibc ")?.to_owned();
            let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next()??))
        });
    let here = std::env::consts::ARCH == "x86_64"
        && glibc.is_some_and(|v| v >= RSEQ_GLIBC)
        && std::env::var_os("GLIBC_TUNABLES").is_none();
    if here { c.env(EXPECT_RSEQ_VAR, "1") } else { c }
}

/// What `cargo publish --dry-run` always says: the one warning the `package` step allows.
const DRY_RUN_NOTICE: &str = "warning: aborting upload due to dry run";

/// Runs `c` (a cargo command) to a zero exit, its output printed, and refuses any warning in
/// it other than [`DRY_RUN_NOTICE`].
pub(super) fn without_warnings(c: Cmd) -> Result {
    eprintln!("\n==> {c:?}");
    let label = c.label().to_owned();
    let t = std::time::Instant::now();
    let out = c.output()?;
    let text = String::from_utf8_lossy(&out.stderr);
    eprint!("{text}{}", String::from_utf8_lossy(&out.stdout));
    eprintln!("<== [{label}] {:.1}s", t.elapsed().as_secs_f64());
    if !out.status.success() {
        return Err(format!("[{label}] failed: {}", out.status));
    }
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("warning") && l.trim_end() != DRY_RUN_NOTICE)
        .collect();
    if warnings.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "[{label}] {} warning(s):\n{}",
            warnings.len(),
            warnings.join("\n")
        ))
    }
}

/// Removes what earlier `cargo package` runs left of the workspace's crates as registry
/// crates: the sources cargo extracted from the overlay registry
/// (`$CARGO_HOME/registry/src/<overlay hash>/<name>-<version>`) and the build directory that
/// compiled them (cargo treats a registry crate of one version as immutable and reuses both).
/// Without this a second run on one machine verifies against the first run's code; a fresh
/// CI machine has neither.
pub(super) fn forget_overlay_sources() -> Result {
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

/// The miri runs, two at a time: the interpreter keeps one core busy per run (cargo's build
/// lock orders the builds).
pub(super) fn miri() -> Result {
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

/// The integration-test targets of `package` in `meta` (`cargo metadata`'s output), by name.
fn test_targets(meta: &serde_json::Value, package: &str) -> Result<Vec<String>> {
    let pkg = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == package))
        .ok_or_else(|| format!("cargo metadata lists no package {package}"))?;
    let names: Vec<String> = pkg["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "test"))
        })
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    if names.is_empty() {
        return Err(format!("{package} has no integration test to run"));
    }
    Ok(names)
}

/// The library and integration tests of [`EMULATED_TESTS`] and the pool's library tests and
/// [`EMULATED_POOL_TESTS`] on [`EMULATED_TARGET`] under qemu-user, in release builds. One
/// build for all of them (one feature resolution: the packages' shared dependencies compile
/// once), then each test binary run through [`EMULATED_RUNNER`], as cargo's runner would run
/// it. Fortuna's read properties (`fortuna_props`, the one property test here that takes its
/// case count from proptest's variable) read up to 1 MiB per case: 16 cases under emulation,
/// against 64 natively.
pub(super) fn aarch64_qemu(name: &str) -> Result {
    let env_target = EMULATED_TARGET.to_uppercase().replace('-', "_");
    let campaign = crate::config::campaign()?;
    let meta = cargo(
        &format!("{name} metadata"),
        ["metadata", "--no-deps", "--format-version", "1"],
    )
    .json()?;
    let mut build = cargo(
        &format!("{name} build"),
        [
            "test",
            "--release",
            "--target",
            EMULATED_TARGET,
            "--no-run",
            "--lib",
        ],
    )
    .args(["-p", "scalrand-pool"]);
    // The pool's library, its listed tests, and each other package's library and
    // integration tests.
    let mut want = 1 + EMULATED_POOL_TESTS.len();
    for pkg in EMULATED_TESTS {
        build = build.args(["-p", pkg]);
        // `--test` selects the target in whichever selected package has it (no name is in
        // two of them): every integration test of these packages, and the pool's list.
        let tests = test_targets(&meta, pkg)?;
        want += 1 + tests.len();
        for t in &tests {
            build = build.args(["--test", t]);
        }
    }
    for t in EMULATED_POOL_TESTS {
        build = build.args(["--test", t]);
    }
    let built = build_tests(
        build
            .env(
                &format!("CARGO_TARGET_{env_target}_LINKER"),
                EMULATED_LINKER,
            )
            .target_dir("aarch64-qemu"),
    )?;
    if built.len() != want {
        return Err(format!(
            "{name}: the build made {} test binaries, {want} expected",
            built.len()
        ));
    }
    let runner: Vec<&str> = EMULATED_RUNNER.split_whitespace().collect();
    for b in &built {
        let mut c = b
            .cmd_under(&runner, &format!("{name} {} {}", b.package, b.target), &[])
            // The node pools' fork test is the one long campaign here.
            .env(CAMPAIGN_VAR, campaign);
        if b.package == "scalrand-pool" {
            c = c.env("PROPTEST_CASES", "16");
        }
        c.run()?;
    }
    Ok(())
}

/// Tests [`WINE_TESTS`] on [`WINE_TARGET`] under wine. The wine prefix is the step's own,
/// `target/windows-wine/wine-prefix`, made on first use; every run compiles [`WINE_SHIM`] into
/// its `system32` as `bcryptprimitives.dll`. Debug builds: the tests run at native speed, so
/// the shorter compile wins.
pub(super) fn windows_wine(name: &str) -> Result {
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

/// The pool's [`BACKEND_TESTS`] once per forced backend of [`BACKENDS`], and with the
/// default backend only [`DEFAULT_BACKEND_RELEASE_TESTS`] (the `test` step ran the others),
/// all in the workspace's release build, which `numa-vm` reuses: the backend is forced
/// through the pool's build script, so each one rebuilds the pool and its tests, not the
/// dependencies; then the fork-mid-read, fork key-search and
/// register tests again with rseq off. What runs no ChaCha code (Fortuna's AES reads) runs
/// with the default backend (and in [`backend_portable`]'s software AES build) only, and what
/// never takes the restartable sequence (Fortuna's reads) is not run again with rseq off.
pub(super) fn backends() -> Result {
    for backend in BACKENDS {
        backend_tests(backend)?;
    }
    Ok(())
}

/// [`BACKEND_TESTS`] on the portable backend ([`SOFT_AES_BACKEND`]), whose build also forces
/// Fortuna's software AES-256 (`SCALRAND_AES=soft`: what CPUs without AES-NI run), in the
/// workspace's release build, whose dependencies the forced backends share (the backend is
/// forced for the pool alone).
pub(super) fn backend_portable() -> Result {
    backend_tests(SOFT_AES_BACKEND)
}

/// One backend's run: `""` the default backend (then its pool tests again with rseq off, the
/// binaries of the same build), else the forced one.
fn backend_tests(backend: &str) -> Result {
    if !backend.is_empty() {
        return backend_cmd(backend)?.run();
    }
    let built = build_tests(backend_cmd(backend)?.arg("--no-run"))?;
    backend_cmd(backend)?.run()?;
    backends_rseq_off(&built)
}

/// The `cargo test` command of one backend's run (see [`backend_tests`]).
fn backend_cmd(backend: &str) -> Result<Cmd> {
    let (label, tests) = if backend.is_empty() {
        ("backend default".to_owned(), DEFAULT_BACKEND_RELEASE_TESTS)
    } else {
        (format!("backend {backend}"), BACKEND_TESTS)
    };
    // The pool as `numa-vm` builds it.
    let mut c = cargo(
        &label,
        ["test", "--release", "-p", "scalrand-pool", "--lib"],
    )
    .args(["--features", "scalrand-pool/hwloc"]);
    // Unset, not empty, for the default: the other steps' builds leave it unset, and a
    // change of its value reruns the build script and rebuilds the pool.
    c = if backend.is_empty() {
        c.env_remove("SCALRAND_CHACHA_BACKEND")
    } else {
        c.env("SCALRAND_CHACHA_BACKEND", backend)
    }
    .env(CAMPAIGN_VAR, crate::config::campaign()?);
    let soft_aes = backend == SOFT_AES_BACKEND;
    c = if soft_aes {
        c.env("SCALRAND_AES", "soft")
    } else {
        c.env_remove("SCALRAND_AES")
    };
    for t in tests {
        c = c.args(["--test", t]);
    }
    c = expect_rseq_here(c);
    if backend.is_empty() {
        // The model check of the rseq refill protocol explores millions of states: release
        // speed (about 20 s; debug builds ignore it). It runs no ChaCha code, so with this
        // build only.
        c = c.args(["--test", "refill_model"]);
        // The facade's fork-mid-read test needs an optimised build too.
        c = c.args(["-p", "scalrand"]);
    } else if !soft_aes {
        // Fortuna's AES reads run no ChaCha code: the default build and the software AES
        // build cover them.
        c = c.args(["--", "--skip", "fortuna_concurrent_reads_aes"]);
    }
    Ok(c)
}

/// The default backend's fork-mid-read, fork key-search, register and memory-scan tests with
/// glibc's rseq registration off: the test binaries in `built` (that backend's build).
fn backends_rseq_off(built: &[TestBinary]) -> Result {
    // A fork from another thread in the middle of a read, the registers after every
    // key-deriving call and the memory scans, with glibc's rseq registration off (the locked
    // slots serve every read, and no section is watched, so each ends with the wipe that
    // reaches past a signal frame).
    //
    // Of the fork-mid-read scenarios, the read through a slot: the node-fallback and
    // OS-keyed reads hold their keys where they do with rseq on (their sections differ only
    // in that wipe at their end, which the slot's reads run too), the stack-key scenario
    // checks the check, and Fortuna never takes the restartable sequence; all of them ran
    // above. Each scenario's children scan the whole process after every fork: the four
    // together took minutes while the other lane kept both cores busy.
    let runs: [(&str, &[&str]); 4] = [
        (
            "fork_mid_read",
            // Skipped by name, so that a scenario added or renamed runs here too.
            &[
                "--skip",
                "node_pool_reads_through_the_node_fallback",
                "--skip",
                "node_pool_reads_keyed_from_the_os",
                "--skip",
                "a_key_in_a_reader_stack_frame_is_found",
                "--skip",
                "fortuna_concurrent_reads",
            ],
        ),
        ("key_registers", &["--skip", "fortuna_concurrent_reads"]),
        ("numa_erasure", &["--skip", "fortuna_concurrent_reads"]),
        ("fork_key_search", &["--skip", "fortuna_concurrent_reads"]),
    ];
    for (target, args) in runs {
        test_binary(built, "scalrand-pool", target)?
            .cmd(&format!("backend default, rseq off: {target}"), args)
            .env("GLIBC_TUNABLES", "glibc.pthread.rseq=0")
            .env(CAMPAIGN_VAR, crate::config::campaign()?)
            .run()?;
    }
    Ok(())
}

/// Copies the workspace (without `target/`) to `target/latest-deps/src`, runs `cargo update`
/// there and tests [`LATEST_DEPS_TESTS`] against what it resolved.
pub(super) fn latest_deps() -> Result {
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
        // What the newest dependencies change is not what the long campaigns look for.
        b.cmd(&format!("latest-deps test {} {}", b.package, b.target), &[])
            .env(CAMPAIGN_VAR, crate::config::campaign()?)
            .run()?;
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

/// Runs each of [`SANITIZE`]'s tests under each of [`SANITIZERS`] (nightly, for
/// [`SANITIZER_HOST`], the standard library rebuilt with the sanitizer where it says so).
pub(super) fn sanitizers() -> Result {
    for (san, build_std) in SANITIZERS {
        // One command per sanitizer: one feature resolution, so the dependencies the
        // packages share are instrumented and compiled once. `--test` selects the target in
        // whichever selected package has it.
        let mut c = cargo_nightly(&format!("{san}-sanitizer"), ["test"]);
        if *build_std {
            c = c.arg("-Zbuild-std");
        }
        c = c.args(["--target", SANITIZER_HOST]);
        let mut packages: Vec<&str> = Vec::new();
        for (pkg, test) in SANITIZE {
            if !packages.contains(pkg) {
                packages.push(pkg);
                c = c.args(["-p", pkg]);
            }
            c = c.args(["--test", test]);
        }
        let c = c
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
    Ok(())
}

/// [`GETRANDOM_PROGRAM_MANIFEST`]'s program, run from its own directory as a user's program
/// is (cargo reads the getrandom cfg from the `.cargo/config.toml` there): clippy and its
/// tests with the config's cfg, then a build whose `RUSTFLAGS` replaces it, which must fail
/// with [`GETRANDOM_PROGRAM_REFUSAL`]. Each build has a target directory of its own (a change
/// of `RUSTFLAGS` rebuilds every crate).
pub(super) fn getrandom_program(name: &str) -> Result {
    let root = crate::cmd::project_root();
    let manifest = root.join(GETRANDOM_PROGRAM_MANIFEST);
    let dir = manifest
        .parent()
        .ok_or("the getrandom program's manifest has no directory")?;
    // The config's `rustflags` apply only where no `RUSTFLAGS` is set.
    let configured = |c: Cmd| {
        c.current_dir(dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .target_dir("getrandom-program")
    };
    configured(cargo(
        name,
        ["clippy", "--all-targets", "--", "-D", "warnings"],
    ))
    .run()?;
    configured(cargo(name, ["test"])).run()?;
    let label = format!("{name} without the cfg");
    eprintln!("\n==> [{label}] RUSTFLAGS={GETRANDOM_PROGRAM_OVERRIDE:?} cargo build (must fail)");
    let out = cargo(&label, ["build"])
        .current_dir(dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", GETRANDOM_PROGRAM_OVERRIDE)
        .target_dir("getrandom-program-nocfg")
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return Err(format!(
            "[{label}] built without the cfg: the program would keep getrandom's own backend"
        ));
    }
    if !stderr.contains(GETRANDOM_PROGRAM_REFUSAL) {
        return Err(format!(
            "[{label}] failed, but without the macro's message:\n{stderr}"
        ));
    }
    eprintln!("<== [{label}] refused, naming the cfg");
    Ok(())
}
