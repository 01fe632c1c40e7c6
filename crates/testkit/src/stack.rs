//! A thread's own stack, looked at from the thread itself: what the calls it just made left
//! below its frame (zeroed before, copied after), and the pieces of keys to look for there.
//! Every architecture (no `ptrace`): the register-level tracer is [`crate::trace`].

/// A 16-byte piece of a key: the piece, the key's index and the piece's name.
pub type Piece = ([u8; 16], usize, String);

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

/// The 16-byte pieces of `keys` searched for: either half of a key, each of its 32-bit words
/// repeated four times (a key word broadcast across a vector register's lanes, as SIMD
/// backends hold it), and two consecutive bit planes of either half ([`aes_planes`]: the
/// first two round keys of AES-256 as the bitsliced AES holds them). Pieces with many equal
/// bytes would match unrelated memory and are dropped (a random key has one with
/// probability below 10^-20; plane bytes take four values, and a plane pair that lacks
/// 0x55 or 0xaa, about 2% of them, is dropped).
pub fn key_pieces(keys: &[[u8; 32]]) -> Vec<Piece> {
    let mut named = Vec::new();
    let mut planes = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        for h in 0..2 {
            let mut half = [0u8; 16];
            half.copy_from_slice(&k[16 * h..16 * h + 16]);
            let p = aes_planes(&half);
            for j in 0..7 {
                let mut piece = [0u8; 16];
                piece[..8].copy_from_slice(&p[j].to_le_bytes());
                piece[8..].copy_from_slice(&p[j + 1].to_le_bytes());
                // Plane bytes take four values (0x00, 0x55, 0xaa, 0xff); memory full of 0x00
                // and 0xff (masks, bitmaps, a signal frame's fields) matches pairs made of
                // those alone, so a pair is searched only when both others are in it.
                if piece.contains(&0x55) && piece.contains(&0xaa) {
                    planes.push((piece, i, format!("planes {j},{} of half {h}", j + 1)));
                }
            }
        }
        for h in 0..2 {
            let mut p = [0u8; 16];
            p.copy_from_slice(&k[16 * h..16 * h + 16]);
            named.push((p, i, format!("half {h}")));
        }
        for w in 0..8 {
            let mut p = [0u8; 16];
            for l in 0..4 {
                p[4 * l..4 * l + 4].copy_from_slice(&k[4 * w..4 * w + 4]);
            }
            named.push((p, i, format!("word {w} x4")));
        }
    }
    named.retain(|(p, _, _)| {
        let mut s = *p;
        s.sort_unstable();
        s.windows(2).filter(|w| w[0] == w[1]).count() < 8 || p.chunks(4).all(|c| c == &p[..4])
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
                .map(|(_, key, name)| (at, *key, name.clone()))
        })
        .collect();
    drop(pieces);
    crate::regs::clear();
    found
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
