//! The synchronous driver: the kernel thread's loop (LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022; Peter Lafreniere's sketch and
//! Robert Elliott's `kernel_fpu_yield()` version) over any RustCrypto hasher or any
//! `FnMut(&mut [u8])` filler.
//!
//! ```text
//! begin();
//! for each interval-sized chunk:
//!     process(chunk);
//!     if more data and should_yield(work) { end(); yield_now(); begin(); }
//! end();
//! ```
//!
//! The check happens only *between* chunks: never before the first byte nor after the last,
//! and `end → yield_now → begin` only when the policy says yes.

use digest::common::BlockSizeUser;
use digest::{Digest, FixedOutput, Output, Update};

use crate::{Counters, NoSection, Policy, Preempt, SimdSection, Work};

/// The state shared by every synchronous entry point: policy, section, preempt, counters and
/// the position within the current check interval.
struct Engine<S, P> {
    section: S,
    preempt: P,
    policy: Policy,
    /// Bytes processed since the last check (or the start of the stream).
    since_check: usize,
    counters: Counters,
}

impl<S: SimdSection, P: Preempt> Engine<S, P> {
    fn new(policy: Policy, section: S, preempt: P) -> Self {
        Engine {
            section,
            preempt,
            policy,
            since_check: 0,
            counters: Counters::default(),
        }
    }

    #[inline]
    fn enter(&mut self) -> bool {
        let held = self.section.begin();
        if held {
            self.counters.sections += 1;
        } else {
            self.counters.fallbacks += 1;
        }
        held
    }

    /// Runs `step` over `0..len` in pieces that end on check-interval boundaries (counted from
    /// the start of the stream, so split `update` calls check at the same places as one call).
    /// `step` gets the range and whether the SIMD section is held.
    #[inline]
    fn run(&mut self, len: usize, mut step: impl FnMut(core::ops::Range<usize>, bool)) {
        if len == 0 {
            return;
        }
        let interval = self.policy.interval();
        let mut held = self.enter();
        let mut stretch: u64 = 0;
        let mut pos = 0;
        while pos < len {
            if self.since_check >= interval {
                self.since_check = 0;
                self.counters.checks += 1;
                let work = Work::new(interval, self.policy.block_size());
                if self.preempt.should_yield(work) {
                    if held {
                        self.section.end();
                    }
                    self.preempt.yield_now();
                    self.counters.yields += 1;
                    self.counters.note_stretch(stretch);
                    stretch = 0;
                    held = self.enter();
                }
            }
            let take = (interval - self.since_check).min(len - pos);
            step(pos..pos + take, held);
            pos += take;
            self.since_check += take;
            stretch += take as u64;
        }
        self.counters.bytes += len as u64;
        self.counters.note_stretch(stretch);
        if held {
            self.section.end();
        }
    }
}

/// An incremental hasher that feeds `U` in check intervals, entering `S` once per
/// [`update`](Chunked::update) call and yielding through `P` when it says so.
///
/// Check points are counted from the start of the stream, so any split of the input into
/// `update` calls checks at the same byte offsets (and gives the same digest) as one call.
/// The section is left at the end of every `update`: it is never held between calls.
///
/// `U` is any [`digest::Update`]: a [`Digest`], a MAC, an XOF. RustCrypto hashers choose their
/// SIMD backend themselves at run time, so when `begin` fails the same code runs and the failure
/// is only counted; a kernel build selects a soft backend with its own `--cfg` flag.
pub struct Chunked<U, S = NoSection, P = crate::NeverYield> {
    hasher: U,
    engine: Engine<S, P>,
}

/// Shows the policy and counters only: never the hasher's state (it may be keyed).
impl<U, S, P> core::fmt::Debug for Chunked<U, S, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Chunked")
            .field("policy", &self.engine.policy)
            .field("counters", &self.engine.counters)
            .finish_non_exhaustive()
    }
}

impl<D: Digest + Update + BlockSizeUser, P: Preempt> Chunked<D, NoSection, P> {
    /// A fresh `D` with its default policy ([`Policy::for_digest`]) and no SIMD section.
    pub fn new(preempt: P) -> Self {
        Chunked::with_parts(D::new(), Policy::for_digest::<D>(), NoSection, preempt)
    }
}

impl<U: Update, S: SimdSection, P: Preempt> Chunked<U, S, P> {
    /// Wraps `hasher` (which may already hold data) with an explicit policy and section.
    pub fn with_parts(hasher: U, policy: Policy, section: S, preempt: P) -> Self {
        Chunked {
            hasher,
            engine: Engine::new(policy, section, preempt),
        }
    }

    /// Hashes `data`, checking at every interval boundary it crosses.
    pub fn update(&mut self, data: &[u8]) {
        let hasher = &mut self.hasher;
        self.engine
            .run(data.len(), |r, _simd| hasher.update(&data[r]));
    }

    /// What the driver did so far.
    pub fn counters(&self) -> &Counters {
        &self.engine.counters
    }

    /// The policy in use.
    pub fn policy(&self) -> Policy {
        self.engine.policy
    }

    /// The preemption policy, e.g. to read its own statistics.
    pub fn preempt(&self) -> &P {
        &self.engine.preempt
    }

    /// Gives back the hasher (to finalize a MAC or read an XOF), the counters, and the parts.
    pub fn into_parts(self) -> (U, Counters, S, P) {
        (
            self.hasher,
            self.engine.counters,
            self.engine.section,
            self.engine.preempt,
        )
    }
}

impl<U: FixedOutput, S: SimdSection, P: Preempt> Chunked<U, S, P> {
    /// The digest of everything passed to [`update`](Chunked::update).
    pub fn finalize(self) -> Output<U> {
        self.hasher.finalize_fixed()
    }
}

/// The digest of `data`, computed in `D`'s default check intervals ([`Policy::for_digest`]:
/// 4 KiB for SHA-1/SHA-2) with `preempt` asked between intervals. Equal to `D::digest(data)`
/// whatever `preempt` answers.
///
/// ```
/// use scalrand_simd_chunk::{digest_chunked, NeverYield};
/// use sha2::{Digest, Sha256};
///
/// let data = vec![7u8; 100_000];
/// assert_eq!(digest_chunked::<Sha256>(&data, &mut NeverYield), Sha256::digest(&data));
/// ```
pub fn digest_chunked<D: Digest + BlockSizeUser>(
    data: &[u8],
    preempt: &mut impl Preempt,
) -> Output<D> {
    digest_chunked_with::<D, _, _>(data, Policy::for_digest::<D>(), &mut NoSection, preempt).0
}

/// [`digest_chunked`] with an explicit policy and SIMD section; also returns the counters.
pub fn digest_chunked_with<D: Digest, S: SimdSection, P: Preempt>(
    data: &[u8],
    policy: Policy,
    section: &mut S,
    preempt: &mut P,
) -> (Output<D>, Counters) {
    let mut hasher = D::new();
    let mut engine = Engine::new(policy, section, preempt);
    engine.run(data.len(), |r, _simd| Digest::update(&mut hasher, &data[r]));
    (hasher.finalize(), engine.counters)
}

/// Fills (or transforms in place) `buf` with `fill`, called once per check interval, with the
/// same section/yield discipline as the hashing driver: for keystreams and large pool reads.
///
/// `fill` receives consecutive, non-overlapping pieces of `buf` in order, each at most one
/// interval long; the second argument tells whether the SIMD section is held for that piece
/// (`false` after a failed `begin`: use a scalar path).
///
/// ```
/// use scalrand_simd_chunk::{fill_chunked, NeverYield, NoSection, Policy};
///
/// let mut buf = vec![0u8; 10_000];
/// let mut counter = 0u8;
/// let policy = Policy::new(4096)?;
/// let c = fill_chunked(&mut buf, policy, &mut NoSection, &mut NeverYield, |piece, _simd| {
///     for b in piece {
///         *b = counter;
///         counter = counter.wrapping_add(1);
///     }
/// });
/// assert_eq!(c.checks, 2);
/// assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
/// # Ok::<(), scalrand_simd_chunk::PolicyError>(())
/// ```
pub fn fill_chunked<S: SimdSection, P: Preempt>(
    buf: &mut [u8],
    policy: Policy,
    section: &mut S,
    preempt: &mut P,
    mut fill: impl FnMut(&mut [u8], bool),
) -> Counters {
    let mut engine = Engine::new(policy, section, preempt);
    engine.run(buf.len(), |r, simd| fill(&mut buf[r], simd));
    engine.counters
}
