//! The helpers that wait for a child or end it, and the CPU pinning, on this machine: a child
//! that exits is reaped with its status, one that runs past a deadline or its alarm is ended,
//! and a thread confined to its allowed CPUs stays confined to them.
#![cfg(all(target_os = "linux", not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::time::{Duration, Instant};

use scalrand_testkit::cpu::{allowed_cpus, pin_to, pin_to_set};
use scalrand_testkit::fork::{in_child, in_child_with_alarm, libc_fork, wait_within};

/// Forks a child that sleeps for `secs` and then leaves with status 3 (no allocation there).
fn child_sleeping(secs: u64) -> libc::pid_t {
    let pid = libc_fork();
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        std::thread::sleep(Duration::from_secs(secs));
        // SAFETY: `_exit` never returns.
        unsafe { libc::_exit(3) };
    }
    pid
}

#[test]
fn a_child_that_exits_is_reaped_with_its_status() {
    let status = wait_within(child_sleeping(0), Duration::from_secs(30))
        .expect("the child exited long before the deadline");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 3);
}

#[test]
fn a_child_past_the_deadline_is_killed() {
    let start = Instant::now();
    assert_eq!(
        wait_within(child_sleeping(30), Duration::from_millis(200)),
        None
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_child_past_its_alarm_brings_back_nothing() {
    let start = Instant::now();
    let ((), got) = in_child_with_alarm(
        libc_fork,
        1,
        || {
            std::thread::sleep(Duration::from_secs(30));
            [1u8]
        },
        || (),
    );
    assert_eq!(got, None);
    assert!(start.elapsed() < Duration::from_secs(10));
    // With no alarm armed, or the default one, a child that answers is not ended.
    let ((), got) = in_child_with_alarm(libc_fork, 0, || [7u8; 3], || ());
    assert_eq!(got.as_deref(), Some(&[7u8; 3][..]));
    let (parent, got) = in_child(libc_fork, || *b"child", || 5);
    assert_eq!((parent, got.as_deref()), (5, Some(&b"child"[..])));
}

#[test]
fn a_thread_confined_to_a_set_stays_in_it() {
    let cpus = allowed_cpus();
    std::thread::spawn(move || {
        assert!(pin_to(cpus[0]));
        assert_eq!(allowed_cpus(), [cpus[0]]);
        assert!(pin_to_set(&cpus));
        assert_eq!(allowed_cpus(), cpus);
        assert!(!pin_to_set(&[]), "an empty set is refused");
    })
    .join()
    .unwrap();
}
