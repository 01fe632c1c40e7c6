//! No rseq read path on this target (see `rseq.rs`): every read takes the locked path.

use alloc::boxed::Box;

use super::NodePools;

/// Reads up to this many bytes would take the rseq path.
pub(crate) const MAX_LEN: usize = 64;

/// Never built on this target.
pub(crate) enum RseqSlots {}

impl RseqSlots {
    // The same signature as `rseq.rs`'s, which keeps the box.
    #[allow(clippy::boxed_local)]
    pub(crate) fn new(_node_of_cpu: Box<[u32]>) -> Option<Self> {
        None
    }

    pub(crate) fn memory(&self) -> (*const u8, usize) {
        match *self {}
    }

    pub(crate) fn reads(&self) -> core::iter::Empty<(u32, usize)> {
        match *self {}
    }
}

impl NodePools {
    #[inline]
    pub(crate) fn rseq_fill(&self, r: &RseqSlots, _dest: &mut [u8]) -> bool {
        match *r {}
    }
}
