#![no_std]
// The front page is its own file, not the README that `STYLE` habits include: the README is
// the repository's page and links to files (BENCHMARKS.md, docs/) that docs.rs does not host.
// This page links with intra-doc links and absolute URLs only, and `cargo xtask ci --only
// doc-links` checks every link it renders.
// The front page's links to the parts behind features: to the item itself where the feature is
// on, to docs.rs (every feature on) where it is off, so the page reads the same in both.
#![cfg_attr(
    feature = "fortuna",
    doc = "[fortuna-with-seed]: pool::fortuna::Fortuna::with_seed
[fortuna-from-seed]: pool::fortuna::Fortuna::from_seed
[fortuna-new]: pool::fortuna::Fortuna::new
[fortuna-read-mode]: pool::fortuna::ReadMode"
)]
#![cfg_attr(
    not(feature = "fortuna"),
    doc = "[fortuna-with-seed]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html#method.with_seed
[fortuna-from-seed]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html#method.from_seed
[fortuna-new]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html#method.new
[fortuna-read-mode]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/enum.ReadMode.html
[`pool::fortuna`]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/
[`pool::fortuna::Fortuna`]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html
[`pool::fortuna::Generator`]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Generator.html
[`pool::fortuna::Fortuna::from_seed`]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html#method.from_seed"
)]
#![cfg_attr(
    not(feature = "shuffle"),
    doc = "[`shuffle`]: https://docs.rs/scalrand/latest/scalrand/shuffle/"
)]
#![cfg_attr(
    not(feature = "simd-chunk"),
    doc = "[`simd_chunk`]: https://docs.rs/scalrand/latest/scalrand/simd_chunk/
[`simd_chunk::digest_chunked`]: https://docs.rs/scalrand/latest/scalrand/simd_chunk/fn.digest_chunked.html
[`simd_chunk::Preempt`]: https://docs.rs/scalrand/latest/scalrand/simd_chunk/trait.Preempt.html"
)]
// The front page (after the link definitions above, which a paragraph cannot precede).
#![doc = include_str!("../docs/crate.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod fast;

#[cfg(feature = "getrandom-backend")]
#[cfg_attr(docsrs, doc(cfg(feature = "getrandom-backend")))]
pub mod getrandom_backend;

pub mod glossary;

pub mod migration;

/// Makes scalrand the program's getrandom backend: defines `__getrandom_v03_custom`, the
/// function getrandom 0.3's and 0.4's custom backend calls, in the crate that calls the macro.
/// Call it once, in the program (the binary's root crate), on a line of its own:
///
/// ```ignore
/// scalrand::getrandom_backend!();
///
/// fn main() {
///     println!("{}", uuid::Uuid::new_v4()); // uuid's getrandom call reads the pools
/// }
/// ```
///
/// with the `getrandom-backend` feature and `--cfg getrandom_backend="custom"` in the
/// build (the README's `.cargo/config.toml` lines). The symbol lives in the program's own
/// crate, so it is linked even when no other code of the program names scalrand.
///
/// A build without the cfg fails at this line with a message that names it: getrandom would
/// otherwise keep its own backend without a word (a `RUSTFLAGS` environment variable replaces
/// the `rustflags` of `.cargo/config.toml`, cfg included). Without the feature, it fails
/// naming the feature. [`getrandom_backend::served`](mod@getrandom_backend) counts the
/// requests the pools took.
#[cfg(feature = "getrandom-backend")]
#[macro_export]
macro_rules! getrandom_backend {
    () => {
        // The cfg is the program's to declare: `allow` spares a program that does not list it
        // in its `check-cfg` a warning about a cfg it never wrote.
        #[allow(unexpected_cfgs)]
        const _: () = {
            #[cfg(not(getrandom_backend = "custom"))]
            ::core::compile_error!(
                "scalrand::getrandom_backend!() needs `--cfg getrandom_backend=\"custom\"`, which \
                 this build lacks, so getrandom would keep its own backend and the pools would \
                 serve nothing. Put `rustflags = ['--cfg', 'getrandom_backend=\"custom\"']` in \
                 the program's .cargo/config.toml (scalrand's README, \"Serving every getrandom \
                 call from the pools\"); a RUSTFLAGS environment variable replaces those \
                 rustflags, so add `--cfg getrandom_backend=\"custom\"` to it too."
            );
            // The one definition of this symbol in a program: getrandom declares it and calls
            // it; a second definition fails to link rather than pick one. Its signature is
            // getrandom 0.4's declaration; getrandom 0.3 declares the same name with its own
            // `Error`, a struct of the same one field (`NonZeroI32`), so both calls agree on
            // the return value's layout.
            #[cfg(getrandom_backend = "custom")]
            #[unsafe(no_mangle)]
            unsafe extern "Rust" fn __getrandom_v03_custom(
                dest: *mut u8,
                len: usize,
            ) -> $crate::getrandom_backend::BackendResult {
                // SAFETY: getrandom's contract for this function is `fill_raw`'s: `dest` is
                // valid for `len` writes.
                unsafe { $crate::getrandom_backend::fill_raw(dest, len) }
            }
        };
    };
}

/// Makes scalrand the program's getrandom backend (this build lacks scalrand's
/// `getrandom-backend` feature, so the macro refuses to build, naming it).
#[cfg(not(feature = "getrandom-backend"))]
#[macro_export]
macro_rules! getrandom_backend {
    () => {
        ::core::compile_error!(
            "scalrand::getrandom_backend!() needs scalrand's `getrandom-backend` feature: \
             `scalrand = { ..., features = [\"getrandom-backend\"] }` in Cargo.toml"
        );
    };
}

#[cfg(all(
    feature = "std",
    any(feature = "rand_core_06", feature = "rand_core_09")
))]
mod compat;
#[cfg(feature = "std")]
mod crypto;
#[cfg(feature = "std")]
mod error;
#[cfg(feature = "std")]
mod random;
#[cfg(feature = "std")]
mod uniform;

// The comments on these `use` lines are `//` comments: rustdoc prepends a doc comment on a
// `use` that it inlines to each item's own docs, and shows none for one that it links.

// The cryptographic generator: `fill_bytes` and `next_u64` read a lazily-initialised global
// `pool::numa::NodePools` seeded from the OS; `rng` returns a `SecureRng`, a rand_core
// `Rng + CryptoRng` handle to it. For keys, nonces and tokens; `fast` is for speed without
// cryptographic guarantees.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use crypto::{SecureRng, fill_bytes, next_u64, rng, try_fill_bytes, try_next_u64};
// What the `try_` functions return when the OS entropy source fails.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use error::Error;
// rand 0.10's free functions, with its signatures and panics, on the cryptographic generator:
// they draw from `rng()` where rand's draw from its `ThreadRng`.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use random::{fill, random, random_bool, random_iter, random_range, random_ratio};

// The crates are linked, not inlined: rustdoc inlines a foreign crate whole, with every
// re-export inside it (core's atomics, the `digest` crate and its `typenum`), and their pages
// would repeat here with links that only resolve on their own sites. A linked re-export shows
// no summary in the item list; the front page's "The crates" table gives each one's.
// Non-cryptographic generators: bit-exact xoroshiro128 `+`/`++`/`**` with jumps, wyrand, and
// `PerCpu`, one state per CPU shared by `&self` (the crate `scalrand-fastprng`).
pub use scalrand_fastprng as fastprng;
// The OS layer every crate builds on: CPU id, fork detection, wipe-on-fork memory, OS entropy,
// a fork-aware lock, the clock (the crate `scalrand-os`).
pub use scalrand_os as os;
// Cryptographic generators that scale: Fortuna that generates outside its lock, per-NUMA
// ChaCha20 pools with per-CPU fast key erasure (the crate `scalrand-pool`).
pub use scalrand_pool as pool;
// A simulator of Linux's page-allocator free-list shuffle with a memory-side-cache model (the
// crate `scalrand-shuffle`).
#[cfg(feature = "shuffle")]
#[cfg_attr(docsrs, doc(cfg(feature = "shuffle")))]
pub use scalrand_shuffle as shuffle;
// Hashing in bounded chunks that yields to a thread, a host or an async executor
// (`digest_async` with the `async` feature; the crate `scalrand-simd-chunk`).
#[cfg(feature = "simd-chunk")]
#[cfg_attr(docsrs, doc(cfg(feature = "simd-chunk")))]
pub use scalrand_simd_chunk as simd_chunk;
