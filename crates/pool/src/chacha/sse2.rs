//! The SSE2 backend (every x86_64 CPU): one block in four registers, and four blocks per pass
//! in the block-per-lane layout.
//!
//! - **One block** ([`block`]): the "horizontal" layout of the SSE2 ChaCha implementations
//!   since Bernstein's own: register `a` holds state words 0..3, `b` 4..7, `c` 8..11, `d`
//!   12..15; a column round is four quarter rounds at once, and a lane rotation of `b`, `c`,
//!   `d` (`pshufd`) turns the diagonals into columns and back. Eight registers hold the state
//!   and its copy for the feed-forward: nothing is spilled to the stack.
//! - **Four blocks** ([`blocks`]): register `x[i]` holds word `i` of four consecutive blocks
//!   (the layout of [`super::avx512`], 128 bits wide), then a 4 × 4 transpose per group of four
//!   words. Sixteen state registers plus temporaries do not fit in x86_64's sixteen `xmm`
//!   registers, so some are spilled to this function's frame, which the dispatcher wipes.
//!
//! Every function here is `#[target_feature(enable = "sse2")]`, which every x86_64 CPU has
//! (it is part of the x86_64 baseline, and of every x86_64 Rust target).
//!
//! SSE2 has no vector rotate: rotations by 16 swap 16-bit halves with `pshuflw`/`pshufhw`,
//! the others are two shifts and an OR.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce};
use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_and_si128, _mm_cmpgt_epi32, _mm_or_si128, _mm_set1_epi32, _mm_setr_epi32, _mm_shuffle_epi32,
    _mm_shufflehi_epi16, _mm_shufflelo_epi16, _mm_slli_epi32, _mm_srli_epi32, _mm_unpackhi_epi32,
    _mm_unpackhi_epi64, _mm_unpacklo_epi32, _mm_unpacklo_epi64, _mm_xor_si128,
};

/// Blocks per pass of [`blocks`].
pub(super) const LANES: usize = 4;

#[target_feature(enable = "sse2")]
#[inline]
fn rotl16(x: __m128i) -> __m128i {
    _mm_shufflehi_epi16::<0b10_11_00_01>(_mm_shufflelo_epi16::<0b10_11_00_01>(x))
}

#[target_feature(enable = "sse2")]
#[inline]
fn rotl<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
}

/// The key as four words at `i..i + 4`, little-endian.
#[target_feature(enable = "sse2")]
#[inline]
fn key_words(key: &[u8; KEY_LEN], i: usize) -> [u32; 4] {
    core::array::from_fn(|j| {
        let o = 4 * (i + j);
        u32::from_le_bytes([key[o], key[o + 1], key[o + 2], key[o + 3]])
    })
}

#[target_feature(enable = "sse2")]
#[inline]
fn from_words(w: [u32; 4]) -> __m128i {
    _mm_setr_epi32(
        w[0].cast_signed(),
        w[1].cast_signed(),
        w[2].cast_signed(),
        w[3].cast_signed(),
    )
}

#[target_feature(enable = "sse2")]
#[inline]
fn to_bytes(v: __m128i) -> [u8; 16] {
    // SAFETY: `__m128i` is 16 bytes of plain integer data with no padding and no invalid bit
    // patterns, and so is `[u8; 16]`; a by-value transmute compiles to one store. Lane 0's
    // little-endian word comes first, which is RFC 8439's serialisation on x86.
    unsafe { core::mem::transmute::<__m128i, [u8; 16]>(v) }
}

/// One double round on the horizontal state: columns, then diagonals.
#[target_feature(enable = "sse2")]
#[inline]
fn double_round(a: &mut __m128i, b: &mut __m128i, c: &mut __m128i, d: &mut __m128i) {
    macro_rules! half {
        () => {
            *a = _mm_add_epi32(*a, *b);
            *d = rotl16(_mm_xor_si128(*d, *a));
            *c = _mm_add_epi32(*c, *d);
            *b = rotl::<12, 20>(_mm_xor_si128(*b, *c));
            *a = _mm_add_epi32(*a, *b);
            *d = rotl::<8, 24>(_mm_xor_si128(*d, *a));
            *c = _mm_add_epi32(*c, *d);
            *b = rotl::<7, 25>(_mm_xor_si128(*b, *c));
        };
    }
    half!();
    // Diagonals into columns: b, c, d rotated left by 1, 2, 3 lanes.
    *b = _mm_shuffle_epi32::<0b00_11_10_01>(*b);
    *c = _mm_shuffle_epi32::<0b01_00_11_10>(*c);
    *d = _mm_shuffle_epi32::<0b10_01_00_11>(*d);
    half!();
    *b = _mm_shuffle_epi32::<0b10_01_00_11>(*b);
    *c = _mm_shuffle_epi32::<0b01_00_11_10>(*c);
    *d = _mm_shuffle_epi32::<0b00_11_10_01>(*d);
}

/// Block `counter` under `key` and `nonce` with `R` rounds, into `out`.
#[target_feature(enable = "sse2")]
#[inline(never)]
pub(super) fn block<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
) {
    let a0 = from_words(CONSTANTS);
    let b0 = from_words(key_words(key, 0));
    let c0 = from_words(key_words(key, 4));
    let d0 = from_words([counter, nonce[0], nonce[1], nonce[2]]);
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    for _ in 0..R::COUNT {
        double_round(&mut a, &mut b, &mut c, &mut d);
    }
    for (o, v) in out.chunks_exact_mut(16).zip([
        _mm_add_epi32(a, a0),
        _mm_add_epi32(b, b0),
        _mm_add_epi32(c, c0),
        _mm_add_epi32(d, d0),
    ]) {
        o.copy_from_slice(&to_bytes(v));
    }
}

/// Four independent quarter rounds on words `(a, b, c, d)` of `x`, step by step.
macro_rules! quarter_rounds {
    ($x:ident; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        $( $x[$a] = _mm_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = rotl16(_mm_xor_si128($x[$d], $x[$a])); )+
        $( $x[$c] = _mm_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = rotl::<12, 20>(_mm_xor_si128($x[$b], $x[$c])); )+
        $( $x[$a] = _mm_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = rotl::<8, 24>(_mm_xor_si128($x[$d], $x[$a])); )+
        $( $x[$c] = _mm_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = rotl::<7, 25>(_mm_xor_si128($x[$b], $x[$c])); )+
    };
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), four per pass; a last
/// pass of one to three blocks stores only those. Returns the counter after the last block.
#[target_feature(enable = "sse2")]
#[inline(never)]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    let words = super::vocab::state_words(key, nonce, 0);
    let input: [__m128i; 16] = core::array::from_fn(|i| _mm_set1_epi32(words[i].cast_signed()));
    let mut ctr = counter;
    for pass in dest.chunks_mut(LANES * BLOCK_LEN) {
        let mut start = input;
        start[12] = _mm_add_epi32(
            _mm_set1_epi32(ctr.cast_signed()),
            _mm_setr_epi32(0, 1, 2, 3),
        );
        // Lanes past the blocks this pass stores compute blocks 2^63 further on, not the ones
        // after the request (see `avx2::poison_unstored`).
        let past = _mm_cmpgt_epi32(
            _mm_setr_epi32(0, 1, 2, 3),
            _mm_set1_epi32((pass.len() / BLOCK_LEN) as i32 - 1),
        );
        start[13] = _mm_xor_si128(input[13], _mm_and_si128(past, _mm_set1_epi32(i32::MIN)));
        let mut x = start;
        for _ in 0..R::COUNT {
            quarter_rounds!(x; (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
            quarter_rounds!(x; (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
        }
        for (v, s) in x.iter_mut().zip(start.iter()) {
            *v = _mm_add_epi32(*v, *s);
        }
        for g in 0..4 {
            let (r0, r1, r2, r3) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
            let t0 = _mm_unpacklo_epi32(r0, r1);
            let t1 = _mm_unpackhi_epi32(r0, r1);
            let t2 = _mm_unpacklo_epi32(r2, r3);
            let t3 = _mm_unpackhi_epi32(r2, r3);
            let out = [
                _mm_unpacklo_epi64(t0, t2),
                _mm_unpackhi_epi64(t0, t2),
                _mm_unpacklo_epi64(t1, t3),
                _mm_unpackhi_epi64(t1, t3),
            ];
            for (j, v) in out.into_iter().enumerate() {
                let at = j * BLOCK_LEN + 16 * g;
                if let Some(o) = pass.get_mut(at..at + 16) {
                    o.copy_from_slice(&to_bytes(v));
                }
            }
        }
        ctr = ctr.wrapping_add((pass.len() / BLOCK_LEN) as u32);
    }
    ctr
}
