//! A thread's own stack, looked at from the thread itself: what the calls it just made left
//! below its frame (zeroed before, copied after), and the pieces of keys to look for there.
//! Every architecture (no `ptrace`): the register-level tracer is [`crate::trace`].

/// A 16-byte piece of a key: the piece, the key's index and the piece's name.
pub type Piece = ([u8; 16], usize, PieceName);

/// What a [`Piece`] is of its key (printed as "half 0", "word 3 x4", "round key 5",
/// "planes 2,3 of round key 5"; round keys 0 and 1 print as the halves they are).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceName {
    /// Half `h` (0 or 1) of the key.
    Half(u8),
    /// Key word `w` repeated four times.
    Word(u8),
    /// Round key `r` (2 to 14) of the key's AES-256 schedule.
    RoundKey(u8),
    /// Bitsliced planes `first` and `first + 1` of round key `round` ([`aes_planes`]).
    Planes {
        /// The round key.
        round: u8,
        /// The first of the two planes.
        first: u8,
    },
}

impl PieceName {
    /// Whether the piece is a half of the key itself.
    pub fn is_half(self) -> bool {
        matches!(self, Self::Half(_))
    }
}

impl core::fmt::Display for PieceName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let round = |f: &mut core::fmt::Formatter<'_>, r: u8| {
            if r < 2 {
                write!(f, "half {r}")
            } else {
                write!(f, "round key {r}")
            }
        };
        match *self {
            Self::Half(h) => write!(f, "half {h}"),
            Self::Word(w) => write!(f, "word {w} x4"),
            Self::RoundKey(r) => round(f, r),
            Self::Planes { round: r, first } => {
                write!(f, "planes {first},{} of ", first + 1)?;
                round(f, r)
            }
        }
    }
}

/// Which forms of each key a search looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forms {
    /// Every form [`key_pieces`] lists.
    All,
    /// All but the bitsliced planes (some 100 pieces a key): for a search over very many keys
    /// (every key a storm of reads derived), where the step-by-step and signal-frame searches
    /// over each read's own keys cover the planes.
    Unsliced,
}

/// Bit planes of 16 bytes (an AES round key) repeated for four blocks, as the pool crate's
/// bitsliced AES-256 holds a round key: plane `j` has bit `j` of byte `r + 4c` of block `b` at
/// bit `32(c & 1) + 8r + 2b + (c >> 1)` (the layout its docs give, built here bit by bit).
pub fn aes_planes(half: &[u8; 16]) -> [u64; 8] {
    let mut planes = [0u64; 8];
    for (k, byte) in half.iter().enumerate() {
        let (r, c) = (k % 4, k / 4);
        for b in 0..4 {
            let at = 32 * (c & 1) + 8 * r + 2 * b + (c >> 1);
            for (j, plane) in planes.iter_mut().enumerate() {
                *plane |= u64::from((byte >> j) & 1) << at;
            }
        }
    }
    planes
}

/// The AES S-box (FIPS-197 §5.1.1), its table computed once from the definition.
pub fn aes_sbox(x: u8) -> u8 {
    static TABLE: std::sync::OnceLock<[u8; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| core::array::from_fn(|i| aes_sbox_of(i as u8)))[usize::from(x)]
}

/// The S-box from its definition: the inverse in GF(2^8) modulo `0x11b` (0 to 0), then the
/// affine map with constant `0x63`.
fn aes_sbox_of(x: u8) -> u8 {
    let mul = |mut a: u8, mut b: u8| {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 == 1 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    };
    let mut inv = 1u8;
    for _ in 0..254 {
        inv = mul(inv, x);
    }
    let mut s = inv;
    for k in 1..5 {
        s ^= inv.rotate_left(k);
    }
    s ^ 0x63
}

/// The 15 round keys of AES-256 under `key` (FIPS-197 §5.2, `Nk = 8`), computed here, apart
/// from the code under test: any two consecutive ones give the key back (the schedule runs
/// backwards), so each is searched for as a key piece.
pub fn aes256_round_keys(key: &[u8; 32]) -> [[u8; 16]; 15] {
    let mut w = [[0u8; 4]; 60];
    for (i, word) in w.iter_mut().take(8).enumerate() {
        word.copy_from_slice(&key[4 * i..4 * i + 4]);
    }
    let mut rcon = 1u8;
    for i in 8..60 {
        let mut t = w[i - 1];
        if i % 8 == 0 {
            t = [
                aes_sbox(t[1]) ^ rcon,
                aes_sbox(t[2]),
                aes_sbox(t[3]),
                aes_sbox(t[0]),
            ];
            rcon <<= 1;
        } else if i % 8 == 4 {
            t = t.map(aes_sbox);
        }
        for b in 0..4 {
            w[i][b] = w[i - 8][b] ^ t[b];
        }
    }
    core::array::from_fn(|r| core::array::from_fn(|k| w[4 * r + k / 4][k % 4]))
}

/// The 16-byte pieces of `keys` searched for: either half of a key, each of its 32-bit words
/// repeated four times (a key word broadcast across a vector register's lanes, as SIMD
/// backends hold it), every later round key of the key's AES-256 schedule
/// ([`aes256_round_keys`]; rounds 0 and 1 are the halves), and two consecutive bit planes of
/// every round key ([`aes_planes`]: as the bitsliced AES holds them). Pieces with many equal
/// bytes would match unrelated memory and are dropped: a half or round key with eight or more
/// repeated bytes (probability below 10^-20), a key word of four equal bytes (probability
/// 2^-24 a word; such a word's piece is one byte repeated, as zeroed memory is), and a plane
/// pair that lacks 0x55 or 0xaa (plane bytes take four values; about 2% of pairs).
pub fn key_pieces(keys: &[[u8; 32]]) -> Vec<Piece> {
    key_pieces_of(keys, Forms::All)
}

/// [`key_pieces`] in the given forms.
pub fn key_pieces_of(keys: &[[u8; 32]], forms: Forms) -> Vec<Piece> {
    let mut named = Vec::new();
    let mut planes = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let round_keys = aes256_round_keys(k);
        for (r, rk) in (0u8..).zip(round_keys.iter()) {
            if r >= 2 {
                named.push((*rk, i, PieceName::RoundKey(r)));
            }
            if forms == Forms::Unsliced {
                continue;
            }
            let p = aes_planes(rk);
            for j in 0..7 {
                let mut piece = [0u8; 16];
                piece[..8].copy_from_slice(&p[j].to_le_bytes());
                piece[8..].copy_from_slice(&p[j + 1].to_le_bytes());
                // Plane bytes take four values (0x00, 0x55, 0xaa, 0xff); memory full of 0x00
                // and 0xff (masks, bitmaps, a signal frame's fields) matches pairs made of
                // those alone, so a pair is searched only when both others are in it.
                if piece.contains(&0x55) && piece.contains(&0xaa) {
                    let first = j as u8;
                    planes.push((piece, i, PieceName::Planes { round: r, first }));
                }
            }
        }
        for h in 0..2 {
            let mut p = [0u8; 16];
            p.copy_from_slice(&k[16 * h..16 * h + 16]);
            named.push((p, i, PieceName::Half(h as u8)));
        }
        for w in 0..8 {
            let mut p = [0u8; 16];
            for l in 0..4 {
                p[4 * l..4 * l + 4].copy_from_slice(&k[4 * w..4 * w + 4]);
            }
            named.push((p, i, PieceName::Word(w as u8)));
        }
    }
    // A piece of one repeated byte (a key word of four equal bytes, zero above all) matches
    // every zeroed or 0xff-filled stretch of memory: dropped.
    named.retain(|(p, _, _)| {
        let mut s = *p;
        s.sort_unstable();
        s[0] != s[15]
            && (s.windows(2).filter(|w| w[0] == w[1]).count() < 8
                || p.chunks(4).all(|c| c == &p[..4]))
    });
    named.extend(planes);
    named
}

/// Every piece of `keys` in `mem`, at every byte offset: the offset, the key's index and the
/// piece's name.
pub fn find_pieces(mem: &[u8], keys: &[[u8; 32]]) -> Vec<(usize, usize, String)> {
    let pieces = key_pieces(keys);
    let found = mem
        .windows(16)
        .enumerate()
        .filter_map(|(at, w)| {
            pieces
                .iter()
                .find(|(p, _, _)| p == w)
                .map(|(_, key, name)| (at, *key, name.to_string()))
        })
        .collect();
    drop(pieces);
    crate::regs::clear();
    found
}

/// The offsets `i` of `buf`, every `stride` bytes from 0 (with `i + 16 <= buf.len()`), whose
/// 16 bytes, read as a little-endian `u128` and xored with `mask`, are in `sorted` (ascending),
/// each with the index found there. Not generic, so that it runs as this crate is built (the
/// workspace optimises it in debug builds too): a scan of a whole process from a debug-built
/// test spends its time here.
pub fn sorted_hits(buf: &[u8], sorted: &[u128], mask: u128, stride: usize) -> Vec<(usize, usize)> {
    let stride = stride.max(1);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 16 <= buf.len() {
        let w = u128::from_le_bytes(buf[i..i + 16].try_into().unwrap()) ^ mask;
        if let Ok(ix) = sorted.binary_search(&w) {
            out.push((i, ix));
        }
        i += stride;
    }
    out
}

/// Zeroes `N` bytes of stack below the caller's frame.
#[inline(never)]
pub fn zero_below<const N: usize>() {
    let mut zeros = [0u8; N];
    core::hint::black_box(&mut zeros);
}

/// Copies the `out.len()` bytes of stack that end `end` bytes from this call's own local
/// (above it when positive; rounded down to 8) into `out`, word by word through volatile loads, in a frame of a few
/// words that calls nothing while it copies; returns their lowest address. Called right after
/// a call of the caller's, the copy holds what that call's frames left.
#[inline(never)]
pub fn copy_below(out: &mut [u8], end: isize) -> usize {
    let here = 0u8;
    let top = (core::ptr::from_ref(&here) as usize).wrapping_add_signed(end) & !7;
    let base = top - out.len();
    for (i, c) in out.chunks_exact_mut(8).enumerate() {
        // SAFETY: the calling thread's own stack, below its frame (the caller keeps `out`
        // within its stack's size); volatile, as no Rust object lives there.
        let w = unsafe { core::ptr::read_volatile((base + 8 * i) as *const u64) };
        c.copy_from_slice(&w.to_ne_bytes());
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_hits_finds_each_needle_at_its_stride() {
        let buf: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        let mask = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
        let at = |i: usize| u128::from_le_bytes(buf[i..i + 16].try_into().unwrap()) ^ mask;
        // Needles at offsets 8 and 100 (on the stride of 4) and 33 (off it), and one absent.
        let mut sorted = vec![at(8), at(100), at(33), 7];
        sorted.sort_unstable();
        let ix = |v: u128| sorted.iter().position(|&x| x == v).unwrap();
        assert_eq!(
            sorted_hits(&buf, &sorted, mask, 4),
            [(8, ix(at(8))), (100, ix(at(100)))]
        );
        assert_eq!(sorted_hits(&buf, &sorted, mask, 1).len(), 3);
        assert!(sorted_hits(&buf[..15], &sorted, mask, 1).is_empty());
        assert_eq!(sorted_hits(&buf[..116], &sorted, mask, 4).len(), 2);
        assert_eq!(sorted_hits(&buf[..115], &sorted, mask, 4).len(), 1);
    }

    /// FIPS-197 appendix A.3: the expansion of key 603deb10..0914dff4 ends with
    /// fe4890d1 e6188d0b 046df344 706c631e, and its round key 2 is 9ba35411 8e6925af a51a8b5f
    /// 2067fcde.
    #[test]
    fn fips_197_a3() {
        let key = [
            0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
            0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
            0x09, 0x14, 0xdf, 0xf4,
        ];
        let rk = aes256_round_keys(&key);
        assert_eq!(
            rk[14],
            [
                0xfe, 0x48, 0x90, 0xd1, 0xe6, 0x18, 0x8d, 0x0b, 0x04, 0x6d, 0xf3, 0x44, 0x70, 0x6c,
                0x63, 0x1e
            ]
        );
        assert_eq!(
            rk[2],
            [
                0x9b, 0xa3, 0x54, 0x11, 0x8e, 0x69, 0x25, 0xaf, 0xa5, 0x1a, 0x8b, 0x5f, 0x20, 0x67,
                0xfc, 0xde
            ]
        );
        assert_eq!(rk[0], key[..16]);
    }

    /// A key one of whose words is zero (one key in 2^29 has one; a storm derives 10^5 keys)
    /// is not "found" in zeroed memory, while its other pieces still are.
    #[test]
    fn a_zero_key_word_does_not_match_zeroed_memory() {
        let mut key: [u8; 32] = core::array::from_fn(|i| 0x11u8.wrapping_mul(i as u8 + 7));
        key[28..].fill(0);
        let mut mem = vec![0u8; 1024];
        assert_eq!(find_pieces(&mem, &[key]), []);
        mem[100..116].copy_from_slice(&key[..16]);
        assert_eq!(find_pieces(&mem, &[key]), [(100, 0, "half 0".to_string())]);
        let mut filled = vec![0xffu8; 1024];
        key[28..].fill(0xff);
        assert_eq!(find_pieces(&filled, &[key]), []);
        filled[7..23].copy_from_slice(&key[16..]);
        assert_eq!(find_pieces(&filled, &[key]), [(7, 0, "half 1".to_string())]);
    }
}
