//! The C library's functions, types and constants this crate calls, declared here for Linux
//! on x86_64 and aarch64 with 64-bit pointers (not x32 or aarch64's ILP32, whose `long` and
//! `sigset_t` differ) and glibc or musl, so that the default build there compiles no
//! `libc` crate (nor `getrandom`, whose Linux backend needs it): the `libc` crate is the
//! longest step of a fresh build of the facade, ahead of every crate of scalrand. Every other
//! target takes these names from `libc` (`lib.rs`).
//!
//! The symbols are the C library's own, which the standard library links on these targets.
//! Each value and layout below is the one both C libraries give on both architectures (the
//! kernel's UAPI where they pass it through, the generic `asm-generic` numbering on aarch64):
//! the test at the bottom holds every constant, every type's size and alignment and every
//! function's signature to the `libc` crate's, on each target the tests run on.

#![allow(non_camel_case_types, non_upper_case_globals)] // the C names
// Under loom and miri the OS paths that call most of these are compiled out.
#![cfg_attr(any(scalrand_loom, miri), allow(dead_code))]

pub(crate) use core::ffi::{c_char, c_int, c_long, c_short, c_uint, c_ulong, c_void};

/// `size_t`.
pub(crate) type size_t = usize;
/// `pid_t`.
pub(crate) type pid_t = i32;
/// `off_t` (64 bits on these targets).
pub(crate) type off_t = i64;
/// `clockid_t`.
pub(crate) type clockid_t = c_int;
/// `nfds_t`.
pub(crate) type nfds_t = c_ulong;
/// `pthread_key_t`.
pub(crate) type pthread_key_t = c_uint;

/// `sigset_t`: 1,024 signal bits in glibc and in musl.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct sigset_t {
    val: [c_ulong; 16],
}

/// `stack_t` (sigaltstack(2)).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct stack_t {
    pub(crate) ss_sp: *mut c_void,
    pub(crate) ss_flags: c_int,
    pub(crate) ss_size: size_t,
}

/// `struct timespec` (64-bit `time_t` and `long`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct timespec {
    pub(crate) tv_sec: i64,
    pub(crate) tv_nsec: c_long,
}

/// `struct pollfd`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct pollfd {
    pub(crate) fd: c_int,
    pub(crate) events: c_short,
    pub(crate) revents: c_short,
}

pub(crate) const PROT_READ: c_int = 1;
pub(crate) const PROT_WRITE: c_int = 2;
pub(crate) const MAP_PRIVATE: c_int = 0x02;
pub(crate) const MAP_ANONYMOUS: c_int = 0x20;
pub(crate) const MAP_FAILED: *mut c_void = !0usize as *mut c_void;
pub(crate) const MADV_WIPEONFORK: c_int = 18;
pub(crate) const SIG_BLOCK: c_int = 0;
pub(crate) const SIG_SETMASK: c_int = 2;
pub(crate) const SS_ONSTACK: c_int = 1;
pub(crate) const SS_DISABLE: c_int = 2;
pub(crate) const _SC_PAGESIZE: c_int = 30;
pub(crate) const _SC_NPROCESSORS_CONF: c_int = 83;
pub(crate) const CLOCK_MONOTONIC: clockid_t = 1;
#[cfg_attr(target_env = "musl", allow(dead_code))] // glibc's rseq registration alone
pub(crate) const RTLD_DEFAULT: *mut c_void = core::ptr::null_mut();
pub(crate) const EPERM: c_int = 1;
pub(crate) const EINTR: c_int = 4;
pub(crate) const ENOSYS: c_int = 38;
pub(crate) const POLLIN: c_short = 0x1;
#[cfg(target_arch = "x86_64")]
pub(crate) const SYS_getrandom: c_long = 318;
#[cfg(target_arch = "aarch64")]
pub(crate) const SYS_getrandom: c_long = 278;

unsafe extern "C" {
    pub(crate) fn mmap(
        addr: *mut c_void,
        len: size_t,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        offset: off_t,
    ) -> *mut c_void;
    pub(crate) fn munmap(addr: *mut c_void, len: size_t) -> c_int;
    pub(crate) fn madvise(addr: *mut c_void, len: size_t, advice: c_int) -> c_int;
    pub(crate) fn sysconf(name: c_int) -> c_long;
    pub(crate) fn getpid() -> pid_t;
    #[cfg_attr(not(scalrand_fork_atfork), allow(dead_code))] // fork detection's atfork mode
    pub(crate) fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> c_int;
    pub(crate) fn pthread_sigmask(how: c_int, set: *const sigset_t, oldset: *mut sigset_t)
    -> c_int;
    pub(crate) fn sigfillset(set: *mut sigset_t) -> c_int;
    pub(crate) fn sigaltstack(ss: *const stack_t, oss: *mut stack_t) -> c_int;
    pub(crate) fn getauxval(type_: c_ulong) -> c_ulong;
    pub(crate) fn syscall(num: c_long, ...) -> c_long;
    pub(crate) fn clock_gettime(clk_id: clockid_t, tp: *mut timespec) -> c_int;
    #[cfg_attr(target_env = "musl", allow(dead_code))] // glibc's rseq registration alone
    pub(crate) fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    pub(crate) fn sched_getcpu() -> c_int;
    pub(crate) fn poll(fds: *mut pollfd, nfds: nfds_t, timeout: c_int) -> c_int;
    pub(crate) fn pthread_key_create(
        key: *mut pthread_key_t,
        dtor: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> c_int;
    pub(crate) fn pthread_key_delete(key: pthread_key_t) -> c_int;
    pub(crate) fn pthread_setspecific(key: pthread_key_t, value: *const c_void) -> c_int;
}

/// Every declaration above against the `libc` crate's (a dev-dependency): the same values,
/// layouts and function types, on the target the tests run on (CI: x86_64 natively, aarch64
/// under qemu-user).
#[cfg(test)]
mod tests {
    use core::mem::{align_of, size_of};

    macro_rules! same_values {
        ($($name:ident),* $(,)?) => {
            $( assert_eq!(super::$name, libc::$name, stringify!($name)); )*
        };
    }

    macro_rules! same_layouts {
        ($($name:ident),* $(,)?) => {
            $(
                assert_eq!(size_of::<super::$name>(), size_of::<libc::$name>(), stringify!($name));
                assert_eq!(align_of::<super::$name>(), align_of::<libc::$name>(), stringify!($name));
            )*
        };
    }

    #[test]
    fn constants_and_layouts_are_libcs() {
        same_values!(
            PROT_READ,
            PROT_WRITE,
            MAP_PRIVATE,
            MAP_ANONYMOUS,
            MAP_FAILED,
            MADV_WIPEONFORK,
            SIG_BLOCK,
            SIG_SETMASK,
            SS_ONSTACK,
            SS_DISABLE,
            _SC_PAGESIZE,
            _SC_NPROCESSORS_CONF,
            CLOCK_MONOTONIC,
            RTLD_DEFAULT,
            EPERM,
            EINTR,
            ENOSYS,
            POLLIN,
            SYS_getrandom,
        );
        same_layouts!(
            size_t,
            pid_t,
            off_t,
            clockid_t,
            nfds_t,
            pthread_key_t,
            sigset_t,
            stack_t,
            timespec,
            pollfd,
        );
        // Field offsets of the structures whose fields this crate reads or writes.
        assert_eq!(
            core::mem::offset_of!(super::stack_t, ss_flags),
            core::mem::offset_of!(libc::stack_t, ss_flags)
        );
        assert_eq!(
            core::mem::offset_of!(super::stack_t, ss_size),
            core::mem::offset_of!(libc::stack_t, ss_size)
        );
        assert_eq!(
            core::mem::offset_of!(super::timespec, tv_nsec),
            core::mem::offset_of!(libc::timespec, tv_nsec)
        );
        assert_eq!(
            core::mem::offset_of!(super::pollfd, events),
            core::mem::offset_of!(libc::pollfd, events)
        );
    }

    /// Each function's type is the `libc` crate's, the structures taken as the same bytes: both
    /// coerce to one function-pointer type, checked when the tests compile (a mismatch is a
    /// build error, so there is nothing left to run).
    const _: () = {
        use super::*;
        macro_rules! same_fn {
            ($name:ident: $ty:ty) => {{
                let _: $ty = super::$name;
                let _: $ty = libc::$name;
            }};
        }
        same_fn!(mmap: unsafe extern "C" fn(*mut c_void, size_t, c_int, c_int, c_int, off_t) -> *mut c_void);
        same_fn!(munmap: unsafe extern "C" fn(*mut c_void, size_t) -> c_int);
        same_fn!(madvise: unsafe extern "C" fn(*mut c_void, size_t, c_int) -> c_int);
        same_fn!(sysconf: unsafe extern "C" fn(c_int) -> c_long);
        same_fn!(getpid: unsafe extern "C" fn() -> pid_t);
        same_fn!(
            pthread_atfork: unsafe extern "C" fn(
                Option<unsafe extern "C" fn()>,
                Option<unsafe extern "C" fn()>,
                Option<unsafe extern "C" fn()>,
            ) -> c_int
        );
        same_fn!(getauxval: unsafe extern "C" fn(c_ulong) -> c_ulong);
        same_fn!(syscall: unsafe extern "C" fn(c_long, ...) -> c_long);
        same_fn!(dlsym: unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void);
        same_fn!(sched_getcpu: unsafe extern "C" fn() -> c_int);
        same_fn!(
            pthread_key_create: unsafe extern "C" fn(
                *mut pthread_key_t,
                Option<unsafe extern "C" fn(*mut c_void)>,
            ) -> c_int
        );
        same_fn!(pthread_key_delete: unsafe extern "C" fn(pthread_key_t) -> c_int);
        same_fn!(pthread_setspecific: unsafe extern "C" fn(pthread_key_t, *const c_void) -> c_int);
        // The ones that take this module's structures: the same function types once the
        // structures are cast (their layouts are checked above).
        let _: unsafe extern "C" fn(c_int, *const sigset_t, *mut sigset_t) -> c_int =
            pthread_sigmask;
        let _: unsafe extern "C" fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int =
            libc::pthread_sigmask;
        let _: unsafe extern "C" fn(*mut sigset_t) -> c_int = sigfillset;
        let _: unsafe extern "C" fn(*mut libc::sigset_t) -> c_int = libc::sigfillset;
        let _: unsafe extern "C" fn(*const stack_t, *mut stack_t) -> c_int = sigaltstack;
        let _: unsafe extern "C" fn(*const libc::stack_t, *mut libc::stack_t) -> c_int =
            libc::sigaltstack;
        let _: unsafe extern "C" fn(clockid_t, *mut timespec) -> c_int = clock_gettime;
        let _: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> c_int =
            libc::clock_gettime;
        let _: unsafe extern "C" fn(*mut pollfd, nfds_t, c_int) -> c_int = poll;
        let _: unsafe extern "C" fn(*mut libc::pollfd, libc::nfds_t, c_int) -> c_int = libc::poll;
    };
}
