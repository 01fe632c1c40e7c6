//! Rows for `scalrand_pool::numa` (per-NUMA ChaCha20 pools) and the facade's cryptographic
//! `scalrand::fill_bytes`, beside `Mutex<ChaCha20Rng>`, rand's `ThreadRng`, `getrandom` and
//! raw ChaCha20 keystream, on 32-byte and 4 KiB reads; plus the table shape of Andi Kleen's
//! per-node urandom pools (LKML, "[PATCH 1/3] Make /dev/urandom scalable", 2015-10-06): an
//! explicit 4-node topology, thread `i` on CPU `i`, against one global lock.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use chacha20::cipher::{KeyIvInit, StreamCipher};
use rand_core::{Rng, SeedableRng};
use scalrand_pool::numa::{NodePools, Rounds, Topology};

use crate::{MakeError, Row, Unit, Worker};

const GROUP_32: &str = "crypto 32B";
const GROUP_4K: &str = "crypto 4KiB";
const GROUP_NODES: &str = "numa 4x4 explicit topology 32B";

/// Reads between two looks at the stop flag.
const BATCH: u64 = 64;

/// Runs `f` on a `LEN`-byte buffer until `stop`; returns bytes produced.
#[inline(always)]
fn spin<const LEN: usize>(stop: &AtomicBool, mut f: impl FnMut(&mut [u8])) -> u64 {
    let mut buf = [0u8; LEN];
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..BATCH {
            f(&mut buf);
            black_box(&mut buf);
        }
        n += BATCH * LEN as u64;
    }
    n
}

fn detected<const LEN: usize>() -> Result<Worker, MakeError> {
    let p = NodePools::new(Topology::detect())?;
    Ok(Box::new(move |_, stop| {
        spin::<LEN>(stop, |b| p.fill_bytes(b))
    }))
}

/// The pools with rand's rounds (`NodePools::with_rounds(Rounds::ChaCha12)`).
fn detected_chacha12<const LEN: usize>() -> Result<Worker, MakeError> {
    let p = NodePools::new(Topology::detect())?.with_rounds(Rounds::ChaCha12);
    Ok(Box::new(move |_, stop| {
        spin::<LEN>(stop, |b| p.fill_bytes(b))
    }))
}

/// The names of the rows that set AVX-512 aside, shown where the CPU has it.
pub const AVX2_FACADE: &str = "scalrand::fill_bytes, AVX2 (AVX-512 set aside)";
/// See [`AVX2_FACADE`].
pub const AVX2_CHACHA12: &str = "scalrand NodePools, ChaCha12 output, AVX2 (AVX-512 set aside)";

/// Refuses an AVX2 row where the CPU has no AVX-512 to set aside (the row would repeat its
/// uncapped twin).
fn avx512_here() -> Result<(), MakeError> {
    if scalrand_pool::chacha::backend() == scalrand_pool::chacha::Backend::Avx512 {
        Ok(())
    } else {
        Err("no AVX-512 backend here: the uncapped row is the AVX2 (or narrower) figure".into())
    }
}

/// [`facade`] with the AVX-512 backend set aside for the run (what a CPU without it gets).
fn facade_avx2<const LEN: usize>() -> Result<Worker, MakeError> {
    avx512_here()?;
    scalrand::try_fill_bytes(&mut [0u8; 32])?;
    Ok(Box::new(|_, stop| {
        scalrand_pool::chacha::__cap_to_avx2(|| spin::<LEN>(stop, scalrand::fill_bytes))
    }))
}

/// [`detected_chacha12`] with the AVX-512 backend set aside for the run.
fn detected_chacha12_avx2<const LEN: usize>() -> Result<Worker, MakeError> {
    avx512_here()?;
    let p = NodePools::new(Topology::detect())?.with_rounds(Rounds::ChaCha12);
    Ok(Box::new(move |_, stop| {
        scalrand_pool::chacha::__cap_to_avx2(|| spin::<LEN>(stop, |b| p.fill_bytes(b)))
    }))
}

fn facade<const LEN: usize>() -> Result<Worker, MakeError> {
    // Built once here, so an OS without entropy is reported instead of panicking in a worker.
    scalrand::try_fill_bytes(&mut [0u8; 32])?;
    Ok(Box::new(|_, stop| spin::<LEN>(stop, scalrand::fill_bytes)))
}

fn mutex_chacha<const LEN: usize>() -> Result<Worker, MakeError> {
    let m = Mutex::new(rand_chacha::ChaCha20Rng::from_seed([7; 32]));
    // No worker panics while holding the lock: poisoning cannot happen.
    Ok(Box::new(move |_, stop| {
        spin::<LEN>(stop, |b| {
            m.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .fill_bytes(b)
        })
    }))
}

fn thread_rng<const LEN: usize>() -> Result<Worker, MakeError> {
    Ok(Box::new(|_, stop| {
        let mut r = rand::rng();
        spin::<LEN>(stop, |b| r.fill_bytes(b))
    }))
}

fn getrandom_fill<const LEN: usize>() -> Result<Worker, MakeError> {
    getrandom::fill(&mut [0u8; 32])?;
    Ok(Box::new(|_, stop| {
        // A failing getrandom(2) (checked once above) leaves the buffer as it was; the count
        // still measures the call, which is what this row is for.
        spin::<LEN>(stop, |b| {
            let _ = black_box(getrandom::fill(b));
        })
    }))
}

/// Bytes of keystream a raw-keystream row generates at once and hands out from, as a user's
/// own buffered generator would (rand's `ThreadRng` buffers 256 bytes; the node pools' slot
/// batch is 7 KiB). A read of at least this size is written straight from the cipher.
pub const KEYSTREAM_BUFFER: usize = 4096;

/// The ceiling: each thread owns a ChaCha cipher of `C`'s rounds and reads its keystream
/// through a [`KEYSTREAM_BUFFER`]-byte buffer; no key erasure, no sharing.
fn raw_keystream<C: KeyIvInit + StreamCipher + 'static, const LEN: usize>()
-> Result<Worker, MakeError> {
    // A 32-byte key and a 12-byte nonce: checked once here, so the workers cannot fail.
    C::new_from_slices(&[0; 32], &[0; 12]).map_err(|e| e.to_string())?;
    Ok(Box::new(|t, stop| {
        let key = [t as u8; 32];
        let Ok(mut c) = C::new_from_slices(&key, &[0u8; 12]) else {
            return 0;
        };
        let mut pos = 0usize;
        let mut write = |b: &mut [u8]| {
            // Stay far from the 32-bit block counter's end (256 GiB).
            pos += b.len();
            if pos > 1 << 36 {
                if let Ok(fresh) = C::new_from_slices(&key, &[1u8; 12]) {
                    c = fresh;
                }
                pos = 0;
            }
            c.write_keystream(b);
        };
        let mut buffer = vec![0u8; KEYSTREAM_BUFFER];
        let mut used = KEYSTREAM_BUFFER;
        spin::<LEN>(stop, |b| {
            if b.len() >= KEYSTREAM_BUFFER {
                write(b);
                return;
            }
            let mut out = b;
            while !out.is_empty() {
                if used == KEYSTREAM_BUFFER {
                    write(&mut buffer);
                    used = 0;
                }
                let n = out.len().min(KEYSTREAM_BUFFER - used);
                let (now, rest) = out.split_at_mut(n);
                now.copy_from_slice(&buffer[used..used + n]);
                used += n;
                out = rest;
            }
        })
    }))
}

fn raw_chacha<const LEN: usize>() -> Result<Worker, MakeError> {
    raw_keystream::<chacha20::ChaCha20, LEN>()
}

/// The kernel's vDSO getrandom (Linux >= 6.11), called directly with one state per thread.
#[cfg(target_os = "linux")]
fn vdso_getrandom<const LEN: usize>() -> Result<Worker, MakeError> {
    let v = std::sync::Arc::new(crate::vdso::Vdso::find()?);
    drop(v.state()?);
    Ok(Box::new(move |_, stop| match v.state() {
        Ok(mut st) => spin::<LEN>(stop, |b| st.fill(b)),
        Err(_) => 0,
    }))
}

/// The table shape of Kleen's patch: 4 nodes of 4 CPUs; thread `i` reads as CPU `i` (so 4 threads =
/// 1 node, 16 threads = 4 nodes), whatever machine this runs on.
fn four_nodes() -> Result<Worker, MakeError> {
    let t = Topology::from_nodes((0..4).map(|n| (4 * n..4 * n + 4).collect()).collect());
    let p = NodePools::new(t)?;
    Ok(Box::new(move |t, stop| {
        spin::<32>(stop, |b| p.fill_bytes_on_cpu(t % 16, b))
    }))
}

/// Kleen's "before": one pool behind one global lock.
fn one_global_lock() -> Result<Worker, MakeError> {
    mutex_chacha::<32>()
}

/// The rows of this module.
pub fn rows() -> Vec<Row> {
    let row = |group, name, baseline, make| Row {
        group,
        name,
        baseline,
        unit: Unit::Bytes,
        make,
    };
    vec![
        row(
            GROUP_32,
            "scalrand NodePools (detected topology)",
            false,
            detected::<32> as fn() -> Result<Worker, MakeError>,
        ),
        row(
            GROUP_32,
            "scalrand::fill_bytes (crypto facade)",
            false,
            facade::<32>,
        ),
        row(
            GROUP_32,
            "scalrand NodePools, ChaCha12 output (with_rounds)",
            false,
            detected_chacha12::<32>,
        ),
        row(GROUP_32, "Mutex<ChaCha20Rng>", true, mutex_chacha::<32>),
        row(
            GROUP_32,
            "rand ThreadRng (rand::rng())",
            true,
            thread_rng::<32>,
        ),
        row(GROUP_32, "getrandom::fill", true, getrandom_fill::<32>),
        #[cfg(target_os = "linux")]
        row(
            GROUP_32,
            "vDSO getrandom (direct, Linux >= 6.11)",
            true,
            vdso_getrandom::<32>,
        ),
        row(
            GROUP_32,
            "raw ChaCha20 keystream per thread, 4 KiB buffer",
            true,
            raw_chacha::<32>,
        ),
        row(
            GROUP_32,
            "raw ChaCha12 keystream per thread, 4 KiB buffer",
            true,
            raw_keystream::<chacha20::ChaCha12, 32>,
        ),
        row(
            GROUP_32,
            "raw ChaCha8 keystream per thread, 4 KiB buffer",
            true,
            raw_keystream::<chacha20::ChaCha8, 32>,
        ),
        // On a CPU with AVX-512, the two headline scalrand rows again on the AVX2 backend,
        // which most x86 machines in use run (the backend capped while each row runs).
        row(GROUP_32, AVX2_FACADE, false, facade_avx2::<32>),
        row(GROUP_32, AVX2_CHACHA12, false, detected_chacha12_avx2::<32>),
        row(
            GROUP_4K,
            "scalrand NodePools (detected topology)",
            false,
            detected::<4096>,
        ),
        row(
            GROUP_4K,
            "scalrand::fill_bytes (crypto facade)",
            false,
            facade::<4096>,
        ),
        row(
            GROUP_4K,
            "scalrand NodePools, ChaCha12 output (with_rounds)",
            false,
            detected_chacha12::<4096>,
        ),
        row(GROUP_4K, "Mutex<ChaCha20Rng>", true, mutex_chacha::<4096>),
        row(
            GROUP_4K,
            "rand ThreadRng (rand::rng())",
            true,
            thread_rng::<4096>,
        ),
        row(GROUP_4K, "getrandom::fill", true, getrandom_fill::<4096>),
        #[cfg(target_os = "linux")]
        row(
            GROUP_4K,
            "vDSO getrandom (direct, Linux >= 6.11)",
            true,
            vdso_getrandom::<4096>,
        ),
        row(
            GROUP_4K,
            "raw ChaCha20 keystream per thread",
            true,
            raw_chacha::<4096>,
        ),
        row(
            GROUP_4K,
            "raw ChaCha12 keystream per thread",
            true,
            raw_keystream::<chacha20::ChaCha12, 4096>,
        ),
        row(
            GROUP_4K,
            "raw ChaCha8 keystream per thread",
            true,
            raw_keystream::<chacha20::ChaCha8, 4096>,
        ),
        row(
            GROUP_NODES,
            "NodePools, 4 nodes x 4 CPUs, thread i = CPU i",
            false,
            four_nodes,
        ),
        row(
            GROUP_NODES,
            "one global lock (Mutex<ChaCha20Rng>)",
            true,
            one_global_lock,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// The buffered raw-keystream worker hands out whole reads and stops when told.
    #[test]
    fn buffered_keystream_rows_run() {
        for make in [
            raw_keystream::<chacha20::ChaCha20, 32> as fn() -> Result<Worker, MakeError>,
            raw_keystream::<chacha20::ChaCha8, 4096>,
        ] {
            let worker = make().unwrap();
            let stop = AtomicBool::new(false);
            let n = std::thread::scope(|s| {
                let h = s.spawn(|| worker(0, &stop));
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, Ordering::Relaxed);
                h.join().unwrap()
            });
            assert!(n > 0);
        }
    }
}
