//! Where the words come from: the calling thread's wyrand state that the one-liners draw from
//! (and [`seed`] and [`get_seed`] act on), seeded from the OS and checked against the thread's
//! mark in wipe-on-fork memory (or the fork generation) before it is used; and the lazily built per-CPU [`global`] generator, which [`with`]
//! and [`fill_u64`] use.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpuWyRand, WyRand};
use scalrand_os::global::Global;
use scalrand_os::wipe::StaticWipe;

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

/// Bytes of the threads' marks: a [`StaticWipe`], so a fork child finds them zero. 128 KiB
/// of a `static` (address space only: a page takes memory once a mark on it is written), so
/// that whole pages of up to 64 KiB fit inside; see [`MARKS_MAX`] for how many are used.
const MARK_BYTES: usize = 128 * 1024;

/// Threads that hold a mark at once, at most; the next ones take the fallback. Their owner
/// bits are [`OWNED`].
const MARKS_MAX: usize = 8192;

/// The value of a thread's mark while its state is seeded in this process image.
const ARMED: u8 = 1;

/// One byte per thread, [`ARMED`] once the thread's state is seeded in this process image;
/// the kernel zeroes them in a fork child. A `static` (not memory reached through a pointer),
/// so the compiler knows that writing the thread-local state leaves them alone: in a run of
/// inlined draws it keeps the state in a register and checks the mark once. Byte 0 is never
/// written: a thread without a mark (before its first draw, and on the fallback) points
/// there, and its check fails.
static MARKS: StaticWipe<MARK_BYTES> = StaticWipe::new();

/// Which marks are taken: bit `k % 64` of word `k / 64` for the mark at [`mark_range`]`.start +
/// k`. Ordinary memory, so a fork child inherits it: the forking thread still owns its mark
/// there, and no thread the child starts takes it (the marks of the parent's other threads,
/// which do not exist in the child, stay taken in the child).
static OWNED: [AtomicU64; MARKS_MAX / 64] = [const { AtomicU64::new(0) }; MARKS_MAX / 64];

/// The offsets of the usable marks (inside the wiped pages, never byte 0, at most
/// [`MARKS_MAX`]); `None` where no fork child is known to find them zero (the pid path,
/// Apple's atfork handlers): every thread then takes the fallback.
fn mark_range() -> Option<core::ops::Range<usize>> {
    let r = MARKS.wiped()?;
    let start = r.start.max(1);
    let end = r.end.min(start + MARKS_MAX);
    (start < end).then_some(start..end)
}

/// [`Stream::mode`]: the thread has not drawn yet.
const FIRST_DRAW: u8 = 0;
/// [`Stream::mode`]: the thread owns the mark at [`Stream::mark`].
pub(super) const MARKED: u8 = 1;
/// [`Stream::mode`]: the thread compares the fork generation on every draw instead: no
/// mark is left, none can be wiped here, or the thread is ending.
pub(super) const FALLBACK: u8 = 2;

/// The calling thread's one-liner stream. `const`-initialised with no destructor, so it
/// works during and after the thread's other thread-locals are destroyed.
struct Stream {
    /// The wyrand state.
    state: Cell<u64>,
    /// The offset of the thread's mark in [`MARKS`] (inside [`mark_range`], owned by this
    /// thread) while `mode` is [`MARKED`]; 0 otherwise. Always below `MARK_BYTES`.
    mark: Cell<usize>,
    /// [`FIRST_DRAW`], [`MARKED`] or [`FALLBACK`].
    mode: Cell<u8>,
    /// [`FALLBACK`] only: [`scalrand_os::fork::generation`] when `state` was seeded;
    /// `usize::MAX` (which the generation never reaches in practice) until then.
    generation: Cell<usize>,
}

/// Gives the calling thread's mark back when the thread ends, where no fork exists (not
/// Unix): a thread-local destructor. Where thread-local destructors never run (WebAssembly
/// without threads, which has one thread) the mark simply stays taken.
#[cfg(not(unix))]
mod release {
    use core::cell::Cell;

    use super::end_of_thread;

    /// Gives its mark back when the thread's thread-locals are destroyed. No fork and no
    /// asynchronous signal exist here, so a thread-local destructor (whose registration may
    /// allocate) is safe to use.
    struct Release(Cell<usize>);

    impl Drop for Release {
        fn drop(&mut self) {
            end_of_thread(self.0.get());
        }
    }

    std::thread_local! {
        static RELEASE: Release = const { Release(Cell::new(0)) };
    }

    /// Gives the mark at offset `mark` back when the calling thread ends; `false` if that
    /// cannot be arranged (the thread-locals are being destroyed already).
    pub(super) fn at_exit(mark: usize) -> bool {
        RELEASE.try_with(|r| r.0.set(mark)).is_ok()
    }
}

/// Gives the calling thread's mark back when the thread ends: the destructor of a pthread key
/// whose value, set on the thread's first draw, is the mark ([`ExitKey`], which allocates
/// nothing, or refuses; a thread-local with a destructor would allocate). Where it refuses
/// (FreeBSD, OpenBSD, a glibc key past the 32nd), threads take the fallback instead. The C
/// library runs key destructors after the thread-locals' own; a draw after that (none is
/// expected) takes the fallback. A library holding this key must not be unloaded (`dlclose`)
/// while threads that drew from it live: their exit would call its destructor. The first
/// thread to draw makes the key (with signals blocked, like the rest of its first draw); with
/// musl that takes musl's key lock, so the one case left that can wait is a raw `SYS_fork`
/// child of a musl program whose first draw comes while, in the parent, another thread was
/// making the key.
///
/// [`ExitKey`]: scalrand_os::exit::ExitKey
#[cfg(unix)]
mod release {
    use core::num::NonZeroUsize;

    use scalrand_os::exit::ExitKey;

    use super::end_of_thread;

    static KEY: ExitKey = ExitKey::new(give_back);

    /// Gives the mark at offset `mark` back when the calling thread ends; `false` if that
    /// cannot be arranged (the caller then gives the mark back itself and takes the
    /// fallback).
    pub(super) fn at_exit(mark: usize) -> bool {
        NonZeroUsize::new(mark).is_some_and(|m| KEY.set(m))
    }

    /// The key's destructor, on the ending thread: its mark, zeroed and given back.
    extern "C" fn give_back(p: *mut core::ffi::c_void) {
        end_of_thread(p as usize);
    }
}

/// The ending thread's mark (its offset, 0 for none), zeroed and given back; the thread's
/// later draws (other thread-locals' destructors may draw) take the fallback. Runs on the
/// ending thread, which owns the mark until `give_back_mark` releases it.
fn end_of_thread(mark: usize) {
    if mark == 0 {
        return;
    }
    let _ = STREAM.try_with(|s| {
        s.generation.set(usize::MAX);
        s.mark.set(0);
        s.mode.set(FALLBACK);
    });
    // SAFETY: an offset below `MARK_BYTES` (the value `release::at_exit` was given) that the
    // calling thread owns until the release below.
    unsafe { MARKS.set(mark, 0) };
    give_back_mark(mark);
}

std::thread_local! {
    static STREAM: Stream = const {
        Stream {
            state: Cell::new(0),
            mark: Cell::new(0),
            mode: Cell::new(FIRST_DRAW),
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
///
/// The check is the thread's mark; when it is not [`ARMED`], [`prepare`] gives the state to
/// draw from, and, for a thread with a mark, the mark, which is armed *here*, where the
/// compiler sees it: later draws of the same inlined run then know the mark is armed and
/// skip their checks, as fastrand's first access of its thread-local makes the later ones
/// free.
#[inline]
pub(super) fn with_thread<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    let Some(s) = stream() else {
        return fallback(f);
    };
    // SAFETY: `mark` is 0 (never written) or this thread's own mark, below `MARK_BYTES`.
    if unsafe { MARKS.get(s.mark.get()) } != ARMED {
        // Until the mark reads armed *after* the state was seeded: a fork (from a signal
        // handler) between `prepare`'s arming and this check leaves the child's mark zero,
        // and the child seeds again.
        loop {
            if s.mode.get() == FALLBACK || prepare().is_err() {
                return fallback(f);
            }
            // SAFETY: as above.
            if unsafe { MARKS.get(s.mark.get()) } == ARMED {
                break;
            }
        }
    }
    let mut w = WyRand::from_state(opaque(s.state.get()));
    let out = f(&mut w);
    s.state.set(w.state());
    out
}

/// `x`, through an empty `asm!` block the compiler cannot see into (no instruction, no
/// memory): in a loop of inlined draws the state then is not an induction variable, which
/// the loop vectorizer would otherwise spread over vector registers, moving each word out
/// again for its scalar 128-bit multiply (measured at about 0.65× the scalar loop).
#[inline(always)]
fn opaque(x: u64) -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let mut x = x;
        // SAFETY: an empty block: it reads and writes nothing but leaves `x`'s register as it
        // was.
        unsafe {
            core::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        x
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    x
}

/// The calling thread's [`Stream`]. Through `LocalKey::try_with` with a function (not a
/// closure of this crate): both inline wherever a draw is compiled, where `LocalKey::with`,
/// which is not marked inline, may sit in another codegen unit of the caller's crate and keep
/// the compiler from seeing the draw whole. `None` only where thread-locals are not native
/// and this one was freed at thread exit (a `const` thread-local without a destructor is
/// never freed where they are): [`fallback`] then draws from a state of its own.
#[inline(always)]
fn stream() -> Option<&'static Stream> {
    let p = STREAM.try_with(core::ptr::from_ref::<Stream>).ok()?;
    // SAFETY: the calling thread's stream lives as long as the thread (`const`, no
    // destructor); the reference is only used by the draw that asked for it, on this
    // thread, and never leaves this module.
    Some(unsafe { &*p })
}

/// The thread's first draw and a fork child's (its mark zeroed): the mark is armed first,
/// then the state seeded from the OS, so that a fork landing between the two (from a signal
/// handler) leaves a child whose mark reads zero when the caller checks it again. `Err` when
/// the thread takes the fallback (no mark left, none wiped here, or its release at thread
/// exit cannot be arranged). A first draw claims its mark with signals blocked (once per
/// thread), so that a signal handler that draws meanwhile cannot claim a second one. No
/// allocation and no lock (see `release` for the one exception, which takes the fallback):
/// a signal handler's draw, or one in the child of a raw `SYS_fork` of a multi-threaded
/// program (whose allocator lock another thread may have held at the fork), is safe.
#[cold]
#[inline(never)]
fn prepare() -> Result<(), ()> {
    let (mode, mark, tag) =
        STREAM.with(|s| (s.mode.get(), s.mark.get(), core::ptr::from_ref(s) as u64));
    let mark = match mode {
        // A fork child (the kernel zeroed the mark): the thread still owns it (`OWNED` is
        // copied), so it seeds afresh and arms it again.
        MARKED => mark,
        FIRST_DRAW => scalrand_os::fork::signals_blocked(first_mark).ok_or(())?,
        _ => return Err(()),
    };
    // SAFETY: the calling thread owns `mark`, an offset below `MARK_BYTES`.
    unsafe { MARKS.set(mark, ARMED) };
    let state = os_seed(tag);
    STREAM.with(|s| s.state.set(state));
    #[cfg(test)]
    test_hook::after_seed();
    Ok(())
}

/// The calling thread's first mark (signals blocked): claimed, its release at thread exit
/// arranged, and recorded in the thread's stream; `None` (the stream then on the fallback)
/// where none can be had.
fn first_mark() -> Option<usize> {
    let mark = claim_mark().filter(|&m| {
        let kept = release::at_exit(m);
        if !kept {
            give_back_mark(m);
        }
        kept
    });
    STREAM.with(|s| match mark {
        Some(m) => {
            s.mark.set(m);
            s.mode.set(MARKED);
        }
        None => s.mode.set(FALLBACK),
    });
    mark
}

/// A draw on the fallback: `f` on the thread's state, reseeded from the OS first where it was
/// seeded in another fork generation (or never). Out of line, so that the inlined draw's
/// fast path is all the caller's loop holds.
#[cold]
#[inline(never)]
fn fallback<T>(f: impl FnOnce(&mut WyRand) -> T) -> T {
    let generation = scalrand_os::fork::generation();
    let Some(s) = stream() else {
        // No stream (a target whose thread-locals are freed at thread exit, after it):
        // a state of its own for this draw.
        return f(&mut WyRand::from_state(os_seed(stack_salt())));
    };
    s.mode.set(FALLBACK);
    if s.generation.get() != generation {
        s.state.set(os_seed(stack_salt()));
        s.generation.set(generation);
    }
    let mut w = WyRand::from_state(s.state.get());
    let out = f(&mut w);
    s.state.set(w.state());
    out
}

/// An address of the calling thread's stack, to salt a seed the OS refused.
#[inline(never)]
fn stack_salt() -> u64 {
    let here = 0u8;
    core::hint::black_box(core::ptr::from_ref(&here)) as u64
}

/// A free mark for the calling thread, taken (its offset in [`MARKS`]); `None` where no
/// mark is wiped in a fork child here, or every mark is taken.
fn claim_mark() -> Option<usize> {
    let range = mark_range()?;
    for (w, word) in OWNED.iter().enumerate() {
        let mut bits = word.load(Ordering::Relaxed);
        loop {
            let k = (!bits).trailing_zeros() as usize;
            let mark = range.start + w * 64 + k;
            if k == 64 {
                break;
            }
            if mark >= range.end {
                return None;
            }
            match word.compare_exchange_weak(
                bits,
                bits | 1 << k,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(mark),
                Err(now) => bits = now,
            }
        }
    }
    None
}

/// Releases the mark at offset `mark` (taken by [`claim_mark`]): the next thread to take it
/// sees every write its last owner made.
fn give_back_mark(mark: usize) {
    if let Some(range) = mark_range() {
        let k = mark - range.start;
        OWNED[k / 64].fetch_and(!(1 << (k % 64)), Ordering::Release);
    }
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

/// Marks taken now (the tests' view of thread exits giving theirs back).
#[cfg(test)]
pub(super) fn marks_taken() -> usize {
    OWNED
        .iter()
        .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
        .sum()
}

/// The calling thread's [`Stream::mode`] (tests).
#[cfg(test)]
pub(super) fn thread_mode() -> u8 {
    STREAM.with(|s| s.mode.get())
}

/// Takes every free mark and returns them (tests: what threads find when all are taken).
#[cfg(test)]
pub(super) fn take_every_mark() -> std::vec::Vec<usize> {
    core::iter::from_fn(claim_mark).collect()
}

/// Gives back marks [`take_every_mark`] took.
#[cfg(test)]
pub(super) fn give_marks_back(marks: &[usize]) {
    for &m in marks {
        give_back_mark(m);
    }
}

/// A fork at the one instant a signal handler's fork is hardest on a first draw: after the
/// state is seeded and the mark armed, before the caller checks the mark (tests).
#[cfg(all(test, target_os = "linux"))]
pub(super) mod test_hook {
    use core::cell::Cell;

    std::thread_local! {
        /// Whether the calling thread's next seeding forks.
        static ARMED: Cell<bool> = const { Cell::new(false) };
        /// What that fork returned (0 in the child), or -1 before it.
        static FORKED: Cell<libc::pid_t> = const { Cell::new(-1) };
    }

    /// Makes the calling thread's next seeding fork.
    pub(in crate::fast) fn fork_after_the_next_seed() {
        ARMED.with(|a| a.set(true));
    }

    /// What the fork returned: 0 in the child, the child's pid in the parent, -1 if none
    /// happened.
    pub(in crate::fast) fn forked() -> libc::pid_t {
        FORKED.with(Cell::get)
    }

    pub(super) fn after_seed() {
        if ARMED.with(|a| a.replace(false)) {
            // SAFETY: the child only draws, writes to a pipe and `_exit`s (the test's code).
            let pid = unsafe { libc::fork() };
            FORKED.with(|f| f.set(pid));
        }
    }
}

#[cfg(all(test, not(target_os = "linux")))]
mod test_hook {
    pub(super) fn after_seed() {}
}
