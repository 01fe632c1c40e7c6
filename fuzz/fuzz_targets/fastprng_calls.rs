//! Arbitrary seeds and call sequences on the xoroshiro128 generators and `PerCpu`: nothing
//! panics, `fill_bytes` agrees with `next_u64` output order, and `PerCpu::with_cpu` rejects
//! out-of-range CPUs with a typed error.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rand_core::{Rng, SeedableRng};
use scalrand_fastprng::{
    Error, PerCpu, Xoroshiro128, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar,
};

#[derive(Arbitrary, Debug)]
enum Call {
    U32,
    U64,
    Fill(u16),
    Jump,
    LongJump,
    WithCpu(u8),
    Shared(u16),
}

#[derive(Arbitrary, Debug)]
struct Input {
    variant: u8,
    seed: [u8; 16],
    state: (u64, u64),
    cpus: u8,
    calls: Vec<Call>,
}

fn run<R: Xoroshiro128 + SeedableRng<Seed = [u8; 16]> + Rng>(input: &Input) {
    // from_state: the only bad state is (0, 0).
    match R::from_state(input.state.0, input.state.1) {
        Ok(_) => assert!(input.state != (0, 0)),
        Err(e) => assert!(input.state == (0, 0) && e == Error::ZeroState),
    }
    let mut a = R::from_seed(input.seed);
    // `b` shadows `a` through next_u64 only, the reference order for every byte `a` yields.
    let mut b = a.clone();
    // Up to 64 slots: each costs one jump at construction, and more slots test nothing new.
    let cpus = usize::from(input.cpus % 65);
    let per_cpu = PerCpu::with_cpus(a.clone(), cpus);
    if cpus == 0 {
        assert_eq!(per_cpu.as_ref().err(), Some(&Error::NoSlots));
    }
    for call in input.calls.iter().take(256) {
        match call {
            Call::U32 => assert_eq!(a.next_u32(), b.next_u32()),
            Call::U64 => assert_eq!(a.next_u64(), b.next_raw()),
            Call::Fill(n) => {
                // Up to 1 KiB: every tail length and many whole words.
                let n = usize::from(*n % 1024);
                let mut buf = [0u8; 1024];
                a.fill_bytes(&mut buf[..n]);
                for (i, chunk) in buf[..n].chunks(8).enumerate() {
                    let w = b.next_raw().to_le_bytes();
                    assert_eq!(chunk, &w[..chunk.len()], "word {i} of a {n}-byte fill");
                }
            }
            Call::Jump => {
                a.jump();
                b.jump();
            }
            Call::LongJump => {
                a.long_jump();
                b.long_jump();
            }
            Call::WithCpu(c) => {
                if let Ok(p) = &per_cpu {
                    let c = usize::from(*c);
                    match p.with_cpu(c, |r| r.next_raw()) {
                        Ok(_) => assert!(c < p.cpus()),
                        Err(e) => assert_eq!(
                            e,
                            Error::CpuOutOfRange {
                                cpu: c,
                                cpus: p.cpus()
                            }
                        ),
                    }
                }
            }
            Call::Shared(n) => {
                if let Ok(p) = &per_cpu {
                    let mut buf = [0u8; 512];
                    p.fill_bytes(&mut buf[..usize::from(*n % 512)]);
                    let _ = p.next_u64();
                    let _ = p.next_u32();
                }
            }
        }
    }
}

fuzz_target!(|input: Input| {
    match input.variant % 3 {
        0 => run::<Xoroshiro128Plus>(&input),
        1 => run::<Xoroshiro128PlusPlus>(&input),
        _ => run::<Xoroshiro128StarStar>(&input),
    }
});
