//! Fork detection.
//!
//! After `fork()` the child holds a byte-for-byte copy of the parent's generator state; if
//! both kept generating, they would return the same bytes (rand#1362 is what happens when this
//! is done wrong). Every generator in this crate records the [`generation`] it was keyed in and
//! compares it, with one relaxed atomic load, before each read; a mismatch means the state is a
//! copy from before a fork, and the generator rekeys from fresh entropy before it answers.
//!
//! The generation is a process-wide counter that a `pthread_atfork` child handler increments.
//! The handler runs in the child before `fork()` returns there, so the child's first read
//! already sees the new value. The counter is never reset, so a state copied at any time before
//! the fork can never match it again.
//!
//! Limits, shared with every user-space detector built on `pthread_atfork` (OpenSSL, rand):
//! a raw `clone(2)` system call that bypasses libc's `fork()` does not run the handlers. Linux's
//! `MADV_WIPEONFORK` closes that gap for memory the generator owns; the vDSO getrandom uses it.
//!
//! Without `std` (or off Unix) there is no fork: [`generation`] is the constant 0.

#[cfg(all(feature = "std", unix))]
mod imp {
    use core::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Once;

    static GENERATION: AtomicU64 = AtomicU64::new(0);
    static REGISTER: Once = Once::new();

    extern "C" fn after_fork_in_child() {
        // An atomic add is async-signal-safe, which is all a child handler may rely on.
        GENERATION.fetch_add(1, Ordering::SeqCst);
    }

    pub(super) fn register() {
        REGISTER.call_once(|| {
            // SAFETY: `pthread_atfork` is given a valid `extern "C"` function with no
            // captured state and null prepare/parent handlers; registering it once is
            // guarded by `Once`. Its only failure is ENOMEM, reported through the return
            // value; `generation` then still works, only blind to forks (see `is_armed`).
            let rc = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
            ARMED.store(rc == 0, Ordering::SeqCst);
        });
    }

    pub(super) static ARMED: core::sync::atomic::AtomicBool =
        core::sync::atomic::AtomicBool::new(false);

    #[inline]
    pub(super) fn generation() -> u64 {
        if !REGISTER.is_completed() {
            register();
        }
        GENERATION.load(Ordering::Relaxed)
    }
}

/// The process's fork generation: 0 in the original process, incremented in each child by
/// the `pthread_atfork` handler this module registers on first call.
///
/// A generator keyed when `generation()` returned `g` must rekey before answering once
/// `generation() != g`.
#[inline]
pub fn generation() -> u64 {
    #[cfg(all(feature = "std", unix))]
    return imp::generation();
    #[cfg(not(all(feature = "std", unix)))]
    return 0;
}

/// Whether fork detection is active: true on Unix with `std` once the atfork handler has been
/// registered (which [`generation`] does on its first call), false on targets without `fork`.
pub fn is_armed() -> bool {
    #[cfg(all(feature = "std", unix))]
    {
        imp::register();
        imp::ARMED.load(core::sync::atomic::Ordering::SeqCst)
    }
    #[cfg(not(all(feature = "std", unix)))]
    false
}

#[cfg(all(test, feature = "std", unix, not(miri)))]
mod tests {
    use super::*;

    #[test]
    fn child_sees_a_new_generation() {
        let before = generation();
        assert!(is_armed());
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only calls async-signal-safe functions (write, _exit) and a
        // relaxed atomic load before exiting.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let g = generation().to_ne_bytes();
            // SAFETY: `g` is 8 valid bytes; `_exit` never returns.
            unsafe {
                libc::write(fds[1], g.as_ptr().cast(), 8);
                libc::_exit(0);
            }
        }
        let mut buf = [0u8; 8];
        // SAFETY: `buf` is 8 writable bytes; `status` is a valid out-pointer.
        unsafe {
            assert_eq!(libc::read(fds[0], buf.as_mut_ptr().cast(), 8), 8);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let child = u64::from_ne_bytes(buf);
        assert_ne!(
            child, before,
            "the child must not see the parent's generation"
        );
        assert_eq!(generation(), before, "the parent's generation is unchanged");
    }
}
