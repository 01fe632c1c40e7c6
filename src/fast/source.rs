//! Where the words come from: the lazily built [`global`] generator, the wipe-on-fork
//! per-CPU slots the one-liners draw from, and the calls that act on the calling CPU's slot
//! ([`with`], [`fill_u64`], [`seed`], [`get_seed`]).

// A `static` flag: loom's atomics have no `const` constructor, and the facade is not
// loom-modelled (its atomics-bearing paths are, in scalrand-fastprng and scalrand-os).
use core::sync::atomic::{AtomicBool, Ordering};

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpuWyRand, StaticWyRand, WyRand};
use scalrand_os::global::Global;

use super::draw::Draw;

/// The global generator: one per process image, built on first use (see "Fork" in the module
/// docs).
static GLOBAL: Global<PerCpuWyRand> = Global::new();

/// The global generator, seeded from the OS on first use (and on first use in a `fork()`ed
/// child: see the module docs). `&PerCpuWyRand` is a rand_core `Rng`, so every `rand` helper
/// runs on it.
///
/// If the OS entropy source fails (no `getrandom(2)`, a sandbox that forbids it), the master
/// state is derived from the time and addresses instead: still a valid, distinct stream, but
/// one an observer could guess — acceptable for a generator that is never secret anyway.
#[inline]
pub fn global() -> &'static PerCpuWyRand {
    GLOBAL.get_or_init(new_generator)
}

fn new_generator() -> PerCpuWyRand {
    let mut seed = [0u8; 8];
    let master = match scalrand_os::entropy::fill(&mut seed) {
        Ok(()) => WyRand::from_seed(seed),
        Err(_) => WyRand::from_state(weak_seed()),
    };
    match PerCpuWyRand::new(master.clone()) {
        Ok(p) => p,
        // Only `TooManySlots` can fail `new`; one slot per CPU modulo 1024 then.
        Err(_) => match PerCpuWyRand::with_cpus(master, 1024) {
            Ok(p) => p,
            Err(_) => unreachable_slots(),
        },
    }
}

#[cold]
fn unreachable_slots() -> ! {
    // `with_cpus(_, 1024)` fails only for 0 or more than MAX_CPUS (2^20) slots.
    #[allow(clippy::panic)]
    {
        panic!("PerCpuWyRand::with_cpus(_, 1024) cannot fail")
    }
}

fn weak_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let local = 0u8;
    t ^ (core::ptr::from_ref(&local) as u64).rotate_left(32) ^ u64::from(std::process::id())
}

/// The per-word generator of the one-liners (see "Fork" in the module docs).
static FAST: StaticWyRand = StaticWyRand::new();

/// Set by the first [`seed`] or [`get_seed`]: from then on the one-liners draw from the
/// [`global`] generator's try-lock slots, the ones those two act on, instead of [`FAST`]'s
/// (whose states only a restartable sequence may write).
static SEEDED: AtomicBool = AtomicBool::new(false);

/// The next output word of the calling CPU's stream: what every one-liner draws from.
#[inline]
pub(crate) fn next_word() -> u64 {
    if SEEDED.load(Ordering::Relaxed) {
        return seeded_word();
    }
    FAST.next_u64_or(global_word)
}

/// [`next_word`] where [`FAST`] cannot serve: out of line, so the hot path stays small enough
/// to inline into a caller's loop.
#[cold]
#[inline(never)]
fn global_word() -> u64 {
    global().next_u64()
}

/// [`next_word`] after [`seed`] or [`get_seed`]: the calling CPU's try-lock slot.
#[cold]
#[inline(never)]
fn seeded_word() -> u64 {
    global().with_current(WyRand::next_raw)
}

/// The calling CPU's stream, as a source of words for fastrand's methods.
pub(super) struct CallingCpu;

impl Draw for CallingCpu {
    #[inline]
    fn gen_u64(&mut self) -> u64 {
        next_word()
    }
}

/// Whether the one-liners run on the wipe-on-fork per-CPU slots in this process (after a
/// first call). For tests.
#[doc(hidden)]
pub fn __static_slots_mapped() -> bool {
    FAST.is_mapped()
}

/// Runs `f` with the calling CPU's generator: a loop inside `f` runs at an owned generator's
/// speed, for one slot round trip in all. Not cryptographic.
///
/// ```
/// use rand::RngExt; // rand's unbiased ranges on the CPU's own `WyRand`
///
/// let mut sixes = 0u32;
/// scalrand::fast::with(|rng| {
///     for _ in 0..1000 {
///         sixes += u32::from(rng.random_range(1..=6) == 6);
///     }
/// });
/// # let _ = sixes;
/// ```
#[inline]
pub fn with<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    global().with_current(f)
}

/// Fills `dest` with uniformly distributed `u64`s from the calling CPU's stream (one slot
/// round trip). Not cryptographic.
#[inline]
pub fn fill_u64(dest: &mut [u64]) {
    global().fill_u64(dest)
}

/// Sets the state of the calling CPU's stream to `seed`: fastrand's `seed`, per CPU. Not
/// cryptographic.
///
/// fastrand's `seed(s)` makes the calling thread's next draws those of
/// `Rng::with_seed(s)`. Here the state belongs to a CPU, not to the thread: `seed(s)` sets
/// the state of the [`global`] generator's slot for the CPU the caller runs on (or, if
/// another thread holds that slot at that instant, of the next free one), and the next draw
/// made on that CPU, by any thread, continues from it. So `seed(7)` then `u32(..)` gives
/// `Rng::with_seed(7).u32(..)` only if the thread stays on that CPU and no other thread draws
/// there in between; the streams of other CPUs are untouched. For a stream that replays, own
/// a [`Rng::with_seed`](super::Rng::with_seed).
///
/// From the first `seed` or [`get_seed`] in a process on, the one-liners draw from the slots
/// these two act on (the ones [`with`] uses: one uncontended compare-exchange per word)
/// rather than from the restartable-sequence slots, whose states cannot be set from outside
/// their sequence.
///
/// ```
/// scalrand::fast::seed(7);
/// let x = scalrand::fast::u32(..); // on this CPU's stream, from state 7 if undisturbed
/// # let _ = x;
/// ```
pub fn seed(seed: u64) {
    SEEDED.store(true, Ordering::Relaxed);
    with(|w| *w = WyRand::from_state(seed));
}

/// The current state of the calling CPU's stream: fastrand's `get_seed`, per CPU. Not
/// cryptographic.
///
/// The state of the [`global`] generator's slot for the CPU the caller runs on (or the next
/// free one, if another thread holds it at that instant); [`seed`] with it, on the same CPU,
/// sets the stream back to this point. Like [`seed`], it moves the one-liners of this process
/// onto those slots.
///
/// ```
/// let state = scalrand::fast::get_seed();
/// # let _ = state;
/// ```
#[must_use]
pub fn get_seed() -> u64 {
    SEEDED.store(true, Ordering::Relaxed);
    with(|w| w.state())
}
