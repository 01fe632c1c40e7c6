//! The RFC 8439 vocabulary every other file of the cipher speaks: block and key sizes, the
//! state words, and the round count (a run-time [`Rounds`] and the types it becomes).

/// Size of one ChaCha block in bytes.
pub const BLOCK_LEN: usize = 64;

/// Size of a ChaCha key in bytes.
pub const KEY_LEN: usize = 32;

/// Bytes of output one keystream key may produce before a huge read derives the next key:
/// 1 MiB, 16,384 blocks, far from the 2^32-block limit of RFC 8439's counter.
pub const CHUNK_LEN: usize = 1 << 20;

/// How many rounds of ChaCha a generator runs.
///
/// Bernstein's ChaCha paper defines ChaCha8, ChaCha12 and ChaCha20; RFC 8439 standardises
/// ChaCha20, the default. ChaCha8 and ChaCha12 trade security margin for speed (rand's
/// `StdRng` is ChaCha12). Every variant keeps RFC 8439's state layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rounds {
    /// 8 rounds (4 double rounds).
    ChaCha8,
    /// 12 rounds (6 double rounds).
    ChaCha12,
    /// 20 rounds (10 double rounds): RFC 8439's ChaCha20.
    #[default]
    ChaCha20,
}

impl Rounds {
    /// Rounds per block: 8, 12 or 20.
    #[must_use]
    pub const fn count(self) -> u32 {
        match self {
            Self::ChaCha8 => 8,
            Self::ChaCha12 => 12,
            Self::ChaCha20 => 20,
        }
    }
}

/// A round count as a type: each backend's round loop runs `R::COUNT` double rounds, a
/// constant of its monomorphised copy (the shape of RustCrypto `chacha20`'s `R: Rounds`).
/// [`Rounds::run`] turns the run-time choice into one of these, in one place.
pub(crate) trait DoubleRounds {
    /// Double rounds per block: 4, 6 or 10.
    const COUNT: u32;
}

/// ChaCha8 as a type.
pub(crate) enum R8 {}
/// ChaCha12 as a type.
pub(crate) enum R12 {}
/// ChaCha20 as a type.
pub(crate) enum R20 {}

impl DoubleRounds for R8 {
    const COUNT: u32 = 4;
}
impl DoubleRounds for R12 {
    const COUNT: u32 = 6;
}
impl DoubleRounds for R20 {
    const COUNT: u32 = 10;
}

/// A computation generic over the round count (what [`Rounds::run`] runs).
pub(crate) trait WithRounds {
    /// What the computation returns.
    type Output;
    /// Runs it with `R` rounds.
    fn run<R: DoubleRounds>(self) -> Self::Output;
}

impl Rounds {
    /// Runs `f` with this round count as a type: the one place a run-time [`Rounds`] becomes
    /// a [`DoubleRounds`].
    #[inline(always)]
    pub(crate) fn run<F: WithRounds>(self, f: F) -> F::Output {
        match self {
            Self::ChaCha8 => f.run::<R8>(),
            Self::ChaCha12 => f.run::<R12>(),
            Self::ChaCha20 => f.run::<R20>(),
        }
    }
}

/// State words 13..15: the nonce (all zero for the node pools; Fortuna's ChaCha20 PRF puts
/// the upper 96 bits of its 128-bit block number there).
pub(crate) type Nonce = [u32; 3];

/// "expand 32-byte k" (RFC 8439 §2.3).
pub(crate) const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Runs `pass(blocks, n, counter)` on `dest` (whole blocks) in passes of at most `lanes`
/// blocks: `blocks` holds the pass's `n` blocks, `counter` is the first one's (word 12,
/// stepped modulo 2^32). Returns the counter after the last block: the loop of every bulk
/// backend but AVX-512's (whose last partial pass differs).
#[inline(always)]
pub(crate) fn each_pass(
    dest: &mut [u8],
    counter: u32,
    lanes: usize,
    mut pass: impl FnMut(&mut [u8], usize, u32),
) -> u32 {
    let mut ctr = counter;
    for blocks in dest.chunks_mut(lanes * BLOCK_LEN) {
        let n = blocks.len() / BLOCK_LEN;
        if n == 0 {
            break;
        }
        pass(blocks, n, ctr);
        ctr = ctr.wrapping_add(n as u32);
    }
    ctr
}
