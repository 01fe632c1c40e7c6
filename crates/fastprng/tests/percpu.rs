//! `PerCpu`: slot seeding, both paths, exact accounting under contention.
#![cfg(feature = "std")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::HashMap;
use std::sync::Barrier;

use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
mod common;

use scalrand_fastprng::{
    Error, FastPath, PerCpu, Xoroshiro128, Xoroshiro128Plus, Xoroshiro128PlusPlus,
    Xoroshiro128StarStar,
};
#[cfg(unix)]
use scalrand_testkit::fork::{in_child, libc_fork};

/// The states `with_cpus` must produce: master jumped 1, 2, ..., 2n times.
fn jumped_states<R: Xoroshiro128>(master: &R, n: usize) -> Vec<(u64, u64)> {
    let mut r = master.clone();
    (0..2 * n)
        .map(|_| {
            r.jump();
            r.state()
        })
        .collect()
}

proptest! {
    #[test]
    fn slot_states_are_jumped_master(seed: u64, cpus in 1usize..9) {
        let master = Xoroshiro128PlusPlus::seed_from_u64(seed);
        let mut p = PerCpu::with_cpus(master.clone(), cpus).unwrap();
        prop_assert_eq!(p.slot_states(), jumped_states(&master, cpus));
    }

    #[test]
    fn fill_bytes_is_le_words(seed: u64, len in 0usize..200) {
        fn check<R: Xoroshiro128 + SeedableRng + Rng>(seed: u64, len: usize) -> Result<(), TestCaseError> {
            let mut a = R::seed_from_u64(seed);
            let mut b = R::seed_from_u64(seed);
            let mut buf = vec![0u8; len];
            a.fill_bytes(&mut buf);
            let mut want = Vec::new();
            while want.len() < len {
                want.extend_from_slice(&b.next_u64().to_le_bytes());
            }
            want.truncate(len);
            prop_assert_eq!(&buf, &want);
            // Both streams continue from the same place.
            prop_assert_eq!(a.next_u64(), b.next_u64());
            Ok(())
        }
        check::<Xoroshiro128Plus>(seed, len)?;
        check::<Xoroshiro128PlusPlus>(seed, len)?;
        check::<Xoroshiro128StarStar>(seed, len)?;
    }

    #[test]
    fn percpu_fill_bytes_is_one_slots_words(seed: u64, len in 0usize..300) {
        // One CPU, try-lock path only: every byte comes from try-lock slot 0 = master jumped twice.
        let master = Xoroshiro128PlusPlus::seed_from_u64(seed);
        let p = PerCpu::with_cpus(master.clone(), 1).unwrap().force_try_lock();
        let mut buf = vec![0u8; len];
        p.fill_bytes(&mut buf);
        let mut r = master;
        r.jump();
        r.jump();
        let mut want = Vec::new();
        while want.len() < len {
            want.extend_from_slice(&r.next_u64().to_le_bytes());
        }
        want.truncate(len);
        prop_assert_eq!(buf, want);
    }
}

/// The fast path on one pinned CPU must produce exactly that CPU's slot stream: this checks
/// the hand-written assembly of all three engines against the Rust (and so the reference C).
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(
    miri,
    ignore = "inline assembly and sched_setaffinity are outside miri"
)]
fn rseq_path_is_bit_exact_on_a_pinned_cpu() {
    if scalrand_os::cpu::rseq_cpu().is_none() {
        scalrand_testkit::rseq::nothing_to_check("PerCpu bit-exactness");
        return;
    }
    fn check<R: Xoroshiro128 + SeedableRng + Send>(seed: u64) {
        std::thread::scope(|s| {
            s.spawn(|| {
                let cpus = std::thread::available_parallelism().unwrap().get();
                let master = R::seed_from_u64(seed);
                let p = PerCpu::with_cpus(master.clone(), 64.max(cpus)).unwrap();
                // SAFETY: sched_getcpu has no preconditions.
                let cpu = unsafe { libc::sched_getcpu() } as usize;
                assert!(common::pin_to(cpu), "sched_setaffinity failed");
                assert_eq!(
                    p.fast_path(),
                    FastPath::Rseq,
                    "glibc >= 2.35 on Linux registers rseq for every thread"
                );
                let mut want = master;
                for _ in 0..=cpu {
                    want.jump();
                }
                for i in 0..10_000 {
                    assert_eq!(p.next_u64(), want.next_raw(), "{} output {i}", R::NAME);
                }
                let mut r = want.clone();
                assert_eq!(p.next_u32(), r.next_u32());
            });
        });
    }
    check::<Xoroshiro128Plus>(1);
    check::<Xoroshiro128PlusPlus>(2);
    check::<Xoroshiro128StarStar>(3);
}

/// Many threads hammer one `PerCpu`; afterwards every output must be accounted for exactly:
/// each slot's final state is its initial state stepped `k` times, and the outputs handed out
/// are exactly the union of those `k`-prefixes. Nothing repeated, nothing lost, no two slots
/// sharing a stream.
fn exact_accounting(p: PerCpu<Xoroshiro128PlusPlus>, master: Xoroshiro128PlusPlus) {
    let threads = 4;
    let per_thread = if cfg!(miri) {
        40
    } else if cfg!(debug_assertions) {
        20_000
    } else {
        200_000
    };
    let barrier = Barrier::new(threads);
    let mut p = p;
    let outputs: Vec<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (p, barrier) = (&p, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let mut v = Vec::with_capacity(per_thread);
                    for i in 0..per_thread {
                        // Mix all three entry points.
                        match (i + t) % 3 {
                            0 => v.push(p.next_u64()),
                            // `SlotsBusy` (every slot busy for BUSY_SWEEPS sweeps) hands
                            // out nothing.
                            1 => match p.with_cpu(t % p.cpus(), |r| r.next_u64()) {
                                Ok(x) => v.push(x),
                                Err(e) => assert_eq!(e, Error::SlotsBusy),
                            },
                            _ => {
                                let mut b = [0u8; 8];
                                p.fill_bytes(&mut b);
                                v.push(u64::from_le_bytes(b));
                            }
                        }
                    }
                    v
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for v in &outputs {
        for &x in v {
            *seen.entry(x).or_default() += 1;
        }
    }
    let total: usize = outputs.iter().map(Vec::len).sum();
    let draws = p.overflow_draws();
    let initial = jumped_states(&master, p.cpus());
    let finals = p.slot_states();
    let mut accounted = 0usize;
    for (init, fin) in initial.into_iter().zip(finals) {
        let mut r = Xoroshiro128PlusPlus::from_state(init.0, init.1).unwrap();
        let mut steps = 0;
        while r.state() != fin {
            let x = r.next_u64();
            let c = seen
                .get_mut(&x)
                .expect("an output of this slot was never handed out");
            assert!(*c > 0, "output handed out more often than generated");
            *c -= 1;
            steps += 1;
            assert!(
                steps <= total,
                "slot stepped more often than calls were made"
            );
        }
        accounted += steps;
    }
    // The rest came from the overflow stream, one word per `next_u64`/8-byte `fill_bytes`
    // that found every slot busy for BUSY_SWEEPS sweeps (a preempted holder under a
    // sanitizer makes that happen); nothing else may be left over.
    let extra = total - accounted;
    eprintln!("{accounted} outputs from slots, {extra} from {draws} overflow draws");
    assert_eq!(
        extra as u64, draws,
        "every output comes from exactly one slot step or one overflow draw"
    );
    assert!(
        seen.values().all(|&c| c <= 1),
        "an overflow output repeated"
    );
}

/// A signal or a preemption that lands inside a restartable sequence aborts it: the storm of
/// `common::signal_storm` (the test requires at least 100 aborts, counted by
/// `PerCpu::rseq_restarts`, so it cannot pass without exercising the restart path). Then every
/// output handed out must be accounted for exactly: the multiset of outputs equals the union of
/// each slot's stream from its initial state to the state it reports now, so nothing was lost,
/// repeated or invented. Workers mix `next_u64` and 8-byte `fill_bytes` calls.
///
/// Checked to fail with the commit store moved one instruction earlier, before the second
/// state store (5 runs of 5), and with the next state written over the active buffer instead
/// of the inactive one (3 of 3).
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(miri, ignore = "signals and pthread_kill are outside miri")]
fn signals_abort_sections_without_losing_or_repeating() {
    if scalrand_os::cpu::rseq_cpu().is_none() {
        scalrand_testkit::rseq::nothing_to_check("PerCpu under signals");
        return;
    }
    let master = Xoroshiro128PlusPlus::seed_from_u64(14);
    let mut p = PerCpu::new(master.clone()).unwrap();
    thread_local! {
        static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let (got, restarts) = {
        let p = &p;
        common::signal_storm(
            &|| p.rseq_restarts(),
            &|| p.fast_path() == FastPath::Rseq,
            &|| {
                let n = CALLS.with(|c| {
                    c.set(c.get() + 1);
                    c.get()
                });
                if n % 3 == 2 {
                    let mut b = [0u8; 8];
                    p.fill_bytes(&mut b);
                    u64::from_le_bytes(b)
                } else {
                    p.next_u64()
                }
            },
        )
    };
    assert!(
        restarts >= 100,
        "only {restarts} sections were aborted: the storm did not exercise the restart path"
    );
    let mut want = common::Multiset::default();
    for (init, fin) in jumped_states(&master, p.cpus())
        .into_iter()
        .zip(p.slot_states())
        .take(p.cpus())
    {
        let mut r = Xoroshiro128PlusPlus::from_state(init.0, init.1).unwrap();
        while r.state() != fin {
            want.add(r.next_u64());
            assert!(
                want.count <= got.count,
                "a slot stepped more often than calls were made"
            );
        }
    }
    assert_eq!(got, want, "outputs handed out != the slots' streams");
    eprintln!("{restarts} restarts, {} outputs accounted for", got.count);
}

#[test]
fn contention_exact_accounting_default_path() {
    let master = Xoroshiro128PlusPlus::seed_from_u64(11);
    // Fewer slots than threads on purpose: try-lock slots are shared and contended.
    exact_accounting(PerCpu::with_cpus(master.clone(), 2).unwrap(), master);
}

#[test]
fn contention_exact_accounting_machine_cpus() {
    let master = Xoroshiro128PlusPlus::seed_from_u64(12);
    exact_accounting(PerCpu::new(master.clone()).unwrap(), master);
}

#[test]
fn forced_try_lock_exact_accounting() {
    let master = Xoroshiro128PlusPlus::seed_from_u64(13);
    let p = PerCpu::with_cpus(master.clone(), 3)
        .unwrap()
        .force_try_lock();
    assert_eq!(p.fast_path(), FastPath::TryLock);
    exact_accounting(p, master);
}

#[test]
fn with_cpu_reentrant_takes_another_slot() {
    let master = Xoroshiro128PlusPlus::seed_from_u64(5);
    let p = PerCpu::with_cpus(master, 2).unwrap().force_try_lock();
    let (a, b) = p
        .with_cpu(0, |r| {
            let inner = p.with_cpu(0, |r2| r2.next_u64()).unwrap();
            (r.next_u64(), inner)
        })
        .unwrap();
    assert_ne!(a, b);
}

#[test]
fn works_with_rand_core_traits() {
    let p = PerCpu::with_cpus(Xoroshiro128StarStar::seed_from_u64(1), 2).unwrap();
    let mut handle = &p;
    let x = Rng::next_u64(&mut handle);
    let y = Rng::next_u64(&mut handle);
    assert_ne!(x, y);
    assert!(format!("{p:?}").contains("xoroshiro128**"));
}

#[test]
fn debug_never_prints_state() {
    let r = Xoroshiro128PlusPlus::from_state(0x1234_5678_9abc_def0, 42).unwrap();
    let s = format!("{r:?}");
    assert!(!s.contains("1234") && !s.contains("42"), "{s}");
}

#[test]
#[cfg_attr(miri, ignore = "getrandom is slow under miri")]
fn from_os_seeds_differ() {
    let a = PerCpu::<Xoroshiro128PlusPlus>::from_os().unwrap();
    let b = PerCpu::<Xoroshiro128PlusPlus>::from_os().unwrap();
    assert_ne!(a.next_u64(), b.next_u64());
}

mod bad_input {
    use super::*;
    use scalrand_fastprng::{Error, MAX_CPUS};

    #[test]
    fn zero_state() {
        assert_eq!(Xoroshiro128Plus::from_state(0, 0), Err(Error::ZeroState));
        assert_eq!(
            Xoroshiro128PlusPlus::from_state(0, 0),
            Err(Error::ZeroState)
        );
        assert_eq!(
            Xoroshiro128StarStar::from_state(0, 0),
            Err(Error::ZeroState)
        );
        assert!(Xoroshiro128PlusPlus::from_state(0, 1).is_ok());
    }

    #[test]
    fn zero_seed_remaps() {
        assert_eq!(
            Xoroshiro128PlusPlus::from_seed([0; 16]),
            Xoroshiro128PlusPlus::seed_from_u64(0)
        );
        let mut r = Xoroshiro128Plus::from_seed([0; 16]);
        assert_ne!(r.next_u64(), 0);
    }

    #[test]
    fn no_slots() {
        let m = Xoroshiro128PlusPlus::seed_from_u64(0);
        assert_eq!(PerCpu::with_cpus(m, 0).unwrap_err(), Error::NoSlots);
    }

    #[test]
    fn too_many_slots() {
        let m = Xoroshiro128PlusPlus::seed_from_u64(0);
        assert_eq!(
            PerCpu::with_cpus(m, MAX_CPUS + 1).unwrap_err(),
            Error::TooManySlots {
                requested: MAX_CPUS + 1
            }
        );
    }

    #[test]
    fn cpu_out_of_range() {
        let m = Xoroshiro128PlusPlus::seed_from_u64(0);
        let p = PerCpu::with_cpus(m, 4).unwrap();
        assert_eq!(
            p.with_cpu(4, |r| r.next_u64()),
            Err(Error::CpuOutOfRange { cpu: 4, cpus: 4 })
        );
        assert_eq!(
            p.with_cpu(usize::MAX, |r| r.next_u64()),
            Err(Error::CpuOutOfRange {
                cpu: usize::MAX,
                cpus: 4
            })
        );
        assert!(
            Error::CpuOutOfRange { cpu: 4, cpus: 4 }
                .to_string()
                .contains("CPU 4")
        );
    }

    #[test]
    fn reentrant_with_cpu_returns() {
        // A closure that calls the same one-slot generator again used to spin forever on the
        // slot its own caller holds. Watchdog: the call must return, with a typed error for the
        // nested `with_cpu` and an overflow-stream value for the nested `next_u64`.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let m = Xoroshiro128PlusPlus::seed_from_u64(3);
            let p = PerCpu::with_cpus(m, 1).unwrap().force_try_lock();
            let r = p.with_cpu(0, |outer| {
                let nested = p.with_cpu(0, |r| r.next_u64());
                let a = p.next_u64();
                let b = p.next_u64();
                let mut buf = [0u8; 100];
                p.fill_bytes(&mut buf);
                (nested, a != b, outer.next_u64(), buf)
            });
            let _ = tx.send(r);
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("re-entrant use must return, not spin");
        let (nested, distinct, _, buf) = r.unwrap();
        assert_eq!(nested, Err(Error::SlotsBusy));
        assert!(distinct, "the overflow stream moves");
        assert!(buf.iter().any(|&b| b != 0));
        assert!(Error::SlotsBusy.to_string().contains("busy"));
    }

    #[test]
    fn empty_fill() {
        let m = Xoroshiro128PlusPlus::seed_from_u64(9);
        let mut a = m.clone();
        a.fill_bytes(&mut []);
        let mut b = m.clone();
        assert_eq!(a.next_u64(), b.next_u64(), "an empty fill consumes nothing");
        let p = PerCpu::with_cpus(m, 1).unwrap();
        p.fill_bytes(&mut []);
    }
}

/// `fork()` while other threads hold every try-lock slot: in the child those holders do not
/// exist and will never release their slots. The child must still get output from every
/// entry point that uses the try-lock slots (it takes the orphaned slots over), and the parent
/// must see its slots released normally. A watchdog turns a deadlock into a failure.
#[cfg(unix)]
#[test]
#[cfg_attr(miri, ignore = "fork is outside miri")]
fn fork_while_every_slot_is_held() {
    let p = PerCpu::with_cpus(Xoroshiro128PlusPlus::seed_from_u64(21), 2).unwrap();
    let held = Barrier::new(3);
    let release = Barrier::new(3);
    std::thread::scope(|s| {
        for cpu in 0..2 {
            let (p, held, release) = (&p, &held, &release);
            s.spawn(move || {
                p.with_cpu(cpu, |r| {
                    held.wait();
                    release.wait();
                    r.next_u64()
                })
                .unwrap()
            });
        }
        held.wait(); // both slots are held now
        // The child only calls PerCpu (no allocation, no locks but the slots') and
        // async-signal-safe libc functions; its alarm turns a deadlock into a failure.
        let ((), child) = in_child(
            libc_fork,
            || {
                let mut buf = [0u8; 4096];
                p.fill_bytes(&mut buf); // > 64 bytes: the try-lock path
                let a = p.with_cpu(0, |r| r.next_u64()).unwrap();
                let b = p.with_cpu(1, |r| r.next_u64()).unwrap();
                [u8::from(buf.iter().any(|&x| x != 0) && a != b)]
            },
            || (),
        );
        release.wait();
        assert_eq!(
            child.as_deref(),
            Some(&[1u8][..]),
            "child deadlocked or failed"
        );
    });
    // The parent's holders released their slots: both are free again.
    assert!(p.with_cpu(0, |r| r.next_u64()).is_ok());
    assert!(p.with_cpu(1, |r| r.next_u64()).is_ok());
}
