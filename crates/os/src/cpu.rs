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

crate::cfg_rseq! {
    if {
        #[inline]
        fn rseq_area_cpu() -> Option<usize> {
            let off = rseq_offset()?;
            let cpu: u32;
            // SAFETY: reads 4 bytes of the calling thread's own rseq area (`cpu_id` at offset
            // 4), which glibc keeps mapped for the thread's lifetime at `fs:[__rseq_offset]`.
            unsafe {
                core::arch::asm!(
                    "mov {c:e}, dword ptr fs:[{off} + 4]",
                    off = in(reg) off,
                    c = out(reg) cpu,
                    options(nostack, readonly, preserves_flags),
                );
            }
            // -1 (uninitialised or unregistered) and -2 (registration failed) are negative as
            // i32.
            i32::try_from(cpu).ok().map(|c| c as usize)
        }
    } else {
        #[inline]
        fn rseq_area_cpu() -> Option<usize> {
            None
        }
    }
}

/// The shared opening of scalrand's x86_64 restartable sequences, as one `asm!` template
/// string (not API: `scalrand-fastprng` and `scalrand-pool` use it).
///
/// It emits the section's descriptor (label `3`: `start_ip` = label `4`, length up to label
/// `5`, `abort_ip` = label `6`) into `__rseq_cs`; the abort handler into `__rseq_failure`,
/// after glibc's x86 signature `0x53053053` as the operand of a `ud1` (the kernel checks the
/// four bytes before `abort_ip`), running the given instructions and jumping back to label
/// `7`; then at `7` it arms the section by storing the descriptor's address into the area's
/// `rseq_cs` field, and opens the section at `4`. The `asm!` block must name the rseq offset
/// `off` and a scratch register `t`, and end the section with label `5`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rseq_prologue {
    ($($abort:literal),* $(,)?) => {
        concat!(
            ".pushsection __rseq_cs, \"aw\"\n",
            ".balign 32\n",
            "3:\n",
            ".long 0, 0\n",
            ".quad 4f, (5f - 4f), 6f\n",
            ".popsection\n",
            ".pushsection __rseq_failure, \"ax\"\n",
            ".byte 0x0f, 0xb9, 0x3d\n",
            ".long 0x53053053\n",
            "6:\n",
            $($abort, "\n",)*
            "jmp 7f\n",
            ".popsection\n",
            "7:\n",
            "lea {t}, [rip + 3b]\n",
            "mov qword ptr fs:[{off} + 8], {t}\n",
            "4:",
        )
    };
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
mod imp {
    use super::Source;

    fn sched_getcpu() -> Option<usize> {
        // SAFETY: sched_getcpu has no preconditions.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }

    #[inline]
    pub(super) fn current() -> Option<usize> {
        Some(sched_getcpu().unwrap_or_else(super::per_thread))
    }

    pub(super) fn source() -> Source {
        if sched_getcpu().is_some() {
            Source::SchedGetcpu
        } else {
            Source::PerThread
        }
    }
}

/// Apple's `pthread_cpu_number_np` (macOS 11, iOS 14.2) and FreeBSD's `sched_getcpu`
/// (FreeBSD 13) are newer than the oldest releases Rust supports there, so they are looked up
/// once with `dlsym` instead of linked: an older system simply takes the per-thread path.
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
mod imp {
    use super::Source;
    use core::ffi::c_void;
    use core::ptr;
    use core::sync::atomic::{AtomicPtr, Ordering};

    #[cfg(target_vendor = "apple")]
    const NAME: &core::ffi::CStr = c"pthread_cpu_number_np";
    #[cfg(target_vendor = "apple")]
    const FOUND: Source = Source::PthreadCpuNumber;
    #[cfg(not(target_vendor = "apple"))]
    const NAME: &core::ffi::CStr = c"sched_getcpu";
    #[cfg(not(target_vendor = "apple"))]
    const FOUND: Source = Source::SchedGetcpu;

    /// Null before the lookup, `MISSING` where the symbol does not exist, else the function.
    static FUNC: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
    const MISSING: *mut c_void = ptr::dangling_mut();

    fn func() -> *mut c_void {
        let f = FUNC.load(Ordering::Relaxed);
        if !f.is_null() {
            return f;
        }
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no preconditions.
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, NAME.as_ptr()) };
        let f = if f.is_null() { MISSING } else { f };
        FUNC.store(f, Ordering::Relaxed);
        f
    }

    fn ask() -> Option<usize> {
        let f = func();
        if f == MISSING {
            return None;
        }
        #[cfg(target_vendor = "apple")]
        {
            // SAFETY: `f` is libSystem's `int pthread_cpu_number_np(size_t *cpu_number_out)`,
            // found by name above; it writes the CPU number through a valid pointer.
            unsafe {
                let f: unsafe extern "C" fn(*mut libc::size_t) -> libc::c_int =
                    core::mem::transmute(f);
                let mut n: libc::size_t = 0;
                (f(&mut n) == 0).then_some(n)
            }
        }
        #[cfg(not(target_vendor = "apple"))]
        {
            // SAFETY: `f` is libc's `int sched_getcpu(void)`, found by name above.
            let c = unsafe {
                let f: unsafe extern "C" fn() -> libc::c_int = core::mem::transmute(f);
                f()
            };
            usize::try_from(c).ok()
        }
    }

    #[inline]
    pub(super) fn current() -> Option<usize> {
        Some(ask().unwrap_or_else(super::per_thread))
    }

    pub(super) fn source() -> Source {
        if ask().is_some() {
            FOUND
        } else {
            Source::PerThread
        }
    }
}

/// Windows numbers processors within groups of at most 64; the slot is the processor's index
/// with the groups laid end to end, below `GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS)`,
/// which is what [`possible`](super::possible) returns there.
#[cfg(all(feature = "std", windows, not(miri), not(scalrand_loom)))]
mod imp {
    use super::Source;

    /// `PROCESSOR_NUMBER` (winnt.h).
    #[repr(C)]
    struct ProcessorNumber {
        group: u16,
        number: u8,
        reserved: u8,
    }

    /// `ALL_PROCESSOR_GROUPS` (winnt.h).
    const ALL_PROCESSOR_GROUPS: u16 = 0xffff;

    #[link(name = "kernel32")]
    unsafe extern "system" {
        // Both since Windows 7 / Server 2008 R2.
        fn GetCurrentProcessorNumberEx(number: *mut ProcessorNumber);
        fn GetMaximumProcessorCount(group: u16) -> u32;
    }

    pub(super) fn max_processors() -> usize {
        // SAFETY: no preconditions; 0 means failure.
        unsafe { GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS) as usize }
    }

    #[inline]
    pub(super) fn current() -> Option<usize> {
        let mut p = ProcessorNumber {
            group: 0,
            number: 0,
            reserved: 0,
        };
        // SAFETY: writes one `PROCESSOR_NUMBER` through a valid pointer.
        unsafe { GetCurrentProcessorNumberEx(&mut p) };
        // Machines with more than 64 logical processors only: the groups before this one.
        let before: usize = (0..p.group)
            // SAFETY: no preconditions.
            .map(|g| unsafe { GetMaximumProcessorCount(g) } as usize)
            .sum();
        Some(before + usize::from(p.number))
    }

    pub(super) fn source() -> Source {
        Source::ProcessorNumber
    }
}

/// Every other target with `std`: no CPU query, so threads spread round-robin.
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
mod imp {
    use super::Source;

    #[inline]
    pub(super) fn current() -> Option<usize> {
        Some(super::per_thread())
    }

    pub(super) fn source() -> Source {
        Source::PerThread
    }
}

/// No `std` (and miri, loom): the caller passes the slot.
#[cfg(not(all(feature = "std", not(miri), not(scalrand_loom))))]
mod imp {
    use super::Source;

    #[inline]
    pub(super) fn current() -> Option<usize> {
        None
    }

    pub(super) fn source() -> Source {
        Source::None
    }
}

/// The number of CPUs the system may bring online (at least 1): `sysconf(_SC_NPROCESSORS_CONF)`
/// on Unix, `GetMaximumProcessorCount(ALL_PROCESSOR_GROUPS)` on Windows (every processor
/// group, where the standard library's `available_parallelism` counts one).
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn possible() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
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

/// [`disable_rseq`] came after something had already been handed the rseq offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RseqInUse;

impl core::fmt::Display for RseqInUse {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(
            "restartable sequences are already in use in this process: call disable_rseq \
             before the first use of scalrand",
        )
    }
}

impl core::error::Error for RseqInUse {}

/// Switches scalrand's restartable sequences off for the rest of the process: from then on
/// [`rseq_offset`] and [`rseq_cpu`] answer `None`, so the per-CPU fast paths of
/// `scalrand-fastprng` and `scalrand-pool` take their locked paths (one compare-exchange per
/// call), and [`current`] asks `sched_getcpu`.
///
/// **For programs whose children share their memory**: a child made with `vfork()` or with
/// `clone(CLONE_VM)` without `CLONE_THREAD` runs on its parent thread's rseq area with no rseq
/// registration of its own (the kernel's `rseq_fork` drops it for `CLONE_VM`), so the kernel
/// never aborts its sections, and no memory is copied, so wipe-on-fork memory never fires. A
/// read from such a child could then interleave with a parent thread's on the same CPU slot:
/// repeated output for both, zero words for the parent. The locked paths order every reader
/// with atomic instructions, whichever task it is, so after this call such a child reads as
/// one more thread would. Nothing in user memory tells such a child from its parent thread
/// without a system call, so this is the program's choice, made once, not a check per read.
/// `GLIBC_TUNABLES=glibc.pthread.rseq=0` in the environment has the same effect for scalrand
/// (glibc then registers no rseq area).
///
/// Call it before anything in the process uses scalrand: instances built earlier keep the
/// offset they were given. Returns [`RseqInUse`] when the offset was already handed out
/// (nothing is switched then); `Ok` again on later calls, and always `Ok` where scalrand runs
/// no restartable sequences (other targets, no `std`). Async-signal-safe (one atomic
/// compare-exchange).
pub fn disable_rseq() -> Result<(), RseqInUse> {
    rseq_switch::disable()
}

#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
))]
mod rseq_switch {
    use core::sync::atomic::{AtomicIsize, Ordering};

    pub(super) const UNKNOWN: isize = isize::MIN;
    pub(super) const UNAVAILABLE: isize = isize::MIN + 1;
    /// The probed offset, [`UNKNOWN`] before the first probe, [`UNAVAILABLE`] when there is
    /// none or [`super::disable_rseq`] came first.
    pub(super) static OFFSET: AtomicIsize = AtomicIsize::new(UNKNOWN);

    pub(super) fn disable() -> Result<(), super::RseqInUse> {
        match OFFSET.compare_exchange(UNKNOWN, UNAVAILABLE, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) | Err(UNAVAILABLE) => Ok(()),
            Err(_) => Err(super::RseqInUse),
        }
    }
}

#[cfg(not(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
)))]
mod rseq_switch {
    #[allow(clippy::unnecessary_wraps)] // the signature of the switch where rseq exists
    pub(super) fn disable() -> Result<(), super::RseqInUse> {
        Ok(())
    }
}

/// glibc's `__rseq_offset` when this process's threads have a registered rseq area of the
/// original 20-byte ABI or larger (`cpu_id` at 4, `rseq_cs` at 8); `None` otherwise (glibc
/// before 2.35, a static binary, rseq disabled with `glibc.pthread.rseq=0` or
/// [`disable_rseq`]).
///
/// Looked up once with `dlsym` (not linked, so an older glibc simply lacks the symbols) and
/// cached in an atomic: no lock, no `Once`.
#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_env = "gnu",
    not(miri),
    not(scalrand_loom)
))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "std", target_os = "linux", target_env = "gnu")))
)]
#[inline]
pub fn rseq_offset() -> Option<isize> {
    use core::sync::atomic::Ordering;
    use rseq_switch::{OFFSET, UNAVAILABLE, UNKNOWN};

    #[cold]
    fn probe() -> isize {
        // SAFETY: dlsym with RTLD_DEFAULT and NUL-terminated names has no preconditions.
        let (off, size) = unsafe {
            (
                libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr()),
                libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_size".as_ptr()),
            )
        };
        if off.is_null() || size.is_null() {
            return UNAVAILABLE;
        }
        // SAFETY: glibc defines `__rseq_size` as `const unsigned int` and `__rseq_offset` as
        // `const ptrdiff_t`, both set before any user code runs and never written again.
        let (off, size) = unsafe { (*off.cast::<isize>(), *size.cast::<u32>()) };
        if size < 20 || off == UNKNOWN || off == UNAVAILABLE {
            return UNAVAILABLE;
        }
        off
    }

    let mut off = OFFSET.load(Ordering::Relaxed);
    if off == UNKNOWN {
        // A compare-exchange, not a store: a `disable_rseq` between the load and here wins.
        let probed = probe();
        off = match OFFSET.compare_exchange(UNKNOWN, probed, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => probed,
            Err(now) => now,
        };
    }
    (off != UNAVAILABLE).then_some(off)
}

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
