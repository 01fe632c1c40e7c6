//! Which CPUs belong to which NUMA node.
//!
//! Andi Kleen's per-node pools ("Make /dev/urandom scalable", LKML 2015-10-06) index pools
//! with `numa_node_id()`; user space has no such call, so the pools carry a [`Topology`]: a
//! list of nodes, each a list of CPU numbers (the kernel's logical CPU ids, the ones
//! `sched_getcpu` returns).
//!
//! Sources:
//! - [`Topology::from_nodes`]: explicit, so tests and users can model 2-, 4- and 8-node
//!   machines on any box;
//! - [`Topology::single_node`]: one node of CPUs `0..n`;
//! - [`Topology::from_sysfs`] (`std`, Linux): `/sys/devices/system/node/node*/cpulist`;
//! - [`Topology::from_hwloc`] and [`Topology::from_hwloc_synthetic`] (`hwloc` feature):
//!   hwloc's view of this machine, or one of its synthetic topologies such as
//!   `"node:4 core:4 pu:1"`;
//! - [`Topology::detect`] (`std`): sysfs, else one node of all CPUs.
//!
//! A `Topology` is only a description; [`super::NodePools::new`] checks it (see the bad-input
//! table in [`super`]) and [`Topology::validate`] runs the same checks up front.

use alloc::vec::Vec;
use core::fmt;

/// The largest CPU number a topology may name: the per-CPU table is indexed by CPU number,
/// and Linux's `NR_CPUS` tops out at 8192.
pub const MAX_CPU_ID: usize = 8191;

/// The largest number of nodes a topology may have (Linux's `MAX_NUMNODES` is 1024).
pub const MAX_NODES: usize = 1024;

/// An error in a [`Topology`] or in building [`super::NodePools`].
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NumaError {
    /// The topology has no CPU at all (no nodes, or only empty nodes).
    EmptyTopology,
    /// More than [`MAX_NODES`] nodes.
    TooManyNodes {
        /// How many nodes were given.
        nodes: usize,
    },
    /// A CPU number above [`MAX_CPU_ID`].
    CpuIdTooLarge {
        /// The offending CPU number.
        cpu: usize,
    },
    /// One CPU listed twice (in one node or in two).
    DuplicateCpu {
        /// The CPU number.
        cpu: usize,
        /// The first node that lists it.
        first_node: usize,
        /// The node that lists it again.
        second_node: usize,
    },
    /// The operating system's entropy source failed.
    Entropy(scalrand_os::EntropyError),
    /// A read asked for output before the pools were seeded with 128 bits (see
    /// [`super::NodePools::unseeded`]).
    NotSeeded,
    /// The topology source (sysfs or hwloc) could not be read or parsed.
    Source(&'static str),
    /// A read found a lock of the pools held for longer than a bounded wait (its own thread,
    /// interrupted by the signal handler that reads, may hold it) and has no operating system
    /// to take a key from instead (`no_std`). With `std` such a read takes its key from the OS.
    Busy,
}

impl fmt::Debug for NumaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for NumaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyTopology => f.write_str("the topology has no CPU"),
            Self::TooManyNodes { nodes } => {
                write!(f, "{nodes} nodes is more than the {MAX_NODES} supported")
            }
            Self::CpuIdTooLarge { cpu } => {
                write!(
                    f,
                    "CPU {cpu} is above the largest supported id {MAX_CPU_ID}"
                )
            }
            Self::DuplicateCpu {
                cpu,
                first_node,
                second_node,
            } => write!(
                f,
                "CPU {cpu} is listed twice: in node {first_node} and in node {second_node}"
            ),
            Self::Entropy(e) => write!(f, "{e}"),
            Self::NotSeeded => f.write_str("the pools have not been seeded with 128 bits yet"),
            Self::Source(what) => write!(f, "topology source failed: {what}"),
            Self::Busy => f.write_str(
                "a lock of the pools stayed held (a read from a signal handler?) and no OS \
                 entropy source is there to key the read instead",
            ),
        }
    }
}

impl core::error::Error for NumaError {}

impl From<scalrand_os::EntropyError> for NumaError {
    fn from(e: scalrand_os::EntropyError) -> Self {
        Self::Entropy(e)
    }
}

/// Which CPUs belong to which NUMA node: node `i` is `nodes()[i]`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Topology {
    nodes: Vec<Vec<usize>>,
}

/// A checked topology: the CPU → (node, slot) map the pools index.
#[derive(Debug)]
pub(crate) struct CpuMap {
    /// Indexed by CPU number; `u32::MAX` for a CPU outside the topology.
    pub(crate) slot_of_cpu: Vec<u32>,
    /// Node of each slot (slots are numbered node by node, CPUs in the given order).
    pub(crate) node_of_slot: Vec<u32>,
}

impl Topology {
    /// A topology with the given nodes: `nodes[i]` lists the CPUs of node `i`.
    ///
    /// Nothing is checked here (so this never fails); [`super::NodePools::new`] and
    /// [`Topology::validate`] reject an empty topology, a CPU listed twice and CPU numbers
    /// above [`MAX_CPU_ID`]. Empty nodes are allowed (memory-only nodes exist).
    pub fn from_nodes(nodes: Vec<Vec<usize>>) -> Self {
        Self { nodes }
    }

    /// One node holding CPUs `0..cpus`.
    pub fn single_node(cpus: usize) -> Self {
        Self {
            nodes: alloc::vec![(0..cpus).collect()],
        }
    }

    /// The nodes, each a list of CPU numbers.
    pub fn nodes(&self) -> &[Vec<usize>] {
        &self.nodes
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The node CPU `cpu` belongs to, if any.
    pub fn node_of(&self, cpu: usize) -> Option<usize> {
        self.nodes.iter().position(|n| n.contains(&cpu))
    }

    /// Checks the topology as [`super::NodePools::new`] does.
    ///
    /// # Errors
    /// [`NumaError::EmptyTopology`], [`NumaError::TooManyNodes`],
    /// [`NumaError::CpuIdTooLarge`] or [`NumaError::DuplicateCpu`].
    pub fn validate(&self) -> Result<(), NumaError> {
        self.cpu_map().map(|_| ())
    }

    pub(crate) fn cpu_map(&self) -> Result<CpuMap, NumaError> {
        if self.nodes.len() > MAX_NODES {
            return Err(NumaError::TooManyNodes {
                nodes: self.nodes.len(),
            });
        }
        let mut max_cpu = None;
        for &cpu in self.nodes.iter().flatten() {
            if cpu > MAX_CPU_ID {
                return Err(NumaError::CpuIdTooLarge { cpu });
            }
            max_cpu = max_cpu.max(Some(cpu));
        }
        let Some(max_cpu) = max_cpu else {
            return Err(NumaError::EmptyTopology);
        };
        let mut slot_of_cpu = alloc::vec![u32::MAX; max_cpu + 1];
        let mut node_of_slot = Vec::new();
        for (node, cpus) in self.nodes.iter().enumerate() {
            for &cpu in cpus {
                if slot_of_cpu[cpu] != u32::MAX {
                    let first = node_of_slot[slot_of_cpu[cpu] as usize] as usize;
                    return Err(NumaError::DuplicateCpu {
                        cpu,
                        first_node: first,
                        second_node: node,
                    });
                }
                // Both fit in u32: at most MAX_CPU_ID + 1 slots and MAX_NODES nodes.
                #[allow(clippy::cast_possible_truncation)]
                {
                    slot_of_cpu[cpu] = node_of_slot.len() as u32;
                    node_of_slot.push(node as u32);
                }
            }
        }
        Ok(CpuMap {
            slot_of_cpu,
            node_of_slot,
        })
    }

    /// Parses a Linux CPU list such as `"0-3,8,10-11"` (the format of sysfs `cpulist` files):
    /// comma-separated decimal CPU numbers and ranges `lo-hi`, ASCII whitespace (space, tab,
    /// line feed, form feed, carriage return) allowed around the list and around each number,
    /// empty entries (`"0,,1"`, a trailing comma) skipped. CPUs are listed in the text's order.
    ///
    /// # Errors
    /// [`NumaError::Source`] when the text is not a CPU list; [`NumaError::CpuIdTooLarge`]
    /// when it names a CPU above [`MAX_CPU_ID`] (checked before anything is allocated).
    pub fn parse_cpulist(text: &str) -> Result<Vec<usize>, NumaError> {
        let mut cpus = Vec::new();
        for part in text.as_bytes().trim_ascii().split(|&b| b == b',') {
            if part.is_empty() {
                continue;
            }
            let (lo, hi) = match part.iter().position(|&b| b == b'-') {
                Some(dash) => (parse_cpu(&part[..dash])?, parse_cpu(&part[dash + 1..])?),
                None => {
                    let c = parse_cpu(part)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(NumaError::Source("cpulist range runs backwards"));
            }
            for cpu in lo..=hi {
                cpus.push(cpu);
            }
        }
        Ok(cpus)
    }

    /// Reads the topology from Linux sysfs: one node per `/sys/devices/system/node/nodeN`,
    /// its CPUs those of its `cpulist` and of its `cpuM` links. Node numbers may have gaps;
    /// nodes are listed in ascending number, so node `i` here is the `i`-th node sysfs lists.
    ///
    /// `cpulist` prints `cpumask_of_node`, which x86 updates as CPUs go online and offline,
    /// so it names the node's *online* CPUs only; a `cpuM` link is made when a present CPU is
    /// registered and removed only when it is unregistered (Linux `drivers/base/node.c`,
    /// `register_cpu_under_node`), online or not. Reading both puts a CPU that is offline
    /// now (booted with `maxcpus=`, or taken offline through
    /// `/sys/devices/system/cpu/cpuM/online`) in its own node, so when it comes online its
    /// reads go to that node's pool rather than to the remap for CPUs outside the topology.
    /// A CPU that is not present (hot-added later) has neither.
    ///
    /// # Errors
    /// [`NumaError::Source`] when the directory is missing (no NUMA support, not Linux) or a
    /// file cannot be parsed.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn from_sysfs() -> Result<Self, NumaError> {
        Self::from_sysfs_dir(std::path::Path::new("/sys/devices/system/node"))
    }

    /// [`Topology::from_sysfs`] on another directory laid out like
    /// `/sys/devices/system/node` (for tests and containers).
    ///
    /// # Errors
    /// As [`Topology::from_sysfs`].
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn from_sysfs_dir(dir: &std::path::Path) -> Result<Self, NumaError> {
        let entries = std::fs::read_dir(dir)
            .map_err(|_| NumaError::Source("cannot read the node directory"))?;
        // (node number, its CPUs), kept in ascending node number as they are found.
        let mut numbered: Vec<(usize, Vec<usize>)> = Vec::new();
        for entry in entries.flatten() {
            let Some(num) = number_after(&entry.file_name(), "node") else {
                continue;
            };
            let path = entry.path();
            let text = std::fs::read_to_string(path.join("cpulist"))
                .map_err(|_| NumaError::Source("cannot read a node's cpulist"))?;
            // The node's CPUs once each and in ascending order: the list's and the links'.
            let mut cpus = CpuBits::new();
            for cpu in Self::parse_cpulist(&text)? {
                cpus.insert(cpu);
            }
            let links = std::fs::read_dir(&path)
                .map_err(|_| NumaError::Source("cannot read a node's directory"))?;
            for link in links.flatten() {
                let Some(cpu) = number_after(&link.file_name(), "cpu") else {
                    continue;
                };
                if cpu > MAX_CPU_ID {
                    return Err(NumaError::CpuIdTooLarge { cpu });
                }
                cpus.insert(cpu);
            }
            let at = numbered.partition_point(|(n, _)| *n < num);
            numbered.insert(at, (num, cpus.to_vec()));
        }
        if numbered.is_empty() {
            return Err(NumaError::Source("no node directories"));
        }
        let mut nodes = Vec::with_capacity(numbered.len());
        for (_, cpus) in numbered {
            nodes.push(cpus);
        }
        Ok(Self::from_nodes(nodes))
    }

    /// This machine's topology: [`Topology::from_sysfs`] when it gives a valid topology, else
    /// one node holding CPUs `0..n` for `n` the number of CPUs the OS reports.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn detect() -> Self {
        if let Ok(t) = Self::from_sysfs()
            && t.validate().is_ok()
        {
            return t;
        }
        Self::single_node(scalrand_os::cpu::possible().clamp(1, MAX_CPU_ID + 1))
    }

    /// This machine's topology as hwloc sees it: one node per hwloc `NUMANode` object, CPUs
    /// from its cpuset (OS numbering).
    ///
    /// hwloc lists a node's online CPUs only: a CPU that is offline when this runs is in no
    /// node, and if it comes online later its reads take the remap for CPUs outside the
    /// topology. [`Topology::from_sysfs`] (what [`Topology::detect`] uses) keeps such CPUs
    /// in their nodes.
    ///
    /// # Errors
    /// [`NumaError::Source`] when hwloc fails.
    #[cfg(feature = "hwloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hwloc")))]
    pub fn from_hwloc() -> Result<Self, NumaError> {
        let topo = hwlocality::Topology::new()
            .map_err(|_| NumaError::Source("hwloc could not load this machine's topology"))?;
        Ok(Self::from_hwloc_topology(&topo))
    }

    /// A topology from one of hwloc's synthetic descriptions, e.g. `"node:4 core:4 pu:1"`
    /// (4 nodes of 4 CPUs, CPUs numbered 0..16), so any box can model a NUMA machine.
    ///
    /// # Errors
    /// [`NumaError::Source`] when hwloc rejects the description.
    #[cfg(feature = "hwloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "hwloc")))]
    pub fn from_hwloc_synthetic(description: &str) -> Result<Self, NumaError> {
        let topo = hwlocality::Topology::builder()
            .from_synthetic(description)
            .map_err(|_| NumaError::Source("hwloc rejected the synthetic description"))?
            .build()
            .map_err(|_| NumaError::Source("hwloc could not build the synthetic topology"))?;
        Ok(Self::from_hwloc_topology(&topo))
    }

    #[cfg(feature = "hwloc")]
    fn from_hwloc_topology(topo: &hwlocality::Topology) -> Self {
        use hwlocality::object::types::ObjectType;
        let nodes = topo
            .objects_with_type(ObjectType::NUMANode)
            .map(|node| {
                node.cpuset()
                    .map(|set| set.iter_set().map(usize::from).collect::<Vec<usize>>())
                    .unwrap_or_default()
            })
            .collect();
        Self::from_nodes(nodes)
    }
}

/// The number after `prefix` in a directory entry's name (`node3` → 3, `cpu12` → 12); `None`
/// for any other name.
#[cfg(feature = "std")]
fn number_after(name: &std::ffi::OsStr, prefix: &str) -> Option<usize> {
    decimal(name.as_encoded_bytes().strip_prefix(prefix.as_bytes())?)
}

/// A set of CPU numbers `0..=MAX_CPU_ID`, one bit each: a node's CPUs gathered from its
/// `cpulist` and its links, once each, listed in ascending order.
#[cfg(feature = "std")]
struct CpuBits([u64; (MAX_CPU_ID + 1) / 64]);

// Every CPU number up to `MAX_CPU_ID` has its bit.
const _: () = assert!((MAX_CPU_ID + 1).is_multiple_of(64));

#[cfg(feature = "std")]
impl CpuBits {
    fn new() -> Self {
        Self([0; (MAX_CPU_ID + 1) / 64])
    }

    /// Adds `cpu` (at most [`MAX_CPU_ID`]: `parse_cpulist` and the caller check).
    fn insert(&mut self, cpu: usize) {
        debug_assert!(cpu <= MAX_CPU_ID);
        if let Some(word) = self.0.get_mut(cpu / 64) {
            *word |= 1 << (cpu % 64);
        }
    }

    fn to_vec(&self) -> Vec<usize> {
        let mut v = Vec::new();
        for (i, &word) in self.0.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                v.push(i * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        v
    }
}

/// One CPU number of a CPU list: decimal digits, with ASCII whitespace around them.
fn parse_cpu(s: &[u8]) -> Result<usize, NumaError> {
    let cpu = decimal(s.trim_ascii()).ok_or(NumaError::Source("cpulist entry is not a number"))?;
    if cpu > MAX_CPU_ID {
        return Err(NumaError::CpuIdTooLarge { cpu });
    }
    Ok(cpu)
}

/// A number written in decimal digits only (no sign, no blank); `None` for anything else,
/// an empty string, or a value above `usize::MAX`.
fn decimal(s: &[u8]) -> Option<usize> {
    if s.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn cpulist_parses() {
        assert_eq!(
            Topology::parse_cpulist("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(Topology::parse_cpulist("\n").unwrap(), Vec::<usize>::new());
        assert!(matches!(
            Topology::parse_cpulist("3-1"),
            Err(NumaError::Source(_))
        ));
        assert!(matches!(
            Topology::parse_cpulist("x"),
            Err(NumaError::Source(_))
        ));
        assert_eq!(
            Topology::parse_cpulist("0-99999999999"),
            Err(NumaError::CpuIdTooLarge { cpu: 99999999999 })
        );
        assert_eq!(
            Topology::parse_cpulist(" 4 - 5 ,, 1,\n").unwrap(),
            vec![4, 5, 1]
        );
        for bad in [
            "+1",
            "1-2-3",
            "-1",
            "1-",
            "0x1",
            "99999999999999999999999",
            "\u{a0}1",
            "1, ,2",
            "1,\u{b}2",
        ] {
            assert!(
                matches!(Topology::parse_cpulist(bad), Err(NumaError::Source(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn map_numbers_slots_node_by_node() {
        let m = Topology::from_nodes(vec![vec![2, 0], vec![], vec![1]])
            .cpu_map()
            .unwrap();
        assert_eq!(m.slot_of_cpu, vec![1, 2, 0]);
        assert_eq!(m.node_of_slot, vec![0, 0, 2]);
    }
}
