//! Shared test helpers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point
#![allow(dead_code)]

use core::convert::Infallible;
use rand_core::TryRng;

/// SplitMix64 (Vigna's splitmix64.c constants): the generator the C reference
/// `tests/data/shuffle_ref.c` uses, so both replay the same `u64` stream.
#[derive(Debug)]
pub struct SplitMix64(pub u64);

impl TryRng for SplitMix64 {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.try_next_u64()? >> 32) as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Ok(z ^ (z >> 31))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let w = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

/// A generator that replays a fixed list of words, then panics (tests only).
#[derive(Debug)]
pub struct Replay(pub Vec<u64>, pub usize);

impl TryRng for Replay {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let w = self.0[self.1];
        self.1 += 1;
        Ok(w)
    }
    fn try_fill_bytes(&mut self, _dst: &mut [u8]) -> Result<(), Infallible> {
        unimplemented!()
    }
}
