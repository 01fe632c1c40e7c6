//! `scalrand::fast::Rng::with_seed(s)` against `fastrand::Rng::with_seed(s)`, method by
//! method, for many seeds: the same outputs bit for bit (integer ranges of every type with
//! their edges, floats, `char`s, `shuffle`, `choose_multiple`, `fill`, `fork`, ...), the same
//! state after each, and the same panics with the same messages.

use std::ops::Bound::{Excluded, Included, Unbounded};
use std::panic::{AssertUnwindSafe, catch_unwind};

use scalrand::fast;

/// Seeds: the edges of the state space, then 120 spread over it (splitmix64's increment, an
/// independent sequence).
fn seeds() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        0x2d35_8dcc_aa6c_78a5,
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
    ];
    v.extend((1..=120u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    v
}

/// Runs `$e` `$n` times on each generator seeded with `$seed` (`$r` names the generator):
/// every output equal, and the states equal at the end.
macro_rules! same {
    ($seed:expr, $n:expr, |$r:ident| $e:expr) => {{
        let seed: u64 = $seed;
        let mut ours = fast::Rng::with_seed(seed);
        let mut theirs = fastrand::Rng::with_seed(seed);
        for i in 0..$n {
            let a = {
                let $r = &mut ours;
                $e
            };
            let b = {
                let $r = &mut theirs;
                $e
            };
            assert_eq!(a, b, "seed {seed:#x}, call {i}: {}", stringify!($e));
        }
        assert_eq!(
            ours.get_seed(),
            theirs.get_seed(),
            "seed {seed:#x}: state after {}",
            stringify!($e)
        );
    }};
}

/// Every kind of range of each integer type: full, edges, one-value, small and random spans,
/// each range syntax and an excluded start bound.
macro_rules! int_ranges {
    ($($t:ident),*) => {$(
        #[test]
        fn $t() {
            const MIN: $t = $t::MIN;
            const MAX: $t = $t::MAX;
            for seed in seeds() {
                same!(seed, 8, |r| r.$t(..));
                same!(seed, 8, |r| r.$t(MIN..=MAX));
                same!(seed, 8, |r| r.$t(MIN..MAX));
                same!(seed, 8, |r| r.$t(MIN + 1..));
                same!(seed, 8, |r| r.$t(..MAX));
                same!(seed, 8, |r| r.$t(..=MIN));
                same!(seed, 8, |r| r.$t(MAX..));
                same!(seed, 8, |r| r.$t(MAX - 1..=MAX));
                same!(seed, 8, |r| r.$t(MIN..=MIN + 2));
                same!(seed, 8, |r| r.$t(0..1));
                same!(seed, 8, |r| r.$t(1..=6));
                same!(seed, 8, |r| r.$t(..=MAX / 2));
                same!(seed, 8, |r| r.$t(MAX / 2..));
                same!(seed, 8, |r| r.$t(MAX / 3..MAX));
                same!(seed, 8, |r| r.$t((Excluded(MIN), Unbounded)));
                same!(seed, 8, |r| r.$t((Excluded(5), Included(9))));
                same!(seed, 8, |r| r.$t((Unbounded, Excluded(MAX))));
                // Endpoints from an independent generator: wide and narrow spans anywhere.
                let mut pick = fastrand::Rng::with_seed(!seed);
                for _ in 0..6 {
                    let (x, y) = (pick.$t(..), pick.$t(..));
                    let (a, b) = (x.min(y), x.max(y));
                    same!(seed, 4, |r| r.$t(a..=b));
                    if a < b {
                        same!(seed, 4, |r| r.$t(a..b));
                        same!(seed, 4, |r| r.$t((Excluded(a), Included(b))));
                    }
                    let k = pick.u8(0..20) as $t;
                    same!(seed, 4, |r| r.$t(a..=a.saturating_add(k)));
                    same!(seed, 4, |r| r.$t(b.saturating_sub(k)..=b));
                }
            }
        }
    )*};
}

mod ranges {
    use super::*;

    int_ranges!(
        u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
    );

    #[test]
    fn char() {
        let max = char::MAX;
        for seed in seeds() {
            same!(seed, 8, |r| r.char(..));
            same!(seed, 8, |r| r.char('a'..='z'));
            same!(seed, 8, |r| r.char('\0'..'\u{80}'));
            // Across the surrogate gap, and with excluded bounds beside it.
            same!(seed, 16, |r| r.char('\u{d000}'..'\u{e100}'));
            same!(seed, 8, |r| r.char('\u{d7ff}'..='\u{e000}'));
            same!(seed, 8, |r| r
                .char((Excluded('\u{d7ff}'), Included('\u{e005}'))));
            same!(seed, 8, |r| r
                .char((Excluded('\u{d7fe}'), Excluded('\u{e000}'))));
            same!(seed, 8, |r| r.char(..'\u{e000}'));
            same!(seed, 8, |r| r.char('\u{e000}'..));
            same!(seed, 8, |r| r.char(max..));
            same!(seed, 8, |r| r.char(..=max));
            same!(seed, 8, |r| r.char((Excluded('\0'), Unbounded)));
        }
    }
}

#[test]
fn bools_letters_and_digits() {
    for seed in seeds() {
        same!(seed, 64, |r| r.bool());
        same!(seed, 32, |r| r.alphabetic());
        same!(seed, 32, |r| r.alphanumeric());
        same!(seed, 32, |r| r.lowercase());
        same!(seed, 32, |r| r.uppercase());
        for base in 1..=36 {
            same!(seed, 4, |r| r.digit(base));
        }
    }
}

#[test]
fn floats() {
    for seed in seeds() {
        same!(seed, 32, |r| r.f32().to_bits());
        same!(seed, 32, |r| r.f64().to_bits());
        same!(seed, 32, |r| r.f32_inclusive().to_bits());
        same!(seed, 32, |r| r.f64_inclusive().to_bits());
    }
}

#[test]
fn shuffle() {
    for seed in seeds() {
        for len in (0..=40).chain([100, 1000]) {
            same!(seed, 2, |r| {
                let mut v: Vec<u32> = (0..len).collect();
                r.shuffle(&mut v);
                v
            });
        }
    }
}

#[test]
fn choose_multiple() {
    for seed in seeds() {
        for n in 0..24usize {
            for amount in 0..=n + 3 {
                same!(seed, 2, |r| r.choose_multiple(0..n, amount));
            }
            let v: Vec<u16> = (0..n as u16).map(|i| i * 3).collect();
            same!(seed, 2, |r| r.choose_multiple(&v, n / 2));
        }
        same!(seed, 2, |r| r.choose_multiple(0..1000u32, 17));
    }
}

#[test]
fn choice() {
    for seed in seeds() {
        for n in 0..24u8 {
            let v: Vec<u8> = (0..n).collect();
            same!(seed, 4, |r| r.choice(&v).copied());
            same!(seed, 4, |r| r.choice(0..u32::from(n) * 1000));
        }
    }
}

#[test]
fn fill() {
    for seed in seeds() {
        for len in 0..=40 {
            same!(seed, 2, |r| {
                let mut b = vec![0u8; len];
                r.fill(&mut b);
                b
            });
        }
    }
}

#[test]
fn fork_seed_get_seed_and_clone() {
    for seed in seeds() {
        same!(seed, 4, |r| {
            let mut child = r.fork();
            (child.u64(..), child.get_seed(), r.u64(..))
        });
        same!(seed, 4, |r| {
            let before = r.get_seed();
            let x = r.u32(..);
            r.seed(before);
            (before, x, r.u32(..))
        });
        same!(seed, 2, |r| {
            r.seed(seed.rotate_left(7));
            let mut twin = r.clone();
            (twin.u64(..), r.u64(..))
        });
    }
    assert_eq!(fast::Rng::with_seed(9).get_seed(), 9);
    let mut a = fast::Rng::with_seed(9);
    let b = a.clone();
    assert_eq!(a, b);
    let _ = a.bool();
    assert_ne!(a, b);
}

/// Every method interleaved in one stream, in an order drawn from the stream itself: a method
/// that drew one word too many or too few would shift everything after it.
#[test]
fn every_method_in_one_stream() {
    for seed in seeds() {
        same!(seed, 300, |r| {
            match r.u8(0..14) {
                0 => format!("{}", r.i128(-5..i128::MAX)),
                1 => format!("{}", r.u16(300..)),
                2 => format!("{}", r.isize(..)),
                3 => format!("{:x}", r.f64().to_bits()),
                4 => format!("{:x}", r.f32().to_bits()),
                5 => format!("{}", r.char(..)),
                6 => format!("{}", r.alphanumeric()),
                7 => format!("{}", r.digit(16)),
                8 => format!("{}", r.bool()),
                9 => {
                    let mut v: [u8; 11] = std::array::from_fn(|i| i as u8);
                    r.shuffle(&mut v);
                    let mut b = [0u8; 13];
                    r.fill(&mut b);
                    format!("{v:?} {b:?}")
                }
                10 => format!("{:?}", r.choose_multiple(0..50, 7)),
                11 => format!("{:?}", r.choice(0..13)),
                12 => format!("{}", r.fork().u64(..)),
                _ => format!("{}", r.i8(-100..=100)),
            }
        });
    }
}

/// The message of the panic `f` raises, or `None` if it returns.
fn panic_message<T>(f: impl FnOnce() -> T) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(f)).err()?;
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
}

/// `$e` panics on scalrand's `Rng`, on scalrand's one-liner (`fast::$e`) and on fastrand's
/// `Rng`, all with fastrand's message.
macro_rules! same_panic {
    ($name:ident($($arg:expr),*)) => {{
        let ours = panic_message(|| fast::Rng::with_seed(1).$name($($arg),*));
        let free = panic_message(|| fast::$name($($arg),*));
        let theirs = panic_message(|| fastrand::Rng::with_seed(1).$name($($arg),*));
        assert!(theirs.is_some(), "fastrand did not panic: {}", stringify!($name($($arg),*)));
        assert_eq!(ours, theirs, "{}", stringify!($name($($arg),*)));
        assert_eq!(free, theirs, "fast::{}", stringify!($name($($arg),*)));
    }};
}

#[test]
#[allow(clippy::reversed_empty_ranges)]
fn panics_match_fastrands() {
    same_panic!(u8(3..3));
    same_panic!(u16(5..=4));
    same_panic!(u32((Excluded(u32::MAX), Unbounded)));
    same_panic!(u64(..0));
    same_panic!(u128(1..1));
    same_panic!(usize((Excluded(7), Excluded(8))));
    same_panic!(i8(..i8::MIN));
    same_panic!(i16(0..-1));
    same_panic!(i32((Excluded(i32::MAX), Included(i32::MAX))));
    same_panic!(i64(i64::MAX..i64::MAX));
    same_panic!(i128(10..=-10));
    same_panic!(isize(..isize::MIN));
    same_panic!(char('b'..'b'));
    same_panic!(char(..'\0'));
    same_panic!(char((Excluded(char::MAX), Unbounded)));
    same_panic!(char('z'..='a'));
    same_panic!(digit(0));
    same_panic!(digit(37));
}

#[test]
#[should_panic(expected = "empty range: Included(3)..Excluded(3)")]
fn empty_range_panics_with_fastrands_message() {
    let _ = fast::Rng::with_seed(1).u8(3..3);
}

#[test]
#[should_panic(expected = "empty range: Excluded(255)..Unbounded")]
fn empty_range_from_an_excluded_max_panics_with_fastrands_message() {
    let _ = fast::u8((Excluded(255), Unbounded));
}

#[test]
#[should_panic(expected = "empty range: Unbounded..Excluded('\\0')")]
fn empty_char_range_panics_with_fastrands_message() {
    let _ = fast::Rng::with_seed(1).char(..'\0');
}

#[test]
#[should_panic(expected = "base cannot be zero")]
fn digit_base_zero_panics_with_fastrands_message() {
    let _ = fast::digit(0);
}

/// The `try_` one-liners answer `None` exactly where the panicking forms panic.
#[test]
#[allow(clippy::reversed_empty_ranges)]
fn try_forms_refuse_what_fastrand_panics_on() {
    assert_eq!(fast::try_u8(3..3), None);
    assert_eq!(fast::try_i128(10..=-10), None);
    assert_eq!(fast::try_u32((Excluded(u32::MAX), Unbounded)), None);
    assert_eq!(fast::try_char(..'\0'), None);
    assert_eq!(fast::try_char((Excluded(char::MAX), Unbounded)), None);
    assert_eq!(fast::try_isize(isize::MAX..), Some(isize::MAX));
    assert_eq!(
        fast::try_char((Excluded('\u{d7ff}'), Excluded('\u{e001}'))),
        Some('\u{e000}')
    );
}

/// Known answers for seed 42 (fastrand 2.5's outputs), on both generators: pinned so that a
/// change of stream in either crate shows here even where the two would still agree.
#[test]
fn value_stability() {
    macro_rules! known_answers {
        ($r:expr) => {{
            let mut r = $r;
            assert_eq!(r.u64(..), 14_587_678_697_106_979_209);
            assert_eq!(r.u32(1..=6), 2);
            assert_eq!(r.f64().to_bits(), 4_605_421_139_625_727_761);
            let mut v: Vec<u8> = (0..10).collect();
            r.shuffle(&mut v);
            assert_eq!(v, [1, 8, 7, 2, 4, 6, 0, 5, 3, 9]);
            assert_eq!(r.choose_multiple(0..20, 3), [19, 1, 9]);
            let s: String = (0..5).map(|_| r.alphanumeric()).collect();
            assert_eq!(s, "bLa2o");
            assert_eq!(r.get_seed(), 80_173_289_655_764_500);
        }};
    }
    known_answers!(fast::Rng::with_seed(42));
    known_answers!(fastrand::Rng::with_seed(42));
}
