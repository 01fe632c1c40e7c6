//! Every other target with `std`: no CPU query, so threads spread round-robin.

use super::Source;

#[inline]
pub(super) fn current() -> Option<usize> {
    Some(super::per_thread())
}

pub(super) fn source() -> Source {
    Source::PerThread
}
