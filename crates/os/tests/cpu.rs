//! Threads pinned to different CPUs get different slots from `cpu::current`, each the CPU it
//! is pinned to (Linux: rseq `cpu_id` or `sched_getcpu`).
#![cfg(all(target_os = "linux", feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_os::cpu;

/// Pins the calling thread to `c`; false if this process may not run there.
fn pin(c: usize) -> bool {
    // SAFETY: `set` is plain data, initialised by CPU_ZERO before use; sched_setaffinity reads
    // `size_of::<cpu_set_t>()` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(c, &mut set);
        libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The CPUs this process may run on.
fn allowed() -> Vec<usize> {
    // SAFETY: as in `pin`; sched_getaffinity fills `set`.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[test]
fn pinned_threads_get_their_own_cpu() {
    let cpus = allowed();
    if cpus.len() < 2 {
        eprintln!("one CPU allowed: nothing to compare");
        return;
    }
    let got: Vec<(usize, Option<usize>)> = cpus
        .iter()
        .take(8)
        .map(|&c| {
            std::thread::spawn(move || {
                assert!(pin(c));
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
