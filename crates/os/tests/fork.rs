//! Fork detection against the orderings that defeat `pthread_atfork`: libc `fork()`, a raw
//! `syscall(SYS_fork)` (no handlers run), and another library's child handler registered
//! before scalrand's first use. Each child reports what it sees through a pipe.
#![cfg(all(unix, feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_os::fork;
#[cfg(target_os = "linux")]
use scalrand_os::{fork::Detection, wipe::WipeOnFork};
#[cfg(target_os = "linux")]
use scalrand_testkit::fork::raw_fork;
use scalrand_testkit::fork::{ForkFn, in_child as fork_in_child, libc_fork};

/// Runs `child` in a child forked by `how`; returns the word it reported.
fn in_child(how: ForkFn, child: impl FnOnce() -> u64) -> u64 {
    let ((), bytes) = fork_in_child(how, || child().to_ne_bytes(), || ());
    u64::from_ne_bytes(bytes.expect("the child answered").try_into().unwrap())
}

#[test]
fn libc_fork_child_sees_a_new_generation() {
    let parent = fork::generation();
    let child = in_child(libc_fork, || fork::generation() as u64);
    assert_ne!(child, parent as u64);
    assert_eq!(
        fork::generation(),
        parent,
        "the parent's generation never moves"
    );
}

/// Whether this kernel answers `madvise` truthfully (an unknown advice is refused): false
/// under a user-mode emulator such as qemu-user, which accepts every advice and wipes nothing.
#[cfg(target_os = "linux")]
fn madvise_is_truthful() -> bool {
    // SAFETY: a fresh anonymous private page, unmapped before returning; an unknown advice
    // changes nothing.
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let p = libc::mmap(
            std::ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        let r = libc::madvise(p, page, 0x7ead_beef);
        libc::munmap(p, page);
        r != 0
    }
}

/// Linux picks wipe-on-fork memory where `madvise` is truthful, and the pid path under an
/// emulator that accepts anything (run the aarch64 tests under qemu-user to see the latter).
#[cfg(target_os = "linux")]
#[test]
fn linux_detection_follows_the_madvise_probe() {
    let want = if cfg!(scalrand_fork_atfork) {
        Detection::Atfork
    } else if madvise_is_truthful() {
        Detection::WipeOnFork
    } else {
        Detection::Pid
    };
    assert_eq!(fork::detection(), want);
}

// The atfork mode (Apple's, forced here with `--cfg scalrand_fork_atfork`) cannot see a fork
// that runs no handlers; Apple's systems have no such fork.
#[cfg(all(target_os = "linux", not(scalrand_fork_atfork)))]
#[test]
fn raw_sys_fork_child_sees_a_new_generation() {
    let parent = fork::generation();
    let child = in_child(raw_fork, || fork::generation() as u64);
    assert_ne!(
        child, parent as u64,
        "SYS_fork runs no atfork handler; detection must not need one"
    );
}

#[test]
fn grandchildren_and_stability() {
    let parent = fork::generation() as u64;
    let r = in_child(libc_fork, || {
        let c1 = fork::generation() as u64;
        let c2 = fork::generation() as u64; // stable within one process image
        let g = in_child(libc_fork, || fork::generation() as u64);
        u64::from(c1 == c2 && g != c1 && g != parent)
    });
    assert_eq!(r, 1);
}

#[cfg(target_os = "linux")]
#[test]
fn wipe_on_fork_memory_is_zero_in_the_child() {
    let w = WipeOnFork::new(512, |i| i as u64 + 1);
    if !madvise_is_truthful() {
        // An emulator: the slice stays ordinary memory, and says so.
        assert!(!w.wipes_on_fork());
        return;
    }
    assert!(w.wipes_on_fork());
    let sum_in_child = in_child(raw_fork, || w.iter().sum::<u64>());
    assert_eq!(sum_in_child, 0);
    assert_eq!(
        w.iter().sum::<u64>(),
        512 * 513 / 2,
        "the parent keeps its copy"
    );
}

/// A per-process `Global` is built again in a fork child (the child's copy of the parent's
/// value is never used there), while an `Inherited` one is the parent's. (libc `fork()` only:
/// building allocates, which a raw `SYS_fork` child of a multi-threaded test binary must not.)
#[test]
fn global_values_are_per_process_or_inherited() {
    use core::sync::atomic::{AtomicU64, Ordering};
    use scalrand_os::global::{Global, Inherited};
    static MINE: Global<u64> = Global::new();
    static SHARED: Global<u64, Inherited> = Global::new();
    static BUILT: AtomicU64 = AtomicU64::new(0);
    let build = || BUILT.fetch_add(1, Ordering::Relaxed) + 1;
    let parent = *MINE.get_or_init(build);
    assert_eq!(*SHARED.get_or_init(|| 7), 7);
    for _ in 0..3 {
        let child = in_child(libc_fork, || *MINE.get_or_init(build));
        assert_ne!(child, parent, "the child used its parent's value");
        let grandchild = in_child(libc_fork, || {
            let own = *MINE.get_or_init(build);
            let theirs = in_child(libc_fork, || *MINE.get_or_init(build));
            u64::from(own != theirs)
        });
        assert_eq!(grandchild, 1, "a grandchild used its parent's value");
        assert_eq!(in_child(libc_fork, || *SHARED.get_or_init(|| 99)), 7);
    }
    assert_eq!(*MINE.get_or_init(build), parent);
}
