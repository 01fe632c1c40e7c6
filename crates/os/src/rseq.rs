//! What scalrand's restartable sequences share beyond the CPU number ([`crate::cpu`]): where
//! they run ([`cfg_rseq!`](crate::cfg_rseq)), and the frame of an x86_64 section around its
//! body ([`__rseq_section!`](crate::__rseq_section)), so that `scalrand-fastprng`'s per-CPU
//! steps and `scalrand-pool`'s per-CPU batches spell neither twice.
//!
//! The section protocol is the kernel's (Linux 4.18, commit d7822b1e24f2 "rseq: Introduce
//! restartable sequences system call"): a descriptor `{start_ip, post_commit_offset,
//! abort_ip}` stored in the thread's `rseq_cs` field arms a section, and the kernel moves a
//! thread that is preempted, migrated or signalled inside it to `abort_ip`. Each crate argues
//! in its own `rseq` module why its sections are sound.

/// Keeps the items of its first block where scalrand's restartable sequences run, and those
/// of its `else` block everywhere else: the one place that says where that is.
///
/// That is Linux on x86_64 with glibc (which registers an rseq area for every thread since
/// 2.35 and publishes it as `__rseq_offset`; [`cpu::rseq_offset`](crate::cpu::rseq_offset)
/// finds out at run time whether it did), with the invoking crate's `std` feature on (which
/// must enable `scalrand-os/std`, as every scalrand crate's does), and neither miri nor loom
/// (`--cfg scalrand_loom`), which cannot run inline assembly or model the kernel's restarts.
///
/// ```
/// scalrand_os::cfg_rseq! {
///     if {
///         const RSEQ: bool = true;
///     } else {
///         const RSEQ: bool = false;
///     }
/// }
/// # let _ = RSEQ;
/// ```
#[macro_export]
macro_rules! cfg_rseq {
    (if { $($yes:item)* } else { $($no:item)* }) => {
        $crate::__cfg_split! {
            (all(
                feature = "std",
                target_os = "linux",
                target_arch = "x86_64",
                target_env = "gnu",
                not(miri),
                not(scalrand_loom)
            ))
            [$($yes)*]
            [$($no)*]
        }
    };
    (if { $($yes:item)* }) => {
        $crate::cfg_rseq! { if { $($yes)* } else {} }
    };
}

/// The shared opening of scalrand's x86_64 restartable sequences, as one `asm!` template
/// string (not API: `scalrand-fastprng` and `scalrand-pool` use it).
///
/// It emits the section's descriptor (label `3`: `start_ip` = label `4`, length up to label
/// `5`, `abort_ip` = label `6`) into `__rseq_cs`; the abort handler into `__rseq_failure`,
/// after glibc's x86 signature `0x53053053` as the operand of a `ud1` (the kernel checks the
/// four bytes before `abort_ip`), running the given instructions and jumping back to label
/// `7`; then at `7` it arms the section by storing the descriptor's address into the area's
/// `rseq_cs` field, and opens the section at `4`. The `asm!` block must name the rseq offset
/// `off` and a scratch register `t`, and end the section with label `5`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rseq_prologue {
    ($($abort:literal),* $(,)?) => {
        concat!(
            ".pushsection __rseq_cs, \"aw\"\n",
            ".balign 32\n",
            "3:\n",
            ".long 0, 0\n",
            ".quad 4f, (5f - 4f), 6f\n",
            ".popsection\n",
            ".pushsection __rseq_failure, \"ax\"\n",
            ".byte 0x0f, 0xb9, 0x3d\n",
            ".long 0x53053053\n",
            "6:\n",
            $($abort, "\n",)*
            "jmp 7f\n",
            ".popsection\n",
            "7:\n",
            "lea {t}, [rip + 3b]\n",
            "mov qword ptr fs:[{off} + 8], {t}\n",
            "4:",
        )
    };
}

/// One x86_64 restartable section on the calling CPU's slot, as one `asm!` template string
/// (not API: `scalrand-fastprng` and `scalrand-pool` use it).
///
/// In order: [`__rseq_prologue!`](crate::__rseq_prologue) with the `abort` instructions (the
/// descriptor, the abort handler, the arming store; the section starts there); the thread's
/// `cpu_id` loaded into register `cpu` (32 bits, zero-extended) and compared with `{n}`, the
/// slot count, unsigned, leaving for label `8` when it is not below (an unregistered thread's
/// -1 and -2 are not); the `body`, whose last instruction is the commit store; label `5`,
/// which ends the section, followed by `status = 1` and a jump to the end (label `9`); the
/// `exits`, out-of-section paths that set `status` themselves and jump to `9`; and label `8`,
/// `status = 0`. The `asm!` block names the rseq offset `off`, the slot count `n` (a 64-bit
/// register holding a `u32`), a scratch register `t`, the `cpu` register and a `status`
/// register. The body and the exits may use local labels other than `3` to `9`.
#[doc(hidden)]
#[macro_export]
macro_rules! __rseq_section {
    (
        abort: [$($abort:literal),* $(,)?],
        cpu: $cpu:literal,
        body: [$($body:expr),* $(,)?],
        exits: [$($exit:expr),* $(,)?],
        status: $status:literal $(,)?
    ) => {
        concat!(
            $crate::__rseq_prologue!($($abort),*), "\n",
            "mov {", $cpu, ":e}, dword ptr fs:[{off} + 4]\n",
            "cmp {", $cpu, ":e}, {n:e}\n",
            "jae 8f\n",
            $($body, "\n",)*
            "5:\n",
            "mov {", $status, ":e}, 1\n",
            "jmp 9f\n",
            $($exit, "\n",)*
            "8:\n",
            "xor {", $status, ":e}, {", $status, ":e}\n",
            "9:",
        )
    };
}
