//! rand 0.8's and 0.9's traits for the generators: rand_core 0.6's (feature `rand_core_06`)
//! and rand_core 0.9's (feature `rand_core_09`) `RngCore` for every generator, `SeedableRng`
//! for the seeded ones. Each method answers exactly what the generator's rand_core 0.10
//! method does ([`rand_core::Rng`], [`rand_core::SeedableRng`]), so a seeded stream is the same
//! under rand 0.8, 0.9 and 0.10. rand_core 0.9's `TryRngCore` comes with its `RngCore`
//! (rand_core's blanket impl, error `Infallible`).
//!
//! None is a `CryptoRng`: these generators are predictable from a few outputs. The impls come
//! from the adapter every scalrand crate shares (`scalrand_os::rand_core_compat!`).

#[cfg(feature = "alloc")]
use crate::{Engine, PerCpu};
use crate::{WyRand, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar};

scalrand_os::rand_core_compat!(rng:
    [] Xoroshiro128Plus,
    [] Xoroshiro128PlusPlus,
    [] Xoroshiro128StarStar,
    [] WyRand,
);
#[cfg(feature = "alloc")]
scalrand_os::rand_core_compat!(rng: [E: Engine] PerCpu<E>, ['a, E: Engine] &'a PerCpu<E>);
scalrand_os::rand_core_compat!(seedable:
    Xoroshiro128Plus,
    Xoroshiro128PlusPlus,
    Xoroshiro128StarStar,
    WyRand,
);

#[cfg(test)]
mod tests {
    // Fully qualified calls throughout: the xoroshiro types also have inherent methods of
    // these names.

    #[cfg(feature = "rand_core_06")]
    #[test]
    fn rand_core_06_streams_are_the_0_10_streams() {
        use rand_core_06::{RngCore, SeedableRng};
        let mut old = <crate::Xoroshiro128PlusPlus as SeedableRng>::seed_from_u64(7);
        let mut new = <crate::Xoroshiro128PlusPlus as rand_core::SeedableRng>::seed_from_u64(7);
        for _ in 0..100 {
            assert_eq!(
                RngCore::next_u64(&mut old),
                rand_core::Rng::next_u64(&mut new)
            );
        }
        let mut old = <crate::WyRand as SeedableRng>::from_seed([3; 8]);
        let mut new = <crate::WyRand as rand_core::SeedableRng>::from_seed([3; 8]);
        let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
        RngCore::try_fill_bytes(&mut old, &mut a).unwrap();
        rand_core::Rng::fill_bytes(&mut new, &mut b);
        assert_eq!(a, b);
        assert_eq!(
            RngCore::next_u32(&mut old),
            rand_core::Rng::next_u32(&mut new)
        );
        // The all-zero seed is remapped, as under 0.10.
        let mut zero = <crate::Xoroshiro128Plus as SeedableRng>::from_seed([0; 16]);
        let mut remapped = <crate::Xoroshiro128Plus as rand_core::SeedableRng>::seed_from_u64(0);
        assert_eq!(
            RngCore::next_u64(&mut zero),
            rand_core::Rng::next_u64(&mut remapped)
        );
    }

    #[cfg(feature = "rand_core_09")]
    #[test]
    fn rand_core_09_streams_are_the_0_10_streams() {
        use rand_core_09::{RngCore, SeedableRng, TryRngCore};
        let mut old = <crate::Xoroshiro128StarStar as SeedableRng>::seed_from_u64(9);
        let mut new = <crate::Xoroshiro128StarStar as rand_core::SeedableRng>::seed_from_u64(9);
        for _ in 0..100 {
            assert_eq!(
                RngCore::next_u32(&mut old),
                rand_core::Rng::next_u32(&mut new)
            );
        }
        assert_eq!(
            TryRngCore::try_next_u64(&mut old),
            Ok(rand_core::Rng::next_u64(&mut new))
        );
        let mut old = <crate::WyRand as SeedableRng>::seed_from_u64(1);
        let mut new = <crate::WyRand as rand_core::SeedableRng>::seed_from_u64(1);
        let (mut a, mut b) = ([0u8; 21], [0u8; 21]);
        RngCore::fill_bytes(&mut old, &mut a);
        rand_core::Rng::fill_bytes(&mut new, &mut b);
        assert_eq!(a, b);
    }
}
