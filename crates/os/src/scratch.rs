//! [`Scratch`]: frames of wipe-on-fork memory for the secrets of a call in progress.
//!
//! A generator that derives a one-use key under a lock and then generates its output after
//! unlocking (Linux's `crng` bulk path, FreeBSD's concurrent Fortuna reads) holds that key,
//! and whatever the cipher expands it to, for as long as it generates. A fork child of a
//! multi-threaded program inherits a copy of every thread's stack, so such a key in a stack
//! local is readable by a child forked from *another* thread at that moment, and it
//! regenerates everything the parent's read writes after the fork. Keys held in a
//! `Scratch` frame are in [`WipeOnFork`] memory: the kernel hands the child zeros.
//!
//! A frame is taken with one compare-exchange (the frame of a caller's hint first, such as its
//! CPU number, so that readers on different CPUs do not meet; past a busy one, from a place
//! that the page of the caller's stack moves, so that the threads of one CPU do not all scan
//! the same frames), is all zero when handed out, and is zeroed again before it is released. When every frame is busy (more reads in flight than frames:
//! many preempted readers), a new level of twice as many frames is mapped, up to [`LEVELS`]
//! levels; a search starts at the highest mapped level, where free frames are likeliest, and
//! reads a busy flag before it tries to take it. Past that, or where the OS offers no wipe-on-fork memory
//! ([`Scratch::wipes_on_fork`]), the frame is ordinary memory: a child then finds the
//! secrets of the calls that were in flight at the fork, and nothing else (frames are zero
//! while free).
//!
//! Async-signal-safe where [`WipeOnFork::new`] maps memory of its own (Linux, Android,
//! FreeBSD, OpenBSD with `std`): a signal handler that interrupts a call which holds a frame
//! takes another one, and a new level is an `mmap`, never an allocator call (the allocator's
//! lock may be held by the very code the handler interrupted). A level that another caller
//! is mapping at that moment is passed by, never waited for. Elsewhere a new level comes
//! from the heap.

// Plain atomics, also under loom: frames are not part of what the loom models check.
use crate::pad::CachePadded;
use crate::wipe::{WipeOnFork, ZeroValid};
use core::cell::UnsafeCell;
use core::fmt;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Levels of frames at most; level `i` holds `base << i` frames.
pub const LEVELS: usize = 8;

/// One frame: a busy flag and the value, on cache lines of their own.
struct Frame<T> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: a zero `AtomicBool` is `false` (free); `T` is zero-valid, and `UnsafeCell<T>` has
// `T`'s layout.
unsafe impl<T: ZeroValid> ZeroValid for Frame<T> {}

/// Frames of wipe-on-fork memory, each holding a `T` for the duration of one call (see the
/// module docs). `T`'s all-zero value is what a frame holds when it is handed out.
pub struct Scratch<T: ZeroValid> {
    levels: Levels<CachePadded<Frame<T>>>,
}

/// Up to [`LEVELS`] arrays of wipe-on-fork memory, level `i` holding `base << i` elements,
/// each mapped the first time it is asked for and kept until `drop`: the growing storage under
/// [`Scratch`], public for pools of frames whose ownership outlives one call (a frame taken by
/// one thread and given back by another), which keep their own busy marks in `T`.
///
/// Async-signal-safe where [`WipeOnFork::new`] maps memory of its own (see the module docs): a
/// level that another caller is mapping at that moment is passed by, never waited for.
pub struct Levels<T: ZeroValid> {
    base: usize,
    heap: bool,
    levels: [Level<T>; LEVELS],
}

/// One level: [`EMPTY`], [`MAPPING`] (one caller is mapping it; everyone else passes it by)
/// or [`READY`] (`mem` is written and stays until `drop`).
struct Level<T: ZeroValid> {
    state: AtomicU8,
    mem: UnsafeCell<MaybeUninit<WipeOnFork<T>>>,
}

const EMPTY: u8 = 0;
const MAPPING: u8 = 1;
const READY: u8 = 2;

// SAFETY: a level's `mem` is written once, by the one caller that moved its state from EMPTY
// to MAPPING, and read only after the state is READY (release/acquire); after that it is only
// shared (`&WipeOnFork<T>`, which gives `&[T]`), so `T: Sync` suffices for sharing and
// `T: Send` for the drop on another thread.
unsafe impl<T: ZeroValid + Send + Sync> Sync for Levels<T> {}
// SAFETY: `Levels` owns its elements like a `Vec` of boxes.
unsafe impl<T: ZeroValid + Send> Send for Levels<T> {}

// SAFETY: a frame's value is reached only by the one thread that set its busy flag (acquire)
// until it clears it (release); `T: Send` lets that thread be any thread. The levels under it
// are shared as `Levels` are.
unsafe impl<T: ZeroValid + Send> Sync for Scratch<T> {}
// SAFETY: `Scratch` owns its frames like a `Vec` of boxes.
unsafe impl<T: ZeroValid + Send> Send for Scratch<T> {}

impl<T: ZeroValid> fmt::Debug for Scratch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Frames hold secrets: never printed.
        f.debug_struct("Scratch")
            .field("base", &self.levels.base)
            .field("wipes_on_fork", &self.wipes_on_fork())
            .finish_non_exhaustive()
    }
}

impl<T: ZeroValid> fmt::Debug for Levels<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Elements may hold secrets: never printed.
        f.debug_struct("Levels")
            .field("base", &self.base)
            .field("wipes_on_fork", &self.wipes_on_fork())
            .finish_non_exhaustive()
    }
}

impl<T: ZeroValid> Levels<T> {
    /// Levels of `base << i` elements (`base` at least 1), each element initialised by
    /// `init` when its level is mapped; level 0 is mapped now. On the ordinary heap when
    /// `heap` (never wiped: the fallback, for tests).
    pub fn new(base: usize, heap: bool) -> Self
    where
        T: ZeroValid,
    {
        let s = Self {
            base: base.max(1),
            heap,
            levels: core::array::from_fn(|_| Level {
                state: AtomicU8::new(EMPTY),
                mem: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        };
        s.level(0);
        s
    }

    /// [`new`](Self::new) with no level mapped yet: `const`, for a `static`. The first
    /// [`level`](Self::level) call maps level 0.
    #[must_use]
    pub const fn new_unmapped(base: usize, heap: bool) -> Self {
        Self {
            base: if base == 0 { 1 } else { base },
            heap,
            levels: [const {
                Level {
                    state: AtomicU8::new(EMPTY),
                    mem: UnsafeCell::new(MaybeUninit::uninit()),
                }
            }; LEVELS],
        }
    }

    /// Whether a fork child receives the elements zeroed (false where the OS cannot do it).
    pub fn wipes_on_fork(&self) -> bool {
        self.ready(0).is_some_and(|l| l.wipes_on_fork())
    }

    /// Level indices in the order a search for a free element takes them: the highest mapped
    /// level first (the largest, where free elements are likeliest once the lower ones have
    /// filled with the elements of calls in flight: many preempted threads), down to level 0,
    /// then the levels not mapped yet, upward.
    pub fn search_order(&self) -> impl Iterator<Item = usize> {
        let top = (0..LEVELS)
            .rev()
            .find(|&i| self.ready(i).is_some())
            .unwrap_or(0);
        (0..=top).rev().chain(top + 1..LEVELS)
    }

    /// Level `i` (below [`LEVELS`]) if it is mapped.
    #[inline]
    pub fn ready(&self, i: usize) -> Option<&WipeOnFork<T>> {
        let l = self.levels.get(i)?;
        if l.state.load(Ordering::Acquire) == READY {
            // SAFETY: READY is stored (release) only after `mem` was written, and `mem` is
            // dropped only in `drop`, which has `&mut self`.
            Some(unsafe { (*l.mem.get()).assume_init_ref() })
        } else {
            None
        }
    }

    /// Level `i` (below [`LEVELS`]), mapped on first use with every element all zero; `None`
    /// while another caller maps it. That caller may be the very call a signal handler
    /// interrupted: waiting for it would never end, so the level is passed by (the next one
    /// serves).
    ///
    /// Mapping allocates nothing where [`WipeOnFork::new`] maps memory of its own (no
    /// allocator lock, which the interrupted code may hold): only `mmap` and `madvise`,
    /// both async-signal-safe.
    pub fn level(&self, i: usize) -> Option<&WipeOnFork<T>> {
        if let Some(l) = self.ready(i) {
            return Some(l);
        }
        let l = self.levels.get(i)?;
        if l.state
            .compare_exchange(EMPTY, MAPPING, Ordering::Acquire, Ordering::Acquire)
            .is_err()
        {
            return self.ready(i);
        }
        let len = self.base << i;
        let mem = if self.heap {
            WipeOnFork::on_heap(len, |_| zeroed::<T>())
        } else {
            WipeOnFork::zeroed(len)
        };
        // SAFETY: the EMPTY -> MAPPING exchange above made this caller the only writer of
        // `mem`, and no reader looks at it before READY.
        unsafe { (*l.mem.get()).write(mem) };
        l.state.store(READY, Ordering::Release);
        self.ready(i)
    }
}

impl<T: ZeroValid> Drop for Levels<T> {
    fn drop(&mut self) {
        for l in &mut self.levels {
            if *l.state.get_mut() == READY {
                // SAFETY: READY means `mem` was written; it is dropped once, here.
                unsafe { l.mem.get_mut().assume_init_drop() };
            }
        }
    }
}

impl<T: ZeroValid> Scratch<T> {
    /// `base` frames (at least 1) in wipe-on-fork memory where the OS offers it; more are
    /// mapped when they are all busy.
    pub fn new(base: usize) -> Self {
        Self {
            levels: Levels::new(base, false),
        }
    }

    /// [`new`](Self::new) with no frame mapped yet: `const`, for a `static`; the first call
    /// maps the first level.
    #[must_use]
    pub const fn new_unmapped(base: usize) -> Self {
        Self {
            levels: Levels::new_unmapped(base, false),
        }
    }

    /// As [`new`](Self::new), on the ordinary heap (never wiped): the fallback, for tests.
    pub fn on_heap(base: usize) -> Self {
        Self {
            levels: Levels::new(base, true),
        }
    }

    /// Whether a fork child receives the frames zeroed (false where the OS cannot do it).
    pub fn wipes_on_fork(&self) -> bool {
        self.levels.wipes_on_fork()
    }

    /// Runs `f` on a free frame (all zero when `f` gets it) and zeroes the frame afterwards,
    /// also when `f` panics and unwinds. `hint` picks where the search starts (a CPU number
    /// keeps readers on different CPUs apart).
    #[inline]
    pub fn with<R>(&self, hint: usize, f: impl FnOnce(&mut T) -> R) -> R {
        match self.take(hint) {
            Some(frame) => run_on(frame, f),
            None => on_stack(f),
        }
    }

    /// As [`with`](Self::with) where the frames are mappings of their own
    /// ([`OWN_MAPPINGS`](crate::wipe::OWN_MAPPINGS): wiped on fork, mapped without the
    /// allocator); elsewhere `f` runs on a frame on this thread's stack, zeroed before it is
    /// left. For a cipher's working state: where the frames would come from the heap, a fork
    /// child copies them as it copies the stack, and the first call would allocate, perhaps
    /// from a signal handler that interrupted the allocator.
    #[inline]
    pub fn with_own_or_stack<R>(&self, hint: usize, f: impl FnOnce(&mut T) -> R) -> R {
        if crate::wipe::OWN_MAPPINGS {
            self.with(hint, f)
        } else {
            on_stack_frame(f)
        }
    }

    /// As [`with`](Self::with), but `None` (and `f` not run) when no frame is free and no level
    /// can be mapped, instead of a frame on the stack: for a caller with a way of its own that
    /// needs no memory.
    #[inline]
    pub fn try_with<R>(&self, hint: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.take(hint).map(|frame| run_on(frame, f))
    }

    /// Marks a free frame busy and returns it, or `None` when every level is busy or cannot be
    /// mapped.
    #[inline]
    fn take(&self, hint: usize) -> Option<&Frame<T>> {
        // The hint's own frame first (with one thread per CPU and the CPU number as the hint,
        // each CPU keeps to its own frame); past a busy one, threads that pass the same hint
        // (the readers of one CPU) go on from different places: the hint mixed with the page
        // of this thread's stack.
        let here = 0u8;
        let stack_page = core::ptr::from_ref(&here) as usize >> 12;
        let mixed = hint.wrapping_add(stack_page.wrapping_mul(0x9e37_79b9) >> 8);
        for i in self.levels.search_order() {
            let Some(level) = self.levels.level(i) else {
                continue;
            };
            let n = level.len();
            let start = mixed % n;
            for k in 0..=n {
                let j = if k == 0 {
                    hint % n
                } else if start + k - 1 < n {
                    start + k - 1
                } else {
                    start + k - 1 - n
                };
                let frame = &level[j];
                // A load first: a busy frame costs a shared read, not a locked write.
                if !frame.busy.load(Ordering::Relaxed)
                    && frame
                        .busy
                        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return Some(frame);
                }
            }
        }
        None
    }
}

/// Runs `f` on `frame`, which the caller marked busy, then zeroes it and marks it free.
#[inline]
fn run_on<T: ZeroValid, R>(frame: &Frame<T>, f: impl FnOnce(&mut T) -> R) -> R {
    /// Zeroes the frame and frees it when dropped: after `f` returns, and if `f` unwinds (a
    /// frame left busy would keep what `f` wrote for the life of the process).
    struct Release<'a, T: ZeroValid>(&'a Frame<T>);
    impl<T: ZeroValid> Drop for Release<'_, T> {
        fn drop(&mut self) {
            // SAFETY: the busy flag, set by this thread, still gives it the only access to
            // the value, and `f`'s borrow of it has ended; all-zero is a valid `T`
            // (`ZeroValid`). The stores are to shared memory read again, so they are not dead.
            unsafe { core::ptr::write_bytes(self.0.value.get(), 0, 1) };
            self.0.busy.store(false, Ordering::Release);
        }
    }
    let release = Release(frame);
    // SAFETY: the busy flag, set by this thread, gives it the only access to the value until
    // `release` clears it.
    let r = f(unsafe { &mut *frame.value.get() });
    drop(release);
    r
}

/// Every level busy: `f` on a frame on this thread's stack, zeroed before it is left. Out of
/// line, so that the frame of [`Scratch::with`] (and of every caller it is inlined into) does
/// not reserve room for a `T` it almost never uses: that room would push every call made
/// under it deeper, and the stack wipe after a secret-handling call would have to reach
/// further.
#[cold]
#[inline(never)]
fn on_stack<T: ZeroValid, R>(f: impl FnOnce(&mut T) -> R) -> R {
    on_stack_frame(f)
}

/// `f` on a frame on this thread's stack, zeroed before it is left: [`on_stack`]'s work, and
/// the only path of [`Scratch::with_own_or_stack`] where the OS maps no wipe-on-fork memory
/// of its own (so not marked cold). Out of line for the same reason as [`on_stack`].
#[inline(never)]
fn on_stack_frame<T: ZeroValid, R>(f: impl FnOnce(&mut T) -> R) -> R {
    /// Zeroes the frame when dropped: after `f` returns, and if it unwinds.
    struct Wiped<T: ZeroValid>(T);
    impl<T: ZeroValid> Drop for Wiped<T> {
        fn drop(&mut self) {
            crate::wipe::zero(&mut self.0);
        }
    }
    let mut v = Wiped(zeroed::<T>());
    f(&mut v.0)
}

impl<T: ZeroValid> Scratch<T> {
    /// As [`with`](Self::with), but `None` when the process forked while `f` ran. In the
    /// child of a fork made by a signal handler that interrupted `f` on this very thread, the
    /// kernel zeroed the frame under `f`, so what `f` produced rests on zeros: the caller
    /// runs it again (the other threads of the parent do not exist in the child). One
    /// generation load before and after (two loads each, see [`crate::fork::generation`]).
    #[inline]
    pub fn with_unforked<R>(&self, hint: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let g = crate::fork::generation();
        let r = self.with(hint, f);
        (crate::fork::generation() == g).then_some(r)
    }
}

/// The all-zero `T`.
fn zeroed<T: ZeroValid>() -> T {
    // SAFETY: `ZeroValid` promises that the all-zero bytes are a valid `T`.
    unsafe { core::mem::zeroed() }
}

#[cfg(all(test, feature = "std", not(scalrand_loom)))]
mod tests {
    use super::*;
    extern crate std;

    #[test]
    fn frames_start_zero_and_are_zeroed_after_use() {
        let s = Scratch::<[u64; 4]>::new(2);
        for i in 0..10u64 {
            s.with(i as usize, |v| {
                assert_eq!(*v, [0; 4]);
                *v = [i + 1; 4];
            });
        }
        assert_eq!(s.with(0, |v| *v), [0; 4]);
    }

    #[test]
    fn nested_calls_take_different_frames_and_grow_past_every_level() {
        // One frame, nested 300 deep (a signal handler inside a call, many times over): each
        // level takes the next frame; past level 7 (255 frames) the stack serves.
        fn nest(s: &Scratch<[u8; 32]>, depth: usize, seen: &mut std::vec::Vec<usize>) {
            if depth == 0 {
                return;
            }
            s.with(0, |v| {
                assert_eq!(*v, [0; 32], "a frame in use was handed out again");
                *v = [depth as u8; 32];
                seen.push(v.as_ptr() as usize);
                nest(s, depth - 1, seen);
                assert_eq!(*v, [depth as u8; 32], "a nested call wrote this frame");
            });
        }
        let s = Scratch::<[u8; 32]>::new(1);
        let mut seen = std::vec::Vec::new();
        nest(&s, 300, &mut seen);
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert!(sorted.len() >= 255, "{} distinct frames", sorted.len());
    }

    #[test]
    fn a_closure_that_panics_leaves_its_frame_zeroed_and_free() {
        // One frame at level 0: a frame left busy sends the next call to level 1.
        let s = Scratch::<[u8; 32]>::new(1);
        let first = s.with(0, |v| v.as_ptr() as usize);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.with(0, |v| {
                *v = [0xa5; 32];
                panic!("a closure that panics with a secret in its frame");
            })
        }));
        assert!(unwound.is_err());
        // The same frame again, zero: it was freed and wiped on the way out.
        let (again, held) = s.with(0, |v| (v.as_ptr() as usize, *v));
        assert_eq!(again, first, "the frame is still marked busy");
        assert_eq!(
            held, [0; 32],
            "the frame still holds what the closure wrote"
        );
    }

    #[test]
    fn a_zero_base_is_one_frame() {
        let s = Scratch::<[u8; 8]>::new(0);
        assert_eq!(s.with(7, |v| *v), [0; 8]);
        let first = s.with(0, |v| v.as_ptr() as usize);
        // Nested: the second call finds the only level-0 frame busy and maps level 1.
        let (outer, inner) = s.with(0, |v| {
            (v.as_ptr() as usize, s.with(0, |w| w.as_ptr() as usize))
        });
        assert_eq!(outer, first);
        assert_ne!(inner, outer);
    }

    #[test]
    fn threads_never_share_a_frame() {
        let s = Scratch::<[u64; 8]>::new(1);
        std::thread::scope(|t| {
            for id in 1..=4u64 {
                let s = &s;
                t.spawn(move || {
                    // Fewer under miri, which interprets every step (and checks each
                    // access for races, the point there).
                    for _ in 0..if cfg!(miri) { 300 } else { 20_000 } {
                        s.with(0, |v| {
                            assert_eq!(*v, [0; 8]);
                            *v = [id; 8];
                            core::hint::spin_loop();
                            assert_eq!(*v, [id; 8]);
                        });
                    }
                });
            }
        });
    }

    #[test]
    fn wipes_on_fork_where_the_memory_does() {
        let s = Scratch::<[u8; 64]>::new(4);
        let w = WipeOnFork::<u8>::new(4096, |_| 0);
        assert_eq!(s.wipes_on_fork(), w.wipes_on_fork());
        assert!(!Scratch::<[u8; 64]>::on_heap(4).wipes_on_fork());
    }
}
