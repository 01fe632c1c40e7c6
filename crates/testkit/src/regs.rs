//! The vector registers as they are now, as 16-byte lanes: `xmm0`–`xmm15` on every x86_64
//! CPU, all of `ymm0`–`ymm15` where the CPU has AVX, all of `zmm0`–`zmm31` where it has
//! AVX-512F; `v0`–`v31` on aarch64. A signal delivered at that moment saves exactly these
//! into a frame on the thread's stack.

/// Room for every lane of every register ([`dump`] fills the first lanes it returns).
pub const MAX_LANES: usize = 128;

/// Room for every general-purpose register [`dump_gprs`] reads.
pub const MAX_GPRS: usize = 32;

/// Where [`dump_gprs`] stores the registers first: a static reached by address alone (an
/// RIP-relative store on x86_64), so that no register has to be loaded with a pointer before
/// every register is saved. One dump at a time in a process.
#[repr(C, align(16))]
struct GprDump(core::cell::UnsafeCell<[u64; MAX_GPRS]>);

// SAFETY: written only by `dump_gprs`, whose callers promise one dump at a time.
unsafe impl Sync for GprDump {}

#[unsafe(no_mangle)]
static SCALRAND_TESTKIT_GPRS: GprDump = GprDump(core::cell::UnsafeCell::new([0; MAX_GPRS]));

/// Writes the general-purpose registers as they are now to `out` and returns how many it
/// wrote: `rax`, `rbx`, `rcx`, `rdx`, `rsi`, `rdi`, `rbp`, `r8`–`r15` on x86_64 (all but
/// `rsp`); `x0`–`x28` on aarch64 (all but the frame pointer, the link register and `sp`); 0
/// elsewhere. Call it right after the call under test, before anything else.
///
/// # Safety
/// No other thread calls it at the same time (the registers pass through one static).
#[inline(always)]
pub unsafe fn dump_gprs(out: &mut [u64; MAX_GPRS]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: stores into the static through RIP-relative addresses only; no register is
        // written; the caller keeps dumps apart.
        unsafe {
            core::arch::asm!(
                "mov qword ptr [rip + {d}], rax",
                "mov qword ptr [rip + {d} + 8], rbx",
                "mov qword ptr [rip + {d} + 16], rcx",
                "mov qword ptr [rip + {d} + 24], rdx",
                "mov qword ptr [rip + {d} + 32], rsi",
                "mov qword ptr [rip + {d} + 40], rdi",
                "mov qword ptr [rip + {d} + 48], rbp",
                "mov qword ptr [rip + {d} + 56], r8",
                "mov qword ptr [rip + {d} + 64], r9",
                "mov qword ptr [rip + {d} + 72], r10",
                "mov qword ptr [rip + {d} + 80], r11",
                "mov qword ptr [rip + {d} + 88], r12",
                "mov qword ptr [rip + {d} + 96], r13",
                "mov qword ptr [rip + {d} + 104], r14",
                "mov qword ptr [rip + {d} + 112], r15",
                d = sym SCALRAND_TESTKIT_GPRS,
                options(nostack, preserves_flags),
            );
        }
        copy_gprs(out, 15)
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: `x0` goes to a 16-byte slot below the stack pointer (pushed and popped
        // here), then `x0` holds the static's address and the others are stored there;
        // `x0` and `x1` are declared clobbered; the caller keeps dumps apart.
        unsafe {
            core::arch::asm!(
                "str x0, [sp, #-16]!",
                "adrp x0, {d}",
                "add x0, x0, :lo12:{d}",
                "stp x1, x2, [x0, #8]",
                "stp x3, x4, [x0, #24]",
                "stp x5, x6, [x0, #40]",
                "stp x7, x8, [x0, #56]",
                "stp x9, x10, [x0, #72]",
                "stp x11, x12, [x0, #88]",
                "stp x13, x14, [x0, #104]",
                "stp x15, x16, [x0, #120]",
                "stp x17, x18, [x0, #136]",
                "stp x19, x20, [x0, #152]",
                "stp x21, x22, [x0, #168]",
                "stp x23, x24, [x0, #184]",
                "stp x25, x26, [x0, #200]",
                "stp x27, x28, [x0, #216]",
                "ldr x1, [sp], #16",
                "str x1, [x0]",
                d = sym SCALRAND_TESTKIT_GPRS,
                out("x0") _,
                out("x1") _,
                options(preserves_flags),
            );
        }
        copy_gprs(out, 29)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = out;
        0
    }
}

/// The first `n` registers of the static into `out`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn copy_gprs(out: &mut [u64; MAX_GPRS], n: usize) -> usize {
    // SAFETY: the dump just wrote the static; nothing else writes it now (the caller's
    // promise).
    let regs = unsafe { *SCALRAND_TESTKIT_GPRS.0.get() };
    out[..n].copy_from_slice(&regs[..n]);
    n
}

/// Writes the vector registers, lane by lane, to `out` and returns how many lanes it wrote
/// (0 on other architectures). Call it right after the call under test: nothing in between
/// may use a vector register.
#[inline(always)]
pub fn dump(out: &mut [[u8; 16]; MAX_LANES]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // The feature checks read a cached word: no vector register is touched before the
        // stores.
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present (checked above); 2048 bytes are written into `out`.
            unsafe { dump_zmm(out.as_mut_ptr().cast()) };
            return 128;
        }
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: AVX is present; 512 bytes are written into `out`.
            unsafe { dump_ymm(out.as_mut_ptr().cast()) };
            return 32;
        }
        // SAFETY: 256 bytes are written into `out`.
        unsafe { dump_xmm(out.as_mut_ptr().cast()) };
        16
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: 512 bytes are written into `out`.
        unsafe { dump_neon(out.as_mut_ptr().cast()) };
        32
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = out;
        0
    }
}

/// Zeroes every vector register [`dump`] reads. A search computes and copies the pieces it
/// looks for through vector registers (glibc's `memcpy` uses `ymm16`–`ymm31` on AVX-512
/// CPUs, which little else touches); left there, a signal delivered during the next call
/// under test saves them into a frame on the stack, where the next search finds them.
#[inline(never)]
#[rustfmt::skip]
pub fn clear() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F is present (checked above).
            unsafe { clear_zmm() };
        } else if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: AVX is present.
            unsafe { clear_ymm() };
        } else {
            // SAFETY: register-only instructions; every register written is declared
            // clobbered (all of them are caller-saved).
            unsafe {
                core::arch::asm!(
                    "xorps xmm0, xmm0", "xorps xmm1, xmm1", "xorps xmm2, xmm2", "xorps xmm3, xmm3",
                    "xorps xmm4, xmm4", "xorps xmm5, xmm5", "xorps xmm6, xmm6", "xorps xmm7, xmm7",
                    "xorps xmm8, xmm8", "xorps xmm9, xmm9", "xorps xmm10, xmm10",
                    "xorps xmm11, xmm11", "xorps xmm12, xmm12", "xorps xmm13, xmm13",
                    "xorps xmm14, xmm14", "xorps xmm15, xmm15",
                    clobber_abi("C"),
                    options(nomem, nostack),
                );
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register-only instructions; every register written is declared clobbered
    // (`clobber_abi("C")` covers all of `v0`–`v31`: the compiler saves and restores the
    // callee-saved low halves of `v8`–`v15` around this call, so those are its caller's).
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
            clobber_abi("C"),
            options(nomem, nostack),
        );
    }
}

/// # Safety
/// The CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline(never)]
unsafe fn clear_ymm() {
    // SAFETY: register-only; `vzeroall` writes only caller-saved registers, declared clobbered.
    unsafe { core::arch::asm!("vzeroall", clobber_abi("C"), options(nomem, nostack)) };
}

/// # Safety
/// The CPU has AVX-512F and the OS saves its state.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline(never)]
#[rustfmt::skip]
unsafe fn clear_zmm() {
    // SAFETY: register-only; every register written is caller-saved and declared clobbered.
    unsafe {
        core::arch::asm!(
            "vzeroall",
            "vpxord zmm16, zmm16, zmm16", "vpxord zmm17, zmm17, zmm17",
            "vpxord zmm18, zmm18, zmm18", "vpxord zmm19, zmm19, zmm19",
            "vpxord zmm20, zmm20, zmm20", "vpxord zmm21, zmm21, zmm21",
            "vpxord zmm22, zmm22, zmm22", "vpxord zmm23, zmm23, zmm23",
            "vpxord zmm24, zmm24, zmm24", "vpxord zmm25, zmm25, zmm25",
            "vpxord zmm26, zmm26, zmm26", "vpxord zmm27, zmm27, zmm27",
            "vpxord zmm28, zmm28, zmm28", "vpxord zmm29, zmm29, zmm29",
            "vpxord zmm30, zmm30, zmm30", "vpxord zmm31, zmm31, zmm31",
            clobber_abi("C"),
            options(nomem, nostack),
        );
    }
}

/// # Safety
/// `p` is valid for 256 bytes of writes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn dump_xmm(p: *mut u8) {
    // SAFETY: stores into the caller's 256 bytes; registers are only read.
    unsafe {
        core::arch::asm!(
            "movdqu [{p}], xmm0", "movdqu [{p} + 16], xmm1", "movdqu [{p} + 32], xmm2",
            "movdqu [{p} + 48], xmm3", "movdqu [{p} + 64], xmm4", "movdqu [{p} + 80], xmm5",
            "movdqu [{p} + 96], xmm6", "movdqu [{p} + 112], xmm7", "movdqu [{p} + 128], xmm8",
            "movdqu [{p} + 144], xmm9", "movdqu [{p} + 160], xmm10", "movdqu [{p} + 176], xmm11",
            "movdqu [{p} + 192], xmm12", "movdqu [{p} + 208], xmm13", "movdqu [{p} + 224], xmm14",
            "movdqu [{p} + 240], xmm15",
            p = in(reg) p,
            options(nostack, preserves_flags),
        );
    }
}

/// # Safety
/// The CPU has AVX; `p` is valid for 512 bytes of writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline(never)]
unsafe fn dump_ymm(p: *mut u8) {
    // SAFETY: stores into the caller's 512 bytes; registers are only read.
    unsafe {
        core::arch::asm!(
            "vmovdqu [{p}], ymm0", "vmovdqu [{p} + 32], ymm1", "vmovdqu [{p} + 64], ymm2",
            "vmovdqu [{p} + 96], ymm3", "vmovdqu [{p} + 128], ymm4", "vmovdqu [{p} + 160], ymm5",
            "vmovdqu [{p} + 192], ymm6", "vmovdqu [{p} + 224], ymm7", "vmovdqu [{p} + 256], ymm8",
            "vmovdqu [{p} + 288], ymm9", "vmovdqu [{p} + 320], ymm10", "vmovdqu [{p} + 352], ymm11",
            "vmovdqu [{p} + 384], ymm12", "vmovdqu [{p} + 416], ymm13", "vmovdqu [{p} + 448], ymm14",
            "vmovdqu [{p} + 480], ymm15",
            p = in(reg) p,
            options(nostack, preserves_flags),
        );
    }
}

/// # Safety
/// The CPU has AVX-512F and the OS saves its state; `p` is valid for 2048 bytes of writes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn dump_zmm(p: *mut u8) {
    // SAFETY: stores into the caller's 2048 bytes; registers are only read.
    unsafe {
        core::arch::asm!(
            "vmovdqu64 [{p}], zmm0", "vmovdqu64 [{p} + 64], zmm1", "vmovdqu64 [{p} + 128], zmm2",
            "vmovdqu64 [{p} + 192], zmm3", "vmovdqu64 [{p} + 256], zmm4", "vmovdqu64 [{p} + 320], zmm5",
            "vmovdqu64 [{p} + 384], zmm6", "vmovdqu64 [{p} + 448], zmm7", "vmovdqu64 [{p} + 512], zmm8",
            "vmovdqu64 [{p} + 576], zmm9", "vmovdqu64 [{p} + 640], zmm10", "vmovdqu64 [{p} + 704], zmm11",
            "vmovdqu64 [{p} + 768], zmm12", "vmovdqu64 [{p} + 832], zmm13", "vmovdqu64 [{p} + 896], zmm14",
            "vmovdqu64 [{p} + 960], zmm15", "vmovdqu64 [{p} + 1024], zmm16", "vmovdqu64 [{p} + 1088], zmm17",
            "vmovdqu64 [{p} + 1152], zmm18", "vmovdqu64 [{p} + 1216], zmm19", "vmovdqu64 [{p} + 1280], zmm20",
            "vmovdqu64 [{p} + 1344], zmm21", "vmovdqu64 [{p} + 1408], zmm22", "vmovdqu64 [{p} + 1472], zmm23",
            "vmovdqu64 [{p} + 1536], zmm24", "vmovdqu64 [{p} + 1600], zmm25", "vmovdqu64 [{p} + 1664], zmm26",
            "vmovdqu64 [{p} + 1728], zmm27", "vmovdqu64 [{p} + 1792], zmm28", "vmovdqu64 [{p} + 1856], zmm29",
            "vmovdqu64 [{p} + 1920], zmm30", "vmovdqu64 [{p} + 1984], zmm31",
            p = in(reg) p,
            options(nostack, preserves_flags),
        );
    }
}

/// # Safety
/// `p` is valid for 512 bytes of writes.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn dump_neon(p: *mut u8) {
    // SAFETY: stores into the caller's 512 bytes; registers are only read.
    unsafe {
        core::arch::asm!(
            "stp q0, q1, [{p}]", "stp q2, q3, [{p}, #32]", "stp q4, q5, [{p}, #64]",
            "stp q6, q7, [{p}, #96]", "stp q8, q9, [{p}, #128]", "stp q10, q11, [{p}, #160]",
            "stp q12, q13, [{p}, #192]", "stp q14, q15, [{p}, #224]", "stp q16, q17, [{p}, #256]",
            "stp q18, q19, [{p}, #288]", "stp q20, q21, [{p}, #320]", "stp q22, q23, [{p}, #352]",
            "stp q24, q25, [{p}, #384]", "stp q26, q27, [{p}, #416]", "stp q28, q29, [{p}, #448]",
            "stp q30, q31, [{p}, #480]",
            p = in(reg) p,
            options(nostack, preserves_flags),
        );
    }
}
