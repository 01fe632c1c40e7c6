//! The one-liners on the calling CPU's stream: outputs, ranges, panics, the slots they use.

use std::vec::Vec;

#[test]
fn outputs_vary_and_fill_is_complete() {
    let a = super::u64(..);
    let b = super::u64(..);
    assert_ne!(a, b);
    for len in [1000, 64, 63, 9] {
        let mut buf = [0u8; 1000];
        super::fill(&mut buf[..len]);
        // n random bytes hold about n/256 zeros; n/20 or more would mean a broken fill.
        let zeros = buf[..len].iter().filter(|&&x| x == 0).count();
        assert!(zeros < len / 20 + 2, "{len}: {zeros} zeros");
        assert!(
            buf[len..].iter().all(|&x| x == 0),
            "{len}: wrote past the slice"
        );
    }
}

#[test]
fn threads_get_distinct_outputs() {
    let v: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..1000).map(|_| super::u64(..)).collect::<Vec<_>>()))
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut sorted = v.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), v.len());
}

/// Pearson's chi-square statistic of observed counts against equal expected counts.
fn chi_square(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let e = n as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

#[test]
fn die_rolls_pass_chi_square() {
    let mut counts = [0u64; 6];
    for _ in 0..600_000 {
        let d = super::u32(1..=6);
        counts[d as usize - 1] += 1;
    }
    // 5 degrees of freedom: P(chi2 > 40) is about 1e-7.
    let x = chi_square(&counts);
    assert!(x < 40.0, "chi2 = {x}, counts {counts:?}");
}

#[test]
fn ranges_reach_both_ends_and_refuse_empty_ones() {
    let mut seen = [false; 256];
    for _ in 0..100_000 {
        seen[(super::i8(..) as u8) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "some i8 never drawn");
    let mut top = [false; 6];
    for _ in 0..10_000 {
        top[usize::from(super::u8(250..=255) - 250)] = true;
    }
    assert_eq!(top, [true; 6]);
    for _ in 0..1000 {
        let v = super::i64(-3..2);
        assert!((-3..2).contains(&v), "{v}");
        let w = super::isize(isize::MIN..isize::MIN + 2);
        assert!(w == isize::MIN || w == isize::MIN + 1);
        let x = super::i128(i128::MAX - 1..);
        assert!(x >= i128::MAX - 1);
        let c = super::char('\u{d7ff}'..='\u{e000}');
        assert!(c == '\u{d7ff}' || c == '\u{e000}', "{c:?}");
    }
    assert_eq!(super::u64(5..6), 5);
    assert_eq!(super::u64(u64::MAX..), u64::MAX);
    let _ = super::u64(..);
    assert_eq!(super::usize(..=0), 0);
    assert_eq!(super::try_u32(5..5), None);
    assert_eq!(super::try_u32(5..=5), Some(5));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = super::try_i32(3..=2);
    assert_eq!(reversed, None);
    assert_eq!(
        super::try_u8((core::ops::Bound::Excluded(255), core::ops::Bound::Unbounded)),
        None
    );
    assert_eq!(super::try_i16(..i16::MIN), None);
    assert_eq!(super::try_char(..'\0'), None);
    assert_eq!(super::try_char('\u{d7ff}'..'\u{e000}'), Some('\u{d7ff}'));
}

#[test]
#[should_panic(expected = "empty range: Included(5)..Excluded(5)")]
fn an_empty_range_panics_as_fastrands_does() {
    let _ = super::u32(5..5);
}

#[test]
#[should_panic(expected = "base cannot be larger than 36")]
fn a_base_above_36_panics_as_fastrands_does() {
    let _ = super::digit(37);
}

#[test]
fn characters_come_from_their_sets() {
    for _ in 0..1000 {
        assert!(super::alphabetic().is_ascii_alphabetic());
        assert!(super::alphanumeric().is_ascii_alphanumeric());
        assert!(super::lowercase().is_ascii_lowercase());
        assert!(super::uppercase().is_ascii_uppercase());
        assert!(super::digit(10).is_ascii_digit());
        assert!(matches!(super::digit(36), '0'..='9' | 'a'..='z'));
        assert_eq!(super::digit(1), '0');
    }
}

#[test]
fn floats_and_bools_are_in_range_and_centred() {
    let n = 100_000;
    let mut sum = 0.0;
    let mut ones = 0u32;
    for _ in 0..n {
        let x = super::f64();
        assert!((0.0..1.0).contains(&x));
        let y = super::f32();
        assert!((0.0..1.0).contains(&y));
        assert!((0.0..=1.0).contains(&super::f64_inclusive()));
        assert!((0.0..=1.0).contains(&super::f32_inclusive()));
        sum += x;
        ones += u32::from(super::bool());
    }
    // Both means have sd below 0.002 here: 0.01 is 5 sd.
    assert!((sum / f64::from(n) - 0.5).abs() < 0.01, "{sum}");
    assert!(
        (f64::from(ones) / f64::from(n) - 0.5).abs() < 0.01,
        "{ones}"
    );
}

#[test]
fn shuffle_gives_every_order_equally_often() {
    // The 6 orders of 3 items, counted over 60,000 shuffles.
    let mut counts = [0u64; 6];
    for _ in 0..60_000 {
        let mut v = [0u8, 1, 2];
        super::shuffle(&mut v);
        let k = match v {
            [0, 1, 2] => 0,
            [0, 2, 1] => 1,
            [1, 0, 2] => 2,
            [1, 2, 0] => 3,
            [2, 0, 1] => 4,
            [2, 1, 0] => 5,
            other => panic!("not a permutation: {other:?}"),
        };
        counts[k] += 1;
    }
    let x = chi_square(&counts);
    assert!(x < 40.0, "chi2 = {x}, counts {counts:?}");
    let mut empty: [u8; 0] = [];
    super::shuffle(&mut empty);
    let mut one = [7];
    super::shuffle(&mut one);
    assert_eq!(one, [7]);
}

#[test]
fn choice_picks_every_item_and_none_from_nothing() {
    let mut counts = [0u64; 4];
    for _ in 0..40_000 {
        counts[*super::choice(&[0usize, 1, 2, 3]).unwrap()] += 1;
    }
    let x = chi_square(&counts);
    assert!(x < 35.0, "chi2 = {x}, counts {counts:?}");
    // Every item equally often in a sample of 2 of 4, drawn 40,000 times.
    let mut counts = [0u64; 4];
    for _ in 0..40_000 {
        let pair = super::choose_multiple(0..4usize, 2);
        assert_eq!(pair.len(), 2);
        assert_ne!(pair[0], pair[1]);
        for i in pair {
            counts[i] += 1;
        }
    }
    let x = chi_square(&counts);
    assert!(x < 35.0, "chi2 = {x}, counts {counts:?}");
    assert_eq!(super::choice(core::iter::empty::<u8>()), None);
    let mut buf = [0u8; 100];
    super::fill(&mut buf);
    assert!(buf.iter().any(|&b| b != 0));
}

/// A thread gives its mark back when it ends: 300 threads one after another take one each,
/// and the marks taken stay as few as the threads alive at once (this test's and the test
/// harness's), not 300.
#[test]
fn ended_threads_give_their_marks_back() {
    let _marks = MARKS_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for _ in 0..300 {
        std::thread::spawn(|| super::u64(..)).join().unwrap();
    }
    let taken = super::source::marks_taken();
    assert!(taken < 64, "{taken} marks taken after 300 threads ended");
}

/// The tests that count or take every mark run one at a time.
static MARKS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Where the OS wipes memory in a fork child, a thread's draws check its mark (the fast path
/// the compiler can keep to one check per run of inlined draws), not the fork generation on
/// every draw.
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn a_thread_takes_a_mark_where_the_os_wipes() {
    let _marks = MARKS_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mode = std::thread::spawn(|| {
        let _ = super::u64(..);
        super::source::thread_mode()
    })
    .join()
    .unwrap();
    let wipes = scalrand_os::fork::detection() == scalrand_os::fork::Detection::WipeOnFork;
    assert_eq!(mode == super::source::MARKED, wipes, "mode {mode}");
}

/// A thread that finds every mark taken draws on the fallback, which compares the fork
/// generation on every draw: a fork child does not continue its stream either (by libc's
/// `fork()` or a raw `SYS_fork`), and two children do not share one.
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn a_thread_without_a_mark_is_not_continued_in_a_fork_child() {
    use scalrand_testkit::fork::{ForkFn, in_child, libc_fork, raw_fork};
    let _marks = MARKS_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let taken = super::source::take_every_mark();
    let run = std::thread::spawn(|| {
        fn words() -> [u8; 32] {
            let mut b = [0u8; 32];
            for c in b.chunks_mut(8) {
                c.copy_from_slice(&super::u64(..).to_le_bytes());
            }
            b
        }
        let _ = super::u64(..);
        let mode = super::source::thread_mode();
        let mut out = Vec::new();
        for how in [libc_fork as ForkFn, raw_fork] {
            let (parent, a) = in_child(how, words, words);
            let (_, b) = in_child(how, words, || ());
            out.push((parent, a, b));
        }
        (mode, out)
    })
    .join();
    super::source::give_marks_back(&taken);
    let (mode, out) = run.unwrap();
    assert_eq!(mode, super::source::FALLBACK, "every mark was taken");
    for (parent, a, b) in out {
        let (a, b) = (a.expect("the child died"), b.expect("the child died"));
        assert_ne!(a, parent, "a child continued its parent's stream");
        assert_ne!(a, b, "two children drew the same words");
    }
}

/// A fork that lands after a thread's first draw has seeded its state and armed its mark,
/// before the draw checks the mark (where a signal handler's fork can land), leaves a child
/// that seeds again: none of the child's first words is one of the parent's. (Had the draw
/// armed the mark after that instant, the child would arm it too, after the fork, and
/// continue the parent's stream for good.)
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn a_fork_between_seeding_and_the_check_leaves_a_child_that_seeds_again() {
    use super::source::test_hook::{fork_after_the_next_seed, forked};
    let (parent, child) = std::thread::spawn(|| {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid two-element array for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        fork_after_the_next_seed();
        let words: [u64; 4] = core::array::from_fn(|_| super::u64(..));
        let pid = forked();
        assert!(pid >= 0, "the first draw did not fork");
        if pid == 0 {
            // The child: its words to the parent, then out (async-signal-safe calls only).
            // SAFETY: `words` is 32 readable bytes; `_exit` ends the child.
            unsafe {
                libc::write(fds[1], words.as_ptr().cast(), 32);
                libc::_exit(0);
            }
        }
        let mut theirs = [0u64; 4];
        // SAFETY: `theirs` is 32 writable bytes; `pid` is our child.
        unsafe {
            libc::close(fds[1]);
            assert_eq!(libc::read(fds[0], theirs.as_mut_ptr().cast(), 32), 32);
            libc::close(fds[0]);
            libc::waitpid(pid, core::ptr::null_mut(), 0);
        }
        (words, theirs)
    })
    .join()
    .unwrap();
    for (i, w) in child.iter().enumerate() {
        assert!(
            !parent.contains(w),
            "child word {i} is one of the parent's: {child:x?} / {parent:x?}"
        );
    }
}
