//! scalrand as getrandom's custom backend (feature `getrandom-backend`): a program that says
//! `scalrand::getrandom_backend!();` once and is built with `--cfg getrandom_backend="custom"`
//! gets every `getrandom::fill` of every crate in its dependency tree, getrandom 0.3's and
//! 0.4's alike, from the global pools ([`try_fill_bytes`](crate::try_fill_bytes)) instead of
//! a system call each.
//!
//! getrandom's "custom backend" section describes the hook: getrandom 0.3 and 0.4 both call
//! an `extern "Rust"` function named `__getrandom_v03_custom`. The
//! [`getrandom_backend!`](crate::getrandom_backend!) macro defines it in the crate that calls
//! the macro, the program's own, so it is linked even when nothing else in the program names
//! scalrand (the linker leaves out a library crate that no code of the program uses, and with
//! it any symbol the library alone defines). The pools seed themselves through
//! `scalrand::os::entropy::fill`, which the feature points at the OS's own call
//! (`getrandom(2)`, `getentropy(2)`, `ProcessPrng`), never back through getrandom.
//!
//! The four ways a build can be set up:
//!
//! | the program has | the build has the cfg | result |
//! |---|---|---|
//! | `scalrand::getrandom_backend!();` | yes | every getrandom call reads the pools ([`served`] counts them) |
//! | `scalrand::getrandom_backend!();` | no (a `RUSTFLAGS` variable replaced the config's `rustflags`) | the build fails, naming the cfg and where to put it |
//! | no macro call | yes | the link fails: `undefined symbol: __getrandom_v03_custom` |
//! | no macro call | no | getrandom keeps its own backend; the pools still seed from the OS's own call |

use core::sync::atomic::{AtomicU64, Ordering};

/// Whether scalrand itself was built with `--cfg getrandom_backend="custom"` (a build that
/// sets the cfg through `RUSTFLAGS` or `.cargo/config.toml` sets it for every crate alike).
pub const ACTIVE: bool = cfg!(getrandom_backend = "custom");

/// The code in `getrandom::Error::new_custom` that a failed request returns: the pools could
/// not be seeded, or a fork child could not rekey, because the OS entropy source failed
/// ([`Error`](crate::Error) says the same to scalrand's own callers). A later request tries
/// again.
pub const POOLS_FAILED: u16 = 1;

/// What `__getrandom_v03_custom` returns: `Result` of getrandom 0.4's error type.
pub type BackendResult = Result<(), getrandom::Error>;

/// Requests taken since the process started, failed ones included (a forked child starts from
/// its parent's count).
static SERVED: AtomicU64 = AtomicU64::new(0);

/// How many getrandom requests the pools have taken in this process, failed ones included: a
/// program can check at start-up that its build is configured as it meant (`getrandom::fill`,
/// then `served() > 0`). Always 0 in a program without
/// [`getrandom_backend!`](crate::getrandom_backend!).
#[must_use]
pub fn served() -> u64 {
    SERVED.load(Ordering::Relaxed)
}

/// Fills `len` bytes at `dest` from the global pools and counts the request in [`served`]:
/// the body of the `__getrandom_v03_custom` that [`getrandom_backend!`](crate::getrandom_backend!)
/// defines.
///
/// # Errors
/// `getrandom::Error::new_custom(POOLS_FAILED)` ([`POOLS_FAILED`]) while the pools cannot be
/// seeded or a fork child cannot rekey them.
///
/// # Safety
/// `dest` points to `len` writable bytes (getrandom's contract: possibly uninitialised,
/// possibly dangling when `len` is 0).
pub unsafe fn fill_raw(dest: *mut u8, len: usize) -> BackendResult {
    SERVED.fetch_add(1, Ordering::Relaxed);
    if len == 0 {
        return Ok(());
    }
    // SAFETY: `dest` is valid for `len` writes (the caller's contract); zeroing it first makes
    // every byte initialised, so the slice below reads as `[u8]`.
    let buf = unsafe {
        core::ptr::write_bytes(dest, 0, len);
        core::slice::from_raw_parts_mut(dest, len)
    };
    crate::try_fill_bytes(buf).map_err(|_| getrandom::Error::new_custom(POOLS_FAILED))
}
