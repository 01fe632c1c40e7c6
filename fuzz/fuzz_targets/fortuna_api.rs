//! Arbitrary sequences of Fortuna Generator / Accumulator / Fortuna calls: nothing panics,
//! and every bad input comes back as the typed error the docs' "Bad inputs" table names.
#![no_main]

use core::time::Duration;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use scalrand_fuzz::with_buf;
use scalrand_pool::fortuna::{
    Accumulator, ChaCha20Prf, Fortuna, FortunaError, Generator, MAX_EVENT_LEN, MAX_REQUEST,
    MIN_SEED_LEN, POOL_COUNT, ReadMode,
};

static NOW_MS: AtomicU64 = AtomicU64::new(0);

fn now() -> Duration {
    Duration::from_millis(NOW_MS.load(Ordering::Relaxed))
}

#[derive(Arbitrary, Debug)]
enum Op {
    GenReseed {
        chacha: bool,
        seed: Vec<u8>,
    },
    GenRead {
        chacha: bool,
        len: u32,
    },
    AccEvent {
        source: u8,
        pool: u16,
        data: Vec<u8>,
    },
    AccReseed {
        chacha: bool,
    },
    Time {
        forward: bool,
        ms: u16,
    },
    NewFortuna {
        concurrent: bool,
        chacha: bool,
        seed: Vec<u8>,
    },
    Fill {
        len: u16,
        big: bool,
    },
    Event {
        source: u8,
        pool: u16,
        data: Vec<u8>,
    },
    Reseed {
        seed: Vec<u8>,
    },
}

enum AnyFortuna {
    Aes(Fortuna),
    ChaCha(Fortuna<ChaCha20Prf>),
}

/// Generating bytes one input may spend on reads near the 2^20 limit: one of them. Beyond it
/// a tagged read falls back to a small one, so every input stays cheap and a campaign reaches
/// millions of executions instead of spending them on megabytes of keystream.
const BIG_BUDGET: usize = MAX_REQUEST + 1024;

/// Read lengths stay small (up to 1 KiB) or, when tagged and within the budget, sit at the
/// 2^20 boundary (2^20 - 8 ..= 2^20 + 7, where the request limit and the rekey split live).
fn read_len(len: u32, budget: &mut usize) -> usize {
    if len & 0x8000_0000 != 0 {
        let n = MAX_REQUEST - 8 + (len as usize & 0xF);
        if n > MAX_REQUEST {
            return n; // rejected before any work: costs nothing
        }
        if n <= *budget {
            *budget -= n;
            return n;
        }
    }
    (len & 0x3FF) as usize
}

fn check_event(r: Result<(), FortunaError>, pool: usize, len: usize) {
    if pool >= POOL_COUNT {
        assert_eq!(r, Err(FortunaError::PoolIndex { pool }));
    } else if len == 0 || len > MAX_EVENT_LEN {
        assert_eq!(r, Err(FortunaError::EventLength { len }));
    } else {
        assert_eq!(r, Ok(()));
    }
}

fuzz_target!(|ops: Vec<Op>| {
    NOW_MS.store(0, Ordering::Relaxed);
    let mut aes = Generator::new();
    let mut chacha = Generator::<ChaCha20Prf>::with_prf();
    let mut acc = Accumulator::new(now as fn() -> Duration);
    let mut fortuna: Option<AnyFortuna> = None;
    let mut budget = BIG_BUDGET;
    for op in ops.into_iter().take(64) {
        match op {
            Op::GenReseed { chacha: c, seed } => {
                if c {
                    chacha.reseed(&seed)
                } else {
                    aes.reseed(&seed)
                }
            }
            Op::GenRead { chacha: c, len } => {
                let n = read_len(len, &mut budget);
                let seeded = if c {
                    chacha.is_seeded()
                } else {
                    aes.is_seeded()
                };
                let r = with_buf(n, |out| {
                    if c {
                        chacha.pseudo_random_data(out)
                    } else {
                        aes.pseudo_random_data(out)
                    }
                });
                if n > MAX_REQUEST {
                    assert_eq!(r, Err(FortunaError::RequestTooLarge { requested: n }));
                } else if !seeded {
                    assert_eq!(r, Err(FortunaError::NotSeeded));
                } else {
                    assert_eq!(r, Ok(()));
                }
            }
            Op::AccEvent { source, pool, data } => {
                let before = acc.pool_len(pool as usize);
                let r = acc.add_random_event(source, pool as usize, &data);
                check_event(r, pool as usize, data.len());
                if r.is_err() {
                    assert_eq!(
                        acc.pool_len(pool as usize),
                        before,
                        "nothing appended on error"
                    );
                }
            }
            Op::AccReseed { chacha: c } => {
                let due = acc.reseed_due();
                let r = if c {
                    acc.reseed_if_due(&mut chacha)
                } else {
                    acc.reseed_if_due(&mut aes)
                };
                assert_eq!(r.is_some(), due);
                if r.is_some() {
                    assert_eq!(acc.pool_len(0), Some(0));
                }
            }
            Op::Time { forward, ms } => {
                let t = NOW_MS.load(Ordering::Relaxed);
                let t = if forward {
                    t + u64::from(ms)
                } else {
                    t.saturating_sub(u64::from(ms))
                };
                NOW_MS.store(t, Ordering::Relaxed);
            }
            Op::NewFortuna {
                concurrent,
                chacha: c,
                seed,
            } => {
                let mode = if concurrent {
                    ReadMode::Concurrent
                } else {
                    ReadMode::Locked
                };
                let clock = now as fn() -> Duration;
                let r = if c {
                    Fortuna::<ChaCha20Prf>::from_seed(mode, &seed, clock).map(AnyFortuna::ChaCha)
                } else {
                    Fortuna::from_seed(mode, &seed, clock).map(AnyFortuna::Aes)
                };
                match r {
                    Ok(f) => {
                        assert!(seed.len() >= MIN_SEED_LEN);
                        fortuna = Some(f);
                    }
                    Err(e) => {
                        assert!(seed.len() < MIN_SEED_LEN);
                        assert_eq!(e, FortunaError::SeedTooShort { len: seed.len() });
                    }
                }
            }
            Op::Fill { len, big } => {
                // Just over 2^20 (split into two pieces) while the budget lasts, else small.
                let big_n = MAX_REQUEST + usize::from(len & 0x1FF);
                let n = if big && big_n <= budget {
                    budget -= big_n;
                    big_n
                } else {
                    usize::from(len & 0x1FFF)
                };
                with_buf(n, |out| match &fortuna {
                    Some(AnyFortuna::Aes(f)) => f.fill_bytes(out),
                    Some(AnyFortuna::ChaCha(f)) => f.fill_bytes(out),
                    None => {}
                });
            }
            Op::Event { source, pool, data } => {
                let r = match &fortuna {
                    Some(AnyFortuna::Aes(f)) => f.add_random_event(source, pool as usize, &data),
                    Some(AnyFortuna::ChaCha(f)) => f.add_random_event(source, pool as usize, &data),
                    None => continue,
                };
                check_event(r, pool as usize, data.len());
            }
            Op::Reseed { seed } => match &fortuna {
                Some(AnyFortuna::Aes(f)) => f.reseed(&seed),
                Some(AnyFortuna::ChaCha(f)) => f.reseed(&seed),
                None => {}
            },
        }
    }
});
