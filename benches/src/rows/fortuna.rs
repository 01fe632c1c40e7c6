//! Rows for scalrand-pool's Fortuna: Concurrent vs Locked read modes on 4 KiB reads, and
//! raw AES-256-CTR / ChaCha20 keystream (the `aes` / `chacha20` crates, one private key per
//! thread, no lock, no rekey) as the physical limit.

use std::sync::atomic::{AtomicBool, Ordering};

use aes::Aes256Enc;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use chacha20::cipher::{KeyIvInit, StreamCipherCore};
use chacha20::variants::Ietf;
use chacha20::{ChaChaCore, R20};
use scalrand_pool::fortuna::{ChaCha20Prf, Fortuna, ReadMode};

use crate::{MakeError, Row, Unit, Worker};

/// Bytes per read in these rows.
pub const READ: usize = 4096;

const GROUP: &str = "fortuna 4KiB";
const GROUP_CHACHA: &str = "fortuna ChaCha20 4KiB";

fn fortuna_worker<F: Fn(&mut [u8]) + Send + Sync + 'static>(fill: F) -> Worker {
    Box::new(move |_t: usize, stop: &AtomicBool| {
        let mut buf = [0u8; READ];
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            fill(&mut buf);
            std::hint::black_box(&buf);
            n += READ as u64;
        }
        n
    })
}

fn aes_concurrent() -> Result<Worker, MakeError> {
    let f = Fortuna::new(ReadMode::Concurrent)?;
    Ok(fortuna_worker(move |b| f.fill_bytes(b)))
}

fn aes_locked() -> Result<Worker, MakeError> {
    let f = Fortuna::new(ReadMode::Locked)?;
    Ok(fortuna_worker(move |b| f.fill_bytes(b)))
}

fn chacha_concurrent() -> Result<Worker, MakeError> {
    let f = Fortuna::<ChaCha20Prf>::with_prf(ReadMode::Concurrent)?;
    Ok(fortuna_worker(move |b| f.fill_bytes(b)))
}

fn chacha_locked() -> Result<Worker, MakeError> {
    let f = Fortuna::<ChaCha20Prf>::with_prf(ReadMode::Locked)?;
    Ok(fortuna_worker(move |b| f.fill_bytes(b)))
}

/// AES-256-CTR keystream from the `aes` crate, the way a caller would write it: counter
/// blocks written in place, `encrypt_blocks` over the 4 KiB buffer. One key per thread.
pub fn aes_ctr_fill(cipher: &Aes256Enc, counter: &mut u128, buf: &mut [u8; READ]) {
    let (blocks, _) = Array::slice_as_chunks_mut(buf.as_mut_slice());
    for b in blocks.iter_mut() {
        *b = Array::from(counter.to_le_bytes());
        *counter = counter.wrapping_add(1);
    }
    cipher.encrypt_blocks(blocks);
}

fn raw_aes_ctr() -> Result<Worker, MakeError> {
    Ok(Box::new(|t: usize, stop: &AtomicBool| {
        let cipher = Aes256Enc::new(&Array::from([t as u8; 32]));
        let mut counter = 0u128;
        let mut buf = [0u8; READ];
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            aes_ctr_fill(&cipher, &mut counter, &mut buf);
            std::hint::black_box(&buf);
            n += READ as u64;
        }
        n
    }))
}

/// ChaCha20 keystream from the `chacha20` crate's core (RFC 8439 layout), written straight into
/// the 4 KiB buffer, the way Fortuna's ChaCha20 PRF drives it. One key per thread.
pub fn chacha_fill(core: &mut ChaChaCore<R20, Ietf>, buf: &mut [u8; READ]) {
    let (blocks, _) = Array::slice_as_chunks_mut(buf.as_mut_slice());
    core.write_keystream_blocks(blocks);
}

/// A ChaCha20 core for thread `t`.
pub fn chacha_core(t: usize) -> ChaChaCore<R20, Ietf> {
    ChaChaCore::new(&Array::from([t as u8; 32]), &Array::from([0u8; 12]))
}

fn raw_chacha20() -> Result<Worker, MakeError> {
    Ok(Box::new(|t: usize, stop: &AtomicBool| {
        let mut core = chacha_core(t);
        let mut buf = [0u8; READ];
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            // The 32-bit block counter wraps after 256 GiB; the figures do not care.
            chacha_fill(&mut core, &mut buf);
            std::hint::black_box(&buf);
            n += READ as u64;
        }
        n
    }))
}

/// The rows of this module.
pub fn rows() -> Vec<Row> {
    vec![
        Row {
            group: GROUP,
            name: "scalrand Fortuna<AES> Concurrent",
            baseline: false,
            unit: Unit::Bytes,
            make: aes_concurrent,
        },
        Row {
            group: GROUP,
            name: "scalrand Fortuna<AES> Locked",
            baseline: true,
            unit: Unit::Bytes,
            make: aes_locked,
        },
        Row {
            group: GROUP,
            name: "raw AES-256-CTR (aes crate, key per thread)",
            baseline: true,
            unit: Unit::Bytes,
            make: raw_aes_ctr,
        },
        Row {
            group: GROUP_CHACHA,
            name: "scalrand Fortuna<ChaCha20> Concurrent",
            baseline: false,
            unit: Unit::Bytes,
            make: chacha_concurrent,
        },
        Row {
            group: GROUP_CHACHA,
            name: "scalrand Fortuna<ChaCha20> Locked",
            baseline: true,
            unit: Unit::Bytes,
            make: chacha_locked,
        },
        Row {
            group: GROUP_CHACHA,
            name: "raw ChaCha20 (chacha20 crate, key per thread)",
            baseline: true,
            unit: Unit::Bytes,
            make: raw_chacha20,
        },
    ]
}
