//! Fork safety: 1,000 real forks; no 32-byte output of a child equals any output of its parent.
#![cfg(all(feature = "std", unix, not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{NodePools, Topology};
use std::collections::HashSet;

const FORKS: usize = 1000;

/// Forks, lets the child read 32 bytes from `pools` and send them through a pipe, and reads
/// 32 bytes in the parent too. Returns (parent's bytes, child's bytes).
fn fork_once(pools: &NodePools) -> ([u8; 32], [u8; 32]) {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: this test binary runs this one test only, so no other thread holds a lock the
    // child needs; the child reads from the pools (no allocation on that path), writes to a
    // pipe and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut b = [0u8; 32];
        pools.fill_bytes(&mut b);
        // SAFETY: `b` is 32 valid bytes; `_exit` never returns.
        unsafe {
            libc::write(fds[1], b.as_ptr().cast(), 32);
            libc::_exit(0);
        }
    }
    let mut parent = [0u8; 32];
    pools.fill_bytes(&mut parent);
    let mut child = [0u8; 32];
    // SAFETY: `child` is 32 writable bytes, `status` a valid out-pointer.
    unsafe {
        assert_eq!(libc::read(fds[0], child.as_mut_ptr().cast(), 32), 32);
        let mut status = 0;
        assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    (parent, child)
}

#[test]
fn no_child_repeats_its_parent() {
    let pools = NodePools::new(Topology::detect()).unwrap();
    // Warm every path the child will copy: a keyed slot with a half-used batch.
    let mut warm = [0u8; 32];
    pools.fill_bytes(&mut warm);
    let mut parent = HashSet::new();
    let mut children = HashSet::new();
    parent.insert(warm);
    for _ in 0..FORKS {
        let (p, c) = fork_once(&pools);
        parent.insert(p);
        children.insert(c);
    }
    assert_eq!(parent.len(), FORKS + 1, "the parent never repeats itself");
    assert_eq!(children.len(), FORKS, "children do not repeat each other");
    assert!(
        parent.is_disjoint(&children),
        "a child returned bytes its parent returned"
    );
    // Without the fork check the child's first read would be the parent's next one; the
    // parent's outputs above include exactly those bytes for every fork.
}
