//! Apple's `pthread_cpu_number_np` (macOS 11, iOS 14.2) and FreeBSD's `sched_getcpu`
//! (FreeBSD 13) are newer than the oldest releases Rust supports there, so they are looked up
//! once with `dlsym` instead of linked: an older system simply takes the per-thread path.

use super::Source;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering};

#[cfg(target_vendor = "apple")]
const NAME: &core::ffi::CStr = c"pthread_cpu_number_np";
#[cfg(target_vendor = "apple")]
const FOUND: Source = Source::PthreadCpuNumber;
#[cfg(not(target_vendor = "apple"))]
const NAME: &core::ffi::CStr = c"sched_getcpu";
#[cfg(not(target_vendor = "apple"))]
const FOUND: Source = Source::SchedGetcpu;

/// Null before the lookup, `MISSING` where the symbol does not exist, else the function.
static FUNC: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
const MISSING: *mut c_void = ptr::dangling_mut();

fn func() -> *mut c_void {
    let f = FUNC.load(Ordering::Relaxed);
    if !f.is_null() {
        return f;
    }
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no preconditions.
    let f = unsafe { crate::sys::dlsym(crate::sys::RTLD_DEFAULT, NAME.as_ptr()) };
    let f = if f.is_null() { MISSING } else { f };
    FUNC.store(f, Ordering::Relaxed);
    f
}

fn ask() -> Option<usize> {
    let f = func();
    if f == MISSING {
        return None;
    }
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: `f` is libSystem's `int pthread_cpu_number_np(size_t *cpu_number_out)`,
        // found by name above; it writes the CPU number through a valid pointer.
        unsafe {
            let f: unsafe extern "C" fn(*mut crate::sys::size_t) -> crate::sys::c_int =
                core::mem::transmute(f);
            let mut n: crate::sys::size_t = 0;
            (f(&mut n) == 0).then_some(n)
        }
    }
    #[cfg(not(target_vendor = "apple"))]
    {
        // SAFETY: `f` is libc's `int sched_getcpu(void)`, found by name above.
        let c = unsafe {
            let f: unsafe extern "C" fn() -> crate::sys::c_int = core::mem::transmute(f);
            f()
        };
        usize::try_from(c).ok()
    }
}

#[inline]
pub(super) fn current() -> Option<usize> {
    Some(ask().unwrap_or_else(super::per_thread))
}

pub(super) fn source() -> Source {
    if ask().is_some() {
        FOUND
    } else {
        Source::PerThread
    }
}
