//! `shuffle_zone` and the shuffle coin, after `mm/shuffle.c` as commit e900a918b098 ("mm:
//! shuffle initial free memory to improve memory-side-cache utilization", Linux 5.2) added
//! it; `__shuffle_zone` has not changed in substance since. The shuffle works on a
//! [`FreeArea`] and a generator alone; which way a coin sends a block is the zone's business
//! ([`crate::kernel::KernelVersion::coin_means_tail`]).
//!
//! [`ShuffleMode::Kernel`] is the kernel's loop, bit for bit given the generator:
//!
//! ```text
//! for i in ALIGN(zone_start_pfn, 1 << order) .. zone_end_pfn step 1 << order:
//!     page_i = shuffle_valid_page(i, order)          // free, present, exactly this order
//!     if none: continue
//!     for retry in 0 .. SHUFFLE_RETRY (10):
//!         j = zone_start_pfn + ALIGN_DOWN(next_u64() % spanned_pages, 1 << order)
//!         page_j = shuffle_valid_page(j, order)
//!         if page_j and page_j != page_i: break
//!     if all retries failed: continue
//!     if migratetype(page_i) != migratetype(page_j): continue   // no retry
//!     list_swap(page_i, page_j)                       // exchange list positions
//! ```
//!
//! `next_u64()` stands in for the kernel's `get_random_long()` (64 bits on a 64-bit kernel);
//! one call per try, nothing else drawn. Two quirks are kept on purpose:
//!
//! * `i` is aligned absolutely but `j` relative to the zone start, so when `zone_start_pfn` is
//!   not a multiple of `1 << order` no `j` is ever the first page of a free block of that order
//!   and **a misaligned zone is never shuffled**;
//! * it is the naive "swap with anyone (else)" loop, not Fisher–Yates: the permutation of list
//!   positions it makes is biased (for two blocks it is almost always the identity: the second
//!   step undoes the first, unless one step's ten tries all draw the block itself). `bias`
//!   measures this.
//!
//! [`ShuffleMode::FisherYates`] is what the kernel's comment promises: each free list of blocks
//! of the shuffle order (one per migratetype, so migratetypes never mix, holes never enter)
//! gets an unbiased Fisher–Yates permutation with Lemire's unbiased bounded integers. Its
//! starting order is the list's, or PFN order when the lists are long (collected by a
//! sequential scan rather than a pointer chase); a uniform permutation stays uniform either way.

use rand_core::Rng;

use crate::Error;
use crate::free_area::{FreeArea, MAX_ORDER};

/// The kernel's `SHUFFLE_RETRY`: tries to find a partner for each block.
pub const SHUFFLE_RETRY: u32 = 10;

/// Which shuffle [`crate::Zone::shuffle_zone`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ShuffleMode {
    /// Linux's `__shuffle_zone`, quirks and bias included.
    Kernel,
    /// An unbiased Fisher–Yates permutation of each free list of the shuffle order.
    FisherYates,
}

/// What one `shuffle_zone` call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShuffleStats {
    /// Blocks looked at as `page_i` that were valid (kernel) or list members (Fisher–Yates).
    pub candidates: u64,
    /// List swaps made.
    pub swaps: u64,
    /// Kernel mode: blocks for which all [`SHUFFLE_RETRY`] tries failed.
    pub retries_exhausted: u64,
    /// Kernel mode: partners found but of another migratetype (skipped, no retry).
    pub migratetype_mismatches: u64,
    /// Generator words drawn.
    pub random_words: u64,
}

/// Runs `mode` over the whole free area at `order` with generator `rng`; see the module docs.
/// [`crate::Zone::shuffle_zone`] calls this on the zone's own area and generator.
///
/// # Errors
/// [`Error::OrderTooLarge`] for `order > 10`.
pub(crate) fn shuffle_zone<R: Rng>(
    zone: &mut FreeArea,
    rng: &mut R,
    order: u8,
    mode: ShuffleMode,
) -> Result<ShuffleStats, Error> {
    if order > MAX_ORDER {
        return Err(Error::OrderTooLarge { order });
    }
    Ok(shuffle_order(zone, rng, order, mode))
}

/// [`shuffle_zone`] for an order already checked to be at most [`MAX_ORDER`].
pub(crate) fn shuffle_order<R: Rng>(
    zone: &mut FreeArea,
    rng: &mut R,
    order: u8,
    mode: ShuffleMode,
) -> ShuffleStats {
    match mode {
        ShuffleMode::Kernel => kernel_shuffle(zone, rng, order),
        ShuffleMode::FisherYates => fisher_yates(zone, rng, order),
    }
}

fn kernel_shuffle<R: Rng>(zone: &mut FreeArea, rng: &mut R, order: u8) -> ShuffleStats {
    let mut st = ShuffleStats::default();
    let order_pages = 1u64 << order;
    let zone_start = zone.start_pfn();
    let end = zone.end_pfn();
    let spanned = zone.spanned_pages();
    // ALIGN(start_pfn, order_pages); a zone at the very top of the PFN space may have none.
    let Some(first) = zone_start.checked_add(order_pages - 1) else {
        return st;
    };
    let mut i = first & !(order_pages - 1);
    while i < end {
        if let Some(page_i) = zone.shuffle_valid_page(i, order) {
            st.candidates += 1;
            let mut page_j = None;
            for _ in 0..SHUFFLE_RETRY {
                st.random_words += 1;
                let r = rng.next_u64();
                let j = zone_start + ((r % spanned) & !(order_pages - 1));
                match zone.shuffle_valid_page(j, order) {
                    Some(p) if p != page_i => {
                        page_j = Some(p);
                        break;
                    }
                    _ => {}
                }
            }
            match page_j {
                None => st.retries_exhausted += 1,
                Some(page_j) if zone.mt_of(page_i) != zone.mt_of(page_j) => {
                    st.migratetype_mismatches += 1;
                }
                Some(page_j) => {
                    zone.list_swap(page_i, page_j);
                    st.swaps += 1;
                }
            }
        }
        match i.checked_add(order_pages) {
            Some(n) => i = n,
            None => break,
        }
    }
    st
}

fn fisher_yates<R: Rng>(zone: &mut FreeArea, rng: &mut R, order: u8) -> ShuffleStats {
    let mut st = ShuffleStats::default();
    let members = zone.shuffle_members(order);
    for (mt, mut nodes) in members.into_iter().enumerate() {
        let mt = mt as u8;
        st.candidates += nodes.len() as u64;
        for i in (1..nodes.len()).rev() {
            let j = bounded(rng, i as u64 + 1, &mut st.random_words) as usize;
            nodes.swap(i, j);
            st.swaps += 1;
        }
        zone.relink(order, mt, &nodes);
    }
    st
}

/// Lemire's unbiased `[0, n)` for `n ≥ 1`, counting the words drawn.
#[inline]
pub(crate) fn bounded<R: Rng + ?Sized>(rng: &mut R, n: u64, words: &mut u64) -> u64 {
    loop {
        *words += 1;
        let m = u128::from(rng.next_u64()) * u128::from(n);
        let lo = m as u64;
        if lo >= n || lo >= n.wrapping_neg() % n {
            return (m >> 64) as u64;
        }
    }
}

/// The shuffle coin's state (`add_to_free_area_random` in 5.2 – 5.6, `shuffle_pick_tail`
/// since 5.7): a 64-bit batch of coins, refilled with one `next_u64` (standing in for
/// `get_random_u64()`) when empty; each coin is the batch's low bit, then the batch shifts
/// right. What a set bit means depends on the kernel: head in 5.2 – 5.6, tail since 5.7
/// ([`crate::kernel`]).
#[derive(Clone)]
pub struct PickTail {
    rand: u64,
    bits: u8,
}

impl core::fmt::Debug for PickTail {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The unspent coins are generator output: not printed.
        f.debug_struct("PickTail")
            .field("bits_left", &self.bits)
            .finish_non_exhaustive()
    }
}

impl Default for PickTail {
    fn default() -> Self {
        Self::new()
    }
}

impl PickTail {
    /// An empty batch: the first coin draws a fresh word.
    pub const fn new() -> Self {
        PickTail { rand: 0, bits: 0 }
    }

    /// One coin: the batch's next bit (`true` = set).
    #[inline]
    pub fn coin<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        if self.bits == 0 {
            self.bits = 64;
            self.rand = rng.next_u64();
        }
        let ret = self.rand & 1 == 1;
        self.bits -= 1;
        self.rand >>= 1;
        ret
    }
}
