//! `scalrand::fast::seed` and `get_seed`: per CPU, they set and read the state of the calling
//! CPU's stream, and the one-liners then continue from it with fastrand's methods, output for
//! output as `fast::Rng::with_seed` (itself checked against fastrand in
//! `tests/fastrand_compat.rs`).
//!
//! Its own test binary with one test, pinned to one CPU: no other thread of this process draws
//! from that CPU's stream, and the thread does not move to another CPU's, between a `seed` and
//! the draws that check it. Linux only, for the pinning (`sched_setaffinity`).
#![cfg(target_os = "linux")]

use scalrand::fast;

/// Pins the calling thread to the CPU it runs on now.
fn pin_here() {
    // SAFETY: sched_getcpu takes nothing; `set` is plain data, cleared by CPU_ZERO before use,
    // and sched_setaffinity reads it.
    unsafe {
        let cpu = libc::sched_getcpu();
        assert!(cpu >= 0, "sched_getcpu failed");
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu as usize, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "sched_setaffinity failed"
        );
    }
}

#[test]
fn seed_sets_the_calling_cpus_stream() {
    pin_here();
    for seed in [0, 1, 7, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
        fast::seed(seed);
        assert_eq!(fast::get_seed(), seed);
        assert_eq!(
            fast::with(|w| w.state()),
            seed,
            "`with` sees the seeded slot"
        );

        let mut owned = fast::Rng::with_seed(seed);
        assert_eq!(fast::u32(1..=6), owned.u32(1..=6));
        assert_eq!(fast::u128(..), owned.u128(..));
        assert_eq!(fast::i8(-3..3), owned.i8(-3..3));
        assert_eq!(fast::f64().to_bits(), owned.f64().to_bits());
        assert_eq!(
            fast::f32_inclusive().to_bits(),
            owned.f32_inclusive().to_bits()
        );
        assert_eq!(fast::bool(), owned.bool());
        assert_eq!(fast::char(..), owned.char(..));
        assert_eq!(fast::alphanumeric(), owned.alphanumeric());
        assert_eq!(fast::digit(36), owned.digit(36));
        assert_eq!(fast::choice(0..100), owned.choice(0..100));
        assert_eq!(
            fast::choose_multiple(0..50, 5),
            owned.choose_multiple(0..50, 5)
        );
        let (mut a, mut b) = ([0u16; 30], [0u16; 30]);
        for (i, (x, y)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
            (*x, *y) = (i as u16, i as u16);
        }
        fast::shuffle(&mut a);
        owned.shuffle(&mut b);
        assert_eq!(a, b);
        // Both fill paths: word by word (up to 64 bytes) and the slot taken once (longer).
        for len in [13, 64, 200] {
            let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
            fast::fill(&mut x);
            owned.fill(&mut y);
            assert_eq!(x, y, "fill of {len}");
        }
        assert_eq!(fast::get_seed(), owned.get_seed());

        // A generator made by `Rng::new` on this CPU forks the stream, as fastrand's `new`
        // forks its thread's.
        let mut made = fast::Rng::new();
        let mut expected = owned.fork();
        assert_eq!(made.u64(..), expected.u64(..));
    }
}
