//! The data CI works through, in one place: which packages, tests and targets each step
//! covers. Edit these tables, not the steps.

/// The library crates (without the facade): `no-default-features` lints and tests each.
pub const LIB_CRATES: &[&str] = &[
    "scalrand-os",
    "scalrand-fastprng",
    "scalrand-pool",
    "scalrand-shuffle",
    "scalrand-simd-chunk",
];

/// Where docs.rs serves a crate's docs (`{DOCS_RS_URL}{package}/{version}/`): `doc-links`
/// links each crate's direct dependencies there, as docs.rs does.
pub const DOCS_RS_URL: &str = "https://docs.rs/";

/// Workspace packages that are not published, so `package` leaves them out.
pub const UNPUBLISHED: &[&str] = &[
    "scalrand-benches",
    "xtask",
    "scalrand-example-firmware",
    "scalrand-example-token-server",
    "scalrand-testkit",
];

/// miri runs: (package, cargo test arguments). Everything that is not FFI, inline assembly,
/// signals or `fork` (those tests carry `#[cfg_attr(miri, ignore)]`).
pub const MIRI: &[(&str, &[&str])] = &[
    // Longest first: CI runs two at a time.
    // Not the known-answer tests (`--test reference`): what they run, the owned generators'
    // steps and jumps, is safe Rust, where miri finds nothing the native run does not.
    (
        "scalrand-fastprng",
        &["--lib", "--test", "percpu", "--test", "wyrand"],
    ),
    // The OS layer's lock, wipe-on-fork slices (heap under miri) and clock.
    ("scalrand-os", &["--lib"]),
    // The node pools' slot code on `scalrand_os::Lock` (the crate's `unsafe`).
    ("scalrand-pool", &["--lib", "numa::tests"]),
    // The software AES's key expansion in place (raw pointers into the caller's memory) and
    // its frames: the known answers (the comparison with the `aes` crate is too long here).
    (
        "scalrand-pool",
        &[
            "--lib",
            "--",
            "fortuna::aes_soft::tests::fips",
            "fortuna::aes_soft::tests::transpose",
        ],
    ),
];

/// ThreadSanitizer and AddressSanitizer runs over the concurrency stress tests:
/// (package, test target).
pub const SANITIZE: &[(&str, &str)] = &[
    ("scalrand-fastprng", "percpu"),
    ("scalrand-fastprng", "wyrand"),
    ("scalrand-pool", "fortuna_concurrent"),
    ("scalrand-pool", "numa_nodes"),
];

/// The sanitizers, in the order CI runs them (`-Zsanitizer=NAME`), and whether the run
/// rebuilds the standard library with it (`-Zbuild-std`). ThreadSanitizer must see every
/// memory access, std's included, or it reports races that are not there (its
/// synchronisation inside std is invisible to it). AddressSanitizer reports nothing false
/// without it: it replaces `malloc` and `free` for the whole process and checks every access
/// of the instrumented code (ours, our dependencies', and the std generics they instantiate);
/// what an uninstrumented std misses is a bad access made inside std's own compiled code
/// (rust-lang/compiler-team#943 and #951: false positives for TSan and MSan without an
/// instrumented std, false negatives for ASan).
pub const SANITIZERS: &[(&str, bool)] = &[("thread", true), ("address", false)];

/// The host target of the sanitizer runs (an explicit target: build scripts and proc macros,
/// built for the host, stay uninstrumented).
pub const SANITIZER_HOST: &str = "x86_64-unknown-linux-gnu";

/// Seconds each fuzz target runs in CI's smoke (`cargo xtask fuzz` defaults to 60).
pub const FUZZ_SMOKE_SECONDS: u64 = 12;

/// Library crates and the feature sets that must build without `std`.
pub const NO_STD: &[(&str, &str)] = &[
    ("scalrand-os", ""),
    ("scalrand-os", "alloc"),
    ("scalrand-fastprng", ""),
    ("scalrand-fastprng", "alloc"),
    ("scalrand-pool", ""),
    ("scalrand-shuffle", ""),
    ("scalrand-simd-chunk", ""),
    ("scalrand-simd-chunk", "async"),
    ("scalrand", ""),
    ("scalrand-example-firmware", ""),
];

/// The bare-metal target of the no-std builds.
pub const NO_STD_TARGET: &str = "thumbv7em-none-eabihf";

/// The cfg that swaps the atomics for loom's (`RUSTFLAGS="--cfg NAME"` in the loom runs).
pub const LOOM_CFG: &str = "scalrand_loom";

/// loom models: (package, test target or `--lib`, optional test-name filter,
/// `LOOM_MAX_PREEMPTIONS`). The bound keeps each model inside loom's branch limit and CI's
/// time budget; the node-pool and Fortuna models have longer paths per interleaving.
pub const LOOM: &[(&str, &str, &str, u32)] = &[
    ("scalrand-fastprng", "loom_percpu", "", 3),
    ("scalrand-simd-chunk", "loom_flag", "", 3),
    ("scalrand-pool", "--lib", "numa::loom_tests", 2),
    // Bound 1: Fortuna's lock spins (every failed attempt is a scheduling point), and at
    // bound 2 the model does not finish in CI's budget (600,000+ executions, all passing).
    ("scalrand-pool", "--lib", "fortuna::rng::loom", 1),
];

/// The ChaCha backends of the node pools and Fortuna's ChaCha20 PRF, each forced in turn (a
/// ceiling: the widest backend at or below it that the CPU has runs) with
/// `SCALRAND_CHACHA_BACKEND`, which the pool's build script turns into the
/// `scalrand_chacha_*` cfg for that crate alone, and the test targets that run once per
/// backend in release builds: known answers, key erasure (memory scans), fork safety and
/// hostile contexts: the `backends` step's. `""` is the default build (AVX-512 where the CPU
/// has it), last, so the release build the later steps share is left with it.
pub const BACKENDS: &[&str] = &["soft", "sse2", ""];

/// The backend the `backend-portable` step forces (before `backends`, in the same release
/// build): the portable code, whose build also forces Fortuna's
/// bitsliced software AES-256 (`SCALRAND_AES=soft`, which the pool's build script turns into
/// `scalrand_aes_soft`): the build that stands for a CPU with no SIMD and no AES
/// instructions.
pub const SOFT_AES_BACKEND: &str = "portable";

/// The longest one command of `cargo xtask ci` may run before it is killed and its step fails
/// (the longest, a whole test step, takes about 8 minutes on a 2-vCPU machine): a test that
/// hangs then costs this, not the whole CI run.
/// [`COMMAND_LIMIT_VAR`], in seconds, replaces it.
pub const COMMAND_LIMIT: std::time::Duration = std::time::Duration::from_secs(20 * 60);

/// The variable that replaces [`COMMAND_LIMIT`] (seconds).
pub const COMMAND_LIMIT_VAR: &str = "SCALRAND_CI_COMMAND_LIMIT_SECS";

/// The variable that sizes the long test campaigns (`scalrand_testkit::campaign`): ptrace
/// single steps, signals at spread instructions, handler forks at every read length.
pub const CAMPAIGN_VAR: &str = "SCALRAND_CAMPAIGN";

/// The variable that makes an rseq test fail where it finds no rseq path instead of skipping
/// (`scalrand_testkit::rseq::nothing_to_check`): set for the native test runs with rseq on,
/// on a machine whose glibc registers rseq ([`RSEQ_GLIBC`] and later, x86_64, where scalrand
/// runs its restartable sequences).
pub const EXPECT_RSEQ_VAR: &str = "SCALRAND_EXPECT_RSEQ";

/// The first glibc that registers an rseq area for every thread.
pub const RSEQ_GLIBC: (u32, u32) = (2, 35);

/// The size of the long test campaigns (`scalrand_testkit::campaign`) for every run of them
/// that `cargo xtask ci` and `cargo xtask vm` make (each backend, the unoptimised `test` step,
/// the emulated machines): an even sample of the trials, unless the caller's
/// [`CAMPAIGN_VAR`] says `full` (`SCALRAND_CAMPAIGN=full cargo xtask ci` runs every trial). A
/// value the tests would refuse is refused here, before anything is built.
pub fn campaign() -> crate::cmd::Result<&'static str> {
    campaign_from(std::env::var(CAMPAIGN_VAR))
}

/// [`campaign`] for the variable's value `var`.
pub fn campaign_from(
    var: std::result::Result<String, std::env::VarError>,
) -> crate::cmd::Result<&'static str> {
    match var.as_deref() {
        Err(std::env::VarError::NotPresent) | Ok("" | "sample") => Ok("sample"),
        Ok("full") => Ok("full"),
        Ok(other) => Err(format!(
            "{CAMPAIGN_VAR}={other:?}: expected `full` or `sample`"
        )),
        Err(e) => Err(format!("{CAMPAIGN_VAR}: {e}")),
    }
}

/// `scalrand-pool` test targets run once per entry of [`BACKENDS`].
pub const BACKEND_TESTS: &[&str] = &[
    "backend_frames",
    "numa_kat",
    "numa_erasure",
    "numa_fork",
    "numa_hostile",
    "fortuna_kat",
    "fortuna_fork",
    "fork_mid_read",
    "fork_key_search",
    "fork_in_handler",
    "key_registers",
    "stack_every_step",
    "signal_frames",
    "signal_storm",
    "alt_stack_frames",
];

/// The [`BACKEND_TESTS`] that run again, in release, with the default backend: those whose
/// point is what an optimised build leaves in memory and registers, or that only exist in
/// one. The `test` step runs the others with the default backend already.
pub const DEFAULT_BACKEND_RELEASE_TESTS: &[&str] = &[
    "backend_frames",
    "numa_erasure",
    "fork_mid_read",
    "fork_key_search",
    // Optimised here; the `test` step runs it unoptimised.
    "fork_in_handler",
    // Optimised builds only (the race needs the read rate); no backend of its own.
    "handler_fork_stress",
    "key_registers",
    "stack_every_step",
    "signal_frames",
    "signal_storm",
    "alt_stack_frames",
];

/// Packages whose tests also run against the newest semver-compatible dependencies (a copy
/// of the workspace after `cargo update`: what `cargo add scalrand` resolves today).
pub const LATEST_DEPS_TESTS: &[&str] = &["scalrand-os", "scalrand-pool", "scalrand"];

/// The emulated target CI runs the tests of [`EMULATED_TESTS`] on, under qemu-user (what
/// Docker's foreign-architecture images run on): linker and runner below.
pub const EMULATED_TARGET: &str = "aarch64-unknown-linux-gnu";

/// Linker for [`EMULATED_TARGET`] (Debian's `gcc-aarch64-linux-gnu`).
pub const EMULATED_LINKER: &str = "aarch64-linux-gnu-gcc";

/// Runner for [`EMULATED_TARGET`] (Debian's `qemu-user`, with the cross libc's sysroot).
pub const EMULATED_RUNNER: &str = "qemu-aarch64 -L /usr/aarch64-linux-gnu";

/// Packages whose library and integration tests (fork tests included) run on
/// [`EMULATED_TARGET`] in release builds.
pub const EMULATED_TESTS: &[&str] = &["scalrand-os", "scalrand-fastprng"];

/// The pool's tests on [`EMULATED_TARGET`]: all but `numa_erasure` and `fork_mid_read`, whose
/// memory scans would find the emulator's own copy of the guest's registers (qemu-user keeps
/// them in its memory, which the guest's `/proc/self/mem` reads), not the pools';
/// `numa_guest`, which runs inside the emulated machines of `cargo xtask vm`; and
/// `numa_hwloc`, whose feature needs the target's hwloc library.
pub const EMULATED_POOL_TESTS: &[&str] = &[
    "backend_frames",
    "fortuna_bad_inputs",
    "fortuna_concurrent",
    "fortuna_fork",
    "fortuna_kat",
    "fortuna_props",
    "key_registers",
    "numa_bad_inputs",
    "numa_fork",
    "numa_hostile",
    "numa_kat",
    "numa_nodes",
    "numa_rseq",
];

/// The Windows target whose tests CI runs under wine (`x86_64-pc-windows-gnu`: mingw-w64
/// links it, so no MSVC toolchain is needed).
pub const WINE_TARGET: &str = "x86_64-pc-windows-gnu";

/// Runner for [`WINE_TARGET`] (Debian's `wine`, 64-bit only: `wine64`).
pub const WINE_RUNNER: &str = "wine";

/// Packages whose library and integration tests run on [`WINE_TARGET`] under wine: every
/// library crate and the facade (their fork, rseq and `/proc` tests are gated to the platforms
/// that have those).
pub const WINE_TESTS: &[&str] = &[
    "scalrand-os",
    "scalrand-fastprng",
    "scalrand-pool",
    "scalrand-shuffle",
    "scalrand-simd-chunk",
    "scalrand",
];

/// The C source of the `bcryptprimitives.dll` that the wine prefix gets (wine before 9 has
/// none, and Rust's std on Windows imports `ProcessPrng` from it), relative to the workspace
/// root; compiled with [`WINE_DLL_CC`].
pub const WINE_SHIM: &str = "xtask/wine/bcryptprimitives.c";

/// The compiler of [`WINE_SHIM`] (Debian's `gcc-mingw-w64-x86-64`; also the target's linker).
pub const WINE_DLL_CC: &str = "x86_64-w64-mingw32-gcc";

/// Targets the facade (and so every crate under it) must pass `clippy -D warnings` for, with
/// the features each needs: CI has no linker or runner for them.
pub const OTHER_TARGETS: &[(&str, &str)] = &[
    ("x86_64-apple-darwin", ""),
    ("aarch64-apple-darwin", ""),
    ("x86_64-pc-windows-gnu", ""),
    ("x86_64-unknown-freebsd", ""),
    ("wasm32-unknown-unknown", "wasm_js"),
    ("wasm32-wasip1", ""),
    ("x86_64-unknown-netbsd", ""),
    // Linux with musl: the os crate's own declarations of the C library (its `sys` module),
    // whose musl values the `libc` crate's agree with (their tests run on glibc).
    ("x86_64-unknown-linux-musl", ""),
    ("aarch64-unknown-linux-musl", ""),
    // The direct OS calls of the `getrandom-backend` feature: getentropy(2), ProcessPrng.
    ("aarch64-apple-darwin", "getrandom-backend"),
    ("x86_64-pc-windows-gnu", "getrandom-backend"),
    ("x86_64-unknown-freebsd", "getrandom-backend"),
    ("x86_64-unknown-netbsd", "getrandom-backend"),
];

/// The musl target whose OS-layer tests `other-targets` runs natively (Rust's own musl; no
/// emulator).
pub const MUSL_TEST_TARGET: &str = "x86_64-unknown-linux-musl";

/// The flags of the facade's `getrandom_backend` test: getrandom (0.3 and 0.4) built for its
/// custom backend, which the `getrandom-backend` feature defines.
pub const GETRANDOM_BACKEND_RUSTFLAGS: &str = "--cfg getrandom_backend=\"custom\"";

/// One of getrandom's published test suites that the `getrandom-suites` step runs with
/// scalrand as the backend.
pub struct GetrandomSuite {
    /// The getrandom version (the workspace's `Cargo.lock` picks the release).
    pub version: &'static str,
    /// getrandom features the suite's files need.
    pub features: &'static [&'static str],
    /// The files of the package's `tests/` directory, each a test binary.
    pub tests: &'static [&'static str],
    /// `(file, module, reason)`: a module of a file compiled out, and why.
    pub skip: &'static [(&'static str, &'static str, &'static str)],
}

/// getrandom's own suites, as published on crates.io, run with scalrand as the backend.
pub const GETRANDOM_SUITES: &[GetrandomSuite] = &[
    GetrandomSuite {
        version: "0.4",
        features: &["sys_rng"],
        tests: &["mod.rs", "sys_rng.rs"],
        skip: &[],
    },
    GetrandomSuite {
        version: "0.3",
        features: &[],
        tests: &["mod.rs"],
        skip: &[(
            "mod.rs",
            "custom",
            "`custom::test_custom` checks getrandom 0.3's own test backend, which the same \
             module defines (`__getrandom_v03_custom`, failing 142-byte requests): with \
             scalrand as the backend that definition would be a second one, and the test's \
             expected error is that backend's, not a property of getrandom",
        )],
    },
];

/// The example program of the `getrandom-program` step, relative to the workspace root: its
/// own workspace, with the README's `.cargo/config.toml` beside it.
pub const GETRANDOM_PROGRAM_MANIFEST: &str = "examples/getrandom-backend/Cargo.toml";

/// What the `getrandom-program` step's build without the cfg must print: the start of the
/// message of `scalrand::getrandom_backend!()` for a build that lacks the cfg.
pub const GETRANDOM_PROGRAM_REFUSAL: &str =
    "scalrand::getrandom_backend!() needs `--cfg getrandom_backend=\"custom\"`";

/// The `RUSTFLAGS` of that build: what a user sets for speed, which replaces the config's
/// `rustflags` and with them the cfg.
pub const GETRANDOM_PROGRAM_OVERRIDE: &str = "-C target-cpu=native";

/// An emulated machine of `cargo xtask vm`: QEMU system emulation (TCG) of an x86_64 box with
/// this many CPUs in these NUMA nodes, booting the distribution's kernel.
pub struct Machine {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it models, for `--help` and the log.
    pub about: &'static str,
    /// QEMU's `-smp` argument.
    pub smp: &'static str,
    /// Each node's CPUs (a Linux CPU list; empty: a node with memory and no CPU). Every node
    /// gets an equal share of [`VM_MEMORY_MIB`].
    pub nodes: &'static [&'static str],
    /// Extra kernel command-line arguments.
    pub kernel_args: &'static str,
}

/// The emulated machines, in the order `cargo xtask vm` boots them.
pub const MACHINES: &[Machine] = &[
    Machine {
        name: "four-nodes",
        about: "16 CPUs in 4 nodes of 4 (4 sockets of 4 cores)",
        smp: "16,sockets=4,cores=4",
        nodes: &["0-3", "4-7", "8-11", "12-15"],
        kernel_args: "",
    },
    Machine {
        name: "uneven",
        about: "nodes of 2, 6 and 8 CPUs and one of memory only; CPUs 12-15 offline at boot",
        smp: "16",
        nodes: &["0-1", "2-7", "8-15", ""],
        kernel_args: "maxcpus=12",
    },
];

/// Guest memory, split evenly between the nodes.
pub const VM_MEMORY_MIB: usize = 2048;

/// Seconds one emulated machine may run (boot, tests, power-off) before it is stopped.
pub const VM_TIMEOUT_SECS: u64 = 420;

/// What runs inside the emulated machines, in order: (package, test target, arguments to the
/// test harness, extra environment, machine). All release builds, copied into the guest's
/// initramfs; the pool's are built with the `hwloc` feature. `numa_guest` runs uncaptured:
/// its tests fork, and a fork child's panic message must reach the console (the harness's
/// capture buffer dies with the child). `SCALRAND_GUEST_RSEQ` tells
/// `numa_guest` whether glibc registers rseq in that run. A machine of `""` is every machine;
/// the long suites (fork, erasure, signals: half a minute to a minute each under TCG) run
/// on one. The facade's fork tests stay on the host: what they add over the pools' fork
/// suite is the facade's own state, which does not depend on the machine's shape.
pub const VM_TESTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "scalrand-pool",
        "numa_guest",
        "--ignored --test-threads=1 --nocapture",
        "SCALRAND_GUEST_RSEQ=on",
        "",
    ),
    (
        "scalrand-pool",
        "numa_guest",
        "--ignored --test-threads=1 --nocapture",
        "SCALRAND_GUEST_RSEQ=off GLIBC_TUNABLES=glibc.pthread.rseq=0",
        "",
    ),
    ("scalrand-pool", "numa_rseq", "--test-threads=4", "", ""),
    (
        "scalrand-pool",
        "numa_fork",
        "--test-threads=4",
        "",
        "four-nodes",
    ),
    (
        "scalrand-fastprng",
        "percpu",
        "--test-threads=4",
        "",
        "four-nodes",
    ),
    (
        "scalrand-pool",
        "numa_erasure",
        "--test-threads=4",
        "",
        "uneven",
    ),
    (
        "scalrand-pool",
        "numa_hostile",
        "--test-threads=4",
        "",
        "uneven",
    ),
];

/// Cargo's arguments that select the scaling harness, after `build` or `run`: the release
/// build of `scalrand-benches`'s `scaling` program without the criterion benches'
/// dependencies (its default `criterion` feature), as `cargo xtask scaling`, CI's
/// `bench-build` and `cargo xtask vm` all build it.
pub const SCALING_HARNESS: [&str; 6] = [
    "--release",
    "-p",
    "scalrand-benches",
    "--no-default-features",
    "--bin",
    "scaling",
];

/// The scaling harness (`scalrand-benches`'s `scaling` program) runs on this machine after
/// the tests, with these arguments: every row once at 16 threads, to its end. Its figures
/// mean nothing under TCG; that it finishes does.
pub const VM_SCALING: (&str, &str) = (
    "four-nodes",
    "--full --threads 16 --duration-ms 20 --repeat 1 --quiet --out /tmp/scaling",
);

/// Packages installed from the distribution for `cargo xtask vm`: `qemu-system-x86`
/// (`qemu-system-x86_64`), `linux-image-amd64` (the kernel, in `/boot`), `busybox-static`
/// (the guest's shell) and `cpio` (the initramfs).
pub const VM_BUSYBOX: &str = "/bin/busybox";
