//! `scalrand::{random, random_iter, random_range, random_bool, random_ratio, fill}`: rand
//! 0.10's free functions on the secure generator. Each is held against rand's own: the same
//! calls compile (same signatures), give values in the same sets, and panic on the same inputs
//! with the same messages.

use std::panic::{UnwindSafe, catch_unwind};

/// The message of the panic `f` raises, or `None` if it returns.
fn panic_message<T>(f: impl FnOnce() -> T + UnwindSafe) -> Option<String> {
    let payload = catch_unwind(f).err()?;
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
}

/// Calls `$f` on scalrand and on rand with the same arguments: both panic with the same
/// message.
macro_rules! same_panic {
    ($f:ident $(::<$($t:ty),*>)? ($($arg:expr),*)) => {{
        let ours = panic_message(|| scalrand::$f$(::<$($t),*>)?($($arg),*));
        let theirs = panic_message(|| rand::$f$(::<$($t),*>)?($($arg),*));
        assert!(ours.is_some(), "scalrand::{} did not panic", stringify!($f));
        assert_eq!(ours, theirs, "{}({})", stringify!($f), stringify!($($arg),*));
    }};
}

#[test]
fn panics_are_rands() {
    same_panic!(random_range::<u32, _>(5..5));
    #[allow(clippy::reversed_empty_ranges)]
    {
        same_panic!(random_range::<i64, _>(3..=2));
        same_panic!(random_range::<f64, _>(1.0..0.5));
    }
    same_panic!(random_range::<f64, _>(f64::MIN..f64::MAX));
    same_panic!(random_bool(1.5));
    same_panic!(random_bool(-0.1));
    same_panic!(random_bool(f64::NAN));
    same_panic!(random_ratio(3, 2));
    same_panic!(random_ratio(0, 0));
}

#[test]
#[should_panic(expected = "cannot sample empty range")]
fn random_range_panics_on_an_empty_range() {
    let _: u8 = scalrand::random_range(7..7);
}

#[test]
#[should_panic(expected = "p=2.0 is outside range [0.0, 1.0]")]
fn random_bool_panics_above_one() {
    let _ = scalrand::random_bool(2.0);
}

#[test]
#[should_panic(expected = "p=5/4 is outside range [0.0, 1.0]")]
fn random_ratio_panics_above_one() {
    let _ = scalrand::random_ratio(5, 4);
}

#[test]
fn values_lie_where_rands_do() {
    for _ in 0..1000 {
        let d: u8 = scalrand::random_range(1..=6);
        assert!((1..=6).contains(&d));
        let c = scalrand::random_range('a'..='z');
        assert!(c.is_ascii_lowercase());
        let x: f32 = scalrand::random_range(-2.0..-1.0);
        assert!((-2.0..-1.0).contains(&x));
        let u: f64 = scalrand::random();
        assert!((0.0..1.0).contains(&u));
        assert_eq!(scalrand::random_range(..=0u64), 0);
    }
    for _ in 0..100 {
        assert!(scalrand::random_bool(1.0));
        assert!(!scalrand::random_bool(0.0));
        assert!(scalrand::random_ratio(9, 9));
        assert!(!scalrand::random_ratio(0, 9));
    }
}

#[test]
fn draws_are_fair() {
    // 100,000 draws of p = 1/4: mean 25,000, sd 137; 1,000 is 7 sd.
    let n = 100_000;
    let bools = (0..n).filter(|_| scalrand::random_bool(0.25)).count();
    let ratios = (0..n).filter(|_| scalrand::random_ratio(1, 4)).count();
    for hits in [bools, ratios] {
        assert!(hits.abs_diff(n / 4) < 1000, "{hits} of {n}");
    }
    let mut faces = [0u32; 6];
    for _ in 0..60_000 {
        faces[scalrand::random_range(0..6usize)] += 1;
    }
    // Each face: mean 10,000, sd 91; 700 is 7.7 sd.
    assert!(faces.iter().all(|&f| f.abs_diff(10_000) < 700), "{faces:?}");
}

#[test]
fn iter_and_fill_give_fresh_values() {
    let v: Vec<u64> = scalrand::random_iter().take(64).collect();
    let mut sorted = v.clone();
    sorted.sort_unstable();
    sorted.dedup();
    // 64 uniform u64s repeat with probability about 2^-52.
    assert_eq!(sorted.len(), 64);

    let mut bytes = [0u8; 64];
    scalrand::fill(&mut bytes);
    let mut words = [0u32; 16];
    scalrand::fill(&mut words[..]);
    let mut wide = [0i128; 4];
    scalrand::fill(&mut wide);
    // All-zero output of that length has probability 2^-512 each.
    assert_ne!(bytes, [0; 64]);
    assert_ne!(words, [0; 16]);
    assert_ne!(wide, [0; 4]);
    let mut empty: [u16; 0] = [];
    scalrand::fill(&mut empty);

    // The iterator owns its `SecureRng`: it can move to another thread.
    let it = scalrand::random_iter::<u32>();
    let firsts = std::thread::spawn(move || it.take(2).collect::<Vec<_>>())
        .join()
        .unwrap();
    assert_eq!(firsts.len(), 2);
}

#[test]
fn every_standard_type_rand_takes() {
    let _: (u8, i16, u32, i64, u128, i8) = scalrand::random();
    let _: (f32, f64, bool, char) = scalrand::random();
    let _: [u8; 32] = scalrand::random();
    let _: std::num::Wrapping<u16> = scalrand::random();
    let mut w = [std::num::Wrapping(0u64); 3];
    scalrand::fill(&mut w);
    let _ = scalrand::random_range(std::time::Duration::ZERO..std::time::Duration::from_secs(1));
}
