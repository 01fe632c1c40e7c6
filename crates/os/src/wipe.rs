//! [`WipeOnFork`]: a heap slice that a fork child receives zeroed (Linux `MADV_WIPEONFORK`,
//! FreeBSD `minherit(INHERIT_ZERO)`, OpenBSD `minherit(MAP_INHERIT_ZERO)`).
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
/// that its users treat it as "empty, rekey before use".
pub unsafe trait ZeroValid {}

// SAFETY: integers and arrays of them are valid at 0.
unsafe impl ZeroValid for u8 {}
// SAFETY: as above.
unsafe impl ZeroValid for u32 {}
// SAFETY: as above.
unsafe impl ZeroValid for u64 {}
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
unsafe impl<T: ZeroValid> ZeroValid for crossbeam_utils::CachePadded<T> {}
// SAFETY: a `Lock` is a word (0 = free) and an `UnsafeCell<T>`, which has `T`'s layout.
#[cfg(not(scalrand_loom))]
unsafe impl<T: ZeroValid> ZeroValid for crate::Lock<T> {}

/// A fixed-length slice of `T` in wipe-on-fork memory where the OS offers it (see the module
/// docs). Dereferences to `[T]` (a pointer and a length: no branch on the hot path); dropping
/// it drops every element and frees the memory.
pub struct WipeOnFork<T: ZeroValid> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// Bytes of the `mmap` holding the elements; 0 when they are a leaked `Box<[T]>`.
    mapped_bytes: usize,
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
    /// Where wipe-on-fork memory can exist (Linux, Android, FreeBSD, OpenBSD with `std`), the
    /// elements are in an anonymous mapping of their own, wiped or not
    /// ([`wipes_on_fork`](Self::wipes_on_fork) says which): no allocator lock is taken, so
    /// `new` with an `init` that does not allocate is async-signal-safe there. Elsewhere, and
    /// where `mmap` fails, they are on the heap.
    pub fn new(len: usize, init: impl FnMut(usize) -> T) -> Self {
        let mut init = init;
        if let Some(m) = mapped::new(len, &mut init, false) {
            return m;
        }
        Self::on_heap(len, init)
    }

    /// `len` all-zero elements (valid: `T` is [`ZeroValid`]). Where they are mapped (see
    /// [`new`](Self::new)), nothing is written: a fresh anonymous mapping reads zero, so a
    /// page takes memory only once something writes it. Elsewhere they are zeroed on the heap.
    pub fn zeroed(len: usize) -> Self {
        let mut init = |_| {
            // SAFETY: `ZeroValid` promises that the all-zero bytes are a valid `T`.
            unsafe { core::mem::zeroed::<T>() }
        };
        if let Some(m) = mapped::new(len, &mut init, true) {
            return m;
        }
        Self::on_heap(len, init)
    }

    /// `len` elements on the ordinary heap, never wiped: what [`new`](Self::new) falls back to
    /// where the OS cannot wipe memory in a fork child. Public so that users of this type can
    /// run (and test) their fallback path on any machine.
    pub fn on_heap(len: usize, init: impl FnMut(usize) -> T) -> Self {
        let heap: alloc::boxed::Box<[T]> = (0..len).map(init).collect();
        let len = heap.len();
        let ptr = core::ptr::NonNull::from(alloc::boxed::Box::leak(heap)).cast::<T>();
        Self {
            ptr,
            len,
            mapped_bytes: 0,
            wipes: false,
            _owns: core::marker::PhantomData,
        }
    }

    /// Whether a fork child receives this memory zeroed. False where the OS cannot do it.
    pub fn wipes_on_fork(&self) -> bool {
        self.wipes
    }
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
        use super::{WipeOnFork, ZeroValid};

        /// Unmaps on drop; drops the first `len` elements, as far as `new` got.
        struct Guard<T> {
            ptr: core::ptr::NonNull<T>,
            len: usize,
            bytes: usize,
        }

        impl<T> Drop for Guard<T> {
            fn drop(&mut self) {
                // SAFETY: the first `len` elements are initialised and owned by the guard; the
                // mapping of `bytes` bytes is ours.
                unsafe {
                    core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(
                        self.ptr.as_ptr(),
                        self.len,
                    ));
                    libc::munmap(self.ptr.as_ptr().cast(), self.bytes);
                }
            }
        }

        /// `len` elements from `init` in a mapping of their own; with `fresh_zero`, `init`
        /// is not called: the elements are the mapping's fresh zero bytes (`T: ZeroValid`).
        pub(super) fn new<T: ZeroValid>(
            len: usize,
            init: &mut impl FnMut(usize) -> T,
            fresh_zero: bool,
        ) -> Option<WipeOnFork<T>> {
            let page = crate::fork::page_size();
            let size = core::mem::size_of::<T>().checked_mul(len)?;
            let align = core::mem::align_of::<T>();
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
                libc::mmap(
                    core::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                return None;
            }
            let head = (raw as usize).wrapping_neg() & (align - 1);
            // SAFETY: `head <= slack` (the mapping is page-aligned, `align` a multiple of
            // the page), so `raw + head .. raw + head + bytes` lies inside the mapping.
            let p = unsafe { raw.cast::<u8>().add(head) }.cast::<libc::c_void>();
            // SAFETY: the head and the tail are page-aligned parts of the mapping just made,
            // outside `p .. p + bytes`; nothing refers to them. A failed unmap only leaves
            // them mapped.
            unsafe {
                if head != 0 {
                    libc::munmap(raw, head);
                }
                if slack > head {
                    libc::munmap(p.cast::<u8>().add(bytes).cast(), slack - head);
                }
            }
            // Refused (or untrusted) advice leaves an ordinary private mapping: still no
            // allocator call, which keeps `new` async-signal-safe.
            let wipes = crate::fork::advise_wipe_on_fork(p, bytes);
            let ptr = core::ptr::NonNull::new(p.cast::<T>())?;
            // Drops what was written and unmaps if `init` unwinds half-way.
            let mut guard = Guard { ptr, len: 0, bytes };
            if fresh_zero {
                // A fresh private anonymous mapping reads zero, a valid `T` (`ZeroValid`).
                guard.len = len;
            }
            for i in guard.len..len {
                // SAFETY: `i < len` elements fit in the mapping; it is aligned for `T` (the page,
                // or `T`'s alignment when larger, above), and slot `i` is not yet initialised.
                unsafe { ptr.as_ptr().add(i).write(init(i)) };
                guard.len = i + 1;
            }
            core::mem::forget(guard);
            Some(WipeOnFork {
                ptr,
                len,
                mapped_bytes: bytes,
                wipes,
                _owns: core::marker::PhantomData,
            })
        }

        /// Drops the elements and unmaps.
        ///
        /// # Safety
        /// `ptr`, `len` and `bytes` describe a mapping made by `new` above, freed once.
        pub(super) unsafe fn free<T>(ptr: core::ptr::NonNull<T>, len: usize, bytes: usize) {
            drop(Guard { ptr, len, bytes });
        }
        }
    } else {
        /// Whether this build maps wipe-on-fork memory itself: not here (see the mapping
        /// build's version); every `WipeOnFork` lives on the heap.
        pub const OWN_MAPPINGS: bool = false;

        /// No memory the kernel wipes here: every `WipeOnFork` lives on the heap.
        mod mapped {
            use super::{WipeOnFork, ZeroValid};

            pub(super) fn new<T: ZeroValid>(
                _len: usize,
                _init: &mut impl FnMut(usize) -> T,
                _fresh_zero: bool,
            ) -> Option<WipeOnFork<T>> {
                None
            }

            /// Never called: `mapped_bytes` is 0 where nothing is mapped.
            ///
            /// # Safety
            /// None needed; `unsafe` to match the mapping version.
            pub(super) unsafe fn free<T>(_: core::ptr::NonNull<T>, _: usize, _: usize) {}
        }
    }
}

impl<T: ZeroValid> Drop for WipeOnFork<T> {
    fn drop(&mut self) {
        if self.mapped_bytes != 0 {
            // SAFETY: a non-zero `mapped_bytes` means `mapped::new` made this mapping.
            unsafe { mapped::free(self.ptr, self.len, self.mapped_bytes) };
            return;
        }
        // SAFETY: `ptr`/`len` came from `Box::leak` of a `Box<[T]>` in `new` (only `mapped::new`
        // sets `mapped_bytes`, handled above); rebuilt once, here.
        drop(unsafe {
            alloc::boxed::Box::from_raw(core::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ))
        });
    }
}

impl<T: ZeroValid> Deref for WipeOnFork<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements at `ptr` (mapping or leaked box), alive and
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

#[cfg(all(test, feature = "std", not(scalrand_loom)))]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    extern crate std;

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

    /// `zeroed` writes nothing where it maps: the pages take no memory until touched (the
    /// pool's rseq frames, 16 KiB per CPU, are mapped this way).
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn zeroed_mappings_take_no_memory_until_written() {
        fn rss_kib(addr: usize) -> Option<usize> {
            let maps = std::fs::read_to_string("/proc/self/smaps").ok()?;
            let mut inside = false;
            for line in maps.lines() {
                if let Some((range, _)) = line.split_once(' ')
                    && let Some((lo, hi)) = range.split_once('-')
                    && let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                } else if inside && let Some(v) = line.strip_prefix("Rss:") {
                    return v.trim().trim_end_matches(" kB").trim().parse().ok();
                }
            }
            None
        }
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
            assert!(
                w.iter()
                    .enumerate()
                    .all(|(i, b)| b.0.iter().all(|&x| x == i as u8))
            );
        }
    }
}
