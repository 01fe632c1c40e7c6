//! The node pools on a machine with many CPUs in several NUMA nodes: run inside the emulated
//! machines that `cargo xtask vm` boots (QEMU system emulation, the distribution's kernel), as
//! root, one test at a time (they take CPUs offline and pin threads).
//!
//! Every test is `#[ignore]`d on an ordinary host: it needs the machine's true layout, which
//! the guest's `/init` passes in the environment from the QEMU command line that built it:
//!
//! - `SCALRAND_GUEST_NODES`: the nodes' present CPUs, `/`-separated CPU lists in node order
//!   (`0-1/2-7/8-15/` has a fourth node with memory and no CPU);
//! - `SCALRAND_GUEST_RSEQ`: `on` or `off`, whether glibc registers rseq in this run
//!   (`GLIBC_TUNABLES=glibc.pthread.rseq=0` turns it off);
//! - `SCALRAND_GUEST_BREAK` (optional): `one-node` or `shuffle` hands the pools a wrong
//!   topology (one node of every CPU, or the detected nodes rotated by one) so that a run can
//!   show the routing checks fail when detection is broken.
//!
//! What they show: the topology read from sysfs equals the machine's, offline CPUs included
//! (hwloc, with the `hwloc` feature, lists the online ones only); a thread on each CPU is served by its own
//! node's pool and no other; small reads go through the restartable sequence exactly when
//! rseq is registered; CPUs brought online after the pools were built (and CPUs going offline
//! and back while threads read) are routed to their node; nothing repeats across CPUs and
//! fork children; a process confined to CPUs whose ids are all at or above its
//! `available_parallelism()` reads from the right node.
#![cfg(all(feature = "std", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code fails loudly

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::cpu::pin_to_set;
use scalrand_testkit::fork::{in_child_with_alarm, libc_fork};

const IN_GUEST: &str = "runs inside the emulated machines of `cargo xtask vm`";

/// Small reads per CPU in the routing check (each through the rseq path where it runs).
const SMALL_READS: usize = 64;
/// Large reads per CPU in the routing check (always the locked slots).
const LARGE_READS: usize = 4;

/// The machine's nodes as QEMU was told to build them.
fn machine_nodes() -> Vec<Vec<usize>> {
    let spec = std::env::var("SCALRAND_GUEST_NODES")
        .expect("SCALRAND_GUEST_NODES is unset: these tests run inside `cargo xtask vm`");
    spec.split('/')
        .map(|list| Topology::parse_cpulist(list).unwrap())
        .collect()
}

/// The node that owns `cpu` on this machine.
fn owner(nodes: &[Vec<usize>], cpu: usize) -> usize {
    nodes
        .iter()
        .position(|n| n.contains(&cpu))
        .unwrap_or_else(|| panic!("CPU {cpu} is in no node of the machine"))
}

/// Whether this run expects glibc's rseq registration.
fn rseq_expected() -> bool {
    match std::env::var("SCALRAND_GUEST_RSEQ").as_deref() {
        Ok("on") => true,
        Ok("off") => false,
        other => panic!("SCALRAND_GUEST_RSEQ must be on or off, not {other:?}"),
    }
}

/// The topology the pools are built from: the detected one, or a broken one on request.
fn pools_topology() -> Topology {
    let detected = Topology::detect();
    match std::env::var("SCALRAND_GUEST_BREAK").as_deref() {
        Err(_) => detected,
        Ok("one-node") => {
            Topology::from_nodes(vec![detected.nodes().iter().flatten().copied().collect()])
        }
        Ok("shuffle") => {
            let mut nodes = detected.nodes().to_vec();
            nodes.rotate_left(1);
            Topology::from_nodes(nodes)
        }
        Ok(other) => panic!("SCALRAND_GUEST_BREAK must be one-node or shuffle, not {other:?}"),
    }
}

fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    Topology::parse_cpulist(&text).unwrap()
}

/// The machine's nodes as hwloc lists them: every node (with or without CPUs), but only the
/// CPUs that are online now.
#[cfg(feature = "hwloc")]
fn online_only(nodes: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let online = online_cpus();
    nodes
        .iter()
        .map(|n| n.iter().copied().filter(|c| online.contains(c)).collect())
        .collect()
}

fn set_online(cpu: usize, online: bool) {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/online");
    std::fs::write(&path, if online { "1" } else { "0" })
        .unwrap_or_else(|e| panic!("writing {path}: {e}"));
}

/// Brings its CPUs online when dropped (a test that takes CPUs offline leaves with them back,
/// pass or fail).
struct OnlineAgain(Vec<usize>);

impl Drop for OnlineAgain {
    fn drop(&mut self) {
        let online = online_cpus();
        for &c in self.0.iter().filter(|c| !online.contains(c)) {
            let _ = std::fs::write(format!("/sys/devices/system/cpu/cpu{c}/online"), "1");
        }
    }
}

/// Pins the calling thread to `cpus` (any of them), failing the test if the kernel refuses.
fn pin(cpus: &[usize]) {
    assert!(pin_to_set(cpus), "cannot pin to CPUs {cpus:?}");
}

fn reads_per_node(p: &NodePools) -> Vec<usize> {
    p.node_stats().iter().map(|n| n.reads).collect()
}

/// On a thread pinned to `cpu`: [`SMALL_READS`] small and [`LARGE_READS`] large reads. Returns
/// the node that served them (`Err` naming the nodes when more than one did, or the wrong
/// one), and the small reads the rseq path served.
fn route(p: &NodePools, nodes: &[Vec<usize>], cpu: usize) -> Result<usize, String> {
    let before = reads_per_node(p);
    let rseq_before = p.__rseq_reads();
    let seen = std::thread::scope(|s| {
        s.spawn(|| {
            pin(&[cpu]);
            let seen = scalrand_os::cpu::current();
            let mut small = [0u8; 32];
            let mut large = [0u8; 4096];
            for _ in 0..SMALL_READS {
                p.fill_bytes(&mut small);
            }
            for _ in 0..LARGE_READS {
                p.fill_bytes(&mut large);
            }
            seen
        })
        .join()
        .unwrap()
    });
    assert_eq!(seen, Some(cpu), "a thread pinned to CPU {cpu}");
    let delta: Vec<usize> = reads_per_node(p)
        .iter()
        .zip(&before)
        .map(|(a, b)| a - b)
        .collect();
    let rseq = p.__rseq_reads().unwrap_or(0) - rseq_before.unwrap_or(0);
    let want = owner(nodes, cpu);
    let mut expected = vec![0; nodes.len()];
    expected[want] = SMALL_READS + LARGE_READS;
    if delta != expected {
        return Err(format!(
            "CPU {cpu} (node {want}): reads per node {delta:?}, want {expected:?}"
        ));
    }
    let rseq_want = if rseq_expected() { SMALL_READS } else { 0 };
    if rseq != rseq_want {
        return Err(format!(
            "CPU {cpu}: {rseq} of {SMALL_READS} small reads took the restartable sequence, \
             want {rseq_want}"
        ));
    }
    Ok(want)
}

/// Routes a read on every CPU in `cpus`; panics naming every CPU that was misrouted.
fn route_all(p: &NodePools, nodes: &[Vec<usize>], cpus: &[usize]) {
    let errors: Vec<String> = cpus
        .iter()
        .filter_map(|&c| route(p, nodes, c).err())
        .collect();
    assert!(
        errors.is_empty(),
        "{} of {} CPUs misrouted:\n{}",
        errors.len(),
        cpus.len(),
        errors.join("\n")
    );
}

#[test]
#[ignore = "runs inside the emulated machines of `cargo xtask vm`"]
fn detected_topology_is_the_machines() {
    let nodes = machine_nodes();
    assert_eq!(Topology::from_sysfs().unwrap().nodes(), &nodes[..], "sysfs");
    assert_eq!(Topology::detect().nodes(), &nodes[..], "detect");
    #[cfg(feature = "hwloc")]
    assert_eq!(
        Topology::from_hwloc().unwrap().nodes(),
        online_only(&nodes),
        "hwloc"
    );
    let highest = nodes.iter().flatten().max().copied().unwrap();
    assert!(
        scalrand_os::cpu::possible() > highest,
        "cpu::possible() = {} must cover CPU {highest}",
        scalrand_os::cpu::possible()
    );
    assert_eq!(
        scalrand_os::cpu::rseq_cpu().is_some(),
        rseq_expected(),
        "glibc's rseq registration ({IN_GUEST})"
    );
}

#[test]
#[ignore = "runs inside the emulated machines of `cargo xtask vm`"]
fn every_cpu_reads_from_its_own_node() {
    let nodes = machine_nodes();
    let p = NodePools::new(pools_topology()).unwrap();
    assert!(p.keys_wipe_on_fork(), "a real kernel wipes on fork");
    route_all(&p, &nodes, &online_cpus());
}

/// CPUs offline when the pools are built (booted with `maxcpus=`, or taken offline here) come
/// online while other threads read, and are routed to their node; others go offline and come
/// back under the readers.
#[test]
#[ignore = "runs inside the emulated machines of `cargo xtask vm`"]
fn cpus_coming_online_later_read_from_their_node() {
    let nodes = machine_nodes();
    let present: Vec<usize> = nodes.iter().flatten().copied().collect();
    // Every CPU comes back online however the test ends, so the tests after it find the
    // whole machine.
    let _online_again = OnlineAgain(present.clone());
    // Take every second CPU of each node offline (never CPU 0), on top of any the machine
    // booted without, so that the pools are built with holes in the CPU ids.
    for n in &nodes {
        for &c in n.iter().skip(1).step_by(2) {
            if c != 0 && online_cpus().contains(&c) {
                set_online(c, false);
            }
        }
    }
    let offline: Vec<usize> = present
        .iter()
        .copied()
        .filter(|c| !online_cpus().contains(c))
        .collect();
    assert!(!offline.is_empty(), "no CPU is offline: nothing to test");
    // Detection sees the offline CPUs in their nodes. A mismatch is reported with the
    // routing failures it causes, below.
    let mut errors = Vec::new();
    let sysfs = Topology::from_sysfs().unwrap();
    if sysfs.nodes() != &nodes[..] {
        errors.push(format!(
            "sysfs detection with CPUs {offline:?} offline: {:?}, want {nodes:?}",
            sysfs.nodes()
        ));
    }
    #[cfg(feature = "hwloc")]
    assert_eq!(
        Topology::from_hwloc().unwrap().nodes(),
        online_only(&nodes),
        "hwloc"
    );
    // `p` serves the readers; `q`, built at the same time, only the routing probes, so that
    // its per-node counters tell which node served each probe.
    let p = NodePools::new(pools_topology()).unwrap();
    let q = NodePools::new(pools_topology()).unwrap();
    let stop = AtomicBool::new(false);
    let outputs = std::thread::scope(|s| {
        let readers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut seen = Vec::new();
                    let mut b = [0u8; 16];
                    while !stop.load(Ordering::Relaxed) {
                        p.fill_bytes(&mut b);
                        seen.push(b);
                    }
                    seen
                })
            })
            .collect();
        // Bring every offline CPU online under the readers, then route a read on it.
        let mut misrouted = 0;
        for &c in &offline {
            set_online(c, true);
            if let Err(e) = route(&q, &nodes, c) {
                errors.push(e);
                misrouted += 1;
            }
        }
        // CPUs going offline and back while the readers run.
        for &c in offline.iter().take(3) {
            set_online(c, false);
            set_online(c, true);
        }
        stop.store(true, Ordering::Relaxed);
        let outputs: Vec<[u8; 16]> = readers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect();
        assert!(
            errors.is_empty(),
            "{misrouted} of {} CPUs that came online later misrouted:\n{}",
            offline.len(),
            errors.join("\n")
        );
        outputs
    });
    let distinct: HashSet<_> = outputs.iter().collect();
    assert_eq!(distinct.len(), outputs.len(), "a 16-byte output repeated");
    // Every CPU of the machine online again, and each one routed, in both instances.
    route_all(&q, &nodes, &present);
    route_all(&p, &nodes, &present);
}

/// 16-byte outputs of threads on every CPU and of fork children on several CPUs: none
/// repeats.
#[test]
#[ignore = "runs inside the emulated machines of `cargo xtask vm`"]
fn nothing_repeats_across_cpus_and_forks() {
    const PER: usize = 512;
    let p = NodePools::new(pools_topology()).unwrap();
    let cpus = online_cpus();
    let mut all: Vec<[u8; 16]> = std::thread::scope(|s| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&c| {
                let p = &p;
                s.spawn(move || {
                    pin(&[c]);
                    let mut v = vec![[0u8; 16]; PER];
                    for b in &mut v {
                        p.fill_bytes(b);
                    }
                    v
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    // Children forked from this (now single-threaded) process, each on another CPU, after
    // every slot has been used: each must rekey, not replay the parent's slots.
    for &c in cpus.iter().step_by(cpus.len().div_ceil(4).max(1)) {
        // No other thread runs (the scope above joined them all), so the child may allocate.
        // No alarm: TCG is slow, and the VM runner's timeout bounds the whole guest.
        let ((), got) = in_child_with_alarm(
            libc_fork,
            0,
            || {
                pin(&[c]);
                let mut buf = vec![0u8; 16 * PER];
                for chunk in buf.chunks_exact_mut(16) {
                    p.fill_bytes(chunk);
                }
                buf
            },
            || (),
        );
        let got = got.unwrap_or_else(|| panic!("the child on CPU {c} failed"));
        assert_eq!(got.len(), 16 * PER, "child on CPU {c}");
        all.extend(
            got.chunks_exact(16)
                .map(|c| <[u8; 16]>::try_from(c).unwrap()),
        );
        // The parent reads on after the fork too.
        let mut b = [0u8; 16];
        for _ in 0..PER {
            p.fill_bytes(&mut b);
            all.push(b);
        }
    }
    let distinct: HashSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "a 16-byte output repeated");
}

/// A process confined by its affinity, as a container's cpuset confines it, to the last
/// node's CPUs, whose ids are all at or above its `available_parallelism()`: pools built in
/// it see the whole machine and serve it from the last node.
#[test]
#[ignore = "runs inside the emulated machines of `cargo xtask vm`"]
fn a_process_confined_to_high_cpus_reads_from_their_node() {
    let nodes = machine_nodes();
    let last = nodes.iter().rposition(|n| !n.is_empty()).unwrap();
    let cpus: Vec<usize> = nodes[last]
        .iter()
        .copied()
        .filter(|c| online_cpus().contains(c))
        .collect();
    // The child pins itself, runs the checks and reports whether they passed; the parent runs
    // no other thread now, so the child may allocate and spawn threads. No alarm, as in
    // `nothing_repeats_across_cpus_and_forks`.
    let ((), passed) = in_child_with_alarm(
        libc_fork,
        0,
        || {
            let r = std::panic::catch_unwind(|| {
                pin(&cpus);
                let allowed = std::thread::available_parallelism().unwrap().get();
                assert_eq!(allowed, cpus.len());
                assert!(
                    cpus.iter().all(|&c| c >= allowed),
                    "CPUs {cpus:?}, available_parallelism {allowed}"
                );
                let p = NodePools::new(pools_topology()).unwrap();
                assert_eq!(p.topology().nodes(), &nodes[..]);
                // Threads inherit the confinement; each lands on one of the node's CPUs.
                std::thread::scope(|s| {
                    for _ in 0..cpus.len() {
                        s.spawn(|| {
                            let c = scalrand_os::cpu::current().unwrap();
                            assert!(cpus.contains(&c), "CPU {c} outside {cpus:?}");
                            let mut b = [0u8; 32];
                            for _ in 0..64 {
                                p.fill_bytes(&mut b);
                            }
                        });
                    }
                });
                let reads = reads_per_node(&p);
                let total: usize = reads.iter().sum();
                assert_eq!(
                    reads[last], total,
                    "every read of the confined process from node {last}: {reads:?}"
                );
                for &c in &cpus {
                    route(&p, &nodes, c).unwrap();
                }
            });
            [u8::from(r.is_ok())]
        },
        || (),
    );
    assert_eq!(
        passed.as_deref(),
        Some(&[1u8][..]),
        "the confined process failed (its panic is above)"
    );
}
