//! scalrand as getrandom's custom backend (feature `getrandom-backend`).
//!
//! Built with `--cfg getrandom_backend="custom"` (CI's `test` step runs this file so, in a
//! target directory of its own) and `scalrand::getrandom_backend!()`: getrandom 0.4's and 0.3's `fill` are served by the pools
//! (each call counted by `getrandom_backend::served`), the pools seed without calling back
//! into getrandom (a loop would overflow the stack or deadlock the first call), and a fork
//! child's getrandom bytes are its own. Without the cfg: the feature leaves getrandom's
//! backend alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

// The program's one line. This file is also built without the cfg (the workspace's `cargo
// test --all-features`), where the macro would refuse to build: hence the `cfg` here, which a
// program that always sets the cfg does not need.
#[cfg(getrandom_backend = "custom")]
scalrand::getrandom_backend!();

#[cfg(getrandom_backend = "custom")]
use scalrand::getrandom_backend::POOLS_FAILED;
use scalrand::getrandom_backend::{ACTIVE, served};
#[cfg(all(getrandom_backend = "custom", unix, not(miri)))]
use scalrand_testkit::fork::{in_child, libc_fork};

/// `n` requests through getrandom 0.4 and `n` through 0.3, 32 bytes each.
fn both_versions(n: usize) -> Vec<[u8; 32]> {
    let mut out = Vec::new();
    for _ in 0..n {
        let mut a = [0u8; 32];
        getrandom::fill(&mut a).unwrap();
        let mut b = [0u8; 32];
        getrandom03::fill(&mut b).unwrap();
        out.extend([a, b]);
    }
    out
}

#[cfg(getrandom_backend = "custom")]
#[test]
fn getrandom_03_and_04_are_served_by_the_pools() {
    const { assert!(ACTIVE) };
    let before = served();
    let got = both_versions(50);
    // Other tests of this binary may call getrandom meanwhile: at least ours were counted.
    assert!(served() - before >= 100, "{} of 100", served() - before);
    let distinct: std::collections::HashSet<_> = got.iter().collect();
    assert_eq!(distinct.len(), got.len(), "repeated output");
    assert!(!got.contains(&[0u8; 32]));
    // getrandom answers an empty request itself.
    getrandom::fill(&mut []).unwrap();
    // Short, odd and large requests.
    for len in [1usize, 31, 32, 33, 4096, 1 << 20] {
        let mut buf = vec![0u8; len];
        let before = served();
        getrandom::fill(&mut buf).unwrap();
        assert!(served() > before, "len {len} not served");
        if len >= 32 {
            assert!(
                buf.chunks(32).all(|c| c.iter().any(|&b| b != 0)),
                "len {len}"
            );
        }
    }
    // getrandom's integer helpers go through the same backend.
    let before = served();
    let (x, y) = (getrandom::u64().unwrap(), getrandom03::u64().unwrap());
    assert_ne!(x, y);
    assert!(served() - before >= 2);
}

/// A fork child's `getrandom::fill` comes from the pools (its count moves) and differs from
/// the parent's next bytes and from every other child's.
#[cfg(all(getrandom_backend = "custom", unix, not(miri)))]
#[test]
fn fork_children_get_their_own_bytes() {
    // The pools are keyed in the parent before any fork.
    both_versions(1);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..8 {
        let (child, child_served) = fork_and_fill(false);
        let child = child.expect("the child's getrandom::fill failed");
        assert!(
            child_served >= 1,
            "the child's getrandom did not reach the pools"
        );
        let mut parent = [0u8; 32];
        getrandom::fill(&mut parent).unwrap();
        assert_ne!(child, parent, "the child repeated the parent's next bytes");
        assert!(seen.insert(child), "two children got the same bytes");
        assert!(seen.insert(parent));
    }
}

/// A fork child whose OS entropy is denied (a seccomp filter, as a sandbox may) cannot rekey
/// the pools it inherited: its `getrandom::fill` fails closed with the pools' error code
/// rather than answer from the parent's keys, and the parent's pools are untouched.
#[cfg(all(
    getrandom_backend = "custom",
    target_os = "linux",
    target_arch = "x86_64"
))]
#[test]
fn a_child_denied_entropy_gets_the_pools_error() {
    both_versions(1);
    let (child, child_served) = fork_and_fill(true);
    assert_eq!(
        child,
        Err(Failure::Pools),
        "the child answered without fresh entropy"
    );
    assert!(child_served >= 1);
    let mut parent = [0u8; 32];
    getrandom::fill(&mut parent).unwrap();
}

/// How a child's `getrandom::fill` failed.
#[cfg(all(getrandom_backend = "custom", unix, not(miri)))]
#[derive(Debug, PartialEq)]
enum Failure {
    /// `getrandom::Error::new_custom(POOLS_FAILED)`.
    Pools,
    /// Any other error.
    Other,
}

/// Forks; the child (with its OS entropy denied first when `deny`) fills 32 bytes with
/// `getrandom::fill` and writes the outcome, then how many requests its own pools took
/// meanwhile, to a pipe. The child has 20 s (its alarm).
#[cfg(all(getrandom_backend = "custom", unix, not(miri)))]
fn fork_and_fill(deny: bool) -> (Result<[u8; 32], Failure>, u64) {
    // The child calls only `getrandom::fill` (the pools: lock-free or try-lock paths that never
    // wait on a lock another parent thread may hold, rekeyed from the OS's own call), an
    // atomic load, `write` and `_exit`; its alarm ends it if it hangs in `getrandom::fill`.
    let ((), msg) = in_child(
        libc_fork,
        || {
            if deny {
                #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
                scalrand_testkit::seccomp::deny_entropy();
            }
            let before = served();
            let mut msg = [0u8; 41];
            msg[0] = match getrandom::fill(&mut msg[1..33]) {
                Ok(()) => 0,
                Err(e) if e == getrandom::Error::new_custom(POOLS_FAILED) => 1,
                Err(_) => 2,
            };
            msg[33..].copy_from_slice(&(served() - before).to_le_bytes());
            msg
        },
        || (),
    );
    let msg: [u8; 41] = msg
        .expect("the child hung in getrandom::fill or died")
        .try_into()
        .unwrap();
    let served = u64::from_le_bytes(msg[33..].try_into().unwrap());
    let outcome = match msg[0] {
        0 => Ok(msg[1..33].try_into().unwrap()),
        1 => Err(Failure::Pools),
        _ => Err(Failure::Other),
    };
    (outcome, served)
}

/// The feature alone (no cfg) defines no backend: getrandom keeps its own, the pools take
/// none of its requests, and both still work.
#[cfg(not(getrandom_backend = "custom"))]
#[test]
fn without_the_cfg_getrandom_keeps_its_backend() {
    const { assert!(!ACTIVE) };
    let got = both_versions(4);
    assert_eq!(served(), 0);
    assert!(!got.contains(&[0u8; 32]));
    let mut key = [0u8; 32];
    scalrand::fill_bytes(&mut key);
    assert_ne!(key, [0u8; 32]);
    assert_eq!(served(), 0);
}
