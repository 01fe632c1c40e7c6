//! The CI steps, as a type of their own: [`crate::flags`] parses them and [`crate::ci`] runs
//! them, and neither needs the other for it.

use clap::ValueEnum;

/// The CI steps, declared in the order CI runs them; `--only` / `--skip` take their names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Step {
    /// rustfmt --check, the workspace and fuzz/
    Fmt,
    /// every test (the build linted as it compiles: clippy -D warnings, every target but the
    /// benches, which `bench-build` lints, and every feature), then the shuffle shape check in release, then the OS layer's tests with
    /// Apple's fork detection (pthread_atfork with a pid window) forced on Linux, then the
    /// facade's getrandom-backend test with getrandom built for the custom backend
    Test,
    /// the example program that names scalrand only in `scalrand::getrandom_backend!();`
    /// (examples/getrandom-backend, its own workspace and .cargo/config.toml, as a user's
    /// program): clippy, its tests (uuid v4 and getrandom 0.3 and 0.4 served by the pools, no
    /// `getrandom` system call after seeding, the binary links and runs), then the same
    /// program with a `RUSTFLAGS` that replaces the config's cfg must fail to build, naming
    /// the cfg
    GetrandomProgram,
    /// getrandom 0.4's and 0.3's own test suites, the `tests/` files of their published
    /// packages (taken from cargo's registry cache, never stored here), run with scalrand as
    /// the backend; 0.3's `custom` module, which defines its own test backend, is compiled
    /// out, with the reason printed
    GetrandomSuites,
    /// the same tests on the portable ChaCha backend with Fortuna's software AES-256 forced
    /// (a CPU with no SIMD and no AES instructions), in the workspace's release build, before
    /// `backends` (whose default build the later steps reuse)
    BackendPortable,
    /// the pool's known-answer, erasure, fork, fork-mid-read, register and hostile-context
    /// tests once per forced ChaCha backend (AVX2, SSE2; `backend-portable` runs the
    /// portable one); with the default backend (AVX-512 where the CPU has it; `test` ran its
    /// other tests) the erasure, fork-mid-read (the facade's too), handler-fork and register
    /// tests and the rseq refill protocol's model check, then fork-mid-read and registers
    /// again with rseq off: all in the workspace's release build, the backend forced for the
    /// pool alone, the long campaigns an even sample (`SCALRAND_CAMPAIGN=full` runs every
    /// campaign in full on every backend)
    Backends,
    /// a copy of the workspace on the newest semver-compatible dependencies (`cargo update`):
    /// the OS layer's, the pools' and the facade's library and test targets build (once) and
    /// their test binaries pass
    LatestDeps,
    /// the OS layer's, fastprng's and the pools' tests (fork tests and the NEON ChaCha backend
    /// included) on aarch64 Linux under qemu-user, whose `madvise` accepts anything: fork
    /// detection must take the pid path
    Aarch64Qemu,
    /// every library crate's and the facade's tests on x86_64 Windows (gnu) under wine, debug
    /// builds, in a wine prefix of the step's own that gets a `ProcessPrng` shim
    WindowsWine,
    /// clippy -D warnings for macOS (x86_64, aarch64), Windows, FreeBSD, NetBSD, wasm32
    /// (browser and WASI) and Linux with musl (x86_64, aarch64), then the OS layer's library
    /// tests on x86_64 musl (run natively)
    OtherTargets,
    /// the library crates without std on the host: tests, their build linted (clippy -D
    /// warnings)
    NoDefaultFeatures,
    /// rustdoc -D warnings
    Doc,
    /// each publishable crate documented alone, as docs.rs builds it (nightly, docs.rs's
    /// features, its direct dependencies linked to docs.rs), then with every feature: no raw
    /// intra-doc link text, and every relative link, image and anchor of its pages resolves;
    /// every link of each packaged crate's README points at docs.rs (crates.io resolves no
    /// other)
    DocLinks,
    /// a new crate with only the README's dependency lines builds and runs each README
    /// example (the quick start, async hashing included)
    FreshCrate,
    /// the criterion benches build (in the `test` step's unoptimised build, linted as it
    /// is) and each
    /// benchmark runs once (`-- --test`), so a bench whose setup no longer holds fails here
    /// rather than on a user's `cargo bench`; the scaling harness builds optimised, as
    /// `cargo xtask scaling` builds it
    BenchBuild,
    /// emulated x86_64 machines with 16 CPUs in several NUMA nodes (QEMU system emulation,
    /// the distribution's kernel): the pools' and fastprng's release tests
    /// inside, rseq on and off, CPUs brought online and taken offline under readers, a
    /// process confined to high CPU ids, the scaling harness at 16 threads (`cargo xtask
    /// vm`); on one machine, after its tests, the routing test again with the node map
    /// rotated, which must fail. After `bench-build`, whose release build it reuses
    NumaVm,
    /// the no_std builds (`cargo xtask no-std`)
    NoStd,
    /// the OS layer linted under the loom cfg, then every loom model (`cargo xtask loom`)
    Loom,
    /// miri over the tests that need no FFI, inline assembly, signals or fork
    Miri,
    /// ThreadSanitizer and AddressSanitizer over the stress tests
    Sanitizers,
    /// every cargo-fuzz target builds
    FuzzBuild,
    /// every fuzz target runs a short while
    FuzzSmoke,
    /// `cargo publish --dry-run --workspace`: every publishable crate packages and builds on
    /// its own, with no warning
    Package,
}

impl Step {
    /// Whether the step runs in the second lane: steps that build into target directories
    /// of their own (so no build lock is shared with the first lane) and keep about one core
    /// busy for most of their time (emulators, interpreters, model checkers, fuzzers), so
    /// that on a 2-core machine the two lanes together fill both cores; and the builds of
    /// their own (the newest dependencies, the pages documented as docs.rs builds them, the
    /// other targets' lints, the getrandom programs) that balance the lanes' lengths.
    pub fn second_lane(self) -> bool {
        matches!(
            self,
            Step::LatestDeps
                | Step::GetrandomProgram
                | Step::GetrandomSuites
                | Step::OtherTargets
                | Step::DocLinks
                | Step::Aarch64Qemu
                | Step::WindowsWine
                | Step::Loom
                | Step::Miri
                | Step::Sanitizers
                | Step::FuzzBuild
                | Step::FuzzSmoke
                | Step::Package
        )
    }

    /// Every step, in CI's order.
    pub fn all() -> &'static [Step] {
        Step::value_variants()
    }

    /// The step's name on the command line (`no-default-features`).
    pub fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(|| format!("{self:?}"), |v| v.get_name().to_owned())
    }
}
