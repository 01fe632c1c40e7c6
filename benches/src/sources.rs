//! Named raw-output sources for `cargo xtask stats` and the statistical smoke tests: every
//! generator scalrand ships, as a `FnMut(&mut [u8])` that fills a buffer with its output.

use std::sync::Arc;

use std::time::Duration;

use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpu, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar};
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Prf, ReadMode, monotonic_now};
use scalrand_pool::numa::{NodePools, Topology};

use crate::MakeError;

/// A generator's raw output, chunk by chunk.
pub type Source = Box<dyn FnMut(&mut [u8]) + Send>;

/// One entry of [`all`]: name, one-line description, constructor (seeded from `seed` where the
/// generator is seedable; OS-seeded ones ignore it).
pub type Entry = (
    &'static str,
    &'static str,
    fn(u64) -> Result<Source, MakeError>,
);

/// A thread-safe fill function shared by the threads of [`interleaved`].
type Filler = Arc<dyn Fn(&mut [u8]) + Send + Sync>;

/// Fills `buf` from `threads` threads at once, each writing its own interleaved 64-byte
/// stripes with `f`: the output a consumer sees when many threads share one generator.
fn interleaved(threads: usize, f: Filler) -> Source {
    Box::new(move |buf: &mut [u8]| {
        let stripes: Vec<&mut [u8]> = buf.chunks_mut(64).collect();
        let mut per: Vec<Vec<&mut [u8]>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, s) in stripes.into_iter().enumerate() {
            per[i % threads].push(s);
        }
        std::thread::scope(|sc| {
            for mine in per {
                let f = Arc::clone(&f);
                sc.spawn(move || {
                    for s in mine {
                        f(s);
                    }
                });
            }
        });
    })
}

/// Every source, in listing order.
pub fn all() -> Vec<Entry> {
    let mut v: Vec<Entry> = vec![
        (
            "xoroshiro128plus",
            "Xoroshiro128Plus::seed_from_u64(seed), fill_bytes",
            |s| {
                let mut r = Xoroshiro128Plus::seed_from_u64(s);
                Ok(Box::new(move |b| r.fill_bytes(b)))
            },
        ),
        (
            "xoroshiro128plus-low",
            "low byte of each Xoroshiro128Plus output only (its weak bits)",
            |s| {
                let mut r = Xoroshiro128Plus::seed_from_u64(s);
                Ok(Box::new(move |b: &mut [u8]| {
                    b.iter_mut().for_each(|x| *x = r.next_u64() as u8)
                }))
            },
        ),
        (
            "xoroshiro128plusplus",
            "Xoroshiro128PlusPlus::seed_from_u64(seed), fill_bytes",
            |s| {
                let mut r = Xoroshiro128PlusPlus::seed_from_u64(s);
                Ok(Box::new(move |b| r.fill_bytes(b)))
            },
        ),
        (
            "xoroshiro128starstar",
            "Xoroshiro128StarStar::seed_from_u64(seed), fill_bytes",
            |s| {
                let mut r = Xoroshiro128StarStar::seed_from_u64(s);
                Ok(Box::new(move |b| r.fill_bytes(b)))
            },
        ),
        (
            "percpu",
            "PerCpu<Xoroshiro128PlusPlus> from seed, 8-byte next_u64 words, one thread",
            |s| {
                let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(s))?;
                Ok(Box::new(move |b: &mut [u8]| {
                    for c in b.chunks_mut(8) {
                        let w = p.next_u64().to_le_bytes();
                        c.copy_from_slice(&w[..c.len()]);
                    }
                }))
            },
        ),
        (
            "fast-threads",
            "scalrand::fast::fill from 4 threads, interleaved 64-byte stripes",
            |_| Ok(interleaved(4, Arc::new(scalrand::fast::fill))),
        ),
    ];
    v.extend(pool_sources());
    v
}

/// A Fortuna seeded from `seed` (expanded to 32 bytes with SplitMix64-seeded xoroshiro, so
/// runs are reproducible), reading in 4 KiB requests.
fn fortuna<P: Prf>(mode: ReadMode, seed: u64) -> Result<Source, MakeError> {
    let mut key = [0u8; 32];
    Xoroshiro128PlusPlus::seed_from_u64(seed).fill_bytes(&mut key);
    let f = Fortuna::<P, _>::from_seed(mode, &key, monotonic_now as fn() -> Duration)?;
    Ok(Box::new(move |b: &mut [u8]| {
        for c in b.chunks_mut(4096) {
            f.fill_bytes(c);
        }
    }))
}

/// The scalrand-pool generators (Fortuna, node pools, the facade's crypto functions).
fn pool_sources() -> Vec<Entry> {
    vec![
        (
            "fortuna-aes-concurrent",
            "Fortuna<AES> Concurrent from a fixed seed, 4 KiB reads",
            |s| fortuna::<Aes256Prf>(ReadMode::Concurrent, s),
        ),
        (
            "fortuna-aes-locked",
            "Fortuna<AES> Locked from a fixed seed, 4 KiB reads",
            |s| fortuna::<Aes256Prf>(ReadMode::Locked, s),
        ),
        (
            "fortuna-chacha-concurrent",
            "Fortuna<ChaCha20> Concurrent from a fixed seed, 4 KiB reads",
            |s| fortuna::<ChaCha20Prf>(ReadMode::Concurrent, s),
        ),
        (
            "fortuna-chacha-locked",
            "Fortuna<ChaCha20> Locked from a fixed seed, 4 KiB reads",
            |s| fortuna::<ChaCha20Prf>(ReadMode::Locked, s),
        ),
        (
            "nodepools",
            "NodePools (2 nodes x 2 CPUs) from a fixed seed, 32-byte reads",
            |s| {
                let mut key = [0u8; 32];
                Xoroshiro128PlusPlus::seed_from_u64(s).fill_bytes(&mut key);
                let p =
                    NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1], vec![2, 3]]), &key)?;
                Ok(Box::new(move |b: &mut [u8]| {
                    for c in b.chunks_mut(32) {
                        p.fill_bytes(c);
                    }
                }))
            },
        ),
        (
            "crypto-threads",
            "scalrand::fill_bytes (OS-seeded) from 4 threads, interleaved 64-byte stripes",
            |_| {
                // Checked once here, so an OS without entropy is an error, not a panic.
                scalrand::try_fill_bytes(&mut [0u8; 32])?;
                Ok(interleaved(4, Arc::new(scalrand::fill_bytes)))
            },
        ),
    ]
}

/// The source called `name` (`None` when there is none), or why it could not be built.
pub fn by_name(name: &str, seed: u64) -> Option<Result<Source, MakeError>> {
    all().into_iter().find(|e| e.0 == name).map(|e| (e.2)(seed))
}
