//! What a signal leaves on a thread's stack, and the wipe that removes it after code that held
//! a secret.
//!
//! When a signal is delivered to a thread running on its own stack, the kernel saves every
//! register of the interrupted code (general-purpose, and the vector state: on x86_64 the
//! `xsave` area, 2.7 KB with AVX-512) in a frame it writes below the interrupted stack
//! pointer, past the red zone (128 bytes on x86_64 System V), and runs the handler below
//! that frame. When the handler returns, nothing erases the frame. Code that held a key in a
//! register at that instruction has left the key in the frame, where a child forked later, a
//! core dump, or any read of the stack finds it, long after the code's own erasure of the
//! registers and of its own frames.
//!
//! [`wipe_stack`] zeroes the stack below its caller to the depth the caller's own secret-
//! holding frames reach *plus* what a signal delivered anywhere in them can write: the red
//! zone, the kernel's frame ([`frame_bytes`]) and [`HANDLER_BYTES`] for the start of the
//! handler (its prologue pushes the registers it will use, which still hold the interrupted
//! code's values). Every secret-holding section of the pools ends with it.
//!
//! A handler that runs on an alternate stack (`sigaltstack`, `SA_ONSTACK`) writes the frame
//! there instead: [`wipe_alternate_stack`] zeroes its top, for a section whose [`Watch`] is
//! not quiet (with an rseq area, when something interrupted it; without one, always). What
//! neither reaches: a handler that itself goes deeper than [`HANDLER_BYTES`], which leaves
//! the interrupted registers (which it saved) below the wipe.

/// Bytes of the x86_64 System V red zone below the stack pointer, which a signal frame skips;
/// 0 elsewhere (AAPCS64 has none; Apple's arm64 ABI keeps 128 bytes, counted here).
pub const RED_ZONE: usize = if cfg!(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_vendor = "apple")
)) {
    128
} else {
    0
};

/// Bytes below the kernel's frame counted for the start of a handler that does little (the
/// registers its prologue saves, a return address, a few locals).
pub const HANDLER_BYTES: usize = 512;

/// The signal frame size assumed where the kernel does not say ([`frame_bytes`]).
const DEFAULT_FRAME_BYTES: usize = 4096;

/// The largest frame [`wipe_stack`] reaches past; frames larger than this (x86 AMX tile
/// state, 8 KiB more, in a thread that asked for it) are covered up to this size.
pub const MAX_FRAME_BYTES: usize = 12 * 1024;

/// The cached [`frame_bytes`] (0: not yet asked).
static FRAME_BYTES: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Bytes the kernel's signal frame takes on the machine the program runs on: Linux's
/// `AT_MINSIGSTKSZ` auxiliary vector entry (the frame for this CPU's register state, on x86_64
/// since Linux 5.14 and on arm64 since 4.18), else 4 KiB (more than an x86_64 frame with AVX-512
/// state, or an arm64 frame without SVE), at most [`MAX_FRAME_BYTES`]. Asked once, then cached;
/// async-signal-safe.
pub fn frame_bytes() -> usize {
    let cached = FRAME_BYTES.load(core::sync::atomic::Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    let bytes = kernel_frame_bytes()
        .unwrap_or(DEFAULT_FRAME_BYTES)
        .clamp(1, MAX_FRAME_BYTES);
    FRAME_BYTES.store(bytes, core::sync::atomic::Ordering::Relaxed);
    bytes
}

#[cfg(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri),
    not(scalrand_loom)
))]
fn kernel_frame_bytes() -> Option<usize> {
    /// `AT_MINSIGSTKSZ` (include/uapi/linux/auxvec.h).
    const AT_MINSIGSTKSZ: crate::sys::c_ulong = 51;
    // SAFETY: getauxval(3) reads the process's auxiliary vector; it has no preconditions and
    // returns 0 for an entry the kernel did not pass.
    let v = unsafe { crate::sys::getauxval(AT_MINSIGSTKSZ) };
    usize::try_from(v).ok().filter(|&v| v != 0)
}

#[cfg(not(all(
    feature = "std",
    any(target_os = "linux", target_os = "android"),
    not(miri),
    not(scalrand_loom)
)))]
fn kernel_frame_bytes() -> Option<usize> {
    None
}

/// A watch over a stretch of code for anything that interrupted the thread there (a signal,
/// preemption, migration): [`watch`] arms it, [`Watch::quiet`] says whether nothing did.
///
/// With a registered rseq area (Linux, glibc 2.35+), arming stores the address of an rseq
/// descriptor whose critical section is empty into the area's `rseq_cs` field; whenever the
/// kernel delivers a signal to the thread or preempts it, it finds the interrupted address
/// outside that section and clears the field (the rseq ABI, `include/uapi/linux/rseq.h`:
/// "set to NULL by the kernel when it ... detects that it is preempting or delivering a
/// signal outside of the range targeted by the rseq_cs"). A restartable section run inside
/// the stretch replaces the field too. So `quiet` is true only when the field still holds
/// the descriptor: no signal frame was written during the stretch, and a section may end
/// with the short wipe of its own frames. Without an rseq area (other systems, a thread that
/// unregistered, [`disable_rseq`](crate::cpu::disable_rseq)) a watch is never quiet.
#[derive(Debug)]
#[must_use = "a watch says whether the section it watched must wipe past a signal frame"]
pub struct Watch {
    /// The descriptor's address and the rseq offset; 0 when not armed.
    armed: usize,
    off: isize,
}

crate::cfg_rseq! {
    if {
        /// Arms a [`Watch`] (see there). Three loads and a store.
        #[inline]
        pub fn watch() -> Watch {
            let Some(off) = crate::cpu::rseq_offset() else {
                return Watch { armed: 0, off: 0 };
            };
            let d: usize;
            // SAFETY: emits a descriptor (version 0, flags 0, `start_ip` = `abort_ip` = label
            // 6, `post_commit_offset` 0: a section no address is ever inside) into
            // `__rseq_cs`, and, in `__rseq_failure`, glibc's x86 signature before label 6 (the
            // kernel checks it when it reads the descriptor; the address is never run). Then,
            // if the thread's `cpu_id` shows a registration (not negative), stores the
            // descriptor's address into the thread's own `rseq_cs` field, at `fs:[off + 8]`.
            unsafe {
                core::arch::asm!(
                    ".pushsection __rseq_cs, \"aw\"",
                    ".balign 32",
                    "3:",
                    ".long 0, 0",
                    ".quad 6f, 0, 6f",
                    ".popsection",
                    ".pushsection __rseq_failure, \"ax\"",
                    ".byte 0x0f, 0xb9, 0x3d",
                    ".long 0x53053053",
                    "6:",
                    "ud2",
                    ".popsection",
                    "xor {d:e}, {d:e}",
                    "cmp dword ptr fs:[{off} + 4], 0",
                    "jl 2f",
                    "lea {d}, [rip + 3b]",
                    "mov qword ptr fs:[{off} + 8], {d}",
                    "2:",
                    off = in(reg) off,
                    d = out(reg) d,
                    options(nostack),
                );
            }
            Watch { armed: d, off }
        }

        impl Watch {
            /// Whether nothing interrupted the thread since [`watch`] (see [`Watch`]); disarms
            /// it.
            #[inline]
            pub fn quiet(&self) -> bool {
                if self.armed == 0 {
                    return false;
                }
                let cur: usize;
                // SAFETY: the thread's own rseq area (armed above, so glibc registered it): a
                // load of `rseq_cs`, and a store of 0 when it still holds the descriptor.
                unsafe {
                    core::arch::asm!(
                        "mov {c}, qword ptr fs:[{off} + 8]",
                        "cmp {c}, {d}",
                        "jne 2f",
                        "mov qword ptr fs:[{off} + 8], 0",
                        "2:",
                        off = in(reg) self.off,
                        d = in(reg) self.armed,
                        c = out(reg) cur,
                        options(nostack),
                    );
                }
                cur == self.armed
            }
        }

    } else {
        /// Arms a [`Watch`] (see there): never quiet here.
        #[inline]
        pub fn watch() -> Watch {
            Watch { armed: 0, off: 0 }
        }

        impl Watch {
            /// Whether nothing interrupted the thread since [`watch`]: never known here.
            #[inline]
            pub fn quiet(&self) -> bool {
                let _ = (self.armed, self.off);
                false
            }
        }
    }
}

/// Keeps the items of its first block where `libc` binds `sigaltstack(2)` (with `std`, outside
/// miri and loom: Linux, Android, macOS, iOS, the BSDs, illumos and Solaris), and those of its
/// `else` block elsewhere (no signals, or a C library without it: Emscripten, QNX).
macro_rules! cfg_sigaltstack {
    (if { $($yes:item)* } else { $($no:item)* }) => {
        crate::__cfg_split! {
            (all(
                feature = "std",
                any(
                    target_os = "linux",
                    target_os = "android",
                    target_os = "macos",
                    target_os = "ios",
                    target_os = "freebsd",
                    target_os = "netbsd",
                    target_os = "openbsd",
                    target_os = "dragonfly",
                    target_os = "illumos",
                    target_os = "solaris"
                ),
                not(miri),
                not(scalrand_loom)
            ))
            [$($yes)*]
            [$($no)*]
        }
    };
}

cfg_sigaltstack! {
    if {
        /// Zeroes the top of the calling thread's alternate signal stack, where the kernel
        /// writes the frame of a handler installed with `SA_ONSTACK` (the interrupted
        /// registers, keys among them if a section held one) and the handler starts: the
        /// topmost [`frame_bytes`] + [`HANDLER_BYTES`] + 64 bytes (its alignment) of the
        /// stack `sigaltstack(2)` reports. Nothing when none is installed, or when the thread
        /// runs on it now (a section inside such a handler: its frames are on that stack,
        /// and [`wipe_stack`] reaches them). One `sigaltstack` system call: for a section
        /// whose [`Watch`] is not quiet, which with an rseq area is rare (a signal or a
        /// preemption came) and without one is every section (nothing can tell). An alternate
        /// stack must stay writable memory while it is installed (the kernel writes a frame
        /// there on any `SA_ONSTACK` signal): one whose memory was freed without `SS_DISABLE`
        /// would be written here too.
        #[inline(never)]
        pub fn wipe_alternate_stack() {
            // SAFETY: an all-zero `stack_t` is valid; sigaltstack(2) with a null new stack
            // only reports the current one into it.
            let mut ss: crate::sys::stack_t = unsafe { core::mem::zeroed() };
            // SAFETY: as above.
            if unsafe { crate::sys::sigaltstack(core::ptr::null(), &raw mut ss) } != 0
                || ss.ss_flags & (crate::sys::SS_DISABLE | crate::sys::SS_ONSTACK) != 0
                || ss.ss_sp.is_null()
            {
                return;
            }
            let n = (frame_bytes() + HANDLER_BYTES + 64).min(ss.ss_size);
            let top = ss.ss_sp as usize + ss.ss_size;
            let start = top - n;
            // Whole aligned words, and the bytes before and after them.
            let (words_from, words_to) = ((start + 7) & !7, top & !7);
            let bytes = (start..words_from.min(top)).chain(words_to.max(words_from)..top);
            // Both loops: the thread's own alternate stack, installed and not in use
            // by this thread (not `SS_ONSTACK`): `ss_size` bytes from `ss_sp` that must stay
            // writable while installed (the kernel writes a frame there on any `SA_ONSTACK`
            // signal) and that no live frame occupies. A handler that runs meanwhile writes
            // its frame there and is gone before this goes on (the same thread). Word stores
            // at aligned addresses; volatile: the stores are dead to the compiler.
            for a in (words_from..words_to).step_by(8) {
                // SAFETY: an aligned word of that stack (see above).
                unsafe { core::ptr::write_volatile(a as *mut u64, 0) };
            }
            for a in bytes {
                // SAFETY: a byte of that stack (see above).
                unsafe { core::ptr::write_volatile(a as *mut u8, 0) };
            }
        }
    } else {
        /// Zeroes the top of the calling thread's alternate signal stack: nothing to do here (no
        /// signals, no `std`, or no `sigaltstack` in this C library's bindings).
        #[inline]
        pub fn wipe_alternate_stack() {}
    }
}

/// Bytes a signal delivered anywhere in a caller's frames can write below them:
/// [`RED_ZONE`] + [`frame_bytes`] + [`HANDLER_BYTES`].
pub fn reach() -> usize {
    RED_ZONE + frame_bytes() + HANDLER_BYTES
}

/// The largest `own` depth [`wipe_stack`] takes; a larger one is capped to it (a wipe that
/// deep could run past the end of a thread's stack: no section of scalrand's reaches it).
pub const MAX_OWN: usize = 64 * 1024;

/// Bytes [`wipe_stack`] adds for the frame of the call that zeroes, which lies between its
/// caller's frame and the first byte zeroed (return address, saved registers).
const OWN_FRAME: usize = 256;

/// Bytes zeroed per level of [`wipe_stack`]'s recursion (targets other than x86_64).
const LEVEL: usize = 1024;

/// Zeroes at least `own` + [`reach`] bytes of stack below the caller's frame: the frames of the
/// secret-holding code the caller just returned from (`own` bytes deep at most) and any signal
/// frame written while they ran; `own` above [`MAX_OWN`] is taken as `MAX_OWN`. On x86_64 one page
/// at a time with `rep stosb`, the stack pointer moved down first; elsewhere in 1 KiB steps, each a
/// frame of its own below the last (the return address and saved registers between two steps are
/// written by the call, so nothing older survives there). Inlined into its caller, whose frame the
/// zeroing call's frame lies just below.
#[inline]
pub fn wipe_stack(own: usize) {
    wipe_bytes(own.min(MAX_OWN) + reach() + OWN_FRAME);
}

/// Zeroes `bytes` (rounded up to 64) of stack below this function's frame. Never inlined,
/// and with no locals: its frame is the return address and the registers it saves, all
/// written, so no byte of what lay there before survives between the caller's frame and the
/// first byte zeroed.
#[inline(never)]
fn wipe_bytes(bytes: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: moves the stack pointer down one page (or the rest) at a time and zeroes each
    // step with `rep stosb` from its lowest byte up, so the first byte touched in each new
    // page is adjacent to the last step: a guard page below the stack faults as a normal
    // overflow would, never skipped. The zeroed bytes are above the stack pointer while they
    // are written (a signal frame goes below them). The stack pointer is restored before the
    // block ends; the direction flag is clear on entry (System V ABI) and left clear.
    unsafe {
        core::arch::asm!(
            "mov {saved}, rsp",
            "2:",
            "mov {step}, 4096",
            "cmp {left}, {step}",
            "cmovb {step}, {left}",
            "sub rsp, {step}",
            "mov rdi, rsp",
            "mov rcx, {step}",
            "rep stosb",
            "sub {left}, {step}",
            "jnz 2b",
            "mov rsp, {saved}",
            saved = out(reg) _,
            step = out(reg) _,
            left = inout(reg) bytes.div_ceil(64) * 64 => _,
            in("al") 0u8,
            out("rdi") _,
            out("rcx") _,
        );
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    wipe_levels(bytes.div_ceil(LEVEL));
}

/// One 1 KiB step of [`wipe_stack`], then the next `n - 1` below it.
#[cfg_attr(all(target_arch = "x86_64", not(miri)), allow(dead_code))]
#[inline(never)]
fn wipe_levels(n: usize) {
    let buf = [0u8; LEVEL];
    core::hint::black_box(&buf);
    if n > 1 {
        wipe_levels(n - 1);
    }
    // Read again after the call: the buffer stays live across it, so the call is not turned
    // into a jump that reuses this frame (each step must lie below the one before).
    core::hint::black_box(&buf);
}

#[cfg(all(test, feature = "std", not(miri), not(scalrand_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_frame_size_is_sane() {
        let b = frame_bytes();
        assert!((1..=MAX_FRAME_BYTES).contains(&b), "{b}");
        #[cfg(target_os = "linux")]
        assert!(b >= 1024, "AT_MINSIGSTKSZ or the default: {b}");
    }

    /// Paints the stack below this frame, wipes, and checks that everything from just below
    /// the caller down to the promised depth reads zero.
    #[test]
    #[inline(never)]
    fn the_wipe_reaches_its_depth() {
        const OWN: usize = 2048;
        let depth = OWN + reach();
        paint(depth + 4096);
        wipe_stack(OWN);
        let (left, first) = painted_below(depth);
        assert_eq!(
            left, 0,
            "{left} painted words left within {depth} bytes, the first {first:?} bytes down"
        );
    }

    /// A depth past [`MAX_OWN`] (or one whose sum would overflow) is capped, not a crash.
    #[test]
    fn a_huge_depth_is_capped() {
        wipe_stack(usize::MAX);
        wipe_stack(MAX_OWN + 1);
    }

    #[test]
    fn a_watch_is_quiet_only_if_nothing_interrupted_it() {
        // Nothing between arming and asking: quiet where rseq is registered (a preemption
        // in between would make it not quiet, so allow one retry).
        let quiet = (0..100).any(|_| {
            let w = watch();
            w.quiet()
        });
        let registered = crate::cpu::rseq_cpu().is_some();
        assert_eq!(
            quiet, registered,
            "quiet {quiet}, rseq registered {registered}"
        );
        // A signal delivered in between clears it.
        #[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
        {
            extern "C" fn nothing(_: libc::c_int) {}
            // SAFETY: an all-zero sigaction with an extern "C" fn(c_int) handler; then a signal
            // to this thread, delivered before `raise` returns.
            unsafe {
                let mut sa: libc::sigaction = core::mem::zeroed();
                sa.sa_sigaction = nothing as *const () as usize;
                libc::sigaction(libc::SIGURG, &raw const sa, core::ptr::null_mut());
                let w = watch();
                libc::raise(libc::SIGURG);
                assert!(!w.quiet(), "a signal went unnoticed");
            }
        }
    }

    #[inline(never)]
    fn paint(n: usize) {
        let mut v = [0u8; 64 * 1024];
        // The highest addresses: the part of this frame just below its caller.
        for b in v.iter_mut().rev().take(n) {
            *b = 0xa5;
        }
        core::hint::black_box(&mut v);
    }

    /// The painted 8-byte words (all eight bytes painted: a value some frame stored is not
    /// taken for paint) within `depth` bytes below this function's caller's frame, as
    /// distances below this function's first local: how many, and the first.
    #[inline(never)]
    fn painted_below(depth: usize) -> (usize, Option<usize>) {
        let here = 0u8;
        let top = core::ptr::from_ref(&here) as usize;
        // Skip this frame's own bytes (a few hundred) and look at the region below.
        let mut n = 0;
        let mut first = None;
        for a in ((top - depth).next_multiple_of(8)..top - 256).step_by(8) {
            // SAFETY: the thread's own stack, below the current frame and above the guard
            // page (test threads have 2 MiB); an aligned word; volatile, as nothing owns it.
            if unsafe { core::ptr::read_volatile(a as *const u64) } == u64::from_ne_bytes([0xa5; 8])
            {
                n += 1;
                first.get_or_insert(top - a);
            }
        }
        (n, first)
    }

    /// The alternate-stack wipe zeroes exactly the top of an installed stack, at any
    /// alignment, and all of a stack smaller than what it wipes, never a byte past it.
    #[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
    #[test]
    fn the_alternate_stack_wipe_zeroes_its_top_and_nothing_else() {
        // Odd sizes at an odd address: a stack smaller than the wipe (the kernel takes one
        // of `AT_MINSIGSTKSZ` bytes), and a larger one.
        for size in [frame_bytes() + 101, (16 << 10) + 6] {
            let mut buf = std::vec![0xa5u8; size + 64];
            // SAFETY: 3 + size <= size + 64 bytes of `buf`.
            let sp = unsafe { buf.as_mut_ptr().add(3) };
            let stack = libc::stack_t {
                ss_sp: sp.cast(),
                ss_flags: 0,
                ss_size: size,
            };
            // SAFETY: all zero is a valid `stack_t`.
            let mut old: libc::stack_t = unsafe { core::mem::zeroed() };
            // SAFETY: installs `buf`'s bytes (live until it is uninstalled below) as this
            // thread's alternate stack, keeping the one it replaces; no handler here uses it.
            let rc = unsafe { libc::sigaltstack(&raw const stack, &raw mut old) };
            assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
            wipe_alternate_stack();
            // SAFETY: `old` is what sigaltstack reported.
            unsafe { libc::sigaltstack(&raw const old, core::ptr::null_mut()) };
            let n = (frame_bytes() + HANDLER_BYTES + 64).min(size);
            let top = 3 + size;
            for (i, &b) in buf.iter().enumerate() {
                let want = if (top - n..top).contains(&i) { 0 } else { 0xa5 };
                assert_eq!(
                    b, want,
                    "size {size}: byte {i} (top {top}, {n} bytes wiped)"
                );
            }
        }
    }
}
