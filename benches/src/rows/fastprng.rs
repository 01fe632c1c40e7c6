//! Rows for scalrand-fastprng and the facade's `scalrand::fast`, beside the generators people
//! use today for fast non-cryptographic numbers.

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rand_core::{Rng, SeedableRng};
use scalrand_fastprng::{PerCpu, Xoroshiro128PlusPlus};

use crate::{Row, Unit, Worker};

const GROUP: &str = "fast u64";
/// Calls between two looks at the stop flag.
const BATCH: u64 = 1024;

/// Runs `f` in batches until `stop`, returning how many calls were made.
#[inline(always)]
fn spin(stop: &AtomicBool, mut f: impl FnMut() -> u64) -> u64 {
    let mut n = 0;
    let mut acc = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..BATCH {
            acc ^= f();
        }
        n += BATCH;
    }
    black_box(acc);
    n
}

thread_local! {
    static TL_XOSHIRO: RefCell<rand_xoshiro::Xoroshiro128PlusPlus> =
        RefCell::new(rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(
            fastrand::u64(..),
        ));
}

fn percpu() -> Worker {
    let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(1)).expect("PerCpu::new");
    Box::new(move |_, stop| spin(stop, || p.next_u64()))
}

fn percpu_trylock() -> Worker {
    let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(2))
        .expect("PerCpu::new")
        .force_try_lock();
    Box::new(move |_, stop| spin(stop, || p.next_u64()))
}

fn facade() -> Worker {
    Box::new(|_, stop| spin(stop, scalrand::fast::next_u64))
}

fn mutex() -> Worker {
    let m = Mutex::new(rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(3));
    Box::new(move |_, stop| spin(stop, || m.lock().expect("poisoned").next_u64()))
}

fn thread_local_xoshiro() -> Worker {
    Box::new(|_, stop| spin(stop, || TL_XOSHIRO.with(|r| r.borrow_mut().next_u64())))
}

fn fastrand_u64() -> Worker {
    Box::new(|_, stop| spin(stop, || fastrand::u64(..)))
}

/// The rows of this crate.
pub fn rows() -> Vec<Row> {
    let row = |name, baseline, make| Row {
        group: GROUP,
        name,
        baseline,
        unit: Unit::Ops,
        make,
    };
    vec![
        row("scalrand::fast::next_u64", false, facade as fn() -> Worker),
        row("PerCpu<Xoroshiro128++> (&self)", false, percpu),
        row(
            "PerCpu<Xoroshiro128++> try-lock path",
            false,
            percpu_trylock,
        ),
        row("Mutex<Xoroshiro128PlusPlus>", true, mutex),
        row("thread-local rand_xoshiro", true, thread_local_xoshiro),
        row("fastrand::u64 (thread-local)", true, fastrand_u64),
    ]
}
