//! Erasure after every cipher call: the stack the backend's frames used is zeroed to a depth
//! measured per backend, and the vector registers that may hold key words or unread keystream
//! are cleared. Also the test hook that shows every derived key to an observer, so that the
//! erasure tests can look for copies of it.

use super::vocab::KEY_LEN;

/// Stack bytes below the caller's frame that [`end_section`] zeroes after every backend call
/// (with what a signal frame can add below them):
/// at least the deepest any backend reaches, measured by `tests/numa_erasure.rs`
/// (`backend_stack_depth_is_within_the_wipe`, which paints the stack, runs each call and finds
/// the lowest byte written, with a margin it checks). Builds without optimisation spill every
/// temporary and keep frames many times deeper, so they wipe 64 KiB.
#[cfg(not(debug_assertions))]
pub(crate) const WIPE_DEPTH: usize = 2048;
/// See the optimised builds' value.
#[cfg(debug_assertions)]
pub(crate) const WIPE_DEPTH: usize = 64 * 1024;

/// Ends a [`Section`](super::section::Section) (the contract is there): clears the vector and
/// general-purpose registers ([`clear_vector_registers`]), then wipes the stack below the
/// caller: the section's frames ([`WIPE_DEPTH`] deep at most) when `w` says nothing
/// interrupted the thread and `interrupted` (a restartable sequence's abort) is false, else
/// as far below them as a signal frame written while they ran can reach
/// ([`scalrand_os::signal::wipe_stack`]) and the top of the thread's alternate signal stack
/// ([`scalrand_os::signal::wipe_alternate_stack`]). Not inlined: the wipes start right below its frame,
/// which sits where the section's callees' frames began.
#[inline(never)]
pub(super) fn end_section(w: &scalrand_os::signal::Watch, interrupted: bool) {
    clear_vector_registers();
    if !interrupted && w.quiet() {
        wipe_own_frames();
    } else {
        scalrand_os::signal::wipe_stack(WIPE_DEPTH);
        // Something did interrupt the section (or, with no watch armed, may have): a handler
        // may have run on the alternate stack.
        scalrand_os::signal::wipe_alternate_stack();
    }
}

/// The short wipe of a section nothing interrupted: [`WIPE_DEPTH`] zero bytes in a frame of
/// its own, right below [`end_section`]'s. Not in `end_section`'s own frame: a frame holds
/// its buffer whichever branch runs, so the wipe past a signal frame, from below it, would
/// leave the top [`WIPE_DEPTH`] bytes below the caller (where the section's frames were)
/// unwiped.
#[inline(never)]
fn wipe_own_frames() {
    let buf = [0u8; WIPE_DEPTH];
    core::hint::black_box(&buf);
}

/// Ends a section inside a Fortuna operation, whose own end ([`super::wipe_stack_bytes`],
/// from a frame above) always wipes as far as a signal frame can reach: registers cleared and
/// the section's own frames wiped.
#[cfg(feature = "fortuna")]
#[inline(never)]
pub(super) fn end_section_shallow() {
    clear_vector_registers();
    let buf = [0u8; WIPE_DEPTH];
    core::hint::black_box(&buf);
}

/// The stack wipe of [`end_section`] with a depth of `BYTES` of the caller's own frames: for callers whose frames
/// below reach deeper than one backend call (Fortuna's reads, with the AES key schedule).
#[cfg(feature = "fortuna")]
#[inline(never)]
pub(crate) fn wipe_stack_bytes<const BYTES: usize>() {
    scalrand_os::signal::wipe_stack(BYTES);
}

/// Stack bytes wiped after every Fortuna read, reseed and construction where its AES-256 is
/// the bitsliced software AES (CPUs without AES instructions, other architectures): the deepest a read
/// reaches below the entry point (the generator's SHA-256, and the software AES's working
/// frame where it falls back to the stack: no wipe-on-fork memory of its own, or every frame
/// busy), measured by `tests/numa_erasure.rs` (`fortuna_stack_use_is_within_the_wipe`).
/// Unoptimised builds: 64 KiB.
#[cfg(feature = "fortuna")]
#[cfg(not(debug_assertions))]
pub(crate) const FORTUNA_WIPE_DEPTH: usize = 8192;
/// See the optimised builds' value.
#[cfg(feature = "fortuna")]
#[cfg(debug_assertions)]
pub(crate) const FORTUNA_WIPE_DEPTH: usize = 64 * 1024;

/// [`FORTUNA_WIPE_DEPTH`] where Fortuna's AES-256 runs on AES-NI (x86_64), whose frames are
/// small: measured by the same test in every CI run.
#[cfg(feature = "fortuna")]
#[cfg(not(debug_assertions))]
pub(crate) const FORTUNA_WIPE_DEPTH_OWN: usize = 4608;
/// See the optimised builds' value.
#[cfg(feature = "fortuna")]
#[cfg(debug_assertions)]
pub(crate) const FORTUNA_WIPE_DEPTH_OWN: usize = 64 * 1024;

// Whether the CPU has AVX and AVX-512F, for clearing registers, whatever backend a forcing cfg
// allows: code outside the backends uses them too (the C library's `memcpy` on AVX-512 CPUs
// works in `ymm16`–`ymm31`, which `vzeroall` leaves alone; the `aes` crate's VAES path).
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(clear_avx_cpuid, "avx");
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(clear_avx512_cpuid, "avx512f");

/// Clears the vector registers that the keystream (and, for Fortuna, the block cipher) may have
/// left key-derived values in: on x86_64 `xmm0`–`xmm15`, their `ymm` upper halves where the
/// CPU has AVX (`vzeroall`), and all of `zmm0`–`zmm31` where it has AVX-512F (whichever
/// backend this build runs: the C library's `memcpy` uses `ymm16`–`ymm31` there, and a key
/// copy through it leaves key bytes in them); `v0`–`v31` on aarch64 with NEON. Every one of
/// them is caller-saved (x86-64 System V ABI, section 3.2.1; AAPCS64 for the upper halves of
/// `v8`–`v15`), so the compiler keeps nothing of its own in them across this call.
///
/// The general-purpose registers a key copy passes through are zeroed too (`clear_gprs` on
/// x86_64, `clear_gprs_aarch64` on aarch64).
///
/// The one place registers are cleared: after the whole keystream or block call (the bulk
/// backends, then the single-block SSE2 function that every x86_64 path runs for a last
/// partial block, or code the compiler vectorised in the portable backend), after the last
/// key copy of a refill or a key derivation, and after Fortuna's block cipher.
#[inline]
pub(crate) fn clear_vector_registers() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        if clear_avx512_cpuid::get() {
            // SAFETY: `clear_zmm` is `#[target_feature(enable = "avx512f")]`; the cached
            // token says the CPU executes AVX-512F and the OS saves zmm state.
            unsafe {
                clear_zmm();
            }
        } else if clear_avx_cpuid::get() {
            // SAFETY: `clear_ymm` needs AVX, which the cached token just read says the CPU
            // executes and the OS saves.
            unsafe { clear_ymm() };
        } else {
            clear_xmm();
        }
        clear_gprs();
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri)
    ))]
    clear_neon();
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    clear_gprs_aarch64();
}

/// Zeroes the general-purpose registers a key copy may pass through on aarch64: the
/// caller-saved `x0`–`x17`, and the callee-saved `x20`–`x28` (`x19` is reserved to the
/// compiler; `x18` is the platform register on some systems and left alone everywhere). Left
/// there, key words reach the caller (the caller-saved ones) or a later function's prologue
/// pushes them onto the stack (the callee-saved ones), where a fork child finds them. The
/// compiler saves and restores around this call any value of its own that lives in them.
#[cfg(all(target_arch = "aarch64", not(miri)))]
#[inline(always)]
fn clear_gprs_aarch64() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "mov x0, xzr", "mov x1, xzr", "mov x2, xzr", "mov x3, xzr", "mov x4, xzr",
            "mov x5, xzr", "mov x6, xzr", "mov x7, xzr", "mov x8, xzr", "mov x9, xzr",
            "mov x10, xzr", "mov x11, xzr", "mov x12, xzr", "mov x13, xzr", "mov x14, xzr",
            "mov x15, xzr", "mov x16, xzr", "mov x17, xzr",
            "mov x20, xzr", "mov x21, xzr", "mov x22, xzr", "mov x23, xzr", "mov x24, xzr",
            "mov x25, xzr", "mov x26, xzr", "mov x27, xzr", "mov x28, xzr",
            out("x0") _, out("x1") _, out("x2") _, out("x3") _, out("x4") _,
            out("x5") _, out("x6") _, out("x7") _, out("x8") _, out("x9") _,
            out("x10") _, out("x11") _, out("x12") _, out("x13") _, out("x14") _,
            out("x15") _, out("x16") _, out("x17") _,
            out("x20") _, out("x21") _, out("x22") _, out("x23") _, out("x24") _,
            out("x25") _, out("x26") _, out("x27") _, out("x28") _,
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// Zeroes the general-purpose registers a key copy may pass through, the callee-saved ones
/// (`r12`–`r15`) included: left there, a later function's prologue pushes them onto the
/// stack, where a fork child finds them. The compiler saves and restores around this call
/// any value of its own that lives in them.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
fn clear_gprs() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "xor eax, eax", "xor ecx, ecx", "xor edx, edx", "xor esi, esi", "xor edi, edi",
            "xor r8d, r8d", "xor r9d, r9d", "xor r10d, r10d", "xor r11d, r11d",
            "xor r12d, r12d", "xor r13d, r13d", "xor r14d, r14d", "xor r15d, r15d",
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _, out("rdi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(nomem, nostack),
        );
    }
}

/// `vzeroall`: `ymm0`–`ymm15` (and the upper bits of `zmm0`–`zmm15`) zeroed.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx")]
#[inline]
fn clear_ymm() {
    core::arch::x86_64::_mm256_zeroall();
}

/// Clears `xmm0`–`xmm15` with SSE instructions (part of the x86_64 baseline).
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline]
fn clear_xmm() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "xorps xmm0, xmm0", "xorps xmm1, xmm1", "xorps xmm2, xmm2", "xorps xmm3, xmm3",
            "xorps xmm4, xmm4", "xorps xmm5, xmm5", "xorps xmm6, xmm6", "xorps xmm7, xmm7",
            "xorps xmm8, xmm8", "xorps xmm9, xmm9", "xorps xmm10, xmm10", "xorps xmm11, xmm11",
            "xorps xmm12, xmm12", "xorps xmm13, xmm13", "xorps xmm14, xmm14",
            "xorps xmm15, xmm15",
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// Clears `zmm16`–`zmm31`, which `vzeroall` leaves alone, then `zmm0`–`zmm15`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx512f")]
#[inline]
fn clear_zmm() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered; the caller's token guarantees AVX-512F.
    unsafe {
        core::arch::asm!(
            "vpxord zmm16, zmm16, zmm16", "vpxord zmm17, zmm17, zmm17",
            "vpxord zmm18, zmm18, zmm18", "vpxord zmm19, zmm19, zmm19",
            "vpxord zmm20, zmm20, zmm20", "vpxord zmm21, zmm21, zmm21",
            "vpxord zmm22, zmm22, zmm22", "vpxord zmm23, zmm23, zmm23",
            "vpxord zmm24, zmm24, zmm24", "vpxord zmm25, zmm25, zmm25",
            "vpxord zmm26, zmm26, zmm26", "vpxord zmm27, zmm27, zmm27",
            "vpxord zmm28, zmm28, zmm28", "vpxord zmm29, zmm29, zmm29",
            "vpxord zmm30, zmm30, zmm30", "vpxord zmm31, zmm31, zmm31",
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nomem, nostack, preserves_flags),
        );
    }
    core::arch::x86_64::_mm256_zeroall();
}

/// Clears `v0`–`v31`: the NEON backend's state and temporaries, including the upper halves
/// of `v8`–`v15`, which the AAPCS64 does not preserve (the compiler restores only their low
/// 64 bits, the caller's own values, around this call).
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    target_feature = "neon",
    not(miri)
))]
#[inline]
fn clear_neon() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "movi v0.16b, #0", "movi v1.16b, #0", "movi v2.16b, #0", "movi v3.16b, #0",
            "movi v4.16b, #0", "movi v5.16b, #0", "movi v6.16b, #0", "movi v7.16b, #0",
            "movi v8.16b, #0", "movi v9.16b, #0", "movi v10.16b, #0", "movi v11.16b, #0",
            "movi v12.16b, #0", "movi v13.16b, #0", "movi v14.16b, #0", "movi v15.16b, #0",
            "movi v16.16b, #0", "movi v17.16b, #0", "movi v18.16b, #0", "movi v19.16b, #0",
            "movi v20.16b, #0", "movi v21.16b, #0", "movi v22.16b, #0", "movi v23.16b, #0",
            "movi v24.16b, #0", "movi v25.16b, #0", "movi v26.16b, #0", "movi v27.16b, #0",
            "movi v28.16b, #0", "movi v29.16b, #0", "movi v30.16b, #0", "movi v31.16b, #0",
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// The key observer of the erasure tests (a `fn` pointer as a word; 0: none).
static KEY_OBSERVER: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Test hook (`doc(hidden)`, not API): from now on `f` sees every key the pools and their
/// generators derive (node keys, slot keys, one-read keys, the keys of a huge read's chunks),
/// right after it is made, so a test can look for copies of it outside the pools' secret
/// memory (`tests/numa_erasure.rs`). `None` stops it. Costs one relaxed load per derived key.
#[doc(hidden)]
pub fn __observe_keys(f: Option<fn(&[u8; KEY_LEN])>) {
    KEY_OBSERVER.store(
        f.map_or(0, |f| f as usize),
        core::sync::atomic::Ordering::Release,
    );
}

/// Shows `key` to the test observer, if one is set.
#[inline]
pub(crate) fn observe_key(key: &[u8; KEY_LEN]) {
    let f = KEY_OBSERVER.load(core::sync::atomic::Ordering::Acquire);
    if f != 0 {
        // SAFETY: the only nonzero values stored are `fn(&[u8; KEY_LEN])` pointers cast to
        // `usize` (in `__observe_keys`), and a function pointer round-trips through `usize`.
        let f = unsafe { core::mem::transmute::<usize, fn(&[u8; KEY_LEN])>(f) };
        f(key);
    }
}

/// Test hook (`doc(hidden)`, not API): the stack depth wiped after every backend call.
#[doc(hidden)]
pub const __WIPE_DEPTH: usize = WIPE_DEPTH;
