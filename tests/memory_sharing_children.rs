//! Children that share the parent's memory, reading while the parent's threads read, in a
//! program that called `os::cpu::disable_rseq` first: no 16-byte piece of `fill_bytes` output
//! and no `fast::u64(..)` value is handed out twice, in the child or the parent, and the
//! parent's output holds no zero word.
//!
//! The two kinds of child, both made with the raw `clone` system call on a stack of their own
//! (so no Rust frame returns twice) and without `CLONE_SETTLS`, so each runs on its parent
//! thread's thread-local storage and rseq area, with no rseq registration of its own:
//! - `CLONE_VM | SIGCHLD`: runs beside its parent thread;
//! - `CLONE_VM | CLONE_VFORK | SIGCHLD`: the flags of the `vfork` system call (Linux
//!   `kernel/fork.c`, `SYSCALL_DEFINE0(vfork)`); its parent thread waits until it exits, the
//!   parent's other threads go on reading.
//!
//! The switch is process-wide, so this file is its own test binary with one test.
#![cfg(all(target_os = "linux", not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use scalrand_testkit::cpu::{allowed_cpus, pin_to, pin_to_set};

/// Pieces each child reads.
const CHILD_READS: usize = 20_000;
/// Parent threads reading while a child reads.
const PARENT_THREADS: usize = 3;
/// Children of each kind.
const TRIALS: usize = 10;
/// The child's stack.
const STACK: usize = 1 << 20;

/// What a reader hands out; a child writes it in memory the parent reads after it exited.
struct ChildOut {
    crypto: Vec<[u8; 16]>,
    fast: Vec<u64>,
    /// The CPU the child moves to first (`usize::MAX`: none).
    cpu: usize,
}

extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildOut` the parent passed, which it does not touch until this
    // child has exited (`waitpid`).
    let out = unsafe { &mut *arg.cast::<ChildOut>() };
    // Away from the CPU its parent thread last ran on, which is the CPU number the shared
    // rseq area shows: there the parent's threads read the same per-CPU state at the same time.
    // Best effort: a refusal leaves the test weaker, not wrong. (`pin_to` allocates nothing.)
    if out.cpu != usize::MAX {
        let _ = pin_to(out.cpu);
    }
    for (c, f) in out.crypto.iter_mut().zip(out.fast.iter_mut()) {
        scalrand::fill_bytes(c);
        *f = scalrand::fast::u64(..);
    }
    0
}

/// Runs one child made with `flags` while `PARENT_THREADS` threads read; returns the
/// parent's and the child's output. Where two CPUs are allowed, the calling thread runs on
/// the first while it makes the child, and the child on the second.
fn trial(flags: libc::c_int) -> (ChildOut, ChildOut) {
    let all = allowed_cpus();
    let cpus: Vec<usize> = all.iter().copied().take(2).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Barrier::new(PARENT_THREADS + 1));
    let readers: Vec<_> = (0..PARENT_THREADS)
        .map(|_| {
            let (stop, started) = (Arc::clone(&stop), Arc::clone(&started));
            thread::spawn(move || {
                let mut got = ChildOut {
                    crypto: Vec::new(),
                    fast: Vec::new(),
                    cpu: usize::MAX,
                };
                started.wait();
                while !stop.load(Ordering::Relaxed) {
                    let mut c = [0u8; 16];
                    scalrand::fill_bytes(&mut c);
                    got.crypto.push(c);
                    got.fast.push(scalrand::fast::u64(..));
                }
                got
            })
        })
        .collect();
    let mut child = ChildOut {
        crypto: vec![[0; 16]; CHILD_READS],
        fast: vec![0; CHILD_READS],
        cpu: cpus.get(1).copied().unwrap_or(usize::MAX),
    };
    let mut stack = vec![0u8; STACK];
    started.wait();
    if cpus.len() == 2 {
        // After the readers were spawned: they keep every allowed CPU. Best effort, as in
        // the child.
        let _ = pin_to(cpus[0]);
    }
    // SAFETY: `child_main` runs on `stack` (16-byte aligned top, the buffer outlives the
    // child: we wait for it below) and only touches `child` and the generators; `child` is
    // not touched here until the child has exited.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(STACK).cast::<libc::c_void>();
        let top = top.map_addr(|a| a & !15);
        libc::clone(
            child_main,
            top,
            flags,
            core::ptr::from_mut(&mut child).cast(),
        )
    };
    assert!(pid > 0, "clone failed: {}", std::io::Error::last_os_error());
    let mut status = 0;
    // SAFETY: waiting for our own child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status:#x}"
    );
    let _ = pin_to_set(&all);
    stop.store(true, Ordering::Relaxed);
    let mut parent = ChildOut {
        crypto: Vec::new(),
        fast: Vec::new(),
        cpu: usize::MAX,
    };
    for r in readers {
        let got = r.join().expect("reader");
        parent.crypto.extend(got.crypto);
        parent.fast.extend(got.fast);
    }
    drop(stack);
    (parent, child)
}

#[test]
fn memory_sharing_children_neither_repeat_nor_disturb_the_parent() {
    scalrand::os::cpu::disable_rseq().expect("called before any use of scalrand");
    // Build the generators in the parent, as a program would have before it spawns.
    let mut warm = [0u8; 16];
    scalrand::fill_bytes(&mut warm);
    let _ = scalrand::fast::u64(..);

    let mut pieces: HashSet<[u8; 16]> = HashSet::new();
    let mut values: HashSet<u64> = HashSet::new();
    let mut failures = Vec::new();
    for (kind, flags) in [
        ("clone(CLONE_VM)", libc::CLONE_VM | libc::SIGCHLD),
        ("vfork", libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD),
    ] {
        for t in 0..TRIALS {
            let (parent, child) = trial(flags);
            let zero_words = parent
                .crypto
                .iter()
                .flat_map(|p| p.chunks(8))
                .filter(|w| w.iter().all(|&b| b == 0))
                .count();
            let repeats = parent
                .crypto
                .iter()
                .chain(&child.crypto)
                .filter(|p| !pieces.insert(**p))
                .count();
            let fast_repeats = parent
                .fast
                .iter()
                .chain(&child.fast)
                .filter(|v| !values.insert(**v))
                .count();
            if zero_words + repeats + fast_repeats > 0 {
                failures.push(format!(
                    "{kind} trial {t}: {repeats} repeated pieces, {zero_words} zero words in \
                     the parent's output, {fast_repeats} repeated fast values ({} parent reads)",
                    parent.crypto.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
