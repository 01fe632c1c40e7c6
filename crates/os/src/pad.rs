//! [`CachePadded`]: a value alone on its cache line(s), so that two threads writing two
//! neighbouring values do not pass one line back and forth (false sharing).

use core::fmt;
use core::ops::{Deref, DerefMut};

/// `T`, aligned to (and so padded to a multiple of) the span of memory a CPU of the target
/// fetches together: 128 bytes on x86_64 (Intel's spatial prefetcher pulls pairs of 64-byte
/// lines), aarch64 and powerpc64 (128-byte lines on some), 256 on s390x, 32 on 32-bit Arm,
/// MIPS, SPARC and Hexagon, and 64 elsewhere. The same spans as crossbeam-utils'
/// `CachePadded`, which the per-CPU slot layouts (one slot per 128 bytes on x86_64) assume.
#[cfg_attr(
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "arm64ec",
        target_arch = "powerpc64",
    ),
    repr(align(128))
)]
#[cfg_attr(
    any(
        target_arch = "arm",
        target_arch = "mips",
        target_arch = "mips32r6",
        target_arch = "mips64",
        target_arch = "mips64r6",
        target_arch = "sparc",
        target_arch = "hexagon",
    ),
    repr(align(32))
)]
#[cfg_attr(target_arch = "s390x", repr(align(256)))]
#[cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "arm64ec",
        target_arch = "powerpc64",
        target_arch = "arm",
        target_arch = "mips",
        target_arch = "mips32r6",
        target_arch = "mips64",
        target_arch = "mips64r6",
        target_arch = "sparc",
        target_arch = "hexagon",
        target_arch = "s390x",
    )),
    repr(align(64))
)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CachePadded<T> {
    value: T,
}

impl<T> CachePadded<T> {
    /// `value`, padded.
    pub const fn new(value: T) -> Self {
        Self { value }
    }

    /// The value, unpadded.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for CachePadded<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> From<T> for CachePadded<T> {
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for CachePadded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachePadded")
            .field("value", &self.value)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::CachePadded;

    /// crossbeam-utils' spans, which the per-CPU slot layouts rely on.
    #[test]
    fn spans_are_crossbeams() {
        let span = core::mem::align_of::<CachePadded<u8>>();
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!(span, 128);
        }
        assert_eq!(core::mem::size_of::<CachePadded<u8>>(), span);
        assert_eq!(core::mem::size_of::<CachePadded<[u8; 129]>>() % span, 0);
        let mut p = CachePadded::new(5u32);
        *p += 1;
        assert_eq!(p.into_inner(), 6);
    }
}
