//! `scalrand::fast::seed` and `get_seed`: as fastrand's, they set and read the state of the
//! calling thread's stream, and the one-liners then continue from it with fastrand's methods,
//! output for output as `fast::Rng::with_seed` (itself checked against fastrand in
//! `tests/fastrand_compat.rs`), whatever other threads draw meanwhile.

use scalrand::fast;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn seed_sets_the_calling_threads_stream() {
    // Other threads draw all along, on every CPU this process may use: they must not move
    // this thread's stream.
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x.wrapping_add(fast::u64(..));
                    fast::fill(&mut [0u8; 100]);
                }
                std::hint::black_box(x);
            });
        }
        check_seeded_streams();
        stop.store(true, Ordering::Relaxed);
    });
}

fn check_seeded_streams() {
    for seed in [0, 1, 7, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
        fast::seed(seed);
        assert_eq!(fast::get_seed(), seed);

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
        // Short and long fills, each one word per 8 bytes.
        for len in [13, 64, 200] {
            let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
            fast::fill(&mut x);
            owned.fill(&mut y);
            assert_eq!(x, y, "fill of {len}");
        }
        assert_eq!(fast::get_seed(), owned.get_seed());

        // A generator made by `Rng::new` forks the thread's stream, as fastrand's `new` does.
        let mut made = fast::Rng::new();
        let mut expected = owned.fork();
        assert_eq!(made.u64(..), expected.u64(..));
    }
}
