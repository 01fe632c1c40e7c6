//! Hostile environments for a test process: entropy denied by a seccomp filter.

/// Makes `getrandom(2)`, `open` and `openat` fail with `EPERM` in this process from now on (a
/// classic BPF seccomp filter; `PR_SET_NO_NEW_PRIVS` first, so no privilege is needed). Call
/// it in a child process made for the purpose: it cannot be undone.
#[cfg(target_arch = "x86_64")]
pub fn deny_entropy() {
    deny(
        &[libc::SYS_getrandom, libc::SYS_openat, libc::SYS_open],
        libc::EPERM,
    );
}

/// Makes `getrandom(2)` alone fail with `EPERM` in this process from now on, as a container's
/// seccomp profile that predates the call does: files (`/dev/urandom`) stay open to it. Call
/// it in a child process made for the purpose: it cannot be undone.
#[cfg(target_arch = "x86_64")]
pub fn deny_getrandom() {
    deny(&[libc::SYS_getrandom], libc::EPERM);
}

/// Makes `getrandom(2)` alone fail with `errno` in this process from now on: `ENOSYS` is what
/// a kernel before 3.17, which has no such call, answers. Call it in a child process made for
/// the purpose: it cannot be undone.
#[cfg(target_arch = "x86_64")]
pub fn deny_getrandom_with(errno: libc::c_int) {
    deny(&[libc::SYS_getrandom], errno);
}

/// Makes the system calls `nrs` (at most 8) fail with `errno` from now on.
#[cfg(target_arch = "x86_64")]
fn deny(nrs: &[libc::c_long], errno: libc::c_int) {
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
    assert!(nrs.len() <= 8);
    let op = |code, jt, k| SockFilter { code, jt, jf: 0, k };
    // Load the call's number (seccomp_data.nr), jump to the refusal on each listed one, else
    // allow.
    // (A fixed array: the caller is a forked child, which must not allocate.)
    let mut prog = [const {
        SockFilter {
            code: 0,
            jt: 0,
            jf: 0,
            k: 0,
        }
    }; 11];
    prog[0] = op(LD_W_ABS, 0, 0);
    for (i, &nr) in nrs.iter().enumerate() {
        prog[1 + i] = op(JEQ_K, (nrs.len() - i) as u8, nr as u32);
    }
    prog[1 + nrs.len()] = op(RET_K, 0, RET_ALLOW);
    prog[2 + nrs.len()] = op(RET_K, 0, RET_ERRNO | (errno as u32 & 0xffff));
    let fprog = SockFprog {
        len: (3 + nrs.len()) as u16,
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
