//! Where the words come from: the calling thread's wyrand state that the one-liners draw from
//! (and [`seed`] and [`get_seed`] act on), seeded from the OS and checked against the fork
//! generation on every word; and the lazily built per-CPU [`global`] generator, which [`with`]
//! and [`fill_u64`] use.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpuWyRand, WyRand};
use scalrand_os::global::Global;
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

/// One thread's mark "seeded in this process image", in wipe-on-fork memory (Linux, Android,
/// FreeBSD, OpenBSD), which a fork child finds zero. The state itself is a thread-local, as
/// fastrand's is; a draw compares the mark's tag with its thread's through a thread-local
/// pointer, with loads that nothing in a run of inlined draws writes, so the compiler keeps
/// the state in a register from draw to draw.
#[repr(C, align(16))]
struct Mark {
    /// 1 while a thread owns the mark, 0 while free (and in a fork child).
    owner: AtomicU64,
    /// The owning thread's tag (the address of its [`Stream`], distinct for every live
    /// thread) once its state is seeded in this process image; 0 otherwise. In a fork child
    /// it reads 0, or another thread's tag if a thread the child started has taken the mark
    /// since: either way not the forking thread's, which then seeds afresh on another mark.
    tag: AtomicU64,
}

// SAFETY: all zero is a free, unseeded mark (atomics).
unsafe impl ZeroValid for Mark {}

/// The threads' marks: levels of 64, 128, ..., each mapped (never allocated) when the ones
/// before are taken. A fork child uses its parent's, which it finds zeroed.
static MARKS: Levels<Mark> = Levels::new_unmapped(64, false);

/// [`Stream::mark`] when the calling thread checks the fork generation on every draw instead:
/// the OS cannot wipe memory in a fork child, every mark is taken, or the thread is ending.
const FALLBACK: usize = 1;

/// The calling thread's one-liner stream. `const`-initialised with no destructor, so it
/// works during and after the thread's other thread-locals are destroyed.
struct Stream {
    /// The wyrand state.
    state: Cell<u64>,
    /// The thread's [`Mark`]: null until its first draw, [`FALLBACK`] where there is none.
    mark: Cell<*const Mark>,
    /// [`FALLBACK`] only: [`scalrand_os::fork::generation`] when `state` was seeded;
    /// `usize::MAX` (which the generation never reaches in practice) until then.
    generation: Cell<usize>,
}

/// Gives the calling thread's mark back when the thread ends: the destructor of a pthread key
/// whose value, set on the thread's first draw, is the mark. A key's value for one of the
/// first 32 keys lives in the thread's own descriptor, so setting it allocates nothing (a
/// thread-local with a destructor would: the C library's thread-exit list). The C library
/// runs key destructors after the thread-locals' own; a draw after that (none is expected)
/// checks the fork generation.
#[cfg(not(unix))]
mod release {
    use super::Mark;

    /// No marks here (no fork): never called with one.
    pub(super) fn at_exit(_: &'static Mark) -> bool {
        false
    }
}

#[cfg(unix)]
mod release {
    use core::sync::atomic::{AtomicUsize, Ordering};

    use super::{FALLBACK, Mark, STREAM};

    /// The key, plus 1 (0: not made yet).
    static KEY: AtomicUsize = AtomicUsize::new(0);

    /// The key, made on first use (no allocation in the C library: a compare-and-swap over
    /// its table of keys); `None` if the C library has no key left.
    fn key() -> Option<libc::pthread_key_t> {
        let k = KEY.load(Ordering::Acquire);
        if k != 0 {
            return libc::pthread_key_t::try_from(k - 1).ok();
        }
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is a valid place for the new key; `give_back` is an `extern "C"` fn
        // that takes the value set below.
        if unsafe { libc::pthread_key_create(&raw mut key, Some(give_back)) } != 0 {
            return None;
        }
        let mine = usize::try_from(key).ok()?.wrapping_add(1);
        match KEY.compare_exchange(0, mine, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Some(key),
            Err(other) => {
                // Another thread made one first: this one goes.
                // SAFETY: the key just made, never set.
                unsafe { libc::pthread_key_delete(key) };
                libc::pthread_key_t::try_from(other - 1).ok()
            }
        }
    }

    /// Gives `mark` back when the calling thread ends; `false` if that cannot be arranged
    /// (the caller then gives the mark back itself and takes the fallback).
    pub(super) fn at_exit(mark: &'static Mark) -> bool {
        key().is_some_and(|k| {
            // SAFETY: a key this process made; the value is a mark of the static `MARKS`.
            unsafe { libc::pthread_setspecific(k, core::ptr::from_ref(mark).cast()) == 0 }
        })
    }

    /// The key's destructor: the thread's mark, zeroed and given back.
    extern "C" fn give_back(p: *mut libc::c_void) {
        if p.is_null() {
            return;
        }
        // SAFETY: the only values set are marks of the static `MARKS` (never unmapped).
        let m = unsafe { &*p.cast::<Mark>() };
        let _ = STREAM.try_with(|s| {
            s.generation.set(usize::MAX);
            s.mark.set(FALLBACK as *const Mark);
        });
        m.tag.store(0, Ordering::Relaxed);
        m.owner.store(0, Ordering::Release);
    }
}

std::thread_local! {
    static STREAM: Stream = const {
        Stream {
            state: Cell::new(0),
            mark: Cell::new(core::ptr::null()),
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
    STREAM.with(|s| {
        let mark = s.mark.get();
        let tag = core::ptr::from_ref(s) as u64;
        // SAFETY: a mark past `FALLBACK` is one of `MARKS` (a static, never unmapped).
        if mark as usize <= FALLBACK || unsafe { &*mark }.tag.load(Ordering::Relaxed) != tag {
            prepare();
        }
        let mut w = WyRand::from_state(s.state.get());
        let out = f(&mut w);
        s.state.set(w.state());
        out
    })
}

/// Everything but the common draw, in one place (so that the compiler sees a single path
/// around a draw, and keeps the state in a register from draw to draw): the thread's first
/// draw, a fork child's (its mark zeroed), and every draw of the fallback, which compares the
/// fork generation. No allocation and no lock: a new level of marks is an `mmap` and the
/// mark's release at thread exit a pthread key's value (see `release`), so a signal handler's
/// draw, or one in the child of a raw `SYS_fork` of a multi-threaded program (whose allocator
/// lock another thread may have held at the fork), is safe.
#[cold]
#[inline(never)]
fn prepare() {
    let (mark, tag) = STREAM.with(|s| (s.mark.get(), core::ptr::from_ref(s) as u64));
    if mark as usize == FALLBACK {
        let generation = scalrand_os::fork::generation();
        if STREAM.with(|s| s.generation.get()) != generation {
            let state = os_seed(stack_salt());
            STREAM.with(|s| {
                s.state.set(state);
                s.generation.set(generation);
            });
        }
        return;
    }
    let mark = if mark.is_null() {
        // The thread's first draw.
        claim_mark().filter(|m| {
            let kept = release::at_exit(m);
            if !kept {
                m.owner.store(0, Ordering::Release);
            }
            kept
        })
    } else {
        // SAFETY: one of `MARKS`.
        let m = unsafe { &*mark };
        // Its tag is not this thread's: a fork child. Free there (zeroed), it is taken again;
        // taken by a thread the child started, another one.
        if m.owner
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            Some(m)
        } else {
            claim_mark().filter(|m| {
                let kept = release::at_exit(m);
                if !kept {
                    m.owner.store(0, Ordering::Release);
                }
                kept
            })
        }
    };
    let state = os_seed(tag);
    let generation = scalrand_os::fork::generation();
    let mark = match mark {
        Some(m) => {
            m.tag.store(tag, Ordering::Relaxed);
            core::ptr::from_ref(m)
        }
        None => FALLBACK as *const Mark,
    };
    STREAM.with(|s| {
        s.mark.set(mark);
        s.state.set(state);
        s.generation.set(generation);
    });
}

/// An address of the calling thread's stack, to salt a seed the OS refused.
#[inline(never)]
fn stack_salt() -> u64 {
    let here = 0u8;
    core::hint::black_box(core::ptr::from_ref(&here)) as u64
}

/// A free mark for the calling thread, taken; `None` where the OS cannot wipe memory in a
/// fork child (the fallback serves) or every mark is taken. Marks are taken from the levels
/// already mapped first; a new level is an `mmap`.
fn claim_mark() -> Option<&'static Mark> {
    if scalrand_os::fork::detection() != scalrand_os::fork::Detection::WipeOnFork {
        return None;
    }
    for i in MARKS.search_order() {
        let Some(level) = MARKS.level(i) else {
            continue;
        };
        // A level the OS did not wipe (a failed mapping fell back to the heap) is no use.
        if !level.wipes_on_fork() {
            continue;
        }
        for m in level.iter() {
            if m.owner.load(Ordering::Relaxed) == 0
                && m.owner
                    .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return Some(m);
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

/// Marks taken now, over every mapped level (the tests' view of thread exits giving theirs
/// back).
#[cfg(test)]
pub(super) fn marks_taken() -> usize {
    (0..scalrand_os::scratch::LEVELS)
        .filter_map(|i| MARKS.ready(i))
        .flat_map(|l| l.iter())
        .filter(|m| m.owner.load(Ordering::Relaxed) != 0)
        .count()
}
