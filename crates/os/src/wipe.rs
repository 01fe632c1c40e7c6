//! Memory that gets wiped. [`zero`]: zeroing the compiler keeps (the erasure of a key or of
//! keystream). [`WipeOnFork`]: a heap slice that a fork child receives zeroed (Linux `MADV_WIPEONFORK`,
//! FreeBSD `minherit(INHERIT_ZERO)`, OpenBSD `minherit(MAP_INHERIT_ZERO)`); and
//! [`StaticWipe`], bytes of a `static` that a fork child receives zeroed, for checks the
//! compiler can keep apart from a thread-local state.
//!
//! Generator keys and unread output that live here are gone in a child *before any code runs
//! there*: no handler has to erase them, and a child that never touches the generator does not
//! carry its parent's next outputs in its memory. The element type promises that the all-zero
//! bytes are a valid value meaning "empty" ([`ZeroValid`]); the generators that use it treat a
//! zero state as stale and rekey it before answering.
//!
//! Where the kernel cannot wipe (no `std`, other systems, the call refused or untrusted, miri,
//! loom) the slice is ordinary heap memory and [`WipeOnFork::wipes_on_fork`] says so; users
//! then wipe it themselves when [`crate::fork::generation`] changes.

use core::fmt;
use core::ops::Deref;

/// Types whose all-zero bit pattern is a valid value.
///
/// # Safety
/// An implementer guarantees that a value whose every byte is 0 is a valid, safely droppable
/// value of the type (no references, no `NonZero`, no enum without a zero discriminant), and
/// that its users treat it as "empty, rekey before use". [`zero`] overwrites a live value with
/// zeros in place (without dropping it), so that must be sound for the type too: nothing may
/// rely on a value never becoming all zero (an owned pointer, a count another value trusts).
pub unsafe trait ZeroValid {}

// SAFETY: integers and arrays of them are valid at 0.
unsafe impl ZeroValid for u8 {}
// SAFETY: as above.
unsafe impl ZeroValid for u16 {}
// SAFETY: as above.
unsafe impl ZeroValid for u32 {}
// SAFETY: as above.
unsafe impl ZeroValid for u64 {}
// SAFETY: as above.
unsafe impl ZeroValid for u128 {}
// SAFETY: as above.
unsafe impl ZeroValid for usize {}
// SAFETY: every bit pattern, zero included, is a valid `MaybeUninit`; its users track
// themselves whether it holds a value.
unsafe impl<T> ZeroValid for core::mem::MaybeUninit<T> {}
// SAFETY: an array of zero-valid values is zero-valid.
unsafe impl<T: ZeroValid, const N: usize> ZeroValid for [T; N] {}
// SAFETY: `AtomicUsize` has the layout of `usize`; 0 is valid. (Not under loom, whose atomics
// are handles; loom builds never map wipe-on-fork memory, and never fork.)
#[cfg(not(scalrand_loom))]
unsafe impl ZeroValid for core::sync::atomic::AtomicUsize {}
// SAFETY: `AtomicBool` has the layout of `bool`; 0 is `false`.
#[cfg(not(scalrand_loom))]
unsafe impl ZeroValid for core::sync::atomic::AtomicBool {}
// SAFETY: `CachePadded<T>` is `T` plus alignment padding; padding bytes may be anything.
unsafe impl<T: ZeroValid> ZeroValid for crate::pad::CachePadded<T> {}
// SAFETY: a `Lock` is a word (0 = free) and an `UnsafeCell<T>`, which has `T`'s layout.
#[cfg(not(scalrand_loom))]
unsafe impl<T: ZeroValid> ZeroValid for crate::Lock<T> {}
// SAFETY: a slice of zero-valid values is zero-valid.
unsafe impl<T: ZeroValid> ZeroValid for [T] {}

/// Overwrites `v` with zeros that the compiler may not drop as dead stores: the erasure of a
/// key, a seed or keystream about to go out of scope or be used no more.
///
/// On the architectures with stable `asm!` (x86, x86_64, arm, aarch64, riscv, loongarch64,
/// s390x) the bytes are zeroed by an ordinary `write_bytes` (the compiler's `memset`: a few
/// vector stores for a key) followed by an empty `asm!` block that receives the address and
/// may read the memory, so the stores must happen before it. This is the method of the
/// `zeroize` crate's bulk path for slices (zeroize 1.9, `src/bulk.rs` and `src/barrier.rs`).
/// Elsewhere (wasm, and under miri) the bytes are written with volatile stores, a word at a
/// time where aligned, followed by a compiler fence.
///
/// Like any zeroing in Rust, it reaches only `v` itself: copies the compiler made earlier
/// (moves, spills) are the caller's to avoid.
#[inline]
pub fn zero<T: ZeroValid + ?Sized>(v: &mut T) {
    // SAFETY: the `len` bytes of `v`, borrowed exclusively here; all-zero bytes are a valid
    // `T` (`ZeroValid`).
    unsafe {
        zero_bytes(
            core::ptr::from_mut(v).cast::<u8>(),
            core::mem::size_of_val(v),
        )
    }
}

crate::__cfg_split! {
    (all(
        not(miri),
        any(
            target_arch = "x86",
            target_arch = "x86_64",
            target_arch = "arm",
            target_arch = "aarch64",
            target_arch = "arm64ec",
            target_arch = "riscv32",
            target_arch = "riscv64",
            target_arch = "loongarch64",
            target_arch = "s390x",
        )
    ))
    [
        /// [`zero`]'s stores: `write_bytes`, then the `asm!` barrier.
        ///
        /// # Safety
        /// `p` is valid for writes of `len` bytes, and zero bytes are valid there.
        #[inline(always)]
        unsafe fn zero_bytes(p: *mut u8, len: usize) {
            // SAFETY: the caller's contract. The `asm!` block executes nothing; it only takes
            // `p` (`readonly`: it may read memory, writes none; no stack use; flags kept).
            unsafe {
                core::ptr::write_bytes(p, 0, len);
                core::arch::asm!(
                    "/* {0} */",
                    in(reg) p,
                    options(readonly, nostack, preserves_flags),
                );
            }
        }
    ]
    [
        /// [`zero`]'s stores where there is no stable `asm!` (and under miri): volatile.
        ///
        /// # Safety
        /// `p` is valid for writes of `len` bytes, and zero bytes are valid there.
        #[inline(always)]
        unsafe fn zero_bytes(p: *mut u8, len: usize) {
            // Volatile stores: single bytes up to a word boundary, words, then the last bytes.
            let word = core::mem::size_of::<usize>();
            let head = p.align_offset(core::mem::align_of::<usize>()).min(len);
            let words = (len - head) / word;
            for i in (0..head).chain(head + words * word..len) {
                // SAFETY: byte `i < len`, inside the caller's range.
                unsafe { core::ptr::write_volatile(p.add(i), 0) };
            }
            for i in 0..words {
                // SAFETY: word `i` of the `words` whole, aligned words from byte `head` on, all
                // inside the caller's `len` bytes.
                unsafe { core::ptr::write_volatile(p.add(head).cast::<usize>().add(i), 0) };
            }
            core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        }
    ]
}

/// A fixed-length slice of `T` in wipe-on-fork memory where the OS offers it (see the module
/// docs). Dereferences to `[T]` (a pointer and a length: no branch on the hot path); dropping
/// it drops every element and frees the memory.
pub struct WipeOnFork<T: ZeroValid> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// Bytes of the `mmap` holding the elements; 0 when they are on the heap.
    mapped_bytes: usize,
    /// On the heap: the capacity of the `Vec` whose buffer holds them (unused when mapped).
    heap_capacity: usize,
    /// Whether the kernel accepted (and can be trusted with) the wipe-on-fork advice.
    wipes: bool,
    _owns: core::marker::PhantomData<T>,
}

// SAFETY: `WipeOnFork<T>` owns its `T`s like a `Box<[T]>`; sending or sharing it sends or
// shares them.
unsafe impl<T: ZeroValid + Send> Send for WipeOnFork<T> {}
// SAFETY: as above; `&WipeOnFork<T>` only gives `&[T]`.
unsafe impl<T: ZeroValid + Sync> Sync for WipeOnFork<T> {}

impl<T: ZeroValid> WipeOnFork<T> {
    /// `len` elements, element `i` initialised to `init(i)`.
    ///
    /// Each value `init` returns passes through the stack on its way in, and nothing wipes
    /// it there: build empty (keyless) elements and key them in place afterwards, as the
    /// generators do.
    ///
    /// Where wipe-on-fork memory can exist (Linux, Android, FreeBSD, OpenBSD with `std`), the
    /// elements are in an anonymous mapping of their own, wiped or not
    /// ([`wipes_on_fork`](Self::wipes_on_fork) says which): no allocator lock is taken, so
    /// `new` with an `init` that does not allocate is async-signal-safe there. Elsewhere, and
    /// where `mmap` fails, they are on the heap.
    pub fn new(len: usize, init: impl FnMut(usize) -> T) -> Self {
        let mut init = init;
        Self::build(len, &mut init, Place::Mapped)
    }

    /// `len` all-zero elements (valid: `T` is [`ZeroValid`]). Where they are mapped (see
    /// [`new`](Self::new)), nothing is written: a fresh anonymous mapping reads zero, so a
    /// page takes memory only once something writes it. Elsewhere they are zeroed on the heap.
    pub fn zeroed(len: usize) -> Self {
        let mut init = |_| {
            // SAFETY: `ZeroValid` promises that the all-zero bytes are a valid `T`.
            unsafe { core::mem::zeroed::<T>() }
        };
        Self::build(len, &mut init, Place::MappedZero)
    }

    /// `len` elements on the ordinary heap, never wiped: what [`new`](Self::new) falls back to
    /// where the OS cannot wipe memory in a fork child. Public so that users of this type can
    /// run (and test) their fallback path on any machine. `init` as for [`new`](Self::new).
    pub fn on_heap(len: usize, init: impl FnMut(usize) -> T) -> Self {
        let mut init = init;
        Self::build(len, &mut init, Place::Heap)
    }

    /// The one constructor: memory for `len` elements (a mapping of its own, unless `place`
    /// is [`Place::Heap`] or none can be made; else a `Vec`'s buffer), then element `i` set
    /// to `init(i)`, unless the memory is a fresh mapping and `place` asks for zeros. `init`
    /// is a trait object, so each element type has one copy of this code whatever its
    /// callers' closures. The value under construction is its own guard: its `len` counts
    /// the elements written, and if `init` unwinds, its `Drop` drops those and frees the
    /// memory.
    fn build(len: usize, init: &mut dyn FnMut(usize) -> T, place: Place) -> Self {
        let mapping = match place {
            Place::Heap => None,
            Place::Mapped | Place::MappedZero => core::mem::size_of::<T>()
                .checked_mul(len)
                .and_then(|size| mapped::map(size, core::mem::align_of::<T>())),
        };
        let mut this = match mapping {
            Some((p, bytes, wipes)) => Self {
                ptr: p.cast::<T>(),
                len: 0,
                mapped_bytes: bytes,
                heap_capacity: 0,
                wipes,
                _owns: core::marker::PhantomData,
            },
            None => {
                // `Vec` allocates (and refuses a length whose bytes overflow, as it does
                // everywhere); its buffer is handed to `this`, which frees it.
                let mut heap =
                    core::mem::ManuallyDrop::new(alloc::vec::Vec::<T>::with_capacity(len));
                Self {
                    // SAFETY: a `Vec`'s pointer is never null (dangling, aligned, when it
                    // allocated nothing). `as_mut_ptr`, not a slice of the empty `Vec`: the
                    // pointer must reach the whole buffer.
                    ptr: unsafe { core::ptr::NonNull::new_unchecked(heap.as_mut_ptr()) },
                    len: 0,
                    mapped_bytes: 0,
                    heap_capacity: heap.capacity(),
                    wipes: false,
                    _owns: core::marker::PhantomData,
                }
            }
        };
        if this.mapped_bytes != 0 && place == Place::MappedZero {
            // A fresh private anonymous mapping reads zero, a valid `T` (`ZeroValid`).
            this.len = len;
            return this;
        }
        for i in 0..len {
            let v = init(i);
            // SAFETY: the memory holds at least `len` elements (a mapping of at least
            // `size_of::<T>() * len` bytes, aligned for `T`; or a `Vec` buffer of capacity
            // `len` or more), and slot `i = this.len` is not yet initialised.
            unsafe { this.ptr.as_ptr().add(i).write(v) };
            this.len = i + 1;
        }
        this
    }

    /// Whether a fork child receives this memory zeroed. False where the OS cannot do it.
    pub fn wipes_on_fork(&self) -> bool {
        self.wipes
    }
}

/// Where [`WipeOnFork::build`] puts the elements.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A mapping of their own where one can be made (else the heap), written by `init`.
    Mapped,
    /// As `Mapped`, but a fresh mapping's zero bytes are the elements: `init` runs only for
    /// the heap.
    MappedZero,
    /// The heap.
    Heap,
}

cfg_wipe_on_fork! {
    if {
        /// Whether this build maps wipe-on-fork memory itself (Linux, Android, FreeBSD,
        /// OpenBSD with `std`, outside miri and loom): then [`WipeOnFork::new`], and a new
        /// level of [`Scratch`](crate::scratch::Scratch) frames, take no allocator lock. Where
        /// it is false they come from the heap. Whether a given kernel wipes the memory is
        /// still asked at run time ([`WipeOnFork::wipes_on_fork`]).
        pub const OWN_MAPPINGS: bool = true;

        mod mapped {
        /// A private anonymous mapping of at least `size` bytes, aligned to `align` (a power
        /// of two), advised to be wiped on fork: its start, its length in bytes (whole pages)
        /// and whether the advice holds; `None` for `size == 0` or when `mmap` fails. Not
        /// generic: every element type shares this one copy.
        pub(super) fn map(size: usize, align: usize) -> Option<(core::ptr::NonNull<u8>, usize, bool)> {
            let page = crate::fork::page_size();
            if size == 0 {
                return None;
            }
            let bytes = size.checked_add(page - 1)? / page * page;
            // An alignment above the page's (a power of two, so a multiple of it): map that
            // much more and unmap the slack on either side of the aligned start.
            let slack = align.saturating_sub(page);
            let total = bytes.checked_add(slack)?;
            // SAFETY: an anonymous private mapping with no address hint has no preconditions.
            let raw = unsafe {
                crate::sys::mmap(
                    core::ptr::null_mut(),
                    total,
                    crate::sys::PROT_READ | crate::sys::PROT_WRITE,
                    crate::sys::MAP_PRIVATE | crate::sys::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw == crate::sys::MAP_FAILED {
                return None;
            }
            let head = (raw as usize).wrapping_neg() & (align - 1);
            // SAFETY: `head <= slack` (the mapping is page-aligned, `align` a multiple of
            // the page), so `raw + head .. raw + head + bytes` lies inside the mapping.
            let p = unsafe { raw.cast::<u8>().add(head) }.cast::<crate::sys::c_void>();
            // SAFETY: the head and the tail are page-aligned parts of the mapping just made,
            // outside `p .. p + bytes`; nothing refers to them. A failed unmap only leaves
            // them mapped.
            unsafe {
                if head != 0 {
                    crate::sys::munmap(raw, head);
                }
                if slack > head {
                    crate::sys::munmap(p.cast::<u8>().add(bytes).cast(), slack - head);
                }
            }
            // Refused (or untrusted) advice leaves an ordinary private mapping: still no
            // allocator call, which keeps `new` async-signal-safe.
            let wipes = crate::fork::advise_wipe_on_fork(p, bytes);
            Some((core::ptr::NonNull::new(p.cast::<u8>())?, bytes, wipes))
        }

        /// Unmaps what [`map`] made.
        ///
        /// # Safety
        /// `p` and `bytes` are a mapping `map` returned, unmapped once, nothing in it used
        /// again.
        pub(super) unsafe fn unmap(p: core::ptr::NonNull<u8>, bytes: usize) {
            // SAFETY: the caller's contract. A failed unmap only leaves the pages mapped.
            unsafe { crate::sys::munmap(p.as_ptr().cast(), bytes) };
        }
        }
    } else {
        /// Whether this build maps wipe-on-fork memory itself: not here (see the mapping
        /// build's version); every `WipeOnFork` lives on the heap.
        pub const OWN_MAPPINGS: bool = false;

        /// No memory the kernel wipes here: every `WipeOnFork` lives on the heap.
        mod mapped {
            /// No mapping here: the heap serves.
            pub(super) fn map(
                _size: usize,
                _align: usize,
            ) -> Option<(core::ptr::NonNull<u8>, usize, bool)> {
                None
            }

            /// Never called: `mapped_bytes` is 0 where nothing is mapped.
            ///
            /// # Safety
            /// None needed; `unsafe` to match the mapping version.
            pub(super) unsafe fn unmap(_: core::ptr::NonNull<u8>, _: usize) {}
        }
    }
}

impl<T: ZeroValid> Drop for WipeOnFork<T> {
    fn drop(&mut self) {
        // SAFETY: the first `len` elements are initialised and owned by `self` (all of them
        // once `build` returned; those written so far if `init` unwound), dropped once, here.
        unsafe {
            core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ));
        }
        if self.mapped_bytes != 0 {
            // SAFETY: a non-zero `mapped_bytes` means `build` made this mapping with
            // `mapped::map`; freed once, here.
            unsafe { mapped::unmap(self.ptr.cast(), self.mapped_bytes) };
        } else {
            // SAFETY: `ptr` and `heap_capacity` are the buffer of the `Vec` `build` made; its
            // elements were dropped above, so it is rebuilt empty, to free the buffer only.
            drop(unsafe {
                alloc::vec::Vec::from_raw_parts(self.ptr.as_ptr(), 0, self.heap_capacity)
            });
        }
    }
}

impl<T: ZeroValid> Deref for WipeOnFork<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements at `ptr` (a mapping or a `Vec` buffer), alive and
        // unaliased by `&mut` as long as `self`.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroValid> fmt::Debug for WipeOnFork<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The elements hold keys in scalrand: never printed.
        f.debug_struct("WipeOnFork")
            .field("len", &self.len())
            .field("wipes_on_fork", &self.wipes_on_fork())
            .finish_non_exhaustive()
    }
}

/// `N` bytes of a `static` that every fork child finds zero: [`WipeOnFork`]'s promise for
/// memory whose address the compiler knows.
///
/// A value read through a pointer loaded from memory may, as far as the compiler knows, be
/// any other variable: a generator that checks a [`WipeOnFork`] mark before each draw must
/// store its state before the check and reload it after. These bytes are a `static`'s, a
/// separate object from every thread-local and every other `static`, so a check of one of
/// them keeps a thread-local state in a register; and a check whose byte nothing in a loop
/// writes is the same in every round, so the compiler may check once per run of inlined
/// draws (which is what a caller of such a check accepts: see [`get`](Self::get)).
///
/// [`wiped`](Self::wiped) advises the kernel once, on the whole pages inside the object
/// (`madvise(MADV_WIPEONFORK)` on Linux ≥ 4.14 and Android, `minherit` on FreeBSD ≥ 12 and
/// OpenBSD; the object is aligned to 4 KiB, and its size should leave a whole page of the
/// largest page size its targets use, 64 KiB on some aarch64 kernels). It names the bytes a
/// fork child finds zero: those pages; every byte on a target without fork (not Unix:
/// [`Detection::None`] there); none where forks are detected another way (the pid, or
/// `pthread_atfork` handlers on Apple systems, which cannot zero memory before another
/// handler or a signal handler reads it), and none where the kernel refuses the advice (a
/// static in file-backed memory; OpenBSD 7.3 and later, whose program data is immutable).
///
/// Its bytes are plain memory (no atomics: the compiler may keep what it read), so each byte
/// belongs to one thread at a time, which alone reads and writes it; the caller's protocol
/// decides who (see [`get`](Self::get)). The object must live as long as the process (a
/// `static`, or leaked): [`wiped`](Self::wiped) takes `&'static self` so that its pages are
/// never handed to anything else.
///
/// ```
/// use scalrand_os::wipe::StaticWipe;
///
/// static MARKS: StaticWipe<{ 128 * 1024 }> = StaticWipe::new();
/// if let Some(range) = MARKS.wiped() {
///     // SAFETY: in range, and only this thread uses the byte.
///     unsafe { MARKS.set(range.start, 1) };
///     // A fork child reads 0 here; this process reads 1.
///     assert_eq!(unsafe { MARKS.get(range.start) }, 1);
/// }
/// ```
///
/// An empty one does not build:
///
/// ```compile_fail
/// static NONE: scalrand_os::wipe::StaticWipe<0> = scalrand_os::wipe::StaticWipe::new();
/// ```
///
/// [`Detection::None`]: crate::fork::Detection::None
#[repr(C, align(4096))]
pub struct StaticWipe<const N: usize> {
    bytes: [core::cell::UnsafeCell<u8>; N],
    /// The advised range's start plus 1; 0 before the first [`Self::wiped`], `usize::MAX`
    /// when no byte is wiped. Published after `end`. After `bytes`, so never on an advised
    /// page (as `end`).
    start: core::sync::atomic::AtomicUsize,
    /// The advised range's end, once `start` says there is one.
    end: core::sync::atomic::AtomicUsize,
}

// SAFETY: the bytes are shared as `UnsafeCell`s whose callers promise (`get`, `set`) that one
// thread at a time uses each; `start` and `end` are atomic.
unsafe impl<const N: usize> Sync for StaticWipe<N> {}

impl<const N: usize> StaticWipe<N> {
    /// At least one byte.
    const FITS: () = assert!(N > 0, "a StaticWipe holds at least one byte");

    /// `N` zero bytes, not yet advised.
    #[must_use]
    pub const fn new() -> Self {
        let () = Self::FITS;
        Self {
            bytes: [const { core::cell::UnsafeCell::new(0) }; N],
            start: core::sync::atomic::AtomicUsize::new(0),
            end: core::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The offsets whose bytes a fork child of this process finds zero (see the type's docs),
    /// or `None`; the advice is given on the first call and the answer kept. Never empty when
    /// `Some`. A fork child keeps the advice (and its parent's answer): the kernel wipes them
    /// again in its own children.
    pub fn wiped(&'static self) -> Option<core::ops::Range<usize>> {
        use core::sync::atomic::Ordering;
        let start = match self.start.load(Ordering::Acquire) {
            0 => {
                // Two threads that both get here give the same advice and store the same
                // answer.
                let answer = self.advise();
                if let Some(r) = &answer {
                    self.end.store(r.end, Ordering::Relaxed);
                }
                let start = answer.map_or(usize::MAX, |r| r.start + 1);
                self.start.store(start, Ordering::Release);
                start
            }
            start => start,
        };
        (start != usize::MAX).then(|| start - 1..self.end.load(Ordering::Relaxed))
    }

    /// The advice itself: the whole pages inside `bytes`, where forks are detected by
    /// wiped memory; every byte on a target without fork (not Unix).
    fn advise(&'static self) -> Option<core::ops::Range<usize>> {
        use crate::fork::{Detection, detection};
        match detection() {
            Detection::WipeOnFork => self.advise_pages(),
            // No fork on this target (a Unix build without `std`, or under miri or loom, can
            // fork but cannot advise).
            Detection::None if !cfg!(unix) => Some(0..N),
            _ => None,
        }
    }

    cfg_wipe_on_fork! {
        if {
            fn advise_pages(&'static self) -> Option<core::ops::Range<usize>> {
                let page = crate::fork::page_size();
                let base = self.bytes.as_ptr() as usize;
                let start = base.checked_add(page - 1)? / page * page - base;
                let end = (base + N) / page * page;
                let end = end.checked_sub(base).filter(|&e| e > start)?;
            // SAFETY: `start..end` are whole pages of `bytes`, which nothing else lives
                // on, in an object that is never freed (`&'static`): the advice changes only
                // what a fork child of this process receives there.
                let p = unsafe { self.bytes.as_ptr().cast::<u8>().add(start) }.cast_mut();
                crate::fork::advise_wipe_on_fork(p.cast(), end - start).then_some(start..end)
            }
        } else {
            /// No system call hands a fork child zeroed memory here.
            #[allow(clippy::unused_self)]
            fn advise_pages(&'static self) -> Option<core::ops::Range<usize>> {
                None
            }
        }
    }

    /// Byte `i`: a plain load, which the compiler may merge with an earlier one of the same
    /// byte where nothing it can see wrote the byte in between. So a caller that checks a
    /// byte before each draw of an inlined loop may find the check made once for the loop:
    /// a fork that lands inside the loop (only a signal handler can fork there) leaves the
    /// loop's remaining rounds to run in the child on what they read before.
    ///
    /// # Safety
    /// `i < N`, and no other thread writes byte `i` while this runs (one thread uses a byte at
    /// a time, and passes it on with a release store that the next thread acquires).
    #[inline(always)]
    #[must_use]
    pub unsafe fn get(&self, i: usize) -> u8 {
        // SAFETY: in bounds and unraced, by the caller's contract.
        unsafe { *self.bytes.get_unchecked(i).get() }
    }

    /// Writes `v` to byte `i`.
    ///
    /// # Safety
    /// As for [`get`](Self::get): `i < N`, and no other thread reads or writes byte `i` while
    /// this runs.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, v: u8) {
        // SAFETY: in bounds and unraced, by the caller's contract.
        unsafe { *self.bytes.get_unchecked(i).get() = v }
    }
}

impl<const N: usize> Default for StaticWipe<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for StaticWipe<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticWipe")
            .field("len", &N)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "std", not(scalrand_loom)))]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    extern crate std;

    #[test]
    fn zero_clears_exactly_what_it_is_given() {
        let mut a = [0xa5u8; 37];
        zero(&mut a[3..30]);
        assert!(a[..3].iter().all(|&b| b == 0xa5));
        assert!(a[3..30].iter().all(|&b| b == 0));
        assert!(a[30..].iter().all(|&b| b == 0xa5));
        let mut w = [[u128::MAX; 2]; 3];
        zero(&mut w);
        assert_eq!(w, [[0; 2]; 3]);
        let mut n = usize::MAX;
        zero(&mut n);
        assert_eq!(n, 0);
        let mut empty: [u64; 0] = [];
        zero(&mut empty);
    }

    #[test]
    fn holds_and_drops_its_elements() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D(u64);
        // SAFETY: a plain integer.
        unsafe impl ZeroValid for D {}
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let w = WipeOnFork::new(1000, |i| D(i as u64 * 3));
        assert_eq!(w.len(), 1000);
        assert!(w.iter().enumerate().all(|(i, d)| d.0 == i as u64 * 3));
        // (`--cfg scalrand_fork_atfork` detects forks with handlers but still maps such memory.)
        #[cfg(all(target_os = "linux", not(miri), not(scalrand_fork_atfork)))]
        assert_eq!(
            w.wipes_on_fork(),
            crate::fork::detection() == crate::fork::Detection::WipeOnFork,
            "Linux >= 4.14 offers MADV_WIPEONFORK where madvise is truthful (not under qemu-user)"
        );
        drop(w);
        assert_eq!(DROPS.load(Ordering::Relaxed), 1000);
        let empty = WipeOnFork::<u64>::new(0, |_| 0);
        assert!(empty.is_empty());
    }

    /// An `init` that panics half-way: the elements it made are dropped and the memory is
    /// freed (miri checks the latter: it reports leaks), mapped or on the heap.
    #[test]
    fn an_init_that_panics_drops_what_it_made() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D(#[allow(dead_code)] u64);
        // SAFETY: a plain integer.
        unsafe impl ZeroValid for D {}
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let init = |i: usize| {
            assert!(i < 3, "init refuses element 3");
            D(i as u64)
        };
        for heap in [false, true] {
            DROPS.store(0, Ordering::Relaxed);
            let r = std::panic::catch_unwind(|| {
                if heap {
                    WipeOnFork::on_heap(10, init)
                } else {
                    WipeOnFork::new(10, init)
                }
            });
            assert!(r.is_err());
            assert_eq!(DROPS.load(Ordering::Relaxed), 3, "heap: {heap}");
        }
    }

    /// `zeroed` writes nothing where it maps: the pages take no memory until touched (the
    /// pool's rseq frames, 16 KiB per CPU, are mapped this way).
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn zeroed_mappings_take_no_memory_until_written() {
        use scalrand_testkit::maps::rss_kib;
        let lazy = WipeOnFork::<[u8; 4096]>::zeroed(64);
        if !OWN_MAPPINGS || lazy.mapped_bytes == 0 {
            return;
        }
        // Each measured alone: the kernel may merge the two mappings into one area.
        let l = rss_kib(lazy.as_ptr() as usize).unwrap();
        assert!(l < 64, "Rss {l} kB of 256 kB zeroed");
        drop(lazy);
        let written = WipeOnFork::<[u8; 4096]>::new(64, |_| [0; 4096]);
        let w = rss_kib(written.as_ptr() as usize).unwrap();
        assert!(w >= 256, "Rss {w} kB of 256 kB written");
        let lazy = WipeOnFork::<[u8; 4096]>::zeroed(64);
        assert!(lazy.iter().all(|p| p.iter().all(|&b| b == 0)));
    }

    /// A fork child, and its own child, find the advised bytes of a `static` zero; the parent
    /// keeps what it wrote, and bytes outside the advised pages are copied as usual.
    #[cfg(all(unix, not(miri)))]
    #[test]
    fn a_fork_child_finds_a_static_wipes_bytes_zero() {
        const N: usize = 128 * 1024;
        static W: StaticWipe<N> = StaticWipe::new();
        let Some(r) = W.wiped() else {
            // Forks are detected another way here (the pid, or atfork handlers), or the kernel
            // refused the advice on a static (OpenBSD's immutable program data); on Linux the
            // advice on a static's anonymous pages is what wipe-on-fork detection relies on.
            #[cfg(target_os = "linux")]
            assert_ne!(crate::fork::detection(), crate::fork::Detection::WipeOnFork);
            return;
        };
        assert!(!r.is_empty() && r.end <= N);
        assert_eq!(W.wiped(), Some(r.clone()), "the answer is kept");
        #[cfg(target_os = "linux")]
        if crate::fork::detection() == crate::fork::Detection::WipeOnFork {
            assert_eq!((W.bytes.as_ptr() as usize + r.start) % 4096, 0);
            assert!(r.len() >= 64 * 1024, "a whole 64 KiB page fits: {r:?}");
        }
        let (first, last) = (r.start, r.end - 1);
        // SAFETY: offsets below `N`; only this test's thread touches `W`.
        unsafe {
            W.set(first, 7);
            W.set(last, 9);
        }
        /// In the child: 0 when the bytes read zero, 1 when not; with `again`, the same
        /// checked in a grandchild after the child wrote them.
        fn child(first: usize, last: usize, again: bool) -> i32 {
            // SAFETY: offsets below `N`; the child has this one thread.
            let zero = unsafe { W.get(first) == 0 && W.get(last) == 0 };
            if !zero {
                return 1;
            }
            if again {
                // SAFETY: as above.
                unsafe {
                    W.set(first, 5);
                    W.set(last, 5);
                }
                return run(first, last, false);
            }
            0
        }
        /// Forks, runs `child` there, and returns its exit status (-1: it died).
        fn run(first: usize, last: usize, again: bool) -> i32 {
            // SAFETY: the child only reads and writes memory, forks, waits and `_exit`s:
            // nothing that needs a lock another thread of this test binary may hold.
            unsafe {
                let pid = libc::fork();
                assert!(pid >= 0);
                if pid == 0 {
                    libc::_exit(child(first, last, again));
                }
                let mut status = 0;
                assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
                if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    -1
                }
            }
        }
        assert_eq!(
            run(first, last, true),
            0,
            "a child or grandchild saw the parent's bytes"
        );
        // SAFETY: as above.
        let kept = unsafe { (W.get(first), W.get(last)) };
        assert_eq!(kept, (7, 9), "the parent keeps its bytes");
    }

    /// Elements aligned above the page (the pool's 8 KiB batch frames) get memory of the same
    /// kind as page-aligned ones, at their alignment.
    #[test]
    fn aligns_elements_above_the_page() {
        #[repr(C, align(16384))]
        struct Big([u8; 16384]);
        // SAFETY: bytes.
        unsafe impl ZeroValid for Big {}
        let page = WipeOnFork::<u64>::new(1, |_| 0);
        for len in [1, 2, 3, 7] {
            let w = WipeOnFork::new(len, |i| Big([i as u8; 16384]));
            assert_eq!(w.as_ptr() as usize % 16384, 0, "{len} elements");
            assert_eq!(w.wipes_on_fork(), page.wipes_on_fork(), "{len} elements");
            // Whole arrays compared (one `memcmp`, not 16 Ki closure calls under miri).
            assert!(w.iter().enumerate().all(|(i, b)| b.0 == [i as u8; 16384]));
        }
    }
}
