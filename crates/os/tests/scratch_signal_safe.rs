//! A new level of [`Scratch`] frames takes no allocator lock where the OS maps memory of its
//! own: a signal handler whose read finds every frame busy must not call `malloc`, whose lock
//! the code it interrupted may hold (glibc's arena lock is not recursive: the handler would
//! wait on its own thread forever). A counting global allocator in a binary of its own sees
//! every allocation.
//! Where wipe-on-fork memory comes from the heap ([`scalrand_os::wipe::OWN_MAPPINGS`] false)
//! there is nothing to check.
#![cfg(all(feature = "std", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_os::scratch::Scratch;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations made by this thread while counting is on.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
}

// SAFETY: forwards to the system allocator; the counter is a thread-local `Cell` with a
// const initialiser (no allocation of its own).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded; `ptr` came from `alloc` above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Takes a frame `depth` times, each inside the last (a handler inside a call, many times
/// over), and returns how many allocations the nesting made.
fn allocations_while_nesting(s: &Scratch<[u64; 8]>, depth: usize) -> usize {
    fn nest(s: &Scratch<[u64; 8]>, depth: usize) {
        if depth > 0 {
            s.with(0, |v| {
                v[0] = depth as u64;
                nest(s, depth - 1);
            });
        }
    }
    COUNT.with(|c| c.set(Some(0)));
    nest(s, depth);
    COUNT.with(|c| c.replace(None)).unwrap()
}

#[test]
fn new_levels_of_frames_allocate_nothing() {
    if !scalrand_os::wipe::OWN_MAPPINGS {
        eprintln!("not checked: wipe-on-fork memory comes from the heap here");
        return;
    }
    let s = Scratch::<[u64; 8]>::new(1);
    // 1 + 2 + 4 + 8 frames: levels 1 to 3 are mapped while the first frames are held.
    assert_eq!(allocations_while_nesting(&s, 15), 0);
    // Past the last level the stack serves: still nothing from the allocator.
    assert_eq!(allocations_while_nesting(&s, 300), 0);
}
