//! Fork detection that holds before any code runs in the child.
//!
//! After `fork()` the child holds a byte-for-byte copy of its parent's memory, generator keys
//! included; if both went on generating they would hand out the same bytes. A generator records
//! the [`generation`] it was keyed under and compares it before every answer; a different
//! value means its state is a copy from before a fork.
//!
//! # How a child is recognised
//!
//! | platform | mechanism ([`detection`]) | cost of a check | holds against |
//! |---|---|---|---|
//! | Linux ≥ 4.14, `std` | [`Detection::WipeOnFork`]: a word in a page advised [`MADV_WIPEONFORK`]; the kernel hands the child that page zeroed, and a zero word means "new process image" | two loads | every way to fork: libc `fork()`, raw `syscall(SYS_fork)`, `clone`/`clone3` without `CLONE_VM`, signal handlers and other libraries' `pthread_atfork` handlers that run before ours |
//! | FreeBSD ≥ 12, OpenBSD ≥ 5.6, `std` | [`Detection::WipeOnFork`]: the same word in a page given `minherit(INHERIT_ZERO)` (FreeBSD) or `minherit(MAP_INHERIT_ZERO)` (OpenBSD) | two loads | the same |
//! | macOS, iOS and the other Apple platforms, `std` | [`Detection::Atfork`]: a generation moved by `pthread_atfork` handlers, with `getpid()` checks while a fork is in flight | two loads from one cache line | libSystem's `fork()` (the only fork Apple supports), other libraries' child handlers registered before ours, signal handlers in the child |
//! | other Unix, an older kernel, or a `madvise` that accepts anything (qemu-user emulation: an advice no kernel defines succeeds, so wipe-on-fork is not trusted) | [`Detection::Pid`]: `getpid()` compared with the pid the generation belongs to | one system call | every way to fork, at the price of the system call |
//! | Windows (no `fork`), no `std`, miri, loom | [`Detection::None`]: [`generation`] is the constant 0 | none | (no `fork` to detect) |
//!
//! `MADV_WIPEONFORK` is Linux commit d2cd9ede6e19 ("mm,fork: introduce MADV_WIPEONFORK",
//! Rik van Riel, v4.14). It is the mechanism of the vDSO `getrandom()` (Jason A. Donenfeld's
//! series, Linux 6.11: its per-thread state must be wipe-on-fork memory) and of BoringSSL's and
//! AWS-LC's fork detection (`crypto/fipsmodule/rand/fork_detect.c`, which also uses
//! `minherit` `INHERIT_ZERO` on FreeBSD and `MAP_INHERIT_ZERO` on OpenBSD, the mechanism of
//! OpenBSD's `arc4random`; see the BSDs' `minherit(2)`). Where such memory exists this crate
//! registers no atfork handler: a raw `SYS_fork` runs no handlers, and another library's child
//! handler that was registered earlier runs (and may draw random bytes) before ours. Apple's
//! systems offer neither kind of memory; there the atfork mode closes the second gap with its
//! prepare handler (see [`Detection::Atfork`]), and the first does not exist.
//!
//! # The protocol
//!
//! In wipe-on-fork mode `GENERATION` is an ordinary counter (copied into children). The wipe-on-fork page holds
//! `generation + 1`. A check loads that word (one load after the page pointer): non-zero is
//! the answer. Zero means the kernel wiped the page, so this is a child: the first thread to
//! notice increments `GENERATION` and installs it with a compare-exchange; a thread that loses
//! the race adopts the installed value. So every child's generation is larger than any its
//! parent ever handed out, and every thread of one process image agrees on it. Nothing here
//! takes a lock or runs a `Once`, so a fork at any instant (even during the first call) leaves
//! a child that works.
//!
//! [`MADV_WIPEONFORK`]: https://man7.org/linux/man-pages/man2/madvise.2.html

/// How this process detects forks; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detection {
    /// A word in `MADV_WIPEONFORK` memory: the child sees it zeroed (Linux ≥ 4.14).
    WipeOnFork,
    /// `getpid()` compared on every check (Unix without wipe-on-fork).
    Pid,
    /// A generation that `pthread_atfork` handlers move (Apple platforms, whose `fork()`
    /// always runs them): the child's handler installs a new generation, and from the
    /// forking thread's prepare handler until then every check in the child compares
    /// `getpid()`, so another library's child handler that runs before ours already sees the
    /// new generation. A check outside a fork is two loads from one cache line. A raw fork
    /// system call that runs no handlers goes unseen: Apple supports no such call (libSystem's
    /// `fork` does the child's set-up, and `syscall(2)` is deprecated there).
    Atfork,
    /// No fork exists on this target (no `std`, or miri/loom): [`generation`] is always 0.
    None,
}

/// The process's fork generation: the same value for every call within one process image,
/// and in a fork child a value the parent never returned.
///
/// A state keyed when `generation()` returned `g` must be discarded before answering once
/// `generation() != g`. On Linux this is two loads on the fast path.
#[inline]
pub fn generation() -> usize {
    imp::generation()
}

/// Runs `f` with every signal that can be blocked blocked on the calling thread, and returns
/// its result (the old signal mask is restored when `f` returns or unwinds).
///
/// A signal handler may call `fork()`; if one interrupts a thread between reading
/// [`generation`] and acting on it, the rest of that thread's work runs in the child with the
/// parent's value. Code that *publishes* something valid for one process image only (a cache
/// that skips later generation checks) runs the check and the publication in here, so both
/// happen in the same image. Two system calls (`pthread_sigmask`): for cold paths only. On
/// targets without signals (no `std`, not Unix, miri, loom) it just runs `f`.
pub fn signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    imp::signals_blocked(f)
}

/// How forks are detected in this process (probes on first call).
pub fn detection() -> Detection {
    imp::detection()
}

/// The lock tag of the calling process image: `generation() + 1`, never 0 (0 means free in
/// [`crate::Lock`]).
#[inline]
pub fn tag() -> usize {
    match generation().wrapping_add(1) {
        0 => 1,
        t => t,
    }
}

/// What every Unix fork-detection mode shares: the generation counter, the pid path, signal
/// masking, and memory the kernel hands a child zeroed.
#[cfg(all(feature = "std", unix, not(miri), not(scalrand_loom)))]
mod sys {
    use core::ptr;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// The current process image's generation; ordinary memory, so children inherit it.
    pub(super) static GENERATION: AtomicUsize = AtomicUsize::new(0);
    /// The pid `GENERATION` belongs to on the pid path (0 before the first check).
    static PID: AtomicUsize = AtomicUsize::new(0);

    pub(super) fn getpid() -> usize {
        // SAFETY: getpid has no preconditions.
        unsafe { crate::sys::getpid() as usize }
    }

    /// The pid path: a pid other than the one `GENERATION` belongs to is a new process image,
    /// which gets a generation its parent never handed out.
    pub(super) fn by_pid() -> usize {
        let pid = getpid();
        let known = PID.load(Ordering::Acquire);
        if known == pid {
            return GENERATION.load(Ordering::Acquire);
        }
        if known != 0 {
            GENERATION.fetch_add(1, Ordering::AcqRel);
        }
        let _ = PID.compare_exchange(known, pid, Ordering::AcqRel, Ordering::Acquire);
        GENERATION.load(Ordering::Acquire)
    }

    pub(super) fn signals_blocked<T>(f: impl FnOnce() -> T) -> T {
        struct Restore(Option<crate::sys::sigset_t>);
        impl Drop for Restore {
            fn drop(&mut self) {
                if let Some(old) = &self.0 {
                    // SAFETY: `old` is the mask `pthread_sigmask` returned below.
                    unsafe {
                        crate::sys::pthread_sigmask(crate::sys::SIG_SETMASK, old, ptr::null_mut())
                    };
                }
            }
        }
        // SAFETY: `sigset_t` is plain data; `sigfillset` initialises `all` before it is used,
        // and `pthread_sigmask` writes the old mask into `old` before it is read (only when it
        // returned 0).
        let _restore = unsafe {
            let mut all: crate::sys::sigset_t = core::mem::zeroed();
            let mut old: crate::sys::sigset_t = core::mem::zeroed();
            crate::sys::sigfillset(&mut all);
            Restore(
                (crate::sys::pthread_sigmask(crate::sys::SIG_BLOCK, &all, &mut old) == 0)
                    .then_some(old),
            )
        };
        f()
    }

    #[cfg(not(target_vendor = "apple"))]
    pub(crate) fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { crate::sys::sysconf(crate::sys::_SC_PAGESIZE) };
        usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
    }

    cfg_wipe_on_fork! {
        if {
            /// Asks the kernel to hand a fork child `[p, p + len)` zeroed:
            /// `madvise(MADV_WIPEONFORK)` on Linux ≥ 4.14, `minherit(INHERIT_ZERO)` on
            /// FreeBSD ≥ 12, `minherit(MAP_INHERIT_ZERO)` on OpenBSD ≥ 5.6. False where the
            /// kernel lacks it and where the call cannot be trusted (see
            /// [`super::advice_is_truthful`]).
            pub(crate) fn advise_wipe_on_fork(p: *mut crate::sys::c_void, len: usize) -> bool {
                #[cfg(any(target_os = "linux", target_os = "android"))]
                let (call, zero) = (
                    |advice: crate::sys::c_int| {
                        // SAFETY: the caller passes a mapping it owns; madvise only changes
                        // its fork behaviour, and an advice the kernel does not know changes
                        // nothing (EINVAL).
                        unsafe { crate::sys::madvise(p, len, advice) }
                    },
                    crate::sys::MADV_WIPEONFORK,
                );
                #[cfg(any(target_os = "freebsd", target_os = "openbsd"))]
                let (call, zero) = (
                    |inherit: crate::sys::c_int| {
                        // SAFETY: the caller passes a mapping it owns; minherit only changes
                        // what a fork child receives, and a value the kernel does not know is
                        // EINVAL.
                        unsafe { crate::sys::minherit(p, len, inherit) }
                    },
                    #[cfg(target_os = "freebsd")]
                    crate::sys::INHERIT_ZERO,
                    #[cfg(target_os = "openbsd")]
                    crate::sys::MAP_INHERIT_ZERO,
                );
                super::advice_is_truthful(call) && call(zero) == 0
            }
        } else {
            /// No system call hands a fork child zeroed memory here.
            #[cfg(not(target_vendor = "apple"))]
            pub(crate) fn advise_wipe_on_fork(_p: *mut crate::sys::c_void, _len: usize) -> bool {
                false
            }
        }
    }
}

/// Wipe-on-fork mode (every Unix but Apple's): a generation word in memory the kernel zeroes
/// in a child, and the pid path where no such memory exists.
#[cfg(all(
    feature = "std",
    unix,
    not(any(target_vendor = "apple", scalrand_fork_atfork)),
    not(miri),
    not(scalrand_loom)
))]
mod imp {
    use super::Detection;
    use super::sys::{GENERATION, advise_wipe_on_fork, by_pid, page_size};
    use core::ptr;
    use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

    /// The wipe-on-fork word (`generation + 1`, or 0 in a child that has not looked yet).
    static WORD: AtomicPtr<AtomicUsize> = AtomicPtr::new(ptr::null_mut());
    const UNKNOWN: u8 = 0;
    const WIPE: u8 = 1;
    const PID_MODE: u8 = 2;
    static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);

    #[inline]
    pub(super) fn generation() -> usize {
        let w = WORD.load(Ordering::Acquire);
        if !w.is_null() {
            // SAFETY: a non-null `WORD` points into a page this module mapped and never
            // unmaps; the mapping is inherited across fork (its contents zeroed).
            let v = unsafe { &*w }.load(Ordering::Acquire);
            if v != 0 {
                return v - 1;
            }
        }
        slow()
    }

    pub(super) fn detection() -> Detection {
        let _ = generation();
        match MODE.load(Ordering::Acquire) {
            WIPE => Detection::WipeOnFork,
            _ => Detection::Pid,
        }
    }

    #[cold]
    #[inline(never)]
    fn slow() -> usize {
        let mut w = WORD.load(Ordering::Acquire);
        if w.is_null() && MODE.load(Ordering::Acquire) != PID_MODE {
            w = map_word();
        }
        if w.is_null() {
            return by_pid();
        }
        // SAFETY: as in `generation`.
        let word = unsafe { &*w };
        let v = word.load(Ordering::Acquire);
        if v != 0 {
            return v - 1;
        }
        // The page is zero: either we mapped it just now (first call of this process, which
        // `map_word` initialises, so not this branch) or the kernel wiped it in a fork child.
        let next = GENERATION.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        let next = if next == usize::MAX { 0 } else { next };
        match word.compare_exchange(0, next + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => next,
            Err(installed) => installed - 1,
        }
    }

    /// Maps the wipe-on-fork page and publishes its word; null if the kernel refuses.
    fn map_word() -> *mut AtomicUsize {
        let page = page_size();
        // SAFETY: an anonymous private mapping with no address hint has no preconditions.
        let p = unsafe {
            crate::sys::mmap(
                ptr::null_mut(),
                page,
                crate::sys::PROT_READ | crate::sys::PROT_WRITE,
                crate::sys::MAP_PRIVATE | crate::sys::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == crate::sys::MAP_FAILED {
            MODE.store(PID_MODE, Ordering::Release);
            return ptr::null_mut();
        }
        if !advise_wipe_on_fork(p, page) {
            // SAFETY: `p` is the `page`-byte mapping made above, used by nobody else.
            unsafe { crate::sys::munmap(p, page) };
            MODE.store(PID_MODE, Ordering::Release);
            return ptr::null_mut();
        }
        let word = p.cast::<AtomicUsize>();
        // SAFETY: the page is fresh, writable, page-aligned and zero-filled, a valid
        // `AtomicUsize` (0); nobody else can see it before the compare-exchange below.
        unsafe { (*word).store(GENERATION.load(Ordering::Acquire) + 1, Ordering::Release) };
        match WORD.compare_exchange(ptr::null_mut(), word, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                MODE.store(WIPE, Ordering::Release);
                word
            }
            Err(winner) => {
                // SAFETY: our page was never published.
                unsafe { crate::sys::munmap(p, page) };
                winner
            }
        }
    }

    pub(super) use super::sys::signals_blocked;
}

/// `pthread_atfork` mode (Apple platforms; elsewhere only with `--cfg scalrand_fork_atfork`,
/// which CI uses to run this mode's tests on Linux). See [`Detection::Atfork`].
#[cfg(all(
    feature = "std",
    unix,
    any(target_vendor = "apple", scalrand_fork_atfork),
    not(miri),
    not(scalrand_loom)
))]
mod imp {
    use super::Detection;
    use super::sys::{GENERATION, by_pid};
    use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

    const UNREGISTERED: u8 = 0;
    const READY: u8 = 1;
    /// Registering, or registration failed, or a fork copied the process mid-registration:
    /// the pid path for good.
    const PID_ONLY: u8 = 2;

    /// The words a check reads, on one cache line.
    #[repr(C, align(64))]
    struct State {
        ready: AtomicU8,
        /// Forks between their prepare handler and their parent handler, in this process (in
        /// a child: the fork that made it, until its child handler ran).
        forking: AtomicUsize,
    }
    static STATE: State = State {
        ready: AtomicU8::new(UNREGISTERED),
        forking: AtomicUsize::new(0),
    };

    #[inline]
    pub(super) fn generation() -> usize {
        if STATE.ready.load(Ordering::Acquire) == READY
            && STATE.forking.load(Ordering::Acquire) == 0
        {
            return GENERATION.load(Ordering::Acquire);
        }
        slow()
    }

    pub(super) fn detection() -> Detection {
        let _ = generation();
        match STATE.ready.load(Ordering::Acquire) {
            READY => Detection::Atfork,
            _ => Detection::Pid,
        }
    }

    #[cold]
    #[inline(never)]
    fn slow() -> usize {
        if STATE
            .ready
            .compare_exchange(UNREGISTERED, PID_ONLY, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // Pin the pid path's pid to this process before any handler can run.
            let g = by_pid();
            // SAFETY: three `extern "C" fn()` handlers that only touch atomics and getpid
            // (async-signal-safe), valid for the life of the process.
            let rc =
                unsafe { crate::sys::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
            if rc == 0 {
                STATE.ready.store(READY, Ordering::Release);
            }
            return g;
        }
        by_pid()
    }

    /// Runs in the forking thread before the fork: from here until the child's handler has
    /// run, checks in the child take the pid path, so a child handler registered before ours
    /// (which runs before ours) already sees a new generation.
    extern "C" fn prepare() {
        STATE.forking.fetch_add(1, Ordering::AcqRel);
    }

    extern "C" fn parent() {
        STATE.forking.fetch_sub(1, Ordering::AcqRel);
    }

    extern "C" fn child() {
        // A new pid: `by_pid` moves the generation once, whether or not an earlier handler already
        // asked.
        let _ = by_pid();
        STATE.forking.store(0, Ordering::Release);
    }

    pub(super) use super::sys::signals_blocked;
}

cfg_wipe_on_fork! {
    if {
        /// Whether the kernel's answer to an advice is truthful here: a value no kernel defines
        /// must fail. User-mode emulators (qemu-user, which Docker uses to run foreign-architecture
        /// images) answer every `madvise` with 0 and do nothing, so `MADV_WIPEONFORK` would be
        /// accepted and never wipe: fork detection must then take the pid path. Probed once per
        /// process with `call` (which runs `madvise` or `minherit` with the value it is given on a
        /// mapping the caller owns), then cached.
        pub(crate) fn advice_is_truthful(call: impl FnOnce(crate::sys::c_int) -> crate::sys::c_int) -> bool {
            use core::sync::atomic::{AtomicU8, Ordering};
            static TRUTHFUL: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 yes, 2 no
            match TRUTHFUL.load(Ordering::Relaxed) {
                1 => true,
                2 => false,
                _ => {
                    let yes = probe_says_truthful(call);
                    TRUTHFUL.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
                    yes
                }
            }
        }

        /// The probe itself: a value no kernel defines (Linux checks the advice before it looks at
        /// the range and answers `EINVAL`; the BSDs check the inheritance value likewise) must not
        /// succeed.
        fn probe_says_truthful(call: impl FnOnce(crate::sys::c_int) -> crate::sys::c_int) -> bool {
            /// Far above every `MADV_*` value Linux has defined (the largest is in the 100s) and
            /// every BSD inheritance value (0 to 4).
            const NO_SUCH_ADVICE: crate::sys::c_int = 0x7ead_beef;
            call(NO_SUCH_ADVICE) != 0
        }

        // The wipe-on-fork slices of `crate::wipe` exist where the kernel can wipe.
        pub(crate) use sys::{advise_wipe_on_fork, page_size};
    }
}

#[cfg(not(all(feature = "std", unix, not(miri), not(scalrand_loom))))]
mod imp {
    use super::Detection;

    #[inline]
    pub(super) fn generation() -> usize {
        0
    }

    pub(super) fn detection() -> Detection {
        Detection::None
    }

    pub(super) fn signals_blocked<T>(f: impl FnOnce() -> T) -> T {
        f()
    }
}

#[cfg(all(test, feature = "std", unix, not(miri), not(scalrand_loom)))]
mod tests {
    /// Whether `SIGUSR1` is blocked on this thread now.
    fn usr1_blocked() -> bool {
        // SAFETY: `cur` is plain data written by `pthread_sigmask` (a null new mask only
        // queries) before `sigismember` reads it.
        unsafe {
            let mut cur: libc::sigset_t = core::mem::zeroed();
            assert_eq!(
                libc::pthread_sigmask(libc::SIG_BLOCK, core::ptr::null(), &mut cur),
                0
            );
            libc::sigismember(&cur, libc::SIGUSR1) == 1
        }
    }

    #[test]
    fn signals_blocked_blocks_inside_and_restores_after_return_and_unwind() {
        assert!(!usr1_blocked());
        assert_eq!(super::signals_blocked(|| (usr1_blocked(), 7)), (true, 7));
        assert!(!usr1_blocked(), "the old mask is back");
        let r = std::panic::catch_unwind(|| super::signals_blocked(|| panic!("inside")));
        assert!(r.is_err());
        assert!(!usr1_blocked(), "the old mask is back after an unwind");
    }

    /// An emulator's `madvise` that answers 0 to everything (qemu-user's) is not trusted, so
    /// wipe-on-fork memory is not used and forks are detected by pid; a real kernel's
    /// `EINVAL` for an unknown advice is.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_probe_distrusts_a_madvise_that_accepts_anything() {
        assert!(
            !super::probe_says_truthful(|_| 0),
            "qemu-user: every advice succeeds"
        );
        assert!(
            super::probe_says_truthful(|_| -1),
            "a kernel: EINVAL for an unknown advice"
        );
        let mut seen = 0;
        let _ = super::probe_says_truthful(|a| {
            seen = a;
            -1
        });
        assert!(
            seen > 1000,
            "the probe asks for an advice no kernel defines"
        );
    }

    /// On this machine's kernel the real probe trusts `madvise`, and a real mapping gets an
    /// unknown advice refused (the probe's premise).
    #[cfg(target_os = "linux")]
    #[test]
    fn this_kernel_refuses_an_unknown_advice() {
        let page = super::sys::page_size();
        // SAFETY: a fresh anonymous private mapping, unmapped below.
        unsafe {
            let p = libc::mmap(
                core::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let truthful = super::probe_says_truthful(|a| libc::madvise(p, page, a));
            libc::munmap(p, page);
            // Under an emulator this is the pid path, which `detection()` reports.
            if cfg!(scalrand_fork_atfork) {
                assert_eq!(super::detection(), super::Detection::Atfork);
            } else if truthful {
                assert_eq!(super::detection(), super::Detection::WipeOnFork);
            } else {
                assert_eq!(super::detection(), super::Detection::Pid);
            }
        }
    }
}
