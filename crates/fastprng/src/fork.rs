//! Fork generation, for the try-lock slots (std on Unix only).
//!
//! `fork()` copies the process with only the calling thread. A try-lock slot that another
//! thread held at that instant stays marked busy in the child, where no thread will ever
//! release it; with every slot held that way, a caller in the child would spin forever. So a
//! slot's flag records the fork generation of its holder, and a caller that finds every slot
//! busy takes over one whose holder belongs to an earlier generation: a thread that does not
//! exist in this process.
//!
//! The generation is a process-wide counter that a `pthread_atfork` child handler increments;
//! the handler runs in the child before `fork()` returns there. (Under loom and miri, which
//! model no fork, the generation is the constant 0.)

#[cfg(all(feature = "std", unix, not(scalrand_loom), not(miri)))]
mod imp {
    use core::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Once;

    static GENERATION: AtomicU64 = AtomicU64::new(0);
    static REGISTER: Once = Once::new();

    extern "C" fn after_fork_in_child() {
        // An atomic add is async-signal-safe, which is all a child handler may rely on.
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn register() {
        REGISTER.call_once(|| {
            // SAFETY: `pthread_atfork` gets a valid `extern "C"` function with no captured
            // state and null prepare/parent handlers, registered once (guarded by `Once`). Its
            // only failure is ENOMEM; the generation then stays 0, which only loses the
            // takeover of slots orphaned by a fork, as before this module existed.
            let _ = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }

    #[inline]
    pub(crate) fn generation() -> u64 {
        GENERATION.load(Ordering::Relaxed)
    }
}

#[cfg(not(all(feature = "std", unix, not(scalrand_loom), not(miri))))]
mod imp {
    pub(crate) fn register() {}
    #[inline]
    pub(crate) fn generation() -> u64 {
        0
    }
}

pub(crate) use imp::{generation, register};
