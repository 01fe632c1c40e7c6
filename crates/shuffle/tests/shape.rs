//! The default `simulate` preset reproduces the seed's shape. Slow in debug builds (about a
//! minute), so ignored there: run with `cargo test -p scalrand-shuffle --release -- --ignored`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::preset;
use scalrand_shuffle::run_experiment;

#[test]
#[ignore = "takes ~5 s in release, about a minute in debug; CI runs it with --release -- --ignored"]
fn java_preset_has_the_seed_shape() {
    let r =
        run_experiment::<Xoroshiro128PlusPlus>(&preset("java").unwrap(), &mut |_, _| {}).unwrap();
    let (first, aged, shuffled) = (r.in_order.first_run(), r.in_order.aged(), r.shuffled.aged());
    // Aged in-order clearly above first-run in-order, and shuffled below aged in-order.
    assert!(aged > 2.0 * first, "aged {aged} vs first run {first}");
    assert!(shuffled < aged - 0.03, "shuffled {shuffled} vs aged {aged}");
}

#[test]
#[ignore = "takes ~2 s in release; CI runs it with --release -- --ignored"]
fn two_instance_shows_the_in_order_penalty() {
    let r =
        run_experiment::<Xoroshiro128PlusPlus>(&preset("two-instance").unwrap(), &mut |_, _| {})
            .unwrap();
    assert!(r.in_order.first_run() > 1.5 * r.shuffled.first_run());
}
