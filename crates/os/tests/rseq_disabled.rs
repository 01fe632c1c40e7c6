//! `cpu::disable_rseq` called first thing in a process (its own test binary: the switch is
//! process-wide): no rseq offset, no rseq CPU number, and `cpu::current` still answers, from
//! `sched_getcpu`.
#![cfg(all(target_os = "linux", feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_os::cpu;

#[test]
fn disabled_before_first_use_switches_rseq_off() {
    assert_eq!(cpu::disable_rseq(), Ok(()));
    assert_eq!(cpu::disable_rseq(), Ok(()), "a second call is no error");
    #[cfg(target_env = "gnu")]
    assert_eq!(cpu::rseq_offset(), None);
    assert_eq!(cpu::rseq_cpu(), None);
    assert_ne!(cpu::source(), cpu::Source::Rseq);
    let c = cpu::current().expect("sched_getcpu answers on Linux");
    assert!(c < cpu::possible());
}
