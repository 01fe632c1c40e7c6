//! No rseq read path on this target (see `rseq.rs`): every read takes the locked path.

use alloc::boxed::Box;

use scalrand_os::pad::CachePadded;

use crate::chacha::{KEY_LEN, Rounds};
use super::node::NodePool;

/// Reads up to this many bytes would take the rseq path.
pub(crate) const MAX_LEN: usize = 64;

/// Test hook (`doc(hidden)`, not API): there is no rseq refill here, so `f` never runs.
#[doc(hidden)]
pub fn __in_next_rseq_refill(f: fn()) {
    let _ = f;
}

/// Never built on this target.
pub(crate) enum RseqSlots {}

impl RseqSlots {
    // The same signature as `rseq.rs`'s, which keeps the box.
    #[allow(clippy::boxed_local)]
    pub(crate) fn new(_node_of_cpu: Box<[u32]>) -> Option<Self> {
        None
    }

    pub(crate) fn memory(&self) -> alloc::vec::Vec<(*const u8, usize)> {
        match *self {}
    }

    pub(crate) fn reads(&self) -> core::iter::Empty<(u32, usize)> {
        match *self {}
    }

    #[inline]
    pub(crate) fn fill(&self, _dest: &mut [u8], _refill: impl FnMut() -> bool) -> bool {
        match *self {}
    }

    /// # Safety
    /// As `rseq.rs`'s (there are no slots here).
    pub(crate) unsafe fn refill(
        &self,
        _nodes: &[CachePadded<NodePool>],
        _rounds: Rounds,
        _fresh_key: impl FnOnce(usize, &mut [u8; KEY_LEN]) -> Option<usize>,
        _check_schedule: impl FnOnce(usize),
    ) -> bool {
        match *self {}
    }
}
