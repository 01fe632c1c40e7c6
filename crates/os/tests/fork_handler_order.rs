//! Another library's `pthread_atfork` child handler, registered before scalrand's first use
//! (so the C library runs it before any handler of ours), already sees the child's new
//! generation. One test in its own binary, so nothing calls `scalrand_os` before the handler
//! is registered.
#![cfg(all(unix, feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use core::sync::atomic::{AtomicUsize, Ordering};
use scalrand_os::fork;

static SEEN_IN_HANDLER: AtomicUsize = AtomicUsize::new(usize::MAX);

extern "C" fn early_child_handler() {
    SEEN_IN_HANDLER.store(fork::generation(), Ordering::SeqCst);
}

#[test]
fn an_earlier_atfork_handler_already_sees_the_child() {
    // SAFETY: a valid extern "C" handler with no captured state.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(early_child_handler)) };
    assert_eq!(rc, 0);
    // scalrand's first use: in the atfork mode this registers its handlers after the one above.
    let parent = fork::generation();
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array for pipe(2).
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the child reads an atomic and calls async-signal-safe functions only.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let v = (SEEN_IN_HANDLER.load(Ordering::SeqCst) as u64).to_ne_bytes();
        // SAFETY: 8 valid bytes to a pipe we own; `_exit` never returns.
        unsafe {
            libc::write(fds[1], v.as_ptr().cast(), 8);
            libc::_exit(0);
        }
    }
    let mut buf = [0u8; 8];
    // SAFETY: 8 writable bytes; `status` is a valid out-pointer.
    unsafe {
        assert_eq!(libc::read(fds[0], buf.as_mut_ptr().cast(), 8), 8);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
    }
    let seen = u64::from_ne_bytes(buf);
    assert_ne!(seen, usize::MAX as u64, "the handler ran");
    assert_ne!(
        seen, parent as u64,
        "the handler saw the parent's generation"
    );
    assert_eq!(fork::generation(), parent);
}
