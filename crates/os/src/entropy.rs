//! Entropy from the operating system: the one place in scalrand that asks the OS for seeds.
//!
//! Without `std` there is no OS: a `no_std` host seeds the generators with bytes from its own
//! entropy source (a TRNG peripheral, a boot-loader seed, ...).

use core::fmt;

/// The operating system could not provide entropy.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EntropyError {
    #[cfg(feature = "std")]
    inner: getrandom::Error,
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
        return write!(
            f,
            "the operating system's entropy source failed: {}",
            self.inner
        );
        #[cfg(not(feature = "std"))]
        return f.write_str("no operating-system entropy source in a no_std build");
    }
}

impl core::error::Error for EntropyError {}

/// Fills `dest` with bytes from the operating system's CSPRNG (`getrandom(2)` on Linux).
///
/// # Errors
/// [`EntropyError`] when the OS source fails; the contents of `dest` are then unspecified and
/// must not be used.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn fill(dest: &mut [u8]) -> Result<(), EntropyError> {
    getrandom::fill(dest).map_err(|inner| EntropyError { inner })
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
}
