//! Where the words come from: the calling thread's wyrand state that the one-liners draw from
//! (and [`seed`] and [`get_seed`] act on), seeded from the OS and checked against the fork
//! generation on every word; and the lazily built per-CPU [`global`] generator, which [`with`]
//! and [`fill_u64`] use.

use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{AtomicU64, Ordering};

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpuWyRand, WyRand};
use scalrand_os::global::{Global, Inherited};
use scalrand_os::scratch::Levels;
use scalrand_os::wipe::ZeroValid;

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

/// One thread's mark "seeded in this process image": a word of wipe-on-fork memory (Linux,
/// Android, FreeBSD, OpenBSD), 1 once the thread's state is seeded, which a fork child finds
/// zero. The state itself is a thread-local, as fastrand's is; a draw reads the mark through
/// a thread-local pointer, with plain loads that nothing in a loop of inlined draws writes, so
/// the compiler checks it once before the loop and keeps the state in a register, as it
/// keeps fastrand's.
#[repr(transparent)]
struct Seeded(UnsafeCell<u64>);

// SAFETY: all zero is "not seeded".
unsafe impl ZeroValid for Seeded {}
// SAFETY: a mark is written only by the thread that owns it (its word in `Marks::owners`,
// taken with acquire and given back with release when the thread ends) and, in a fork child,
// zeroed by the kernel; it is read only by its owner.
unsafe impl Sync for Seeded {}

/// Who owns a [`Seeded`] mark: 0 free, 1 taken. Ordinary memory, which a fork child inherits:
/// the mark of the thread that forked stays its own there (a thread the child starts never
/// takes it), and the marks of threads that do not exist in the child stay taken.
#[repr(transparent)]
struct Owner(AtomicU64);

// SAFETY: all zero is a free mark.
unsafe impl ZeroValid for Owner {}

/// The threads' marks, in levels of 64, 128, ..., and who owns each (the same level and
/// index). A fork child uses its parent's.
struct Marks {
    seeded: Levels<Seeded>,
    owners: Levels<Owner>,
}

static MARKS: Global<Marks, Inherited> = Global::new();

/// [`Stream::seeded`] when the calling thread checks the fork generation on every draw
/// instead: the OS cannot wipe memory in a fork child, every mark is taken, or the thread is
/// ending.
const FALLBACK: usize = 1;

/// The calling thread's one-liner stream. `const`-initialised with no destructor (so that no
/// code outside this module ever holds its address, and it works during and after the
/// thread's other thread-locals are destroyed).
struct Stream {
    /// The wyrand state.
    state: Cell<u64>,
    /// The thread's [`Seeded`] mark: null until its first draw, [`FALLBACK`] where there is
    /// none.
    seeded: Cell<*const Seeded>,
    /// [`FALLBACK`] only: [`scalrand_os::fork::generation`] when `state` was seeded;
    /// `usize::MAX` (which the generation never reaches in practice) until then.
    generation: Cell<usize>,
}

/// Gives the calling thread's mark back when the thread ends: registered on its first draw,
/// never touched by a draw.
struct Release(Cell<*const Owner>);

impl Drop for Release {
    fn drop(&mut self) {
        let o = self.0.replace(core::ptr::null());
        // Draws from here on (other thread-locals' destructors) check the generation.
        let mark = STREAM.with(|s| s.seeded.replace(FALLBACK as *const Seeded));
        STREAM.with(|s| s.generation.set(usize::MAX));
        if mark as usize > FALLBACK && !o.is_null() {
            // SAFETY: a mark and its owner word in `MARKS`, whose levels are never freed
            // (the static is never dropped), owned by this thread: zeroed, then given back.
            unsafe {
                *(*mark).0.get() = 0;
                (*o).0.store(0, Ordering::Release);
            }
        }
    }
}

std::thread_local! {
    static STREAM: Stream = const {
        Stream {
            state: Cell::new(0),
            seeded: Cell::new(core::ptr::null()),
            generation: Cell::new(usize::MAX),
        }
    };
    static RELEASE: Release = const { Release(Cell::new(core::ptr::null())) };
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
///
/// No function here is handed `STREAM`'s address: the compiler then knows that a store to the
/// state never changes the mark it read, checks the mark once for a loop of inlined draws and
/// keeps the state in a register.
#[inline]
pub(super) fn with_thread<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    STREAM.with(|s| {
        let mark = s.seeded.get();
        // SAFETY: a mark past `FALLBACK` is the thread's own (see `Seeded`).
        if mark as usize <= FALLBACK || unsafe { *(*mark).0.get() } == 0 {
            prepare();
        }
        let mut w = WyRand::from_state(s.state.get());
        let out = f(&mut w);
        s.state.set(w.state());
        out
    })
}

/// Everything but the common draw, in one place (so that the compiler sees a single path
/// around a draw, and keeps the state in a register across a loop of them): the thread's
/// first draw, a fork child's (its mark zeroed), and every draw of the fallback, which
/// compares the fork generation.
#[cold]
#[inline(never)]
fn prepare() {
    let mark = STREAM.with(|s| s.seeded.get());
    if mark.is_null() {
        first_draw();
    } else if mark as usize > FALLBACK {
        let state = reseed(mark);
        STREAM.with(|s| s.state.set(state));
    } else {
        let generation = scalrand_os::fork::generation();
        if STREAM.with(|s| s.generation.get()) != generation {
            let state = os_seed(stack_salt());
            STREAM.with(|s| {
                s.state.set(state);
                s.generation.set(generation);
            });
        }
    }
}

/// An address of the calling thread's stack, to salt a seed the OS refused.
#[inline(never)]
fn stack_salt() -> u64 {
    let here = 0u8;
    core::hint::black_box(core::ptr::from_ref(&here)) as u64
}

/// The calling thread's first draw: takes a mark (or settles on the fallback) and seeds.
fn first_draw() {
    let (mark, owner) = match claim_mark() {
        Some((m, o)) => (core::ptr::from_ref(m), core::ptr::from_ref(o)),
        None => (FALLBACK as *const Seeded, core::ptr::null()),
    };
    let kept = RELEASE.try_with(|r| r.0.set(owner)).is_ok();
    let mark = if kept {
        mark
    } else {
        // The thread is ending: no mark (nothing would give it back).
        if !owner.is_null() {
            // SAFETY: the owner word just taken.
            unsafe { &*owner }.0.store(0, Ordering::Release);
        }
        FALLBACK as *const Seeded
    };
    let state = if mark as usize > FALLBACK {
        reseed(mark)
    } else {
        os_seed(stack_salt())
    };
    let generation = scalrand_os::fork::generation();
    STREAM.with(|s| {
        s.seeded.set(mark);
        s.state.set(state);
        s.generation.set(generation);
    });
}

/// A new state for the calling thread, its mark set: after its first draw took the mark, and
/// in a fork child, whose kernel zeroed it.
fn reseed(mark: *const Seeded) -> u64 {
    let state = os_seed(mark as u64);
    // SAFETY: the thread's own mark.
    unsafe { *(*mark).0.get() = 1 };
    state
}

/// A free mark for the calling thread and its owner word; `None` where the OS cannot wipe
/// memory in a fork child (the fallback serves) or every mark is taken. Marks are taken from
/// the levels already there first; a new level is an `mmap` and its owner words a heap
/// allocation, made only when every mark of the levels there is taken.
fn claim_mark() -> Option<(&'static Seeded, &'static Owner)> {
    let marks = MARKS.get_or_init(|| Marks {
        seeded: Levels::new(64, false),
        owners: Levels::new(64, true),
    });
    if !marks.seeded.wipes_on_fork() {
        return None;
    }
    for i in marks.seeded.search_order() {
        let (Some(seeded), Some(owners)) = (marks.seeded.level(i), marks.owners.level(i)) else {
            continue;
        };
        for (m, o) in seeded.iter().zip(owners.iter()) {
            if o.0.load(Ordering::Relaxed) == 0
                && o.0
                    .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return Some((m, o));
            }
        }
    }
    None
}

/// 8 bytes from the OS (from the time, `salt` and addresses if the OS refuses). No allocation
/// and no lock: a child of a raw `SYS_fork` in a multi-threaded program, whose allocator lock
/// another thread may have held at the fork, draws safely.
fn os_seed(salt: u64) -> u64 {
    let mut b = [0u8; 8];
    match scalrand_os::entropy::fill(&mut b) {
        Ok(()) => u64::from_le_bytes(b),
        Err(_) => weak_seed() ^ salt,
    }
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
    // The thread's stream, wherever it lives (a first draw takes its slot), set to `seed`.
    with_thread(|w| *w = WyRand::from_state(seed));
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
