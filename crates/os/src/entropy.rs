//! Entropy from the operating system: the one place in scalrand that asks the OS for seeds.
//!
//! On 64-bit Linux (x86_64 and aarch64, glibc or musl) the request is the kernel's `getrandom(2)`,
//! made here, with the `getrandom` crate's fallback for kernels before 3.17 and for sandboxes
//! that refuse the call: when it fails with `ENOSYS` or `EPERM`, the bytes come from
//! `/dev/urandom`, once `/dev/random` reports the kernel's pool initialised (`poll`). No
//! getrandom crate is built there. Elsewhere the request goes through the `getrandom` crate by
//! default; with the `direct-entropy` feature it goes to the OS's own call instead, the one
//! getrandom's default backend makes (`getrandom(2)` on Android, `getentropy(2)` on macOS
//! and the BSDs and illumos, `ProcessPrng` on Windows). Either way scalrand can itself be
//! getrandom's custom backend (`--cfg getrandom_backend="custom"`, the facade's
//! `getrandom-backend` feature) without seeding from its own output. On a target with no
//! direct call the feature falls back to getrandom, and refuses to build when getrandom's
//! backend is the custom one (that would be a loop).
//!
//! Without `std` there is no OS: a `no_std` host seeds the generators with bytes from its own
//! entropy source (a TRNG peripheral, a boot-loader seed, ...).

use core::fmt;

/// Keeps its items on one of the two entropy paths, with the targets that have a direct OS
/// call (behind the `direct-entropy` feature) named once: `direct` where the request takes
/// that call, `getrandom` (with `std`) everywhere else.
macro_rules! entropy_path {
    ($which:ident { $($item:item)* }) => {
        entropy_path! {
            @split $which
            (any(
                all(
                    feature = "direct-entropy",
                    any(
                        target_os = "linux",
                        target_os = "android",
                        target_os = "macos",
                        target_os = "freebsd",
                        target_os = "dragonfly",
                        target_os = "openbsd",
                        target_os = "netbsd",
                        target_os = "illumos",
                        target_os = "solaris",
                        all(windows, not(target_vendor = "win7")),
                    )
                ),
                // Where the crate declares the C library itself (`cfg_own_c_decls!`), with
                // no getrandom crate in its tree: the direct call always.
                all(
                    feature = "std",
                    target_os = "linux",
                    any(target_arch = "x86_64", target_arch = "aarch64"),
                    target_pointer_width = "64",
                    any(target_env = "gnu", target_env = "musl")
                ),
            ))
            $($item)*
        }
    };
    (@split direct $pred:tt $($item:item)*) => { $(#[cfg $pred] $item)* };
    (@split getrandom $pred:tt $($item:item)*) => {
        $(#[cfg(all(feature = "std", not $pred))] $item)*
    };
}

/// Items for targets that have a direct OS call behind the `direct-entropy` feature.
macro_rules! cfg_direct {
    ($($item:item)*) => { entropy_path! { direct { $($item)* } } };
}

/// The other targets (with `std`): where the request goes through getrandom.
macro_rules! cfg_getrandom {
    ($($item:item)*) => { entropy_path! { getrandom { $($item)* } } };
}

cfg_getrandom! {
    // A direct call was asked for where there is none, and getrandom's backend is the custom
    // one, which the facade's `getrandom-backend` feature serves from the generators this
    // crate seeds: seeding through getrandom would call back into them.
    #[cfg(all(feature = "direct-entropy", getrandom_backend = "custom"))]
    compile_error!(
        "scalrand-os: `direct-entropy` has no direct OS call on this target, and with \
         `--cfg getrandom_backend=\"custom\"` seeding through getrandom would loop"
    );
}

/// The operating system could not provide entropy.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EntropyError {
    #[cfg(feature = "std")]
    inner: Cause,
}

cfg_getrandom! {
    /// getrandom's error, where requests go through it.
    type GetrandomError = getrandom::Error;
}

cfg_direct! {
    /// No getrandom error where every request takes the direct call (getrandom may not be in
    /// the tree at all).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum GetrandomError {}

    impl fmt::Display for GetrandomError {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            match *self {}
        }
    }
}

/// What failed.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause {
    /// getrandom's error.
    #[allow(dead_code)] // unused where every request takes the direct call
    Getrandom(GetrandomError),
    /// The direct call's `errno` (Windows: none, 0), or 0 for a result outside its contract.
    #[allow(dead_code)] // unused where every request goes through getrandom
    Os(i32),
}

impl fmt::Debug for EntropyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        #[cfg(feature = "std")]
        return f.debug_tuple("EntropyError").field(&self.inner).finish();
        #[cfg(not(feature = "std"))]
        return f.write_str("EntropyError");
    }
}

impl fmt::Display for EntropyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        #[cfg(feature = "std")]
        return match self.inner {
            Cause::Getrandom(e) => {
                write!(f, "the operating system's entropy source failed: {e}")
            }
            Cause::Os(0) => f.write_str(
                "the operating system's entropy source failed: an answer outside its contract",
            ),
            Cause::Os(errno) => write!(
                f,
                "the operating system's entropy source failed: {}",
                std::io::Error::from_raw_os_error(errno)
            ),
        };
        #[cfg(not(feature = "std"))]
        return f.write_str("no operating-system entropy source in a no_std build");
    }
}

impl core::error::Error for EntropyError {}

cfg_getrandom! {
    /// Fills `dest` with bytes from the operating system's CSPRNG, through getrandom
    /// (`getrandom(2)` on Linux).
    ///
    /// # Errors
    /// [`EntropyError`] when the OS source fails; the contents of `dest` are then unspecified
    /// and must not be used.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn fill(dest: &mut [u8]) -> Result<(), EntropyError> {
        getrandom::fill(dest).map_err(|e| EntropyError {
            inner: Cause::Getrandom(e),
        })
    }
}

cfg_direct! {
    /// Fills `dest` with bytes from the operating system's CSPRNG by its own call, never
    /// through getrandom (the `direct-entropy` feature): `getrandom(2)` on Linux and Android,
    /// `getentropy(2)` on macOS, the BSDs and illumos, `ProcessPrng` on Windows.
    ///
    /// # Errors
    /// [`EntropyError`] when the OS source fails; the contents of `dest` are then unspecified
    /// and must not be used.
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn fill(dest: &mut [u8]) -> Result<(), EntropyError> {
        direct::fill(dest).map_err(|errno| EntropyError {
            inner: Cause::Os(errno),
        })
    }

    /// The OS calls behind [`fill`] where it makes them itself, as getrandom's default
    /// backends make them (its `linux_android_with_fallback`, `getentropy`, `windows`).
    mod direct {
        /// The calling thread's `errno`.
        #[cfg(unix)]
        fn errno() -> i32 {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        }

        /// `getrandom(2)` with no flags (blocks only until the kernel's pool is first
        /// initialised), repeated after a short read or `EINTR`; where the kernel has no such
        /// call (`ENOSYS`, before 3.17) or a sandbox refuses it (`EPERM`, seccomp filters),
        /// [`urandom`].
        #[cfg(any(target_os = "linux", target_os = "android"))]
        pub(super) fn fill(dest: &mut [u8]) -> Result<(), i32> {
            match getrandom(dest) {
                Err(e) if e == crate::sys::ENOSYS || e == crate::sys::EPERM => urandom(dest),
                r => r,
            }
        }

        /// `/dev/urandom`, read once `/dev/random` polls readable: on kernels before 5.6
        /// `/dev/urandom` answers before the pool is initialised, and `/dev/random` turns
        /// readable only after (getrandom's `use_file` backend waits the same way). The
        /// error is the failing call's `errno`.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        fn urandom(dest: &mut [u8]) -> Result<(), i32> {
            use std::io::Read;
            use std::os::fd::AsRawFd;
            let os = |e: std::io::Error| e.raw_os_error().unwrap_or(0);
            let random = std::fs::File::open("/dev/random").map_err(os)?;
            let mut fd = crate::sys::pollfd {
                fd: random.as_raw_fd(),
                events: crate::sys::POLLIN,
                revents: 0,
            };
            loop {
                // SAFETY: one valid `pollfd` for an open descriptor; no timeout.
                let r = unsafe { crate::sys::poll(&raw mut fd, 1, -1) };
                if r == 1 {
                    break;
                }
                let e = errno();
                if r != -1 || e != crate::sys::EINTR {
                    return Err(if r == -1 { e } else { 0 });
                }
            }
            drop(random);
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(dest))
                .map_err(os)
        }

        /// `getrandom(2)` alone: the first `errno` other than `EINTR`, or 0 for an answer
        /// outside its contract.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        fn getrandom(mut dest: &mut [u8]) -> Result<(), i32> {
            while !dest.is_empty() {
                // SAFETY: the pointer and length describe `dest`, which is writable for its
                // whole length; flags 0. The system call writes at most `len` bytes.
                let n = unsafe {
                    crate::sys::syscall(
                        crate::sys::SYS_getrandom,
                        dest.as_mut_ptr().cast::<core::ffi::c_void>(),
                        dest.len(),
                        0 as core::ffi::c_uint,
                    )
                };
                if n > 0 {
                    let n = usize::try_from(n).map_err(|_| 0)?;
                    dest = dest.get_mut(n..).ok_or(0)?;
                } else if n == -1 {
                    let e = errno();
                    if e != crate::sys::EINTR {
                        return Err(e);
                    }
                } else {
                    return Err(0);
                }
            }
            Ok(())
        }

        /// `getentropy(2)`, 256 bytes at a time (POSIX's `GETENTROPY_MAX` is at least 256).
        #[cfg(not(any(target_os = "linux", target_os = "android", windows)))]
        pub(super) fn fill(dest: &mut [u8]) -> Result<(), i32> {
            for chunk in dest.chunks_mut(256) {
                // SAFETY: the pointer and length describe `chunk`, writable for its whole
                // length, and at most 256 bytes as getentropy requires.
                let r = unsafe { crate::sys::getentropy(chunk.as_mut_ptr().cast(), chunk.len()) };
                match r {
                    0 => {}
                    -1 => return Err(errno()),
                    _ => return Err(0),
                }
            }
            Ok(())
        }

        #[cfg_attr(
            target_arch = "x86",
            link(
                name = "bcryptprimitives",
                kind = "raw-dylib",
                import_name_type = "undecorated"
            )
        )]
        #[cfg_attr(
            all(windows, not(target_arch = "x86")),
            link(name = "bcryptprimitives", kind = "raw-dylib")
        )]
        #[cfg(windows)]
        unsafe extern "system" {
            /// The process's base PRNG (bcryptprimitives.dll, Windows 10 on); documented to
            /// return TRUE always, though Windows 8's and Wine's can fail.
            fn ProcessPrng(pbdata: *mut u8, cbdata: usize) -> i32;
        }

        /// `ProcessPrng`, whose failure carries no code (0).
        #[cfg(windows)]
        pub(super) fn fill(dest: &mut [u8]) -> Result<(), i32> {
            // SAFETY: the pointer and length describe `dest`, writable for its whole length.
            let ok = unsafe { ProcessPrng(dest.as_mut_ptr(), dest.len()) };
            if ok == 1 { Ok(()) } else { Err(0) }
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn fill_fills_and_differs() {
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        fill(&mut a).unwrap();
        fill(&mut b).unwrap();
        // Two 256-bit reads from the OS agree with probability 2^-256.
        assert_ne!(a, b);
        assert_ne!(a, [0u8; 32]);
    }

    #[test]
    fn fill_empty_is_ok() {
        fill(&mut []).unwrap();
    }

    /// Longer than one `getentropy` call (256 bytes) and than a short `getrandom(2)` read can
    /// be: every part of the buffer is written.
    #[test]
    fn fill_writes_every_part_of_a_large_buffer() {
        let mut buf = std::vec![0u8; 1 << 20];
        fill(&mut buf).unwrap();
        for chunk in buf.chunks(256) {
            assert_ne!(chunk, &[0u8; 256][..chunk.len()]);
        }
    }

    /// A sandbox that refuses `getrandom(2)` but not files (as container profiles older than
    /// the call do, `EPERM`), and a kernel without the call (`ENOSYS`, before 3.17), each
    /// answered by a seccomp filter: the bytes come from `/dev/urandom`.
    #[cfg(all(target_os = "linux", target_arch = "x86_64", not(miri)))]
    #[test]
    fn a_refused_getrandom_falls_back_to_urandom() {
        use scalrand_testkit::fork::{in_child, libc_fork};
        for errno in [libc::EPERM, libc::ENOSYS] {
            let (_, out) = in_child(
                libc_fork,
                || {
                    scalrand_testkit::seccomp::deny_getrandom_with(errno);
                    let mut b = [0u8; 64];
                    let ok = fill(&mut b).is_ok();
                    let mut out = [0u8; 65];
                    out[0] = u8::from(ok);
                    out[1..].copy_from_slice(&b);
                    out
                },
                || (),
            );
            let out = out.expect("the child reported");
            assert_eq!(
                out[0], 1,
                "fill failed with getrandom(2) answering errno {errno}"
            );
            assert_ne!(out[1..], [0u8; 64]);
        }
    }

    /// A sandbox that refuses `getrandom(2)` and every file: an error (with the refusal's
    /// `errno`, `EPERM`, where the crate makes the call itself), never bytes.
    #[cfg(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_pointer_width = "64",
        any(target_env = "gnu", target_env = "musl"),
        not(miri)
    ))]
    #[test]
    fn entropy_refused_everywhere_is_an_error() {
        use scalrand_testkit::fork::{in_child, libc_fork};
        let (_, out) = in_child(
            libc_fork,
            || {
                scalrand_testkit::seccomp::deny_entropy();
                let mut b = [0u8; 64];
                match fill(&mut b) {
                    Ok(()) => [0u8],
                    Err(e) if e.inner == Cause::Os(libc::EPERM) => [1],
                    Err(_) => [2],
                }
            },
            || (),
        );
        assert_eq!(out.expect("the child reported"), [1]);
    }

    #[test]
    fn errors_say_what_failed() {
        let e = EntropyError {
            inner: Cause::Os(libc::EPERM),
        };
        let text = std::format!("{e}");
        assert!(text.starts_with("the operating system's entropy source failed: "));
        assert!(text.contains("(os error 1)"), "{text}");
        let e = EntropyError {
            inner: Cause::Os(0),
        };
        assert!(std::format!("{e}").contains("outside its contract"));
    }
}
