//! rand 0.9 on scalrand's generators (feature `rand_core_09`: rand_core 0.9's traits): a
//! day-one program (`random_range`, `random`, `random_bool`, `SliceRandom::shuffle`,
//! `IndexedRandom::choose`, distributions, `fill`) on every generator, the seeded generators'
//! streams held against an independent implementation, and rand 0.9's own doctest snippets
//! that use `rand::rng()`, with `scalrand::rng()` in its place and nothing else changed (each
//! cites where it is from).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use rand09::distr::weighted::WeightedIndex;
use rand09::distr::{Alphanumeric, Bernoulli, Distribution, StandardUniform, Uniform};
use rand09::seq::{IndexedRandom, IteratorRandom, SliceRandom};
use rand09::{CryptoRng, Rng, RngCore, SeedableRng, TryCryptoRng, TryRngCore};
use scalrand::fastprng::{
    PerCpu, WyRand, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar,
};
#[cfg(feature = "fortuna")]
use scalrand::pool::fortuna::{Fortuna, ReadMode};
use scalrand::pool::numa::{NodePools, Topology};

/// The program a rand 0.9 user writes on day one, on `rng`; checks what can be checked
/// without knowing the stream.
fn day_one<R: Rng + ?Sized>(rng: &mut R) {
    let die: u8 = rng.random_range(1..=6);
    assert!((1..=6).contains(&die));
    let x: f64 = rng.random_range(-1.5..2.5);
    assert!((-1.5..2.5).contains(&x));
    let n: u64 = rng.random_range(..1_000_003);
    assert!(n < 1_000_003);
    let _: (u32, bool, char) = rng.random();
    assert!(!rng.random_bool(0.0) && rng.random_bool(1.0));
    let _ = rng.random_ratio(2, 3);
    let mut deck: Vec<u16> = (0..52).collect();
    deck.shuffle(rng);
    assert_ne!(
        deck,
        (0..52).collect::<Vec<_>>(),
        "52 cards stayed in order"
    );
    let mut sorted = deck.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..52).collect::<Vec<_>>());
    assert!(deck.choose(rng).is_some());
    assert_eq!(deck.choose_multiple(rng, 5).count(), 5);
    assert!((0..10).choose(rng).is_some());
    let hits = (0..2000)
        .filter(|_| Bernoulli::new(0.5).unwrap().sample(rng))
        .count();
    assert!((800..1200).contains(&hits), "{hits} of 2000");
    let w = WeightedIndex::new([1, 0, 3]).unwrap();
    assert!((0..100).all(|_| w.sample(rng) != 1));
    let u = Uniform::new(10u32, 15).unwrap();
    assert!(
        (0..100)
            .map(|_| u.sample(rng))
            .all(|v| (10..15).contains(&v))
    );
    let s: String = rng
        .sample_iter(Alphanumeric)
        .take(16)
        .map(char::from)
        .collect();
    assert_eq!(s.len(), 16);
    let f: f32 = rng.sample(StandardUniform);
    assert!((0.0..1.0).contains(&f));
    let mut bytes = [0u8; 64];
    rng.fill(&mut bytes[..]);
    assert_ne!(bytes, [0u8; 64]);
}

fn assert_crypto<R: CryptoRng + TryCryptoRng + ?Sized>(_: &R) {}

#[test]
fn secure_rng() {
    let mut rng = scalrand::rng();
    assert_crypto(&rng);
    day_one(&mut rng);
    day_one(&mut scalrand::rng());
    fn by_value<R: Rng>(mut rng: R) -> u32 {
        rng.random_range(0..10)
    }
    assert!(by_value(scalrand::rng()) < 10);
    // `TryRngCore`, rand_core's blanket impl (error `Infallible`).
    let mut b = [0u8; 32];
    TryRngCore::try_fill_bytes(&mut rng, &mut b).unwrap();
    assert_ne!(b, [0; 32]);
}

#[test]
fn node_pools_and_fortuna() {
    let pools = NodePools::new(Topology::from_nodes(vec![vec![0, 1], vec![2, 3]])).unwrap();
    assert_crypto(&&pools);
    day_one(&mut &pools);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| day_one(&mut &pools));
        }
    });
    #[cfg(feature = "fortuna")]
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let mut f = Fortuna::with_seed(mode, &[0x42; 32]).unwrap();
        assert_crypto(&&f);
        assert_crypto(&f);
        day_one(&mut &f);
        day_one(&mut f);
    }
}

#[test]
fn fastprng_generators() {
    day_one(&mut <Xoroshiro128PlusPlus as SeedableRng>::seed_from_u64(1));
    day_one(&mut <Xoroshiro128StarStar as SeedableRng>::seed_from_u64(2));
    day_one(&mut <Xoroshiro128Plus as SeedableRng>::seed_from_u64(3));
    day_one(&mut <WyRand as SeedableRng>::seed_from_u64(4));
    // rand 0.9's `from_rng` (seed bytes from another generator).
    day_one(&mut <Xoroshiro128PlusPlus as SeedableRng>::from_rng(
        &mut scalrand::rng(),
    ));
    let p = PerCpu::with_cpus(<Xoroshiro128PlusPlus as SeedableRng>::seed_from_u64(7), 4).unwrap();
    day_one(&mut &p);
    let mut owned = PerCpu::with_cpus(<WyRand as SeedableRng>::seed_from_u64(8), 2).unwrap();
    day_one(&mut owned);
}

/// rand 0.9's `SeedableRng` gives the streams of rand_xoshiro (an independent
/// implementation, here the rand_core 0.10 one): the same seed, the same words, and rand
/// 0.10's `seed_from_u64` expansion (SplitMix64).
#[test]
fn seeded_streams_are_rand_xoshiros() {
    use rand_core::Rng as _;
    macro_rules! same {
        ($ours:ty, $theirs:ty) => {{
            let seed: [u8; 16] = *b"scalrand-rand-09";
            let mut a = <$ours as SeedableRng>::from_seed(seed);
            let mut b = <$theirs as rand_core::SeedableRng>::from_seed(seed);
            for _ in 0..100 {
                assert_eq!(RngCore::next_u64(&mut a), b.next_u64());
            }
            let mut a = <$ours as SeedableRng>::seed_from_u64(42);
            let mut b = <$theirs as rand_core::SeedableRng>::seed_from_u64(42);
            let (mut fa, mut fb) = ([0u8; 37], [0u8; 37]);
            RngCore::fill_bytes(&mut a, &mut fa);
            b.fill_bytes(&mut fb);
            assert_eq!(fa, fb);
        }};
    }
    same!(Xoroshiro128PlusPlus, rand_xoshiro::Xoroshiro128PlusPlus);
    same!(Xoroshiro128StarStar, rand_xoshiro::Xoroshiro128StarStar);
    same!(Xoroshiro128Plus, rand_xoshiro::Xoroshiro128Plus);
}

// rand 0.9's own doctests that use `rand::rng()`, with `scalrand::rng()` in its place.

/// src/rng.rs, `Rng` (the trait's example) and `Rng::random` (both examples).
#[test]
fn doc_random() {
    fn foo<R: Rng + ?Sized>(rng: &mut R) -> f32 {
        rng.random()
    }
    let _v = foo(&mut scalrand::rng());

    let mut rng = scalrand::rng();
    let x: u32 = rng.random();
    println!("{}", x);
    println!("{:?}", rng.random::<(f64, bool)>());

    let mut rng = scalrand::rng();
    let _tuple: (u8, i32, char) = rng.random(); // arbitrary tuple support

    let _arr1: [f32; 32] = rng.random(); // array construction
    let mut arr2 = [0u8; 128];
    rng.fill(&mut arr2); // array fill
}

/// src/rng.rs, `Rng::random_range`, `random_bool`, `random_ratio`, `fill`.
#[test]
fn doc_random_range_and_bools() {
    let mut rng = scalrand::rng();

    // Exclusive range
    let n: u32 = rng.random_range(..10);
    println!("{}", n);
    let m: f64 = rng.random_range(-40.0..1.3e5);
    println!("{}", m);

    // Inclusive range
    let n: u32 = rng.random_range(..=10);
    println!("{}", n);

    let mut rng = scalrand::rng();
    println!("{}", rng.random_bool(1.0 / 3.0));
    let mut rng = scalrand::rng();
    println!("{}", rng.random_ratio(2, 3));

    let mut arr = [0i8; 20];
    scalrand::rng().fill(&mut arr[..]);
}

/// src/rng.rs, `Rng::sample` and `Rng::sample_iter`.
#[test]
fn doc_sample_and_sample_iter() {
    let mut rng = scalrand::rng();
    let _x = rng.sample(Uniform::new(10u32, 15).unwrap());
    let _y = rng.sample::<u16, _>(Uniform::new(10, 15).unwrap());

    let mut rng = scalrand::rng();

    // Vec of 16 x f32:
    let _v: Vec<f32> = (&mut rng).sample_iter(StandardUniform).take(16).collect();

    // String:
    let _s: String = (&mut rng)
        .sample_iter(Alphanumeric)
        .take(7)
        .map(char::from)
        .collect();

    // Combined values
    println!(
        "{:?}",
        (&mut rng)
            .sample_iter(StandardUniform)
            .take(5)
            .collect::<Vec<(f64, bool)>>()
    );

    // Dice-rolling:
    let die_range = Uniform::new_inclusive(1, 6).unwrap();
    let mut roll_die = (&mut rng).sample_iter(die_range);
    while roll_die.next().unwrap() != 6 {
        println!("Not a 6; rolling again!");
    }
}

/// src/seq/slice.rs, `IndexedRandom::choose`, `choose_multiple`, `SliceRandom::shuffle`;
/// src/seq/iterator.rs, `IteratorRandom` and `IteratorRandom::choose`.
#[test]
fn doc_seq() {
    let choices = [1, 2, 4, 8, 16, 32];
    let mut rng = scalrand::rng();
    println!("{:?}", choices.choose(&mut rng));
    assert_eq!(choices[..0].choose(&mut rng), None);

    let mut rng = &mut scalrand::rng();
    let sample = "Hello, audience!".as_bytes();
    // collect the results into a vector:
    let _v: Vec<u8> = sample.choose_multiple(&mut rng, 3).cloned().collect();
    // store in a buffer:
    let mut buf = [0u8; 5];
    for (b, slot) in sample
        .choose_multiple(&mut rng, buf.len())
        .zip(buf.iter_mut())
    {
        *slot = *b;
    }

    let mut rng = scalrand::rng();
    let mut y = [1, 2, 3, 4, 5];
    println!("Unshuffled: {:?}", y);
    y.shuffle(&mut rng);
    println!("Shuffled:   {:?}", y);

    let faces = "😀😎😐😕😠😢";
    println!(
        "I am {}!",
        faces.chars().choose(&mut scalrand::rng()).unwrap()
    );

    let words = "Mary had a little lamb".split(' ');
    println!("{}", words.choose(&mut scalrand::rng()).unwrap());
}

/// src/distr/weighted/weighted_index.rs, `WeightedIndex`; src/distr/bernoulli.rs,
/// `Bernoulli`.
#[test]
#[allow(clippy::needless_borrows_for_generic_args)] // rand's snippet, as it is
fn doc_weighted_index_and_bernoulli() {
    let choices = ['a', 'b', 'c'];
    let weights = [2, 1, 1];
    let dist = WeightedIndex::new(&weights).unwrap();
    let mut rng = scalrand::rng();
    for _ in 0..100 {
        // 50% chance to print 'a', 25% chance to print 'b', 25% chance to print 'c'
        println!("{}", choices[dist.sample(&mut rng)]);
    }

    let items = [('a', 0.0), ('b', 3.0), ('c', 7.0)];
    let dist2 = WeightedIndex::new(items.iter().map(|item| item.1)).unwrap();
    for _ in 0..100 {
        // 0% chance to print 'a', 30% chance to print 'b', 70% chance to print 'c'
        println!("{}", items[dist2.sample(&mut rng)].0);
    }

    let d = Bernoulli::new(0.3).unwrap();
    let v = d.sample(&mut scalrand::rng());
    println!("{} is from a Bernoulli distribution", v);
}

/// The rand 0.9 section of `docs/MIGRATION.md`, kept compiling and passing here.
#[test]
fn migration_guide_snippet() {
    use rand::Rng;
    use rand::seq::{IndexedRandom, SliceRandom};
    use rand09 as rand;

    // before
    let mut rng = rand::rng();
    let die: u8 = rng.random_range(1..=6);
    assert!((1..=6).contains(&die));

    // after
    let mut rng = scalrand::rng();
    let die: u8 = rng.random_range(1..=6);
    let mut deck: Vec<u8> = (0..52).collect();
    deck.shuffle(&mut rng);
    let top = deck.choose(&mut rng);
    let token: u128 = scalrand::random();
    assert!((1..=6).contains(&die) && top.is_some());
    let _ = token;
}
