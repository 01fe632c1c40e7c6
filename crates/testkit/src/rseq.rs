//! The calling thread's rseq registration taken away, for tests of the paths a thread without
//! one takes.

/// Unregisters the calling thread's rseq area (glibc registered it with 32 bytes and its x86
/// signature); afterwards the kernel leaves `cpu_id` at -1. `false` if the kernel refused or
/// glibc has no rseq.
#[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
pub fn unregister_rseq() -> bool {
    // SAFETY: dlsym with a NUL-terminated name; glibc defines the symbol as a constant.
    let off = unsafe {
        let p = libc::dlsym(libc::RTLD_DEFAULT, c"__rseq_offset".as_ptr());
        if p.is_null() {
            return false;
        }
        *p.cast::<isize>()
    };
    let tp: usize;
    // SAFETY: reads the thread pointer (the TCB's self pointer at fs:0 on x86_64 glibc).
    unsafe { std::arch::asm!("mov {}, qword ptr fs:0", out(reg) tp, options(nostack, readonly)) };
    let area = tp.wrapping_add_signed(off) as *mut libc::c_void;
    // SAFETY: unregisters this thread's own area with the parameters glibc registered it with
    // (the kernel checks them). Code that runs restartable sequences checks `cpu_id`, which
    // now reads -1, before starting one.
    unsafe { libc::syscall(libc::SYS_rseq, area, 32u32, 1i32, 0x5305_3053u32) == 0 }
}

/// Where scalrand runs no restartable sequences (every target but x86_64 with glibc: see
/// `scalrand_os::cpu::rseq_cpu`), every thread already takes the paths of a thread without an
/// rseq registration: nothing to take away, and `true`.
#[cfg(not(all(target_arch = "x86_64", target_env = "gnu")))]
pub fn unregister_rseq() -> bool {
    true
}

/// The variable that makes [`nothing_to_check`] fail instead of skipping: `cargo xtask ci`
/// sets it for the runs on a machine whose glibc registers rseq (x86_64, glibc 2.35 or
/// later) with rseq left on, so that a detection that broke cannot turn every rseq test
/// into a skip.
pub const EXPECT_VAR: &str = "SCALRAND_EXPECT_RSEQ";

/// Called by an rseq test that found no restartable-sequence path (scalrand's
/// `rseq_cpu()` is `None`, or a generator took no rseq path) and so has nothing to check:
/// says so on stderr, or panics where [`EXPECT_VAR`] is set.
pub fn nothing_to_check(what: &str) {
    assert!(
        std::env::var_os(EXPECT_VAR).is_none(),
        "{what}: no rseq path, but {EXPECT_VAR} says this machine has one"
    );
    eprintln!("not checked: {what}: no rseq path here");
}
