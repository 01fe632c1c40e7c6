//! Fork safety with a real `fork()`: a child never returns bytes its parent also returns.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![cfg(all(unix, feature = "std"))]

use scalrand_pool::fortuna::{ChaCha20Prf, Fortuna, ReadMode};

const N: usize = 64;

/// Forks; the child runs `child` and sends its N bytes through a pipe, then `_exit`s; the
/// parent returns them.
fn in_child(child: impl FnOnce() -> [u8; N]) -> [u8; N] {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fork(2) has no memory-safety preconditions. The child only reads the
    // generator (no allocation, no locks another thread could hold: the Fortuna is local to
    // this test), writes to the pipe and calls `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let out = child();
        // SAFETY: `out` is N readable bytes; `_exit` never returns and skips atexit handlers
        // and the test harness, which belong to the parent.
        unsafe {
            libc::write(fds[1], out.as_ptr().cast(), N);
            libc::_exit(0);
        }
    }
    let mut buf = [0u8; N];
    let mut got = 0;
    while got < N {
        // SAFETY: `buf[got..]` is `N - got` writable bytes.
        let r = unsafe { libc::read(fds[0], buf[got..].as_mut_ptr().cast(), N - got) };
        assert!(r > 0, "child produced no output");
        got += r as usize;
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer; the fds are ours.
    unsafe {
        assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    buf
}

fn check_mode<F: Fn(&mut [u8])>(fill: F) {
    let mut before = [0u8; N];
    fill(&mut before); // the parent has used the state before forking
    let child = in_child(|| {
        let mut b = [0u8; N];
        fill(&mut b);
        b
    });
    // Without fork detection the child would have returned exactly the parent's next read.
    let mut parent = [0u8; N];
    fill(&mut parent);
    assert_ne!(child, parent, "child repeated the parent's bytes");
    assert_ne!(child, before);
    // And the parent continues unchanged in generation: a second child differs from the first.
    let child2 = in_child(|| {
        let mut b = [0u8; N];
        fill(&mut b);
        b
    });
    assert_ne!(child2, child);
    let mut parent2 = [0u8; N];
    fill(&mut parent2);
    assert_ne!(child2, parent2);
}

#[test]
fn child_never_repeats_parent_aes() {
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::new(mode).unwrap();
        check_mode(|b| f.fill_bytes(b));
    }
}

#[test]
fn child_never_repeats_parent_chacha() {
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f = Fortuna::<ChaCha20Prf>::with_prf(mode).unwrap();
        check_mode(|b| f.fill_bytes(b));
    }
}

/// Control: the same experiment on a seeded twin pair shows that, absent a fork, equal state
/// gives equal bytes (so the inequality above is the fork detection's doing).
#[test]
fn control_equal_state_equal_bytes() {
    use core::time::Duration;
    fn zero() -> Duration {
        Duration::ZERO
    }
    let a: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[5; 32], zero as fn() -> Duration).unwrap();
    let b: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[5; 32], zero as fn() -> Duration).unwrap();
    let (mut x, mut y) = ([0u8; N], [0u8; N]);
    a.fill_bytes(&mut x);
    b.fill_bytes(&mut y);
    assert_eq!(x, y);
    // The forked child of a seeded instance still differs from the parent.
    let child = in_child(|| {
        let mut c = [0u8; N];
        a.fill_bytes(&mut c);
        c
    });
    a.fill_bytes(&mut x);
    b.fill_bytes(&mut y);
    assert_eq!(x, y, "the parent is unaffected by its child");
    assert_ne!(child, x);
}
