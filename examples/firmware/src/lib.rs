#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(test)]
extern crate std;

use core::fmt;

use scalrand_fastprng::{PerCpu, Xoroshiro128PlusPlus};
use scalrand_pool::fortuna::{FortunaError, Generator, MAX_REQUEST};
use scalrand_simd_chunk::{Counters, Policy, Preempt, SimdSection, Work, digest_chunked_with};
use zeroize::Zeroize;

/// Fewest host entropy bytes [`Rngs::seed_from_host`] accepts: 256 bits, a full AES-256 key.
pub const MIN_ENTROPY: usize = 32;

/// What can go wrong in this example. Each variant is a bad input from the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FirmwareError {
    /// Fewer than [`MIN_ENTROPY`] bytes of host entropy.
    ShortEntropy {
        /// Bytes given.
        len: usize,
    },
    /// The Fortuna generator refused (cannot happen once seeded with requests split to
    /// [`MAX_REQUEST`], kept so no error is swallowed).
    Fortuna(FortunaError),
    /// The per-CPU generator refused: zero CPUs, too many CPUs, or a CPU number out of range.
    Fast(scalrand_fastprng::Error),
}

impl fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ShortEntropy { len } => write!(
                f,
                "{len} bytes of host entropy; at least {MIN_ENTROPY} are required"
            ),
            Self::Fortuna(e) => write!(f, "fortuna: {e}"),
            Self::Fast(e) => write!(f, "per-CPU generator: {e}"),
        }
    }
}

impl core::error::Error for FirmwareError {}

impl From<FortunaError> for FirmwareError {
    fn from(e: FortunaError) -> Self {
        Self::Fortuna(e)
    }
}

impl From<scalrand_fastprng::Error> for FirmwareError {
    fn from(e: scalrand_fastprng::Error) -> Self {
        Self::Fast(e)
    }
}

/// The firmware's two generators, built once at boot from entropy the host (a TRNG, a boot
/// loader, a hypervisor) hands over.
///
/// * `crypto`: a Fortuna [`Generator`] (AES-256, FS&K), for keys, nonces, session IDs. It is
///   the bare generator, not the accumulator: this firmware has one good seed at boot and
///   reseeds explicitly ([`Rngs::reseed`]) when the host hands over more.
/// * `fast`: a [`PerCpu`] of xoroshiro128++ states, one per CPU, for back-off jitter, sampling,
///   hash-table seeds. **Not** for secrets. Its master state is drawn from `crypto`, so the
///   raw host entropy is used once, by the generator that erases its key after each request.
pub struct Rngs {
    crypto: Generator,
    fast: PerCpu<Xoroshiro128PlusPlus>,
}

/// Prints the shape only: never a key or a state.
impl fmt::Debug for Rngs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rngs")
            .field("crypto", &self.crypto)
            .field("fast", &self.fast)
            .finish()
    }
}

impl Rngs {
    /// Seeds both generators from `entropy` for a machine of `cpus` CPUs.
    ///
    /// # Errors
    /// [`FirmwareError::ShortEntropy`] below [`MIN_ENTROPY`] bytes; [`FirmwareError::Fast`]
    /// for `cpus == 0` or above [`scalrand_fastprng::MAX_CPUS`].
    pub fn seed_from_host(entropy: &[u8], cpus: usize) -> Result<Self, FirmwareError> {
        if entropy.len() < MIN_ENTROPY {
            return Err(FirmwareError::ShortEntropy { len: entropy.len() });
        }
        let mut crypto = Generator::new();
        crypto.reseed(entropy);
        let mut master = [0u8; 16];
        crypto.pseudo_random_data(&mut master)?;
        // `from_seed` remaps the all-zero seed (probability 2^-128) to a valid state.
        let fast = PerCpu::with_cpus(
            <Xoroshiro128PlusPlus as rand_core::SeedableRng>::from_seed(master),
            cpus,
        );
        // Wiped with a write the compiler may not drop.
        master.zeroize();
        Ok(Rngs {
            crypto,
            fast: fast?,
        })
    }

    /// Mixes more host entropy into the cryptographic generator (K = SHA-256(SHA-256(K ‖ s))).
    /// Any length is accepted; the per-CPU states are not touched.
    pub fn reseed(&mut self, entropy: &[u8]) {
        self.crypto.reseed(entropy);
    }

    /// Fills `out` with cryptographically secure bytes, in requests of at most
    /// [`MAX_REQUEST`] (1 MiB) as FS&K require: the key changes after each.
    ///
    /// # Errors
    /// None in practice (the generator is seeded and every request is within the limit); a
    /// [`FirmwareError::Fortuna`] would be passed on, never swallowed.
    pub fn fill_crypto(&mut self, out: &mut [u8]) -> Result<(), FirmwareError> {
        if out.is_empty() {
            return Ok(self.crypto.pseudo_random_data(out)?);
        }
        for piece in out.chunks_mut(MAX_REQUEST) {
            self.crypto.pseudo_random_data(piece)?;
        }
        Ok(())
    }

    /// A 256-bit session key.
    ///
    /// # Errors
    /// As [`fill_crypto`](Self::fill_crypto).
    pub fn session_key(&mut self) -> Result<[u8; 32], FirmwareError> {
        let mut k = [0u8; 32];
        self.fill_crypto(&mut k)?;
        Ok(k)
    }

    /// Back-off jitter in `0..max_us` microseconds for code running on CPU `cpu` (which a
    /// kernel knows: preemption is off, `smp_processor_id()`), from that CPU's fast state.
    /// `max_us == 0` gives 0. Lemire's multiply-shift: bias below 2^-32 for any `max_us`.
    ///
    /// # Errors
    /// [`FirmwareError::Fast`] when `cpu` is not below the CPU count given at seeding.
    pub fn jitter_us(&self, cpu: usize, max_us: u32) -> Result<u32, FirmwareError> {
        let x = self.fast.with_cpu(cpu, |r| r.next_u64())?;
        // (x * max) >> 64 < max: the high word of a 64x32-bit product fits in 32 bits.
        let scaled = (u128::from(x) * u128::from(max_us)) >> 64;
        Ok(u32::try_from(scaled).unwrap_or(0))
    }

    /// The number of CPUs the fast generator has states for.
    pub fn cpus(&self) -> usize {
        self.fast.cpus()
    }
}

/// The hooks a kernel or an RTOS provides around SIMD/FPU use and rescheduling. On Linux they
/// are `may_use_simd`, `kernel_fpu_begin`/`kernel_fpu_end`, `need_resched` and
/// `cond_resched`; on a Cortex-M RTOS, "save the FPU context lazily" and "is a higher-priority
/// task ready?".
pub trait Platform {
    /// Whether SIMD/FPU registers may be used now (not in an interrupt handler, say).
    fn may_use_simd(&self) -> bool;
    /// Saves the interrupted context's FPU state; preemption is off until [`fpu_end`](Self::fpu_end).
    fn fpu_begin(&self);
    /// Restores it; preemption is possible again.
    fn fpu_end(&self);
    /// Whether the scheduler wants this CPU back.
    fn need_resched(&self) -> bool;
    /// Gives the CPU up (returns when this task runs again).
    fn cond_resched(&self);
}

/// [`Platform`]'s FPU hooks as a [`SimdSection`].
#[derive(Debug)]
pub struct FpuSection<'a, P>(pub &'a P);

impl<P: Platform> SimdSection for FpuSection<'_, P> {
    fn begin(&mut self) -> bool {
        if !self.0.may_use_simd() {
            return false;
        }
        self.0.fpu_begin();
        true
    }

    fn end(&mut self) {
        self.0.fpu_end();
    }
}

/// [`Platform`]'s scheduler hooks as a [`Preempt`]: yield only when asked, as Linux's
/// chunked crypto does since the 2022 soft-lockup fixes.
#[derive(Debug)]
pub struct Resched<'a, P>(pub &'a P);

impl<P: Platform> Preempt for Resched<'_, P> {
    fn should_yield(&mut self, _work: Work) -> bool {
        self.0.need_resched()
    }

    fn yield_now(&mut self) {
        self.0.cond_resched();
    }
}

/// SHA-256 of a firmware image (or a module, a received update) checked in 4 KiB intervals:
/// the FPU section is left and the CPU given up only when the scheduler asks, so a large image
/// never holds the CPU with preemption off for more than one interval.
pub fn image_digest<P: Platform>(platform: &P, image: &[u8]) -> ([u8; 32], Counters) {
    let (digest, counters) = digest_chunked_with::<sha2::Sha256, _, _>(
        image,
        Policy::for_digest::<sha2::Sha256>(),
        &mut FpuSection(platform),
        &mut Resched(platform),
    );
    (digest.into(), counters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;
    use sha2::Digest;
    use std::vec;
    use std::vec::Vec;

    const ENTROPY: [u8; 48] = [0x5a; 48];

    #[test]
    fn same_host_entropy_same_streams_other_entropy_other_streams() {
        let mut a = Rngs::seed_from_host(&ENTROPY, 4).unwrap();
        let mut b = Rngs::seed_from_host(&ENTROPY, 4).unwrap();
        let mut other = ENTROPY;
        other[47] ^= 1;
        let mut c = Rngs::seed_from_host(&other, 4).unwrap();
        let (ka, kb, kc) = (
            a.session_key().unwrap(),
            b.session_key().unwrap(),
            c.session_key().unwrap(),
        );
        assert_eq!(ka, kb);
        assert_ne!(ka, kc);
        assert_ne!(ka, [0u8; 32]);
        // Key erasure: the next key differs from the first.
        assert_ne!(a.session_key().unwrap(), ka);
        assert_eq!(
            a.jitter_us(3, 1_000_000).unwrap(),
            b.jitter_us(3, 1_000_000).unwrap()
        );
    }

    #[test]
    fn crypto_output_is_the_fortuna_generator_seeded_with_the_host_bytes() {
        // Independent path: a Generator driven by hand, as FS&K's §9.4 describes. The
        // generator's own known-answer tests (PyCrypto vectors) live in scalrand-pool.
        let mut g = Generator::new();
        g.reseed(&ENTROPY);
        let mut master = [0u8; 16];
        g.pseudo_random_data(&mut master).unwrap();
        let mut want = [0u8; 32];
        g.pseudo_random_data(&mut want).unwrap();
        let mut r = Rngs::seed_from_host(&ENTROPY, 1).unwrap();
        assert_eq!(r.session_key().unwrap(), want);
    }

    #[test]
    fn fast_master_comes_from_the_crypto_generator_and_cpus_differ() {
        let mut g = Generator::new();
        g.reseed(&ENTROPY);
        let mut seed = [0u8; 16];
        g.pseudo_random_data(&mut seed).unwrap();
        // `with_cpu(i)` uses PerCpu's try-lock slot n + i: the master jumped n + i + 1 times
        // (n = 2 CPUs here; the n rseq slots come first).
        let mut m = <Xoroshiro128PlusPlus as rand_core::SeedableRng>::from_seed(seed);
        m.jump();
        m.jump();
        let r = Rngs::seed_from_host(&ENTROPY, 2).unwrap();
        let mut per_cpu = Vec::new();
        for cpu in 0..2 {
            m.jump();
            let mut expect = m.clone();
            let got = r.fast.with_cpu(cpu, |x| x.next_u64()).unwrap();
            assert_eq!(got, expect.next_u64());
            per_cpu.push(got);
        }
        assert_ne!(per_cpu[0], per_cpu[1]);
    }

    #[test]
    fn jitter_stays_in_range_and_spreads() {
        let r = Rngs::seed_from_host(&ENTROPY, 2).unwrap();
        let mut hist = [0u32; 10];
        for i in 0..10_000 {
            let j = r.jitter_us(i % 2, 10).unwrap();
            assert!(j < 10);
            hist[j as usize] += 1;
        }
        // 1000 expected per bucket, sd ~30: 8 sd either way is a broken mapping.
        for h in hist {
            assert!((760..1240).contains(&h), "{hist:?}");
        }
        assert_eq!(r.jitter_us(0, 0).unwrap(), 0);
        assert!(r.jitter_us(1, u32::MAX).is_ok());
    }

    #[test]
    fn large_fill_is_split_into_one_mib_requests() {
        let n = 2 * MAX_REQUEST + 5;
        let mut r = Rngs::seed_from_host(&ENTROPY, 1).unwrap();
        let mut out = vec![0u8; n];
        r.fill_crypto(&mut out).unwrap();
        let mut g = Generator::new();
        g.reseed(&ENTROPY);
        g.pseudo_random_data(&mut [0u8; 16]).unwrap(); // the fast master
        let mut want = vec![0u8; n];
        for piece in want.chunks_mut(MAX_REQUEST) {
            g.pseudo_random_data(piece).unwrap();
        }
        assert!(out == want);
        r.fill_crypto(&mut []).unwrap();
    }

    #[test]
    fn reseed_changes_the_stream() {
        let mut a = Rngs::seed_from_host(&ENTROPY, 1).unwrap();
        let mut b = Rngs::seed_from_host(&ENTROPY, 1).unwrap();
        b.reseed(b"interrupt timing");
        assert_ne!(a.session_key().unwrap(), b.session_key().unwrap());
    }

    /// Bad-input table (README), one assertion per row.
    #[test]
    fn bad_inputs() {
        assert_eq!(
            Rngs::seed_from_host(&[1u8; 31], 1).unwrap_err(),
            FirmwareError::ShortEntropy { len: 31 }
        );
        assert_eq!(
            Rngs::seed_from_host(&ENTROPY, 0).unwrap_err(),
            FirmwareError::Fast(scalrand_fastprng::Error::NoSlots)
        );
        assert!(matches!(
            Rngs::seed_from_host(&ENTROPY, scalrand_fastprng::MAX_CPUS + 1),
            Err(FirmwareError::Fast(
                scalrand_fastprng::Error::TooManySlots { .. }
            ))
        ));
        let r = Rngs::seed_from_host(&ENTROPY, 2).unwrap();
        assert_eq!(
            r.jitter_us(2, 10).unwrap_err(),
            FirmwareError::Fast(scalrand_fastprng::Error::CpuOutOfRange { cpu: 2, cpus: 2 })
        );
        assert_eq!(r.cpus(), 2);
        // Messages name the problem.
        let msg = std::format!("{}", FirmwareError::ShortEntropy { len: 3 });
        assert!(msg.contains("3 bytes") && msg.contains("32"), "{msg}");
    }

    /// A scheduler that asks for the CPU back every `period` checks, and records what the
    /// driver did with the FPU.
    struct FakeKernel {
        simd_ok: bool,
        period: u32,
        checks: Cell<u32>,
        fpu_depth: Cell<i32>,
        max_depth: Cell<i32>,
        begins: Cell<u32>,
        rescheds: Cell<u32>,
        resched_with_fpu_held: Cell<bool>,
    }

    impl FakeKernel {
        fn new(simd_ok: bool, period: u32) -> Self {
            FakeKernel {
                simd_ok,
                period,
                checks: Cell::new(0),
                fpu_depth: Cell::new(0),
                max_depth: Cell::new(0),
                begins: Cell::new(0),
                rescheds: Cell::new(0),
                resched_with_fpu_held: Cell::new(false),
            }
        }
    }

    impl Platform for FakeKernel {
        fn may_use_simd(&self) -> bool {
            self.simd_ok
        }
        fn fpu_begin(&self) {
            self.begins.set(self.begins.get() + 1);
            self.fpu_depth.set(self.fpu_depth.get() + 1);
            self.max_depth
                .set(self.max_depth.get().max(self.fpu_depth.get()));
        }
        fn fpu_end(&self) {
            self.fpu_depth.set(self.fpu_depth.get() - 1);
        }
        fn need_resched(&self) -> bool {
            self.checks.set(self.checks.get() + 1);
            self.period != 0 && self.checks.get().is_multiple_of(self.period)
        }
        fn cond_resched(&self) {
            if self.fpu_depth.get() != 0 {
                self.resched_with_fpu_held.set(true);
            }
            self.rescheds.set(self.rescheds.get() + 1);
        }
    }

    #[test]
    fn image_digest_is_sha256_and_yields_only_when_asked() {
        // FIPS 180-2 appendix B.1: SHA-256("abc").
        let abc = [
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae,
            0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61,
            0xf2, 0x00, 0x15, 0xad,
        ];
        let k = FakeKernel::new(true, 1);
        assert_eq!(image_digest(&k, b"abc").0, abc);

        let image: Vec<u8> = (0..100 * 4096 + 17).map(|i| (i * 7 % 251) as u8).collect();
        let want: [u8; 32] = sha2::Sha256::digest(&image).into();

        // Never asked: one FPU section for the whole image, no reschedule.
        let k = FakeKernel::new(true, 0);
        let (d, c) = image_digest(&k, &image);
        assert_eq!(d, want);
        assert_eq!((k.begins.get(), k.rescheds.get(), c.yields), (1, 0, 0));
        assert_eq!(c.longest_stretch, image.len() as u64);

        // Asked every 10th check (every 40 KiB): leaves the section, reschedules, re-enters.
        let k = FakeKernel::new(true, 10);
        let (d, c) = image_digest(&k, &image);
        assert_eq!(d, want);
        assert_eq!(u64::from(k.rescheds.get()), c.yields);
        assert_eq!(c.yields, 10);
        assert_eq!(k.begins.get(), 11);
        assert_eq!(k.fpu_depth.get(), 0, "every begin has its end");
        assert_eq!(k.max_depth.get(), 1, "sections never nest");
        assert!(
            !k.resched_with_fpu_held.get(),
            "rescheduled with the FPU held"
        );
        assert!(c.longest_stretch <= 10 * 4096);

        // In an interrupt: no FPU section at all, same digest, fallbacks counted.
        let k = FakeKernel::new(false, 3);
        let (d, c) = image_digest(&k, &image);
        assert_eq!(d, want);
        assert_eq!(k.begins.get(), 0);
        assert!(c.fallbacks >= 1);
        assert_eq!(k.fpu_depth.get(), 0);
    }

    #[test]
    fn empty_image_is_the_empty_digest_without_a_section() {
        let k = FakeKernel::new(true, 1);
        let (d, c) = image_digest(&k, &[]);
        assert_eq!(d[..], sha2::Sha256::digest([])[..]);
        assert_eq!((k.begins.get(), c.checks), (0, 0));
    }
}
