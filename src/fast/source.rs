//! Where the words come from: the calling thread's wyrand state that the one-liners draw from
//! (and [`seed`] and [`get_seed`] act on), seeded from the OS and checked against the fork
//! generation on every word; and the lazily built per-CPU [`global`] generator, which [`with`]
//! and [`fill_u64`] use.

use core::cell::Cell;

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpuWyRand, WyRand};
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

/// The calling thread's one-liner stream: a wyrand state and the fork generation it was
/// seeded in. `const`-initialised with no destructor, so a draw is a thread-local load and
/// store, and works during and after the thread's other thread-locals are destroyed.
struct Local {
    state: Cell<u64>,
    /// [`scalrand_os::fork::generation`] when `state` was seeded; `usize::MAX` (which the
    /// generation never reaches in practice) until the thread's first draw.
    generation: Cell<usize>,
}

std::thread_local! {
    static LOCAL: Local = const {
        Local {
            state: Cell::new(0),
            generation: Cell::new(usize::MAX),
        }
    };
}

/// The next output word of the calling thread's stream: what every one-liner draws from. A
/// state seeded in another process image (a fork child's first draw, however it was forked)
/// or never seeded is seeded from the OS first.
#[inline]
pub(crate) fn next_word() -> u64 {
    with_thread(WyRand::next_raw)
}

/// Runs `f` on a copy of the calling thread's stream and keeps where it left off: a loop of
/// draws at an owned generator's speed. `f` must not draw from the thread's stream itself
/// (its draws would be overwritten and repeated); only this module's callers pass one.
#[inline]
pub(super) fn with_thread<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    let generation = scalrand_os::fork::generation();
    LOCAL.with(|l| {
        let state = if l.generation.get() == generation {
            l.state.get()
        } else {
            seed_thread(l, generation)
        };
        let mut w = WyRand::from_state(state);
        let out = f(&mut w);
        l.state.set(w.state());
        out
    })
}

/// Seeds the calling thread's state for fork generation `generation` with 8 bytes from the
/// OS (from the time and addresses if the OS refuses) and returns it. No allocation and no
/// lock: a child of a raw `SYS_fork` in a multi-threaded program, whose allocator lock another
/// thread may have held at the fork, draws safely.
#[cold]
#[inline(never)]
fn seed_thread(l: &Local, generation: usize) -> u64 {
    let mut b = [0u8; 8];
    let state = match scalrand_os::entropy::fill(&mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => weak_seed() ^ (core::ptr::from_ref(l) as u64),
    };
    l.state.set(state);
    l.generation.set(generation);
    state
}

/// The calling thread's stream, as a source of words for fastrand's methods.
pub(super) struct CallingThread;

impl Draw for CallingThread {
    #[inline]
    fn gen_u64(&mut self) -> u64 {
        next_word()
    }
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

/// Sets the state of the calling thread's stream to `seed`: fastrand's `seed`. Not
/// cryptographic.
///
/// As with fastrand, the calling thread's next one-liner draws are those of
/// [`Rng::with_seed(seed)`](super::Rng::with_seed), method for method; other threads' streams
/// are untouched. The per-CPU generator of [`with`] and [`fill_u64`] is not affected. A fork
/// child does not continue a seeded stream: its first draw seeds its own (see "Fork" in the
/// module docs).
///
/// ```
/// scalrand::fast::seed(7);
/// let x = scalrand::fast::u32(..);
/// assert_eq!(x, scalrand::fast::Rng::with_seed(7).u32(..));
/// ```
pub fn seed(seed: u64) {
    let generation = scalrand_os::fork::generation();
    LOCAL.with(|l| {
        l.state.set(seed);
        l.generation.set(generation);
    });
}

/// The current state of the calling thread's stream: fastrand's `get_seed`. Not
/// cryptographic. [`seed`] with it sets the thread's stream back to this point.
///
/// ```
/// let state = scalrand::fast::get_seed();
/// let a = scalrand::fast::u64(..);
/// scalrand::fast::seed(state);
/// assert_eq!(scalrand::fast::u64(..), a);
/// ```
#[must_use]
pub fn get_seed() -> u64 {
    with_thread(|w| w.state())
}
