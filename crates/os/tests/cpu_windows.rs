//! `cpu::current` on Windows names the processor the thread runs on
//! (`GetCurrentProcessorNumberEx`): two threads pinned to different processors read different
//! numbers, each below `cpu::possible` (in group 0, the processor's affinity-mask bit).
//! Pinning is `SetThreadAffinityMask`, which wine maps to Linux's `sched_setaffinity`, so the
//! test also runs there.
#![cfg(all(windows, feature = "std"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::ffi::c_void;

use scalrand_os::cpu;

/// `HANDLE` (winnt.h).
type Handle = *mut c_void;

#[link(name = "kernel32")]
unsafe extern "system" {
    fn GetCurrentProcess() -> Handle;
    fn GetCurrentThread() -> Handle;
    fn GetProcessAffinityMask(
        process: Handle,
        process_mask: *mut usize,
        system_mask: *mut usize,
    ) -> i32;
    fn SetThreadAffinityMask(thread: Handle, mask: usize) -> usize;
}

/// The processors of group 0 this process may run on.
fn allowed() -> Vec<usize> {
    let (mut process, mut system) = (0usize, 0usize);
    // SAFETY: the pseudo-handle of the current process is always valid; both pointers are to
    // live locals.
    let ok = unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut process, &mut system) };
    assert_ne!(ok, 0, "GetProcessAffinityMask failed");
    (0..usize::BITS as usize)
        .filter(|&i| process & (1 << i) != 0)
        .collect()
}

/// Pins the calling thread to processor `i` of its group and returns what `cpu::current`
/// says there, which 1,000 reads must all agree on (a pinned thread does not move).
fn pinned_reads(i: usize) -> usize {
    // SAFETY: the pseudo-handle of the current thread is always valid; the mask names one
    // processor the process may use.
    let old = unsafe { SetThreadAffinityMask(GetCurrentThread(), 1 << i) };
    assert_ne!(old, 0, "SetThreadAffinityMask(1 << {i}) failed");
    // The thread runs on an allowed processor once the call returns; a yield makes sure.
    std::thread::yield_now();
    let first = cpu::current().expect("Windows names a processor");
    for _ in 0..1000 {
        assert_eq!(
            cpu::current(),
            Some(first),
            "a thread pinned to processor {i} read {first}, then another number"
        );
    }
    first
}

#[test]
fn pinned_threads_read_their_processor() {
    let cpus = allowed();
    let [a, b, ..] = cpus[..] else {
        eprintln!("one processor allowed ({cpus:?}): nothing to compare");
        return;
    };
    let (got_a, got_b) = std::thread::scope(|s| {
        let ta = s.spawn(|| pinned_reads(a));
        let tb = s.spawn(|| pinned_reads(b));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    assert_ne!(got_a, got_b, "threads pinned to processors {a} and {b}");
    let possible = cpu::possible();
    assert!(
        got_a < possible && got_b < possible,
        "{got_a}, {got_b} not below cpu::possible() = {possible}"
    );
    // Within group 0 the number is the processor's bit in the affinity mask.
    assert_eq!((got_a, got_b), (a, b));
}

#[test]
fn current_is_below_possible_on_every_thread() {
    let possible = cpu::possible();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..1000 {
                    let c = cpu::current().expect("Windows names a processor");
                    assert!(c < possible, "{c} not below cpu::possible() = {possible}");
                }
            });
        }
    });
}
