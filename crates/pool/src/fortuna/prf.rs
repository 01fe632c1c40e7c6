//! The block functions behind the generator: AES-256 (FS&K's choice) and ChaCha20 (what
//! FreeBSD's Fortuna uses by default since 2019).
//!
//! A PRF maps (key K, 128-bit block number C) to one block of [`Prf::BLOCK_LEN`] bytes.
//! The generator only ever asks for runs of consecutive block numbers, so each PRF exposes
//! one bulk call, [`Prf::keystream`], that writes the blocks straight into the caller's
//! buffer: AES-256 runs this crate's own counter mode on AES-NI or the ARMv8 AES instructions
//! (8 blocks in flight, the key expanded in place by [`Prf::keyed_in`] and its round keys read
//! where they lie, never copied to a stack frame), or on CPUs without them a constant-time
//! bitsliced AES whose state, temporaries and round keys all live in wipe-on-fork memory
//! (`aes_soft`); ChaCha20 runs the node pools'
//! own backends (AVX-512, AVX2, SSE2 or portable, chosen at run time; each call followed by a
//! wipe of the stack it used). Nothing is allocated.
//!
//! # Counter mappings
//!
//! * **AES-256**: block C is `AES-256-Encrypt(K, C as 16 bytes little-endian)` (FS&K with
//!   PyCrypto's byte order). The counter wraps modulo 2^128.
//! * **ChaCha20**: block C is the 64-byte ChaCha20 block function (20 rounds, constants
//!   "expand 32-byte k", key K) with the 128-bit C in state words 12..15, least significant
//!   word first, each word little-endian; this is FreeBSD's `CHACHA_NONCE0_CTR128` layout.
//!   Written as RFC 8439 it is block counter `C mod 2^32` with nonce = bytes 4..16 of C's
//!   little-endian encoding; written as djb's original layout it is 64-bit block counter
//!   `C mod 2^64` with 64-bit nonce `C >> 64`. All three describe the same 16 input words,
//!   so the output is the same; they differ only in where a counter *increment* carries.
//!   Here C is a 128-bit number and always carries, so a run crossing 2^32 or 2^64 simply
//!   continues (the implementation splits a run at each 2^32 boundary of C and carries into
//!   the upper words itself). The known answers cover runs across both boundaries and across
//!   2^128.

use core::fmt;
use core::mem::MaybeUninit;
use scalrand_os::wipe::zero;

/// Seals [`Prf`]: reachable inside this crate only.
pub(crate) mod sealed {
    /// The supertrait outside crates cannot name.
    pub trait Sealed {}
}

/// A block function the Fortuna generator can run on: [`Aes256Prf`] or [`ChaCha20Prf`].
///
/// Sealed: the generator's security argument (and its known-answer tests) cover exactly
/// these two.
pub trait Prf: sealed::Sealed + Send + Sync + 'static {
    /// Human-readable name, e.g. `"AES-256"`.
    const NAME: &'static str;
    /// Bytes per block: 16 for AES, 64 for ChaCha20.
    const BLOCK_LEN: usize;
    /// Blocks the generator spends on a new 32-byte key: 2 for AES, 1 for ChaCha20 (whose
    /// block's last 32 bytes are discarded).
    const KEY_BLOCKS: usize = 32usize.div_ceil(Self::BLOCK_LEN);

    /// A keyed instance (an expanded AES key schedule, or the ChaCha key); wiped on drop.
    type Keyed: Send;

    /// Prepares the PRF for key `key`.
    fn keyed(key: &[u8; 32]) -> Self::Keyed;

    /// Prepares the PRF for key `key` in `out`'s memory, which it initialises: the keyed form
    /// is built where it will stay (AES-256 with AES-NI writes each round key straight there),
    /// not moved in from a temporary.
    fn keyed_in(key: &[u8; 32], out: &mut MaybeUninit<Self::Keyed>) {
        out.write(Self::keyed(key));
    }

    /// Writes blocks `counter, counter + 1, ...` (modulo 2^128) into `out`: `out.len()`
    /// bytes taken from `ceil(out.len() / BLOCK_LEN)` blocks, the unused tail of the last block
    /// discarded. Returns the counter after the last block used.
    fn keystream(keyed: &Self::Keyed, counter: u128, out: &mut [u8]) -> u128;

    /// Writes the [`KEY_BLOCKS`](Self::KEY_BLOCKS) blocks from `counter` into `work`, their
    /// first 32 bytes into `key`, and zeroes `work`; returns the counter after them. `work`
    /// is the caller's (a reader frame of wipe-on-fork memory): the blocks, which hold the
    /// key, are computed in registers and stored only there, never in a stack slot of the
    /// call, where a child forked from another thread at that moment would find them. A
    /// ChaCha20 key block runs on the single-block function (four registers, nothing
    /// spilled) rather than a bulk backend.
    fn derive_key(
        keyed: &Self::Keyed,
        counter: u128,
        key: &mut [u8; 32],
        work: &mut [u8; 64],
    ) -> u128 {
        let c = Self::keystream(
            keyed,
            counter,
            &mut work[..Self::KEY_BLOCKS * Self::BLOCK_LEN],
        );
        key.copy_from_slice(&work[..32]);
        zero(work);
        c
    }
}

/// Number of blocks that produce `bytes` bytes.
#[cfg(all(test, feature = "std"))]
#[inline]
pub(crate) const fn blocks_for<P: Prf>(bytes: usize) -> u128 {
    bytes.div_ceil(P::BLOCK_LEN) as u128
}

/// AES-256 in counter mode with a 128-bit little-endian counter: FS&K's generator.
#[derive(Clone, Copy, Debug)]
pub enum Aes256Prf {}

impl sealed::Sealed for Aes256Prf {}

/// AES-256 keyed for [`Aes256Prf`], in this value's own memory: with AES instructions (AES-NI,
/// the ARMv8 Cryptography Extension) the 15 round keys, expanded in place and read in place;
/// elsewhere (CPUs without them, other architectures, `--cfg scalrand_aes_soft`) the same
/// round keys in the bitsliced form of the constant-time software AES, also expanded and read
/// in place. Wiped on drop.
#[repr(C, align(16))]
pub struct Aes256Keyed {
    round_keys: [[u8; 16]; 15],
    /// Whether `round_keys` is in use (AES instructions); otherwise `planes` is.
    hw: bool,
    planes: super::aes_soft::Planes,
}

impl fmt::Debug for Aes256Keyed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Aes256Keyed { .. }")
    }
}

impl Drop for Aes256Keyed {
    fn drop(&mut self) {
        zero(&mut self.round_keys);
        zero(&mut self.planes);
    }
}

#[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_aes_soft)))]
cpufeatures::new!(aesni_cpuid, "aes", "sse2");
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    not(miri),
    not(scalrand_aes_soft)
))]
cpufeatures::new!(aes_armv8_cpuid, "aes");

/// Zeroes the stack below the caller to the depth a Fortuna operation reaches on this CPU,
/// then the vector registers (the AES instructions keep round keys in them). With AES-NI that
/// depth is `chacha::FORTUNA_WIPE_DEPTH_OWN` (measured on x86_64 by every CI run); elsewhere
/// (the software AES, whose working frame may fall back to the stack, and aarch64, where no
/// CI run measures it) the larger `chacha::FORTUNA_WIPE_DEPTH`.
#[inline]
fn wipe_below() {
    // Registers first: a signal delivered during the wipe then saves none that holds a key.
    crate::chacha::clear_vector_registers();
    if own_depth() {
        crate::chacha::wipe_stack_bytes::<{ crate::chacha::FORTUNA_WIPE_DEPTH_OWN }>();
    } else {
        crate::chacha::wipe_stack_bytes::<{ crate::chacha::FORTUNA_WIPE_DEPTH }>();
    }
}

/// Whether [`wipe_below`] wipes the smaller, measured depth: AES-NI on x86_64.
#[inline]
fn own_depth() -> bool {
    cfg!(target_arch = "x86_64") && have_aes_instructions()
}

/// Runs a Fortuna operation `f`, whose key-holding frames lie below this one, then erases
/// what it left: [`wipe_below`] (registers, then the stack as deep as an operation and a
/// signal frame reach), and, unless a watch armed before `f` says no signal or preemption came
/// meanwhile (with no rseq area none can), the top of the thread's alternate signal stack,
/// where a handler installed with `SA_ONSTACK` wrote its frame
/// (`scalrand_os::signal::wipe_alternate_stack`).
#[inline(always)]
pub(crate) fn wiped<R>(f: impl FnOnce() -> R) -> R {
    let w = scalrand_os::signal::watch();
    let r = f();
    wipe_below();
    if !w.quiet() {
        scalrand_os::signal::wipe_alternate_stack();
    }
    r
}

/// Test hook (`doc(hidden)`, not API): the stack depth [`wipe_below`] wipes after every
/// Fortuna read, reseed and construction on this CPU: the depth its own frames reach, and
/// what a signal frame written during them can add ([`scalrand_os::signal::reach`]).
#[doc(hidden)]
pub fn __wipe_depth() -> usize {
    let own = if own_depth() {
        crate::chacha::FORTUNA_WIPE_DEPTH_OWN
    } else {
        crate::chacha::FORTUNA_WIPE_DEPTH
    };
    own + scalrand_os::signal::reach()
}

/// Whether this CPU runs AES-256 on AES instructions: AES-NI on x86_64, the Cryptography
/// Extension on little-endian aarch64 (where the OS says: Linux, Android, Apple's systems);
/// else the bitsliced software AES.
#[inline]
fn have_aes_instructions() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_aes_soft)))] {
            aesni_cpuid::get()
        } else if #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            not(miri),
            not(scalrand_aes_soft)
        ))] {
            aes_armv8_cpuid::get()
        } else {
            false
        }
    }
}

impl Prf for Aes256Prf {
    const NAME: &'static str = "AES-256";
    const BLOCK_LEN: usize = 16;
    type Keyed = Aes256Keyed;

    #[inline]
    fn keyed(key: &[u8; 32]) -> Aes256Keyed {
        let mut k = MaybeUninit::uninit();
        Self::keyed_in(key, &mut k);
        // SAFETY: `keyed_in` initialised every field.
        unsafe { k.assume_init() }
    }

    #[inline]
    fn keyed_in(key: &[u8; 32], out: &mut MaybeUninit<Aes256Keyed>) {
        let p = out.as_mut_ptr();
        // SAFETY: field pointers into `out`'s memory; each field is written before `out` is
        // read, the key schedule in place (no copy of it is made on the way).
        unsafe {
            if have_aes_instructions() {
                (&raw mut (*p).hw).write(true);
                (&raw mut (*p).planes).write([[0; 8]; 15]);
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                // SAFETY: AES-NI present (the cached token just read); `round_keys` is 240
                // bytes at offset 0 of a 16-byte aligned struct.
                super::aes_ni::expand(key, &raw mut (*p).round_keys);
                #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
                // SAFETY: the AES extension is present (the cached token just read);
                // `round_keys` is 240 bytes at offset 0 of a 16-byte aligned struct.
                super::aes_armv8::expand(key, &raw mut (*p).round_keys);
            } else {
                (&raw mut (*p).hw).write(false);
                (&raw mut (*p).round_keys).write([[0; 16]; 15]);
                // SAFETY: `planes` is a field of `out`, valid for writes and aligned.
                super::aes_soft::expand(key, &raw mut (*p).planes);
            }
        }
    }

    #[inline]
    fn keystream(keyed: &Aes256Keyed, counter: u128, out: &mut [u8]) -> u128 {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if keyed.hw {
            // SAFETY: `hw` is set only where the AES-NI token said yes; `round_keys` is 16-byte
            // aligned (the struct's alignment, offset 0).
            return unsafe { super::aes_ni::ctr(&keyed.round_keys, counter, out) };
        }
        #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
        if keyed.hw {
            // SAFETY: `hw` is set only where the AES extension's token said yes; `round_keys`
            // is 16-byte aligned (the struct's alignment, offset 0).
            return unsafe { super::aes_armv8::ctr(&keyed.round_keys, counter, out) };
        }
        super::aes_soft::ctr(&keyed.planes, counter, out)
    }
}

/// ChaCha20 with the 128-bit counter in state words 12..15 (see the module docs).
#[derive(Clone, Copy, Debug)]
pub enum ChaCha20Prf {}

impl sealed::Sealed for ChaCha20Prf {}

/// The ChaCha20 key, wiped on drop.
pub struct ChaChaKey([u8; 32]);

impl fmt::Debug for ChaChaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChaChaKey { .. }")
    }
}

impl Drop for ChaChaKey {
    fn drop(&mut self) {
        zero(&mut self.0);
    }
}

impl Prf for ChaCha20Prf {
    const NAME: &'static str = "ChaCha20";
    const BLOCK_LEN: usize = 64;
    type Keyed = ChaChaKey;

    #[inline]
    fn keyed(key: &[u8; 32]) -> ChaChaKey {
        ChaChaKey(*key)
    }

    fn keystream(keyed: &ChaChaKey, counter: u128, out: &mut [u8]) -> u128 {
        // Runs that stay below a 2^32 boundary of C: the backends step state word 12 alone
        // (RFC 8439 layout), and C's carry into words 13..15 happens between runs.
        let mut c = counter;
        let mut rest = out;
        while !rest.is_empty() {
            let to_boundary = (1u64 << 32) - u64::from(c as u32); // blocks before word 12 wraps
            let bytes = usize::try_from(to_boundary.saturating_mul(64))
                .map_or(rest.len(), |b| b.min(rest.len()));
            let (now, later) = rest.split_at_mut(bytes);
            let nonce = [(c >> 32) as u32, (c >> 64) as u32, (c >> 96) as u32];
            crate::chacha::Section::nested(|s| {
                s.keystream(
                    &keyed.0,
                    &nonce,
                    c as u32,
                    now,
                    crate::chacha::Rounds::ChaCha20,
                );
            });
            c = c.wrapping_add(now.len().div_ceil(64) as u128);
            rest = later;
        }
        c
    }

    fn derive_key(
        keyed: &ChaChaKey,
        counter: u128,
        key: &mut [u8; 32],
        work: &mut [u8; 64],
    ) -> u128 {
        let c = counter;
        let nonce = [(c >> 32) as u32, (c >> 64) as u32, (c >> 96) as u32];
        crate::chacha::Section::nested(|s| {
            s.block(
                &keyed.0,
                &nonce,
                c as u32,
                crate::chacha::Rounds::ChaCha20,
                work,
            );
        });
        key.copy_from_slice(&work[..32]);
        zero(work);
        c.wrapping_add(1)
    }
}

/// A stand-in PRF for the loom model: each 16-byte block is `tag(K) ‖ C` (little-endian
/// u64s), so a block names the key and counter that produced it, and `tag` mixes all 32 key
/// bytes so a derived key gets a fresh tag. Not a PRF in any cryptographic sense: loom
/// explores the locking protocol, and AES would only slow the exploration down.
#[cfg(all(test, any(feature = "std", scalrand_loom)))]
#[derive(Clone, Copy, Debug)]
pub(crate) enum TaggingPrf {}

#[cfg(all(test, any(feature = "std", scalrand_loom)))]
impl sealed::Sealed for TaggingPrf {}

#[cfg(all(test, any(feature = "std", scalrand_loom)))]
impl TaggingPrf {
    /// A 64-bit fingerprint of a key (splitmix64 finaliser over the folded words).
    pub(crate) fn tag(key: &[u8; 32]) -> u64 {
        let mut h = 0x9E37_79B9_7F4A_7C15u64;
        for w in key.chunks_exact(8) {
            let mut x = [0u8; 8];
            x.copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(x)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h ^= h >> 31;
        }
        h
    }
}

#[cfg(all(test, any(feature = "std", scalrand_loom)))]
impl Prf for TaggingPrf {
    const NAME: &'static str = "tagging (loom model only)";
    const BLOCK_LEN: usize = 16;
    type Keyed = u64;

    fn keyed(key: &[u8; 32]) -> u64 {
        Self::tag(key)
    }

    fn keystream(keyed: &u64, counter: u128, out: &mut [u8]) -> u128 {
        let mut c = counter;
        for chunk in out.chunks_mut(16) {
            let mut block = [0u8; 16];
            block[..8].copy_from_slice(&keyed.to_le_bytes());
            block[8..].copy_from_slice(&(c as u64).to_le_bytes());
            chunk.copy_from_slice(&block[..chunk.len()]);
            c = c.wrapping_add(1);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `write_keystream_blocks` must overwrite the buffer, not XOR into it.
    #[test]
    fn chacha_keystream_ignores_previous_buffer_contents() {
        let k = ChaCha20Prf::keyed(&[7; 32]);
        let mut a = [0u8; 200];
        let mut b = [0xA5u8; 200];
        ChaCha20Prf::keystream(&k, 5, &mut a);
        ChaCha20Prf::keystream(&k, 5, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn aes_keystream_ignores_previous_buffer_contents() {
        let k = Aes256Prf::keyed(&[7; 32]);
        let mut a = [0u8; 2000];
        let mut b = [0xA5u8; 2000];
        assert_eq!(Aes256Prf::keystream(&k, 5, &mut a), 5 + 125);
        Aes256Prf::keystream(&k, 5, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn keystream_is_a_function_of_the_block_number() {
        // Splitting a run anywhere gives the same bytes (block-aligned splits).
        let k = ChaCha20Prf::keyed(&[1; 32]);
        let mut whole = [0u8; 64 * 9];
        ChaCha20Prf::keystream(&k, u128::from(u64::MAX) - 3, &mut whole);
        let mut parts = [0u8; 64 * 9];
        let (x, y) = parts.split_at_mut(64 * 2);
        let c = ChaCha20Prf::keystream(&k, u128::from(u64::MAX) - 3, x);
        ChaCha20Prf::keystream(&k, c, y);
        assert_eq!(whole, parts);
    }
}

#[cfg(all(test, feature = "std"))]
mod dispatch_tests {
    extern crate std;

    /// The AES instructions serve wherever the CPU has them (unless the software AES is forced):
    /// a detection that failed would silently run the slow path.
    #[test]
    fn aes_instructions_serve_where_the_cpu_has_them() {
        cfg_if::cfg_if! {
            if #[cfg(all(target_arch = "x86_64", not(miri)))] {
                let cpu_has = std::arch::is_x86_feature_detected!("aes");
            } else if #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))] {
                let cpu_has = std::arch::is_aarch64_feature_detected!("aes");
            } else {
                let cpu_has = false;
            }
        }
        std::eprintln!(
            "AES instructions: CPU {cpu_has}, used {}",
            super::have_aes_instructions()
        );
        assert_eq!(
            super::have_aes_instructions(),
            cpu_has && !cfg!(scalrand_aes_soft)
        );
    }
}
