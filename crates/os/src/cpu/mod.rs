//! Which CPU the calling thread runs on, and how many CPUs the system may have.
//!
//! Per-CPU state is only as good as the number that picks the slot. [`current`] asks the
//! cheapest source the platform has, and where none exists it still spreads threads over the
//! slots instead of piling them onto one:
//!
//! | platform | [`current`] answers from | cost |
//! |---|---|---|
//! | Linux x86_64, glibc ≥ 2.35 | the thread's rseq area `cpu_id` ([`rseq_cpu`]) | one thread-pointer-relative load |
//! | other Linux and Android | `sched_getcpu` | a vDSO call (`getcpu`, no system call on x86_64 and aarch64) |
//! | FreeBSD ≥ 13, DragonFly | `sched_getcpu` (looked up once with `dlsym`) | a library call |
//! | macOS 11+, iOS 14.2+ | `pthread_cpu_number_np` (looked up once with `dlsym`) | a library call: the CPU number the kernel keeps in a per-CPU register |
//! | Windows | `GetCurrentProcessorNumberEx`, processor groups laid end to end | a library call, no system call |
//! | any other target with `std` (OpenBSD, NetBSD, wasm, older macOS/FreeBSD) | a per-thread number handed out round-robin on the thread's first call ([`Source::PerThread`]) | one thread-local load |
//! | no `std` | `None`: the host passes the slot | |
//!
//! On Linux the rseq area is `struct rseq` (Linux 4.18, commit d7822b1e24f2 "rseq: Introduce
//! restartable sequences system call"); glibc publishes its place as `__rseq_offset` from the
//! thread pointer and its size as `__rseq_size`, and the kernel keeps `cpu_id` current.
//! [`rseq_offset`] is public for crates that run their own restartable sequences in that area
//! (`scalrand-fastprng`, `scalrand-pool`).

/// Where [`current`] takes its answer from on this platform (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// The `cpu_id` field of the thread's rseq area (Linux x86_64, glibc ≥ 2.35).
    Rseq,
    /// `sched_getcpu()` (Linux without an rseq area, Android, FreeBSD ≥ 13, DragonFly).
    SchedGetcpu,
    /// `pthread_cpu_number_np()` (macOS 11+, iOS 14.2+).
    PthreadCpuNumber,
    /// `GetCurrentProcessorNumberEx()` (Windows).
    ProcessorNumber,
    /// No CPU query: each thread gets a number on its first call, round-robin over
    /// [`possible`], so threads spread over the slots even where nobody says which CPU runs
    /// them.
    PerThread,
    /// No `std`: [`current`] returns `None` and the caller picks the slot.
    None,
}

/// The CPU the calling thread runs on: `Some` on every target with `std` (a real CPU number
/// where the OS reports one, otherwise the thread's own round-robin number, see [`source`]),
/// always below [`possible`]; `None` without `std`.
///
/// The answer may be stale the instant it is returned (the thread can migrate); callers use it
/// to pick a slot, never as a proof of exclusivity.
#[inline]
pub fn current() -> Option<usize> {
    if let Some(c) = rseq_cpu() {
        return Some(c);
    }
    imp::current()
}

/// Where [`current`] takes its answer from for the calling thread, now (the rseq area is per
/// thread, and the library functions are looked up at run time).
pub fn source() -> Source {
    if rseq_cpu().is_some() {
        return Source::Rseq;
    }
    imp::source()
}

/// The `cpu_id` of the calling thread's rseq area: `Some` only where this thread has a
/// registered area (Linux x86_64, glibc ≥ 2.35), with no fallback. Restartable sequences run
/// on this number (the kernel aborts them when it changes), so code about to run one asks
/// here rather than [`current`], which falls back to `sched_getcpu` for a thread without an
/// area.
#[inline]
pub fn rseq_cpu() -> Option<usize> {
    rseq_area_cpu()
}

/// The round-robin per-thread number of [`Source::PerThread`]: the thread's first call takes
/// the next value of a process-wide counter modulo [`possible`], later calls read it back.
#[cfg(all(feature = "std", not(windows), not(miri), not(scalrand_loom)))]
// Clippy misreads the expansion on targets whose thread locals are OS keys (OpenBSD's) and
// asks for the `const` initialiser that is there.
#[allow(clippy::missing_const_for_thread_local)]
fn per_thread() -> usize {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // `const`-initialised with no destructor: readable at any point of a thread's life,
    // signal handlers and thread-exit destructors included.
    std::thread_local! {
        static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    MINE.with(|mine| {
        let v = mine.get();
        if v != usize::MAX {
            return v;
        }
        let v = NEXT.fetch_add(1, Ordering::Relaxed) % possible();
        mine.set(v);
        v
    })
}

#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri),
    not(scalrand_loom)
))]
#[path = "linux.rs"]
mod imp;

#[cfg(all(
    feature = "std",
    any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly"
    ),
    not(miri),
    not(scalrand_loom)
))]
#[path = "dlsym.rs"]
mod imp;

#[cfg(all(feature = "std", windows, not(miri), not(scalrand_loom)))]
#[path = "windows.rs"]
mod imp;

#[cfg(all(
    feature = "std",
    not(any(
        target_os = "linux",
        target_os = "android",
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        windows
    )),
    not(miri),
    not(scalrand_loom)
))]
#[path = "other.rs"]
mod imp;

#[cfg(not(all(feature = "std", not(miri), not(scalrand_loom))))]
#[path = "none.rs"]
mod imp;

/// The number of CPUs the system may bring online (at least 1): `sysconf(_SC_NPROCESSORS_CONF)`
/// on Unix, `GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS)` on Windows (every processor
/// group, where the standard library's `available_parallelism` counts one).
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn possible() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { crate::sys::sysconf(crate::sys::_SC_NPROCESSORS_CONF) };
        if let Ok(n) = usize::try_from(n)
            && n > 0
        {
            return n;
        }
    }
    #[cfg(all(windows, not(miri), not(scalrand_loom)))]
    {
        let n = imp::max_processors();
        if n > 0 {
            return n;
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

mod rseq_area;

use rseq_area::rseq_area_cpu;
#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
))]
pub use rseq_area::rseq_offset;
pub use rseq_area::{RseqInUse, disable_rseq};

#[cfg(all(test, feature = "std"))]
mod tests {
    #[test]
    fn current_is_below_possible() {
        let n = super::possible();
        assert!(n >= 1);
        #[cfg(all(target_os = "linux", not(miri)))]
        assert!(super::current().is_some_and(|c| c < n.max(1024)));
    }

    /// With `std`, every platform answers: a CPU query where one exists, a per-thread number
    /// elsewhere, never `None` (which would put every thread on one slot).
    #[cfg(not(any(miri, scalrand_loom)))]
    #[test]
    fn every_std_platform_answers() {
        assert!(super::current().is_some());
        let src = super::source();
        assert_ne!(src, super::Source::None);
        #[cfg(target_os = "linux")]
        assert!(matches!(
            src,
            super::Source::Rseq | super::Source::SchedGetcpu
        ));
        #[cfg(windows)]
        assert_eq!(src, super::Source::ProcessorNumber);
    }

    /// Where nothing says which CPU runs a thread, threads still spread: as many threads as
    /// there are possible CPUs get as many different numbers, each below `possible()`, and a
    /// thread keeps its number.
    #[cfg(not(any(miri, scalrand_loom, windows)))]
    #[test]
    fn per_thread_numbers_spread_threads() {
        let n = super::possible().min(16);
        let got: std::vec::Vec<usize> = (0..n)
            .map(|_| std::thread::spawn(|| (super::per_thread(), super::per_thread())))
            .collect::<std::vec::Vec<_>>()
            .into_iter()
            .map(|h| {
                let (a, b) = h.join().expect("thread");
                assert_eq!(a, b, "a thread keeps its number");
                a
            })
            .collect();
        let mut distinct = got.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), n, "{got:?}");
        assert!(got.iter().all(|&c| c < super::possible()));
    }

    #[cfg(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu",
        not(miri),
        not(scalrand_loom)
    ))]
    #[test]
    fn rseq_cpu_matches_sched_getcpu() {
        // glibc 2.35+ registers rseq for every thread; both sources name the same CPU unless
        // the thread migrates in between, so retry a few times.
        if super::rseq_offset().is_none() {
            return;
        }
        let same = (0..100).any(|_| {
            // SAFETY: no preconditions.
            let s = unsafe { libc::sched_getcpu() };
            super::current() == usize::try_from(s).ok()
        });
        assert!(same);
    }
}
