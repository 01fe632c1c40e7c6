//! Threads pinned to different CPUs get different slots from `cpu::current`, each the CPU it
//! is pinned to (Linux: rseq `cpu_id` or `sched_getcpu`).
#![cfg(all(target_os = "linux", feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_os::cpu;
use scalrand_testkit::cpu::{allowed_cpus, pin_to};

#[test]
fn pinned_threads_get_their_own_cpu() {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("one CPU allowed: nothing to compare");
        return;
    }
    let got: Vec<(usize, Option<usize>)> = cpus
        .iter()
        .take(8)
        .map(|&c| {
            std::thread::spawn(move || {
                assert!(pin_to(c));
                std::thread::yield_now(); // let the scheduler move us there
                (c, cpu::current())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    for (c, seen) in &got {
        assert_eq!(Some(*c), *seen, "{got:?} ({:?})", cpu::source());
    }
}

/// `disable_rseq` after the offset was handed out is refused and switches nothing: the
/// instances holding the offset keep running their sections.
#[cfg(target_env = "gnu")]
#[test]
fn disable_rseq_after_the_offset_was_handed_out_is_refused() {
    match cpu::rseq_offset() {
        Some(off) => {
            assert_eq!(cpu::disable_rseq(), Err(cpu::RseqInUse));
            assert_eq!(cpu::rseq_offset(), Some(off));
            assert!(cpu::RseqInUse.to_string().contains("before the first use"));
        }
        // No rseq area (an old glibc, `glibc.pthread.rseq=0`, qemu-user): nothing to refuse.
        None => assert_eq!(cpu::disable_rseq(), Ok(())),
    }
}
