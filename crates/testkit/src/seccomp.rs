//! Hostile environments for a test process: entropy denied by a seccomp filter.

/// Makes `getrandom(2)`, `open` and `openat` fail with `EPERM` in this process from now on (a
/// classic BPF seccomp filter; `PR_SET_NO_NEW_PRIVS` first, so no privilege is needed). Call
/// it in a child process made for the purpose: it cannot be undone.
#[cfg(target_arch = "x86_64")]
pub fn deny_entropy() {
    #[repr(C)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_ERRNO: u32 = 0x0005_0000;
    let op = |code, jt, k| SockFilter { code, jt, jf: 0, k };
    let prog = [
        op(LD_W_ABS, 0, 0), // seccomp_data.nr
        op(JEQ_K, 3, libc::SYS_getrandom as u32),
        op(JEQ_K, 2, libc::SYS_openat as u32),
        op(JEQ_K, 1, libc::SYS_open as u32),
        op(RET_K, 0, RET_ALLOW),
        op(RET_K, 0, RET_ERRNO | libc::EPERM as u32),
    ];
    let fprog = SockFprog {
        len: prog.len() as u16,
        filter: prog.as_ptr(),
    };
    // SAFETY: prctl with the documented arguments; `fprog` and `prog` outlive the call (the
    // kernel copies the program).
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const SockFprog
            ),
            0
        );
    }
}
