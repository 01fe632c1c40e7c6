//! `rand_core`'s `TryRng` and `TryCryptoRng` for [`Fortuna`] and `&Fortuna` (their error is
//! `Infallible`: the reads behind them panic where `try_fill_bytes` would fail, as
//! [`Fortuna::fill_bytes`] documents).

use core::convert::Infallible;

use rand_core::{TryCryptoRng, TryRng};

use super::Fortuna;
use crate::fortuna::accumulator::Clock;
use crate::fortuna::prf::Prf;

impl<P: Prf, C: Clock> TryRng for &Fortuna<P, C> {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        Fortuna::fill_bytes(self, dst);
        Ok(())
    }
}

impl<P: Prf, C: Clock> TryCryptoRng for &Fortuna<P, C> {}

impl<P: Prf, C: Clock> TryRng for Fortuna<P, C> {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        (&*self).try_next_u32()
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        (&*self).try_next_u64()
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        Fortuna::fill_bytes(self, dst);
        Ok(())
    }
}

impl<P: Prf, C: Clock> TryCryptoRng for Fortuna<P, C> {}
