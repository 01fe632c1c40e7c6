//! A per-thread value handed to a destructor when its thread ends, arranged without
//! allocating: a POSIX thread-specific data key ([`ExitKey`]).
//!
//! A Rust thread-local with a destructor registers it on the thread's first use, which
//! allocates (the C library's list of thread-exit functions). That rules it out for a value a
//! signal handler or a raw fork child may set first. A pthread key's value does not allocate in
//! glibc for one of the first 32 keys (the value sits in the thread's own descriptor; a higher
//! key's first value allocates a second-level block), and in musl and bionic for every key.
//! Elsewhere (FreeBSD's and OpenBSD's C libraries allocate a thread's table, or a key's entry,
//! on first use) [`ExitKey::set`] says `false` and the caller arranges its own release.

use core::ffi::c_void;
use core::num::NonZeroUsize;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::sys;

/// A pthread key made on first use, whose destructor gets each thread's value when the thread
/// ends (see the module docs). A `static` of the library that holds it: a library unloaded
/// (`dlclose`) while threads that set a value live would leave their exit calling a
/// destructor that is gone.
pub struct ExitKey {
    /// The key, plus 1 (0: not made yet).
    key: AtomicUsize,
    dtor: extern "C" fn(*mut c_void),
}

impl core::fmt::Debug for ExitKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ExitKey")
            .field("made", &(self.key.load(Ordering::Relaxed) != 0))
            .finish_non_exhaustive()
    }
}

impl ExitKey {
    /// A key whose destructor is `dtor`: when a thread that set a value ends, the C library
    /// calls `dtor` with that value (as a pointer), after the thread's Rust thread-locals were
    /// destroyed. `dtor` is a safe function: it gets whatever value [`set`](Self::set) was
    /// given, and must not assume more of it.
    #[must_use]
    pub const fn new(dtor: extern "C" fn(*mut c_void)) -> Self {
        Self {
            key: AtomicUsize::new(0),
            dtor,
        }
    }

    /// The key, made on first use (no allocation in the C library: a compare-and-swap over
    /// its table of keys); `None` if the C library has no key left.
    fn key(&self) -> Option<sys::pthread_key_t> {
        let k = self.key.load(Ordering::Acquire);
        if k != 0 {
            return sys::pthread_key_t::try_from(k - 1).ok();
        }
        let mut key: sys::pthread_key_t = 0;
        // SAFETY: `key` is a valid place for the new key; `dtor` is a safe `extern "C"` fn
        // of one pointer argument, as the C library calls it.
        if unsafe { sys::pthread_key_create(&raw mut key, Some(self.dtor)) } != 0 {
            return None;
        }
        let mine = usize::try_from(key).ok()?.wrapping_add(1);
        match self
            .key
            .compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Some(key),
            Err(other) => {
                // Another thread made one first: this one goes.
                // SAFETY: the key just made, never set.
                unsafe { sys::pthread_key_delete(key) };
                sys::pthread_key_t::try_from(other - 1).ok()
            }
        }
    }

    /// Makes `value` the calling thread's, handed to the destructor when the thread ends;
    /// `false` if that cannot be arranged without allocating (a C library that allocates for
    /// it, no key left), and then nothing was arranged. Allocates nothing. The first call in
    /// the process makes the key: glibc does that with a compare-and-swap, musl under its
    /// key lock, so with musl a signal handler must not make the first call on a thread
    /// that may be making it too, nor a raw fork child while another thread of its parent
    /// was; every later call takes no lock. Where no C library value fits without
    /// allocating, no key is made.
    pub fn set(&self, value: NonZeroUsize) -> bool {
        if !VALUES_CAN_FIT {
            return false;
        }
        self.key()
            .filter(|&k| fits_the_descriptor(k))
            .is_some_and(|k| {
                // SAFETY: a key this process made; the value is only ever handed to `dtor`.
                unsafe { sys::pthread_setspecific(k, value.get() as *const c_void) == 0 }
            })
    }
}

/// Whether setting `key`'s value allocates nothing: glibc keeps the values of its first 32 keys
/// (`PTHREAD_KEY_2NDLEVEL_SIZE`) in the thread's descriptor and allocates a block for the
/// others on a thread's first use.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fits_the_descriptor(key: sys::pthread_key_t) -> bool {
    key < 32
}

/// Whether setting `key`'s value allocates nothing: musl and Android's bionic keep every key's
/// value in a fixed table of the thread.
#[cfg(any(all(target_os = "linux", target_env = "musl"), target_os = "android"))]
fn fits_the_descriptor(_: sys::pthread_key_t) -> bool {
    true
}

/// Whether setting `key`'s value allocates nothing: not known to hold here (FreeBSD's and
/// OpenBSD's C libraries allocate a thread's table, or a key's entry, on first use).
#[cfg(not(any(
    all(target_os = "linux", any(target_env = "gnu", target_env = "musl")),
    target_os = "android"
)))]
fn fits_the_descriptor(_: sys::pthread_key_t) -> bool {
    false
}

/// Whether any key's value can be set without allocating here (see `fits_the_descriptor`).
const VALUES_CAN_FIT: bool = cfg!(any(
    all(
        target_os = "linux",
        any(target_env = "gnu", target_env = "musl")
    ),
    target_os = "android"
));

#[cfg(all(
    test,
    target_os = "linux",
    any(target_env = "gnu", target_env = "musl"),
    not(miri)
))]
mod tests {
    use super::ExitKey;
    use core::ffi::c_void;
    use core::num::NonZeroUsize;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static SEEN: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn record(p: *mut c_void) {
        SEEN.fetch_add(p as usize, Ordering::SeqCst);
    }

    static KEY: ExitKey = ExitKey::new(record);

    /// Each ending thread hands its own value to the destructor, once; a thread that set
    /// nothing hands nothing. (With glibc the test's key must be among the process's first
    /// 32: the test harness makes none.)
    #[test]
    fn each_thread_hands_its_value_over_when_it_ends() {
        let threads: std::vec::Vec<_> = (1..=4usize)
            .map(|i| {
                std::thread::spawn(move || {
                    assert!(KEY.set(NonZeroUsize::new(i << 8).unwrap()));
                })
            })
            .chain(core::iter::once(std::thread::spawn(|| {})))
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(SEEN.load(Ordering::SeqCst), (1 + 2 + 3 + 4) << 8);
    }
}
