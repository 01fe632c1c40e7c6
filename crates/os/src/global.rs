//! [`Global`]: a value for a `static`, built on first use with no lock and no `Once`, so that
//! no fork child ever finds it half-built; [`PerProcess`] (the default) gives every process
//! image a value of its own, [`Inherited`] lets a fork child use its parent's.
//!
//! Not a `OnceLock` or `LazyLock`: a `fork()` while another thread runs their initialiser
//! leaves the child with a cell marked "running" by a thread the child does not have, and
//! every use in the child waits forever. Here racing threads each build a value and one
//! compare-exchange publishes a winner (the others are dropped), so a child forked at any
//! instant finds a published value or none, and then builds one itself. A published value is
//! never freed: one that a fork child replaces is leaked on purpose, so references taken
//! before the fork stay valid.
//!
//! # Per process image
//! Each value records the fork generation ([`crate::fork::generation`]) it was built in, and
//! a fork child, whose generation differs, builds its own. Calls reach the value through one
//! word of [wipe-on-fork](crate::wipe::WipeOnFork) memory where the OS has it (Linux ≥ 4.14):
//! the word is set only to a value that matched this process image's generation, and the
//! kernel hands every fork child that page zeroed before any of the child's code runs
//! (`fork()`, a raw `SYS_fork`, `clone` without `CLONE_VM` alike), so a nonzero word always
//! names this process image's value and no per-call generation check is needed (it would
//! add two dependent loads). Elsewhere every call compares the generation.

use alloc::boxed::Box;
use core::convert::Infallible;
use core::fmt;
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// What a fork child does with a [`Global`]'s value: [`PerProcess`] or [`Inherited`].
pub trait Fork: sealed::Sealed {
    /// Whether every process image builds its own value.
    #[doc(hidden)]
    const PER_PROCESS: bool;
}

mod sealed {
    pub trait Sealed {}
}

/// Every process image builds its own value: a fork child never uses its parent's (see the
/// module docs). For generators that must not continue their parent's streams.
#[derive(Clone, Copy, Debug)]
pub struct PerProcess;

/// A fork child uses the value its parent published: for values that notice forks and rekey
/// themselves, and that a child must be able to use without allocating (in a signal handler,
/// say).
#[derive(Clone, Copy, Debug)]
pub struct Inherited;

impl sealed::Sealed for PerProcess {}
impl sealed::Sealed for Inherited {}
impl Fork for PerProcess {
    const PER_PROCESS: bool = true;
}
impl Fork for Inherited {
    const PER_PROCESS: bool = false;
}

/// A published value and the fork generation of the process image that built it.
struct Entry<T> {
    generation: usize,
    value: T,
}

/// A lazily built value for a `static` (see the module docs).
///
/// ```
/// use scalrand_os::global::Global;
/// use std::time::Instant;
///
/// /// When this process image first asked: a fork child gets its own start.
/// static START: Global<Instant> = Global::new();
///
/// fn started() -> Instant {
///     *START.get_or_init(Instant::now)
/// }
/// assert_eq!(started(), started());
/// ```
pub struct Global<T, F: Fork = PerProcess> {
    /// The published `Entry`, or null. Every non-null value it ever holds comes from
    /// `Box::into_raw` in `publish` and is never freed.
    entry: AtomicPtr<Entry<T>>,
    /// [`PerProcess`] only: a pointer to one word of wipe-on-fork memory (never unmapped)
    /// holding the address of this process image's `Entry`, or 0; null before the first call
    /// and where the OS cannot wipe memory in a fork child.
    shortcut: AtomicPtr<AtomicUsize>,
    /// Set once making `shortcut` was tried and the OS cannot wipe memory in a fork child:
    /// every call then compares the generation.
    no_shortcut: AtomicBool,
    _owns: PhantomData<(Box<T>, F)>,
}

// SAFETY: a `Global` hands out `&T` to every thread that calls it, builds `T`s on the calling
// threads and drops the losers of a race there: as `std::sync::LazyLock`, it needs
// `T: Send + Sync`. Its own fields are atomics.
unsafe impl<T: Send + Sync, F: Fork> Sync for Global<T, F> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync, F: Fork> Send for Global<T, F> {}

impl<T, F: Fork> Global<T, F> {
    /// Nothing built yet. `const`, for a `static`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            entry: AtomicPtr::new(ptr::null_mut()),
            shortcut: AtomicPtr::new(ptr::null_mut()),
            no_shortcut: AtomicBool::new(false),
            _owns: PhantomData,
        }
    }

    /// The value of this process image (for [`Inherited`]: the published one), built by
    /// `init` if there is none yet.
    ///
    /// Racing first calls may each run `init`; one result is published and the others are
    /// dropped. Nothing is locked meanwhile, so `init` may even run in a fork child whose
    /// parent was inside `init` at the fork.
    #[inline]
    pub fn get_or_init(&self, init: impl FnOnce() -> T) -> &T {
        match self.get_or_try_init(|| Ok::<T, Infallible>(init())) {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// [`get_or_init`](Self::get_or_init) with a fallible `init`.
    ///
    /// # Errors
    /// `init`'s error, when this call had to build the value and `init` failed; nothing is
    /// published then, and a later call tries again.
    #[inline]
    pub fn get_or_try_init<E>(&self, init: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        if F::PER_PROCESS {
            let word = self.shortcut.load(Ordering::Acquire);
            if !word.is_null() {
                // SAFETY: a non-null `shortcut` points into a wipe-on-fork mapping that is
                // never unmapped (`make_shortcut` forgets its owner).
                let p = unsafe { &*word }.load(Ordering::Acquire) as *const Entry<T>;
                if !p.is_null() {
                    // SAFETY: a nonzero word names an `Entry` published in `entry` (leaked,
                    // never freed) by this process image (see `shortcut`); the Acquire load
                    // pairs with the Release store in `init_slow`.
                    return Ok(unsafe { &(*p).value });
                }
            }
        } else {
            let p = self.entry.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: a non-null `entry` is never freed (see its docs); the Acquire load
                // pairs with the compare-exchange in `publish`.
                return Ok(unsafe { &(*p).value });
            }
        }
        self.init_slow(init)
    }

    /// `get_or_try_init` without (or before) the shortcut: the generation-checked entry, then
    /// the shortcut set to it where the OS offers wipe-on-fork memory.
    #[cold]
    #[inline(never)]
    fn init_slow<E>(&self, init: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        let mut word = self.shortcut.load(Ordering::Acquire);
        if F::PER_PROCESS && word.is_null() && !self.no_shortcut.load(Ordering::Relaxed) {
            word = self.make_shortcut();
        }
        if !F::PER_PROCESS || word.is_null() {
            return self.publish(init).map(|e| &e.value);
        }
        // The check and the store happen in one process image: with signals blocked, no
        // handler can fork between them and leave the child storing its parent's value.
        crate::fork::signals_blocked(|| {
            let e = self.publish(init)?;
            // SAFETY: as in `get_or_try_init`; `e` belongs to this process image (`publish`).
            unsafe { &*word }.store(ptr::from_ref(e) as usize, Ordering::Release);
            Ok(&e.value)
        })
    }

    /// The published entry if this process image may use it, else one built by `init` and
    /// published in place of what was there (null, or a parent process image's entry).
    fn publish<E>(&self, init: impl FnOnce() -> Result<T, E>) -> Result<&Entry<T>, E> {
        let generation = if F::PER_PROCESS {
            crate::fork::generation()
        } else {
            0
        };
        let usable = |p: *mut Entry<T>| {
            // SAFETY: a non-null `entry` came from `Box::into_raw` below and is never freed;
            // the Acquire loads and the compare-exchange pair with its publication.
            let e = unsafe { p.as_ref() }?;
            (!F::PER_PROCESS || e.generation == generation).then_some(e)
        };
        let mut seen = self.entry.load(Ordering::Acquire);
        if let Some(e) = usable(seen) {
            return Ok(e);
        }
        let fresh = Box::into_raw(Box::new(Entry {
            generation,
            value: init()?,
        }));
        loop {
            match self
                .entry
                .compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // SAFETY: `fresh` is now the published entry, never freed.
                Ok(_) => return Ok(unsafe { &*fresh }),
                Err(now) => {
                    if let Some(e) = usable(now) {
                        // Another thread of this process image published first: ours was
                        // never shared.
                        // SAFETY: `fresh` came from `Box::into_raw` above and nobody else
                        // saw it.
                        drop(unsafe { Box::from_raw(fresh) });
                        return Ok(e);
                    }
                    seen = now;
                }
            }
        }
    }

    /// Maps the shortcut's word and publishes it (or sets `no_shortcut`); returns `shortcut`.
    #[cold]
    fn make_shortcut(&self) -> *mut AtomicUsize {
        let wipe = crate::wipe::WipeOnFork::new(1, |_| AtomicUsize::new(0));
        if !wipe.wipes_on_fork() {
            self.no_shortcut.store(true, Ordering::Relaxed);
            return ptr::null_mut();
        }
        let word = ptr::from_ref(&wipe[0]).cast_mut();
        match self.shortcut.compare_exchange(
            ptr::null_mut(),
            word,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // Published: the mapping must outlive every reader, so it is never unmapped.
                core::mem::forget(wipe);
                word
            }
            // Another thread published first; ours is unmapped when `wipe` drops.
            Err(theirs) => theirs,
        }
    }
}

impl<T, F: Fork> Default for Global<T, F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, F: Fork> fmt::Debug for Global<T, F> {
    /// Whether a value was published, never the value (it may hold keys).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Global")
            .field("published", &!self.entry.load(Ordering::Relaxed).is_null())
            .field("per_process", &F::PER_PROCESS)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicU32;
    extern crate std;
    use std::vec::Vec;

    #[test]
    fn builds_once_and_keeps_the_value() {
        static G: Global<u64> = Global::new();
        static BUILDS: AtomicU32 = AtomicU32::new(0);
        let make = || {
            BUILDS.fetch_add(1, Ordering::Relaxed);
            7
        };
        assert_eq!(*G.get_or_init(make), 7);
        assert_eq!(*G.get_or_init(make), 7);
        assert_eq!(BUILDS.load(Ordering::Relaxed), 1);
        assert!(std::format!("{G:?}").contains("published: true"));
    }

    #[test]
    fn racing_threads_agree_on_one_value() {
        static G: Global<std::string::String, Inherited> = Global::new();
        let seen: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|i| {
                    s.spawn(move || {
                        ptr::from_ref(G.get_or_init(|| std::format!("thread {i}"))) as usize
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|&p| p == seen[0]));
    }

    #[test]
    fn a_failed_init_publishes_nothing() {
        static G: Global<u8> = Global::new();
        assert_eq!(G.get_or_try_init(|| Err("no")), Err("no"));
        assert_eq!(G.get_or_try_init(|| Ok::<u8, &str>(3)), Ok(&3));
        assert_eq!(G.get_or_try_init(|| Err("no")), Ok(&3));
    }
}
