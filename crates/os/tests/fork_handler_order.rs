//! Another library's `pthread_atfork` child handler, registered before scalrand's first use
//! (so the C library runs it before any handler of ours), already sees the child's new
//! generation. One test in its own binary, so nothing calls `scalrand_os` before the handler
//! is registered.
#![cfg(all(unix, feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use core::sync::atomic::{AtomicUsize, Ordering};
use scalrand_os::fork;
use scalrand_testkit::fork::{in_child, libc_fork};

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
    // The child reads an atomic and calls async-signal-safe functions only.
    let ((), child) = in_child(
        libc_fork,
        || (SEEN_IN_HANDLER.load(Ordering::SeqCst) as u64).to_ne_bytes(),
        || (),
    );
    let buf: [u8; 8] = child.expect("the child answered").try_into().unwrap();
    let seen = u64::from_ne_bytes(buf);
    assert_ne!(seen, usize::MAX as u64, "the handler ran");
    assert_ne!(
        seen, parent as u64,
        "the handler saw the parent's generation"
    );
    assert_eq!(fork::generation(), parent);
}
