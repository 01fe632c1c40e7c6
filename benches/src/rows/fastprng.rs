//! Rows for scalrand-fastprng and the facade's `scalrand::fast`, beside the generators people
//! use today for fast non-cryptographic numbers.

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use rand_core::{Rng, SeedableRng};
use scalrand_fastprng::{PerCpu, PerCpuWyRand, WyRand, Xoroshiro128PlusPlus};

use crate::{MakeError, Row, Unit, Worker};

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
    static TL_SMALL: RefCell<rand::rngs::SmallRng> =
        RefCell::new(rand::rngs::SmallRng::seed_from_u64(fastrand::u64(..)));
}

fn percpu_wyrand() -> Result<Worker, MakeError> {
    let p = PerCpuWyRand::new(WyRand::from_state(fastrand::u64(..)))?;
    Ok(Box::new(move |_, stop| spin(stop, || p.next_u64())))
}

/// The scoped API: one slot round trip per `BATCH` numbers.
fn facade_with() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| {
        let mut n = 0;
        let mut acc = 0u64;
        while !stop.load(Ordering::Relaxed) {
            acc ^= scalrand::fast::with(|r| (0..BATCH).fold(0, |a, _| a ^ r.next_raw()));
            n += BATCH;
        }
        black_box(acc);
        n
    }))
}

fn thread_local_small_rng() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| {
        spin(stop, || TL_SMALL.with(|r| r.borrow_mut().next_u64()))
    }))
}

fn percpu() -> Result<Worker, MakeError> {
    let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(1))?;
    Ok(Box::new(move |_, stop| spin(stop, || p.next_u64())))
}

fn percpu_trylock() -> Result<Worker, MakeError> {
    let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(2))?.force_try_lock();
    Ok(Box::new(move |_, stop| spin(stop, || p.next_u64())))
}

fn facade() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| spin(stop, || scalrand::fast::u64(..))))
}

fn mutex() -> Result<Worker, MakeError> {
    let m = Mutex::new(rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(3));
    // No worker panics while holding the lock, so poisoning cannot happen; taking the guard
    // either way keeps the loop free of a panic path.
    Ok(Box::new(move |_, stop| {
        spin(stop, || {
            m.lock().unwrap_or_else(PoisonError::into_inner).next_u64()
        })
    }))
}

fn thread_local_xoshiro() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| {
        spin(stop, || TL_XOSHIRO.with(|r| r.borrow_mut().next_u64()))
    }))
}

fn fastrand_u64() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| spin(stop, || fastrand::u64(..))))
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
        row(
            "scalrand::fast::u64(..)",
            false,
            facade as fn() -> Result<Worker, MakeError>,
        ),
        row(
            "scalrand::fast::with (scoped, 1024 per call)",
            false,
            facade_with,
        ),
        row("PerCpuWyRand (&self)", false, percpu_wyrand),
        row("PerCpu<Xoroshiro128++> (&self)", false, percpu),
        row(
            "PerCpu<Xoroshiro128++> try-lock path",
            false,
            percpu_trylock,
        ),
        row("Mutex<Xoroshiro128PlusPlus>", true, mutex),
        row("thread-local rand_xoshiro", true, thread_local_xoshiro),
        row("fastrand::u64 (thread-local)", true, fastrand_u64),
        row("thread-local rand SmallRng", true, thread_local_small_rng),
    ]
}
