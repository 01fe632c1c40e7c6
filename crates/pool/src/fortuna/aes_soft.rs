//! AES-256 without AES instructions: bitsliced and constant-time, with its state, every
//! temporary and the round keys in wipe-on-fork memory, so that no piece of a key or of the
//! cipher state is in a stack frame, not even for the length of a call (where the OS maps no
//! wipe-on-fork memory of its own, the working frame is on the stack, zeroed when the call
//! ends: see [`on_work`]).
//!
//! **Representation.** Four blocks (64 bytes) run at once as eight 64-bit *planes*: plane `j`
//! holds bit `j` of all 64 bytes, byte `r + 4c` of block `b` (FIPS-197 §3.4: row `r`, column
//! `c`) at bit position `32(c & 1) + 8r + 2b + (c >> 1)`. That position is what two fixed
//! networks give: eight little-endian words of the 64 input bytes, then an 8×8 bit
//! transposition inside every byte lane ([`transpose`], three rounds of `swapmove`; it is its
//! own inverse, so the same network turns planes back into output words). SubBytes is the
//! Boyar–Peralta depth-16 circuit (J. Boyar, R. Peralta, "A depth-16 circuit for the AES
//! S-box", IACR ePrint 2011/332; here 32 AND, 2 OR, 94 XOR and 4 NOT) applied to the planes, so all 64
//! bytes go through it together with no table and no data-dependent branch or address;
//! ShiftRows and MixColumns are masks and shifts on each plane (rows are 8-bit fields inside
//! each 32-bit half, so a row rotation is a rotation of those fields). A round key is kept in
//! the same form, repeated for the four blocks; the key expansion (FIPS-197 §5.2) runs on it
//! column by column with the same circuit for SubWord.
//!
//! **Where the values live.** Sixteen planes and a hundred circuit temporaries do not fit in
//! the general registers of any target, and a compiler that holds them in locals spills them
//! to the stack frame, where a child forked from another thread during the call, or a signal
//! frame, finds them (the first two round keys of AES-256 are the key itself). So every value
//! lives in a [`Work`] frame of wipe-on-fork memory (taken per call and zeroed when given back,
//! as the portable ChaCha backend's), and every S-box gate is a volatile load of its inputs
//! and a volatile store of its output: nothing stays in a register from one gate to the next,
//! and a gate needs three registers. The linear layers (ShiftRows, MixColumns, AddRoundKey,
//! the transposition and the key expansion's column sums) load a plane or two, hold them and
//! a few temporaries in registers for a handful of instructions, and store the result. The
//! round keys are read from the caller's memory (a reader frame of wipe-on-fork memory) with
//! volatile loads too. On x86_64, `tests/stack_every_step.rs` single-steps reads on this path
//! (forced with `SCALRAND_AES=soft`) and finds no piece of any round key, raw or in bitsliced
//! form, on the stack at any instruction.
//!
//! The price is speed: every gate waits on memory. This path serves CPUs without AES
//! instructions that a Fortuna with the AES-256 PRF runs on; ChaCha20, the other PRF, runs on
//! SIMD backends there (see the crate's BENCHMARKS for both).

use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::ZeroValid;

/// The 15 round keys of AES-256 in plane form: round `i`, plane `j`, repeated for the four
/// blocks of a pass.
pub(super) type Planes = [[u64; 8]; 15];

/// Bytes one pass encrypts: four blocks.
const PASS: usize = 64;

/// Names of the [`Work`] frame's words: the state's planes `S0`..`S7` (plane `j` is bit `j`),
/// the S-box circuit's values (named as in Boyar and Peralta's listing), two temporaries of
/// compound gates; MixColumns' eight words from [`MIX_B`] and eight from [`MIX_R`] follow.
#[derive(Clone, Copy)]
#[repr(u8)]
#[rustfmt::skip]
enum Slot {
    S0, S1, S2, S3, S4, S5, S6, S7,
    T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15, T16, T17, T18, T19,
    T20, T21, T22, T23, T24, T25, T26, T27,
    M1, M6, M11, M13, M15, M20, M21, M22, M23, M25, M37, M38, M39, M40, M41, M42, M43, M44,
    M45, M46, M47, M48, M49, M50, M51, M52, M53, M54, M55, M56, M57, M58, M59, M60, M61, M62,
    M63,
    L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18, L19,
    L20, L21, L22, L23, L24, L25, L26, L27, L28, L29,
    A0, A1,
    /// The first word past the circuit's (not a slot of its own).
    End,
}

/// MixColumns' `x ^ rot1(x)` for each plane: eight words.
const MIX_B: usize = Slot::End as usize;
/// MixColumns' result without the `{02}` term for each plane: eight words.
const MIX_R: usize = MIX_B + 8;
/// Words in a [`Work`] frame.
const WORDS: usize = MIX_R + 8;

use Slot::{
    A0, A1, L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18,
    L19, L20, L21, L22, L23, L24, L25, L26, L27, L28, L29, M1, M6, M11, M13, M15, M20, M21, M22,
    M23, M25, M37, M38, M39, M40, M41, M42, M43, M44, M45, M46, M47, M48, M49, M50, M51, M52, M53,
    M54, M55, M56, M57, M58, M59, M60, M61, M62, M63, S0, S1, S2, S3, S4, S5, S6, S7, T1, T2, T3,
    T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15, T16, T17, T18, T19, T20, T21, T22, T23,
    T24, T25, T26, T27,
};

/// The circuit's inputs: `U0` is the most significant bit (plane 7), `U7` the least.
const U: [Slot; 8] = [S7, S6, S5, S4, S3, S2, S1, S0];

/// One pass's values, in a frame of wipe-on-fork memory.
#[repr(C, align(64))]
struct Work([u64; WORDS]);

// SAFETY: plain words; all-zero is the frame's state between calls.
unsafe impl ZeroValid for Work {}

/// Frames for [`Work`], mapped at the first call: 16, and more as calls in flight need.
static WORK: Scratch<Work> = Scratch::new_unmapped(16);

impl Work {
    /// Word `i` (a slot's number), loaded from the frame.
    #[inline(always)]
    fn at(&self, i: usize) -> u64 {
        match self.0.get(i) {
            // SAFETY: a reference to an aligned, initialised word of the frame.
            Some(p) => unsafe { core::ptr::read_volatile(p) },
            None => 0,
        }
    }

    /// Stores `v` as word `i` (a slot's number).
    #[inline(always)]
    fn set_at(&mut self, i: usize, v: u64) {
        if let Some(p) = self.0.get_mut(i) {
            // SAFETY: a reference to an aligned word of the frame, borrowed mutably.
            unsafe { core::ptr::write_volatile(p, v) };
        }
    }

    #[inline(always)]
    fn get(&self, s: Slot) -> u64 {
        self.at(s as usize)
    }

    #[inline(always)]
    fn set(&mut self, s: Slot, v: u64) {
        self.set_at(s as usize, v);
    }
}

/// Round key `i`'s plane `j`, loaded from the caller's memory.
#[inline(always)]
fn key_plane(rk: &Planes, i: usize, j: usize) -> u64 {
    match rk.get(i).and_then(|r| r.get(j)) {
        // SAFETY: a reference to an aligned, initialised word.
        Some(p) => unsafe { core::ptr::read_volatile(p) },
        None => 0,
    }
}

/// Round key `i`'s plane `j`, loaded through a raw pointer (the expansion reads what it
/// stored).
///
/// # Safety
/// `rk` is valid for reads of a [`Planes`], aligned for it, and plane `(i, j)` is initialised.
#[inline(always)]
unsafe fn key_plane_raw(rk: *const Planes, i: usize, j: usize) -> u64 {
    if i < 15 && j < 8 {
        // SAFETY: in bounds (checked above) of the memory the caller vouches for.
        unsafe { core::ptr::read_volatile((&raw const (*rk)[i][j]).cast::<u64>()) }
    } else {
        0
    }
}

/// Stores `v` as round key `i`'s plane `j`.
///
/// # Safety
/// `rk` is valid for writes of a [`Planes`] and aligned for it.
#[inline(always)]
unsafe fn set_key_plane(rk: *mut Planes, i: usize, j: usize, v: u64) {
    if i < 15 && j < 8 {
        // SAFETY: in bounds (checked above) of the memory the caller vouches for.
        unsafe { core::ptr::write_volatile((&raw mut (*rk)[i][j]).cast::<u64>(), v) };
    }
}

/// Bit position of row `r`, column `c` of block `b` in a plane (see the module docs).
const fn pos(b: u32, r: u32, c: u32) -> u32 {
    32 * (c & 1) + 8 * r + 2 * b + (c >> 1)
}

/// The positions of row `r`, column `c` in all four blocks.
const fn cell(r: u32, c: u32) -> u64 {
    let mut m = 0;
    let mut b = 0;
    while b < 4 {
        m |= 1 << pos(b, r, c);
        b += 1;
    }
    m
}

/// The positions of column `c` in all four blocks.
const fn column(c: u32) -> u64 {
    cell(0, c) | cell(1, c) | cell(2, c) | cell(3, c)
}

/// How far a column's bits move to reach column `to` from column `from` (left if positive).
const fn column_shift(from: u32, to: u32) -> i32 {
    pos(0, 0, to) as i32 - pos(0, 0, from) as i32
}

/// `x` shifted left by `d` bits (right by `-d` when negative); `|d| < 64`.
#[inline(always)]
const fn shift(x: u64, d: i32) -> u64 {
    if d >= 0 { x << d } else { x >> -d }
}

/// The distinct moves of ShiftRows (FIPS-197 §5.1.2: row `r` rotated left by `r` columns, so
/// cell `(r, c)` takes the byte of `(r, c + r mod 4)`): each shift with the mask of the source
/// cells that move by it.
const SHIFT_ROWS: [(i32, u64); 9] = {
    let shifts = [-33, -32, -31, -1, 0, 1, 31, 32, 33];
    let mut moves = [(0, 0); 9];
    let mut k = 0;
    while k < 9 {
        moves[k].0 = shifts[k];
        let mut r = 0;
        while r < 4 {
            let mut c = 0;
            while c < 4 {
                let from = (c + r) % 4;
                if column_shift(from, c) == shifts[k] {
                    moves[k].1 |= cell(r, from);
                }
                c += 1;
            }
            r += 1;
        }
        k += 1;
    }
    moves
};

/// Row `r` takes row `r + 1`'s byte (mod 4) in every column: the rows are the 8-bit fields
/// of each 32-bit half.
#[inline(always)]
fn rot_rows1(x: u64) -> u64 {
    ((x >> 8) & 0x00FF_FFFF_00FF_FFFF) | ((x << 24) & 0xFF00_0000_FF00_0000)
}

/// Row `r` takes row `r + 2`'s byte (mod 4).
#[inline(always)]
fn rot_rows2(x: u64) -> u64 {
    ((x >> 16) & 0x0000_FFFF_0000_FFFF) | ((x << 16) & 0xFFFF_0000_FFFF_0000)
}

/// Exchanges the bits of word `b` under `mask` with those of word `a` under `mask << n`.
#[inline(always)]
fn swapmove(w: &mut Work, a: usize, b: usize, mask: u64, n: u32) {
    let (x, y) = (w.at(a), w.at(b));
    let t = ((x >> n) ^ y) & mask;
    w.set_at(b, y ^ t);
    w.set_at(a, x ^ (t << n));
}

/// Words `S0..S7` (little-endian words of 64 bytes) into planes, or planes back into words:
/// the 8×8 bit transposition of every byte lane (see the module docs), its own inverse.
#[inline(always)]
fn transpose(w: &mut Work) {
    for a in [0, 2, 4, 6] {
        swapmove(w, a, a + 1, 0x5555_5555_5555_5555, 1);
    }
    for a in [0, 1, 4, 5] {
        swapmove(w, a, a + 2, 0x3333_3333_3333_3333, 2);
    }
    for a in [0, 1, 2, 3] {
        swapmove(w, a, a + 4, 0x0F0F_0F0F_0F0F_0F0F, 4);
    }
}

/// Gates `dest = a op b` on the frame's slots, one volatile load per input and one volatile
/// store per output.
macro_rules! gates {
    ($w:ident; $($d:ident = $a:ident $op:tt $b:ident;)*) => {
        $( $w.set($d, $w.get($a) $op $w.get($b)); )*
    };
}

/// SubBytes on all 64 bytes of the state planes `S0..S7` (Boyar and Peralta's depth-16
/// circuit, see the module docs): the linear top layer, the shared non-linear middle, the
/// linear bottom layer with the affine constant `0x63` as four complemented outputs.
#[inline(never)]
fn sub_bytes(w: &mut Work) {
    let [u0, u1, u2, u3, u4, u5, u6, u7] = U;
    let d = u7;
    gates!(w;
        T1 = u0 ^ u3; T2 = u0 ^ u5; T3 = u0 ^ u6; T4 = u3 ^ u5; T5 = u4 ^ u6; T6 = T1 ^ T5;
        T7 = u1 ^ u2; T8 = u7 ^ T6; T9 = u7 ^ T7; T10 = T6 ^ T7; T11 = u1 ^ u5; T12 = u2 ^ u5;
        T13 = T3 ^ T4; T14 = T6 ^ T11; T15 = T5 ^ T11; T16 = T5 ^ T12; T17 = T9 ^ T16;
        T18 = u3 ^ u7; T19 = T7 ^ T18; T20 = T1 ^ T19; T21 = u6 ^ u7; T22 = T7 ^ T21;
        T23 = T2 ^ T22; T24 = T2 ^ T10; T25 = T20 ^ T17; T26 = T3 ^ T16; T27 = T1 ^ T12;
    );
    gates!(w;
        M1 = T13 & T6; M6 = T3 & T16; M11 = T1 & T15;
        A0 = T4 & T27; M13 = A0 ^ M11;
        A0 = T2 & T10; M15 = A0 ^ M11;
        A0 = T23 & T8; A1 = T14 ^ M1; A1 = A1 ^ A0; M20 = A1 ^ M13;
        A0 = T19 & d; A0 = A0 ^ M1; A0 = A0 ^ T24; M21 = A0 ^ M15;
        A0 = T22 & T9; A1 = T26 ^ M6; A1 = A1 ^ A0; M22 = A1 ^ M13;
        A0 = T20 & T17; A0 = A0 ^ M6; A0 = A0 ^ M15; M23 = A0 ^ T25;
        M25 = M22 & M20;
        A0 = M20 ^ M21; A1 = M23 ^ M25; A0 = A0 & A1; M37 = M21 ^ A0;
        A0 = M20 & M23; A0 = M21 | A0; A1 = M20 ^ M25; M38 = A1 ^ A0;
        A0 = M22 ^ M23; A1 = M21 ^ M25; A0 = A0 & A1; M39 = M23 ^ A0;
        A0 = M21 & M22; A0 = M23 | A0; A1 = M22 ^ M25; M40 = A1 ^ A0;
        M41 = M38 ^ M40; M42 = M37 ^ M39; M43 = M37 ^ M38; M44 = M39 ^ M40; M45 = M42 ^ M41;
        M46 = M44 & T6; M47 = M40 & T8; M48 = M39 & d; M49 = M43 & T16; M50 = M38 & T9;
        M51 = M37 & T17; M52 = M42 & T15; M53 = M45 & T27; M54 = M41 & T10; M55 = M44 & T13;
        M56 = M40 & T23; M57 = M39 & T19; M58 = M43 & T3; M59 = M38 & T22; M60 = M37 & T20;
        M61 = M42 & T1; M62 = M45 & T4; M63 = M41 & T2;
    );
    gates!(w;
        L0 = M61 ^ M62; L1 = M50 ^ M56; L2 = M46 ^ M48; L3 = M47 ^ M55; L4 = M54 ^ M58;
        L5 = M49 ^ M61; L6 = M62 ^ L5; L7 = M46 ^ L3; L8 = M51 ^ M59; L9 = M52 ^ M53;
        L10 = M53 ^ L4; L11 = M60 ^ L2; L12 = M48 ^ M51; L13 = M50 ^ L0; L14 = M52 ^ M61;
        L15 = M55 ^ L1; L16 = M56 ^ L0; L17 = M57 ^ L1; L18 = M58 ^ L8; L19 = M63 ^ L4;
        L20 = L0 ^ L1; L21 = L1 ^ L7; L22 = L3 ^ L12; L23 = L18 ^ L2; L24 = L15 ^ L9;
        L25 = L6 ^ L10; L26 = L7 ^ L9; L27 = L8 ^ L10; L28 = L11 ^ L14; L29 = L11 ^ L17;
        S7 = L6 ^ L24; S6 = L16 ^ L26; S5 = L19 ^ L28; S4 = L6 ^ L21; S3 = L20 ^ L22;
        S2 = L25 ^ L29; S1 = L13 ^ L27; S0 = L6 ^ L23;
    );
    for s in [S6, S5, S1, S0] {
        w.set(s, !w.get(s));
    }
}

/// ShiftRows on every plane.
#[inline(always)]
fn shift_rows(w: &mut Work) {
    for j in 0..8 {
        let x = w.at(j);
        let mut y = 0;
        for (d, m) in SHIFT_ROWS {
            y |= shift(x & m, d);
        }
        w.set_at(j, y);
    }
}

/// MixColumns (FIPS-197 §5.1.3) on the planes: each byte becomes
/// `{02}·(a_r ⊕ a_{r+1}) ⊕ a_{r+1} ⊕ a_{r+2} ⊕ a_{r+3}`, where `{02}·` moves plane `j - 1`
/// into plane `j` and folds plane 7 into planes 0, 1, 3 and 4 (the polynomial `0x11b`).
#[inline(always)]
fn mix_columns(w: &mut Work) {
    for j in 0..8 {
        let x = w.at(j);
        let r1 = rot_rows1(x);
        let b = x ^ r1;
        w.set_at(MIX_B + j, b);
        w.set_at(MIX_R + j, r1 ^ rot_rows2(b));
    }
    let top = MIX_B + 7;
    for j in 0..8 {
        let mut v = w.at(MIX_R + j);
        if j > 0 {
            v ^= w.at(MIX_B + j - 1);
        }
        if matches!(j, 0 | 1 | 3 | 4) {
            v ^= w.at(top);
        }
        w.set_at(j, v);
    }
}

/// The state planes XOR round key `i`.
#[inline(always)]
fn add_round_key(w: &mut Work, rk: &Planes, i: usize) {
    for j in 0..8 {
        w.set_at(j, w.at(j) ^ key_plane(rk, i, j));
    }
}

/// Encrypts the four counter blocks `c, c + 1, c + 2, c + 3` (each 16 bytes little-endian,
/// modulo 2^128) under `rk`, leaving the 64 output bytes in `S0..S7` as little-endian words.
#[inline(never)]
fn pass(w: &mut Work, rk: &Planes, c: u128) {
    for b in 0..4 {
        let x = c.wrapping_add(b as u128);
        w.set_at(2 * b, x as u64);
        w.set_at(2 * b + 1, (x >> 64) as u64);
    }
    transpose(w);
    add_round_key(w, rk, 0);
    for i in 1..14 {
        sub_bytes(w);
        shift_rows(w);
        mix_columns(w);
        add_round_key(w, rk, i);
    }
    sub_bytes(w);
    shift_rows(w);
    add_round_key(w, rk, 14);
    transpose(w);
}

/// Runs `f` on a [`Work`] frame: one of [`WORK`]'s where the OS maps wipe-on-fork memory of
/// its own, else one on the stack, zeroed before it is left (`Scratch::with_own_or_stack`:
/// there a fork child copies the heap as it copies the stack, and the first call would
/// allocate).
#[inline(always)]
fn on_work<R>(f: impl FnOnce(&mut Work) -> R) -> R {
    WORK.with_own_or_stack(scalrand_os::cpu::rseq_cpu().unwrap_or(0), f)
}

/// Eight bytes of `key` from `at` (0 past its end), as a little-endian word read with a
/// volatile load.
#[inline(always)]
fn key_word(key: &[u8; 32], at: usize) -> u64 {
    match key.get(at..at + 8) {
        // SAFETY: eight readable bytes; `[u8; 8]` has alignment 1.
        Some(b) => u64::from_le_bytes(unsafe { core::ptr::read_volatile(b.as_ptr().cast()) }),
        None => 0,
    }
}

/// Expands `key` into the 15 round keys at `rk` (FIPS-197 §5.2 with `Nk = 8`), in plane form.
///
/// # Safety
/// `rk` is valid for writes of a [`Planes`] and aligned for it.
#[inline(never)]
pub(super) unsafe fn expand(key: &[u8; 32], rk: *mut Planes) {
    on_work(|w| {
        // Round keys 0 and 1 are the key: each 16-byte half in all four blocks.
        for half in 0..2 {
            for b in 0..4 {
                w.set_at(2 * b, key_word(key, 16 * half));
                w.set_at(2 * b + 1, key_word(key, 16 * half + 8));
            }
            transpose(w);
            for j in 0..8 {
                // SAFETY: the caller's promise.
                unsafe { set_key_plane(rk, half, j, w.at(j)) };
            }
        }
        // SAFETY: the caller's promise; each round key is stored whole before a later one
        // reads it.
        let rk_ref = |i: usize, j: usize| unsafe { key_plane_raw(rk, i, j) };
        // Round key `round`'s words are `w[4·round + c] = w[4·round + c − 8] ⊕ … ⊕ w[4·round − 8]
        // ⊕ temp` (the recurrence of §5.2 unrolled over a round key's four columns), with
        // `temp` computed from `w[4·round − 1]`: SubWord, and RotWord and Rcon every other
        // round key (every eighth word).
        for round in 2..15 {
            for j in 0..8 {
                let x = rk_ref(round - 1, j) & column(3);
                w.set_at(j, shift(x, column_shift(3, 0)));
            }
            sub_bytes(w);
            let rotated = round % 2 == 0;
            let rcon = if rotated { 1u64 << (round / 2 - 1) } else { 0 };
            for j in 0..8 {
                let mut t = w.at(j);
                if rotated {
                    t = rot_rows1(t);
                    if (rcon >> j) & 1 == 1 {
                        t ^= cell(0, 0);
                    }
                }
                t &= column(0);
                // `temp` into every column, and the old round key's columns summed from the
                // left.
                let t = t
                    | shift(t, column_shift(0, 1))
                    | shift(t, column_shift(0, 2))
                    | shift(t, column_shift(0, 3));
                let mut y = rk_ref(round - 2, j);
                y ^= shift(y & column(0), column_shift(0, 1));
                y ^= shift(y & column(1), column_shift(1, 2));
                y ^= shift(y & column(2), column_shift(2, 3));
                // SAFETY: the caller's promise.
                unsafe { set_key_plane(rk, round, j, y ^ t) };
            }
        }
    });
}

/// Writes the counter-mode keystream from block `counter` into `out` (`ceil(len / 16)`
/// blocks, the unused tail of the last one discarded) and returns the counter after the last
/// block used.
#[inline(never)]
pub(super) fn ctr(rk: &Planes, counter: u128, out: &mut [u8]) -> u128 {
    on_work(|w| {
        let mut c = counter;
        for chunk in out.chunks_mut(PASS) {
            pass(w, rk, c);
            for (i, part) in chunk.chunks_mut(8).enumerate() {
                let v = w.at(i);
                if let Ok(p) = <&mut [u8; 8]>::try_from(&mut *part) {
                    *p = v.to_le_bytes();
                } else {
                    for (k, o) in part.iter_mut().enumerate() {
                        *o = (v >> (8 * k)) as u8;
                    }
                }
            }
            c = c.wrapping_add(chunk.len().div_ceil(16) as u128);
        }
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;

    /// Planes of 64 bytes built bit by bit from the layout in the module docs.
    fn planes_reference(bytes: &[u8; 64]) -> [u64; 8] {
        let mut p = [0u64; 8];
        for b in 0..4 {
            for r in 0..4 {
                for c in 0..4 {
                    let byte = bytes[16 * b as usize + (r + 4 * c) as usize];
                    for (j, plane) in p.iter_mut().enumerate() {
                        *plane |= u64::from((byte >> j) & 1) << pos(b, r, c);
                    }
                }
            }
        }
        p
    }

    fn bytes_to_work(bytes: &[u8; 64]) -> Work {
        let mut w = Work([0; WORDS]);
        for i in 0..8 {
            w.set_at(
                i,
                u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()),
            );
        }
        w
    }

    #[test]
    fn transpose_gives_the_documented_layout_and_inverts_itself() {
        let bytes: [u8; 64] = core::array::from_fn(|i| (i as u8).wrapping_mul(151) ^ 0x3c);
        let mut w = bytes_to_work(&bytes);
        transpose(&mut w);
        let want = planes_reference(&bytes);
        for (j, plane) in want.iter().enumerate() {
            assert_eq!(w.at(j), *plane, "plane {j}");
        }
        transpose(&mut w);
        let back = bytes_to_work(&bytes);
        assert_eq!(w.0[..8], back.0[..8]);
    }

    #[test]
    fn the_circuit_is_the_sbox_for_every_byte() {
        // 256 bytes in four passes of 64.
        for base in (0..256).step_by(64) {
            let bytes: [u8; 64] = core::array::from_fn(|i| (base + i) as u8);
            let mut w = bytes_to_work(&bytes);
            transpose(&mut w);
            sub_bytes(&mut w);
            transpose(&mut w);
            for (i, byte) in bytes.iter().enumerate() {
                let got = (w.at(i / 8) >> (8 * (i % 8))) as u8;
                assert_eq!(
                    got,
                    scalrand_testkit::stack::aes_sbox(*byte),
                    "S({byte:#04x})"
                );
            }
        }
    }

    /// Expands `key` and runs the counter mode.
    fn run(key: &[u8; 32], c: u128, out: &mut [u8]) -> u128 {
        let mut rk = [[0u64; 8]; 15];
        // SAFETY: a local `Planes`.
        unsafe { expand(key, &raw mut rk) };
        ctr(&rk, c, out)
    }

    #[test]
    fn fips_197_c3() {
        super::super::aes_kat::fips_197_c3(run);
    }

    /// FIPS-197 appendix A.3: the last round key of the expansion of key
    /// 603deb10..0914dff4 is fe4890d1 e6188d0b 046df344 706c631e.
    #[test]
    fn fips_197_a3_last_round_key() {
        let key = [
            0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
            0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
            0x09, 0x14, 0xdf, 0xf4,
        ];
        let mut rk = [[0u64; 8]; 15];
        // SAFETY: a local `Planes`.
        unsafe { expand(&key, &raw mut rk) };
        // The form the stack searches look for (`scalrand_testkit::stack::aes_planes`, built
        // from the documented layout) is the one held: the first two round keys are the key.
        for h in 0..2 {
            let half: [u8; 16] = key[16 * h..16 * h + 16].try_into().unwrap();
            assert_eq!(rk[h], scalrand_testkit::stack::aes_planes(&half));
        }
        let want: [u8; 16] = [
            0xfe, 0x48, 0x90, 0xd1, 0xe6, 0x18, 0x8d, 0x0b, 0x04, 0x6d, 0xf3, 0x44, 0x70, 0x6c,
            0x63, 0x1e,
        ];
        let mut four = [0u8; 64];
        for b in 0..4 {
            four[16 * b..16 * b + 16].copy_from_slice(&want);
        }
        assert_eq!(rk[14], planes_reference(&four));
    }

    #[test]
    fn matches_the_aes_crate() {
        super::super::aes_kat::matches_the_aes_crate(run);
    }
}
