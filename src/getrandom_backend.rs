//! scalrand as getrandom's custom backend (feature `getrandom-backend`): a program built with
//! `--cfg getrandom_backend="custom"` gets every `getrandom::fill` of every crate in its
//! dependency tree, getrandom 0.3's and 0.4's alike, from the global pools
//! ([`try_fill_bytes`](crate::try_fill_bytes)) instead of a system call each.
//!
//! getrandom's "custom backend" section describes the hook: getrandom 0.3 and 0.4 both call
//! an `extern "Rust"` function named `__getrandom_v03_custom`, which this module defines when
//! the cfg is set. The pools seed themselves through `scalrand::os::entropy::fill`, which the
//! feature points at the OS's own call (`getrandom(2)`, `getentropy(2)`, `ProcessPrng`), never
//! back through getrandom.
//!
//! Without the cfg the feature defines nothing here: getrandom keeps its default backend, the
//! pools still seed from the OS's own call, and [`ACTIVE`] is false.

use core::sync::atomic::{AtomicU64, Ordering};

/// Whether this build serves getrandom: the `getrandom-backend` feature is on (it is, where
/// this module exists) and the program was built with `--cfg getrandom_backend="custom"`.
pub const ACTIVE: bool = cfg!(getrandom_backend = "custom");

/// The code in `getrandom::Error::new_custom` that a failed request returns: the pools could
/// not be seeded, or a fork child could not rekey, because the OS entropy source failed
/// ([`Error`](crate::Error) says the same to scalrand's own callers). A later request tries
/// again.
pub const POOLS_FAILED: u16 = 1;

/// Requests taken since the process started, failed ones included (a forked child starts from
/// its parent's count).
static SERVED: AtomicU64 = AtomicU64::new(0);

/// How many getrandom requests the pools have taken in this process, failed ones included: a
/// program can check at start-up that its build is configured as it meant (`getrandom::fill`,
/// then `served() > 0`). Always 0 when [`ACTIVE`] is false.
#[must_use]
pub fn served() -> u64 {
    SERVED.load(Ordering::Relaxed)
}

/// Fills `len` bytes at `dest` from the global pools.
///
/// # Safety
/// `dest` points to `len` writable bytes (getrandom's contract: possibly uninitialised,
/// possibly dangling when `len` is 0).
#[cfg(getrandom_backend = "custom")]
// SAFETY: the one definition of this symbol in a program is the point of the feature:
// getrandom declares it and calls it; a second definition (a program that also defines its
// own) fails to link rather than pick one. Its signature is getrandom 0.4's declaration;
// getrandom 0.3 declares the same name with its own `Error`, a struct of the same one field
// (`NonZeroI32`, `NonZeroUsize` on UEFI), so both calls agree on the return value's layout.
#[unsafe(no_mangle)]
unsafe extern "Rust" fn __getrandom_v03_custom(
    dest: *mut u8,
    len: usize,
) -> Result<(), getrandom::Error> {
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
