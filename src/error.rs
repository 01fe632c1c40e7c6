//! The error of the facade's `try_` functions.

use core::fmt;

use scalrand_pool::numa::NumaError;

/// Why a `try_` function ([`try_fill_bytes`](crate::try_fill_bytes),
/// [`try_next_u64`](crate::try_next_u64)) could not answer: the global cryptographic pools
/// could not be built, in practice because the operating system's entropy source failed (a
/// sandbox that forbids `getrandom(2)`, early boot). Nothing was written; a later call tries again.
///
/// ```
/// fn salt() -> Result<[u8; 16], scalrand::Error> {
///     let mut s = [0u8; 16];
///     scalrand::try_fill_bytes(&mut s)?;
///     Ok(s)
/// }
/// # salt().unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    cause: NumaError,
}

impl Error {
    pub(crate) fn from_numa(cause: NumaError) -> Self {
        Self { cause }
    }

    /// What the node pools reported (usually [`NumaError::Entropy`]).
    #[must_use]
    pub fn cause(&self) -> &NumaError {
        &self.cause
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot seed the cryptographic pools")
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.cause)
    }
}

#[cfg(test)]
mod tests {
    use std::string::ToString;

    use super::*;

    #[test]
    fn names_its_cause() {
        let e = Error::from_numa(NumaError::NotSeeded);
        assert_eq!(e.to_string(), "cannot seed the cryptographic pools");
        let source = core::error::Error::source(&e).map(ToString::to_string);
        assert_eq!(
            source.as_deref(),
            Some("the pools have not been seeded with 128 bits yet")
        );
        assert_eq!(e.cause(), &NumaError::NotSeeded);
    }
}
