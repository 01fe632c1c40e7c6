//! rand 0.8's and 0.9's traits on top of rand_core 0.10's, for every scalrand generator: the
//! one adapter the crates share (`rand_core_compat!`), not API.
//!
//! Each crate that offers the `rand_core_06` and `rand_core_09` features (named so in every
//! scalrand crate, each enabling the optional dependency of that name) invokes the macro once
//! per kind of generator. Every method answers what the type's rand_core 0.10 method answers
//! (`rand_core::Rng`, `rand_core::SeedableRng`), so rand 0.8, 0.9 and 0.10 see one stream;
//! rand_core 0.9's `TryRngCore` and `TryCryptoRng` come with its `RngCore` and `CryptoRng`
//! (rand_core's blanket impls, error `Infallible`).
//!
//! - `rng: [generics] Type, ...`: `RngCore` of both versions; rand_core 0.6's
//!   `try_fill_bytes` never fails (the generator cannot).
//! - `crypto: [generics] Type => try_fill, ...`: the same plus `CryptoRng` of both versions;
//!   rand_core 0.6's `try_fill_bytes` returns `try_fill`'s failure (a `fn(&T, &mut [u8]) ->
//!   Result<(), E>`) as the `rand_core_06::Error` of code `Error::CUSTOM_START` (the first
//!   custom code; `scalrand_pool::compat::RAND_CORE_06_ERROR_CODE` names it), where the 0.10
//!   read panics.
//! - `seedable: Type, ...`: `SeedableRng` of both versions, each constructor the 0.10 one
//!   (the same seed layout, the same `seed_from_u64` expansion, the same remaps).
//!
//! The impls carry `#[cfg(feature = "rand_core_06")]` and `#[cfg(feature = "rand_core_09")]`,
//! which the invoking crate's features decide, and name `rand_core`, `rand_core_06` and
//! `rand_core_09` as that crate's dependencies.

/// The rand_core 0.6 and 0.9 adapter: see the `compat` module for its three forms.
#[doc(hidden)]
#[macro_export]
macro_rules! rand_core_compat {
    (rng: $([$($g:tt)*] $t:ty),+ $(,)?) => {$(
        $crate::rand_core_compat!(@rng_core [$($g)*] $t, |this, dest| {
            rand_core::Rng::fill_bytes(this, dest);
            Ok(())
        });
    )+};
    (crypto: $([$($g:tt)*] $t:ty => $try_fill:path),+ $(,)?) => {$(
        $crate::rand_core_compat!(@rng_core [$($g)*] $t, |this, dest| {
            $try_fill(this, dest).map_err(|_| {
                match ::core::num::NonZeroU32::new(rand_core_06::Error::CUSTOM_START) {
                    Some(code) => rand_core_06::Error::from(code),
                    // `CUSTOM_START` is not zero: this arm is never taken.
                    None => rand_core_06::Error::from(::core::num::NonZeroU32::MIN),
                }
            })
        });

        #[cfg(feature = "rand_core_06")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
        impl<$($g)*> rand_core_06::CryptoRng for $t {}

        #[cfg(feature = "rand_core_09")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
        impl<$($g)*> rand_core_09::CryptoRng for $t {}
    )+};
    (seedable: $($t:ty),+ $(,)?) => {$(
        #[cfg(feature = "rand_core_06")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
        impl rand_core_06::SeedableRng for $t {
            type Seed = <$t as rand_core::SeedableRng>::Seed;
            #[inline]
            fn from_seed(seed: Self::Seed) -> Self {
                <$t as rand_core::SeedableRng>::from_seed(seed)
            }
            #[inline]
            fn seed_from_u64(state: u64) -> Self {
                <$t as rand_core::SeedableRng>::seed_from_u64(state)
            }
        }

        #[cfg(feature = "rand_core_09")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
        impl rand_core_09::SeedableRng for $t {
            type Seed = <$t as rand_core::SeedableRng>::Seed;
            #[inline]
            fn from_seed(seed: Self::Seed) -> Self {
                <$t as rand_core::SeedableRng>::from_seed(seed)
            }
            #[inline]
            fn seed_from_u64(state: u64) -> Self {
                <$t as rand_core::SeedableRng>::seed_from_u64(state)
            }
        }
    )+};
    (@rng_core [$($g:tt)*] $t:ty, |$this:ident, $dest:ident| $try_fill_06:block) => {
        #[cfg(feature = "rand_core_06")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
        impl<$($g)*> rand_core_06::RngCore for $t {
            #[inline]
            fn next_u32(&mut self) -> u32 {
                rand_core::Rng::next_u32(self)
            }
            #[inline]
            fn next_u64(&mut self) -> u64 {
                rand_core::Rng::next_u64(self)
            }
            #[inline]
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                rand_core::Rng::fill_bytes(self, dest)
            }
            #[inline]
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core_06::Error> {
                let ($this, $dest) = (self, dest);
                $try_fill_06
            }
        }

        #[cfg(feature = "rand_core_09")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
        impl<$($g)*> rand_core_09::RngCore for $t {
            #[inline]
            fn next_u32(&mut self) -> u32 {
                rand_core::Rng::next_u32(self)
            }
            #[inline]
            fn next_u64(&mut self) -> u64 {
                rand_core::Rng::next_u64(self)
            }
            #[inline]
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                rand_core::Rng::fill_bytes(self, dest)
            }
        }
    };
}
