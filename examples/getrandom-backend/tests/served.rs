//! The program's getrandom calls, uuid's and its own through getrandom 0.3 and 0.4, reach the
//! pools (`served` counts them), and after the pools' seeding they make no `getrandom` system
//! call: with the call denied to the drawing thread (a seccomp filter), 2,000 uuids still
//! succeed. The binary itself (`src/main.rs`, which names scalrand only in its macro line)
//! links and prints ids.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

scalrand::getrandom_backend!();

use scalrand::getrandom_backend::served;

#[test]
fn uuid_and_both_getrandom_versions_reach_the_pools() {
    let before = served();
    let ids: std::collections::HashSet<uuid::Uuid> =
        (0..100).map(|_| uuid::Uuid::new_v4()).collect();
    assert_eq!(ids.len(), 100);
    let after_uuid = served();
    assert!(after_uuid - before >= 100, "{} of 100", after_uuid - before);
    let mut a = [0u8; 32];
    getrandom::fill(&mut a).unwrap();
    let mut b = [0u8; 32];
    getrandom03::fill(&mut b).unwrap();
    assert_ne!(a, b);
    assert!(served() - after_uuid >= 2);
}

/// Once the pools are seeded, 2,000 uuids and a getrandom 0.3 and 0.4 call each make no
/// `getrandom` system call: the thread that draws them has the call (and `open`) denied.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn no_system_call_after_seeding() {
    // Seeds the pools (and builds them: sysfs is read here, before `open` is denied).
    let _ = uuid::Uuid::new_v4();
    // std's hash keys come from the system call too, once per thread: taken before the denial.
    let mut ids = std::collections::HashSet::new();
    let before = served();
    // This test's thread only (no TSYNC): the harness's other threads keep the call.
    scalrand_testkit::seccomp::deny_entropy();
    for _ in 0..2000 {
        ids.insert(uuid::Uuid::new_v4());
    }
    assert_eq!(ids.len(), 2000);
    getrandom::fill(&mut [0u8; 16]).expect("getrandom 0.4 made a system call");
    getrandom03::fill(&mut [0u8; 16]).expect("getrandom 0.3 made a system call");
    assert!(served() - before >= 2002);
}

/// The program links and prints a v4 id per line.
#[test]
fn the_one_line_program_prints_ids() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scalrand-example-getrandom-backend"))
        .arg("3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<uuid::Uuid> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|u| u.get_version_num() == 4));
}
