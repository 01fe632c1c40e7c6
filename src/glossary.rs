// Fortuna's items are behind the `fortuna` feature: linked where it is on, on docs.rs otherwise.
#![cfg_attr(
    feature = "fortuna",
    doc = "[fortuna-prf]: crate::pool::fortuna::Prf
[fortuna-fortuna]: crate::pool::fortuna::Fortuna
[fortuna-reseed-interval]: crate::pool::fortuna::RESEED_INTERVAL
[fortuna-accumulator]: crate::pool::fortuna::Accumulator"
)]
#![cfg_attr(
    not(feature = "fortuna"),
    doc = "[fortuna-prf]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/trait.Prf.html
[fortuna-fortuna]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Fortuna.html
[fortuna-reseed-interval]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/constant.RESEED_INTERVAL.html
[fortuna-accumulator]: https://docs.rs/scalrand/latest/scalrand/pool/fortuna/struct.Accumulator.html"
)]
//! The terms of art these docs use, each in a few plain sentences: what it means, where it
//! comes from, and where scalrand uses it. This module holds documentation only, no items.
//!
//! # Fast key erasure (FKE)
//!
//! A way to run a stream cipher as a random generator so that a key, once used, is gone.
//! Each batch of keystream begins with the *next* key: its first 32 bytes overwrite the key
//! that made the batch, and only the rest is handed out. Whoever reads the generator's memory
//! afterwards finds a key that produces future output, but nothing that works back to output
//! already delivered (see [forward secrecy](#forward-secrecy)). Described by Daniel J.
//! Bernstein, "Fast-key-erasure random-number generators" (2017,
//! <https://blog.cr.yp.to/20170723-random.html>); Linux's random driver refreshes its
//! per-CPU ChaCha20 keys this way (`crng_fast_key_erasure` in `drivers/char/random.c`), and
//! Fortuna's generator does the same after every request (the next two AES blocks, or 32
//! bytes of one ChaCha20 block, become its new key).
//! scalrand's node pools key each CPU's slot from its node pool by fast key erasure, and
//! refill the slot's batch the same way: the first 32 bytes of each refill's keystream
//! become the slot's next key ([`pool::numa`](crate::pool::numa)).
//!
//! # Forward secrecy
//!
//! A generator has forward secrecy (also called backtracking resistance) when someone who
//! learns its whole state today still cannot compute what it produced before. It comes from
//! replacing the key with a one-way function of itself after use, as
//! [fast key erasure](#fast-key-erasure-fke) does, and from wiping every copy of the old key.
//!
//! # Pseudorandom function (PRF)
//!
//! A keyed function whose outputs nobody without the key can tell apart from random bytes.
//! Fortuna's generator encrypts a counter with one, block after block: Ferguson, Schneier and
//! Kohno use AES-256, and scalrand offers ChaCha20's block function as well
//! ([`Prf`][fortuna-prf], chosen as a type parameter of
//! [`Fortuna`][fortuna-fortuna]).
//!
//! # Wipe-on-fork memory
//!
//! Memory that the kernel hands a `fork()`ed child filled with zeros instead of a copy of the
//! parent's bytes: `madvise(MADV_WIPEONFORK)` on Linux 4.14 and later, `minherit` with
//! `INHERIT_ZERO` on FreeBSD 12 and later and on OpenBSD. scalrand keeps generator keys and
//! states there, so a child never holds the key that produces its parent's next output, and
//! a zeroed state reads as "not keyed": the child takes fresh entropy before it answers. The
//! check costs two loads per read. Where there is no such memory (macOS, or a user-mode
//! emulator such as qemu-user, whose `madvise` does nothing), a process-id check or
//! `pthread_atfork` handlers tell a child to rekey instead
//! ([`os::wipe`](crate::os::wipe), [`os::fork`](crate::os::fork)).
//!
//! # Restartable sequence (rseq)
//!
//! Linux's `rseq(2)` (4.18 and later): each thread registers a small area in which the kernel
//! keeps the number of the CPU the thread runs on (`cpu_id`), and can mark a short critical
//! section there. If the thread is preempted, moved to another CPU or interrupted by a signal
//! inside that section, the kernel sends it to an abort handler instead of letting it resume
//! halfway, so an update of per-CPU data either completes on that CPU or does not happen,
//! without a lock or an atomic instruction. glibc 2.35 and later register an area for every
//! thread, which makes reading the current CPU one thread-local load. The per-CPU fast paths
//! of the node pools, [`fast`](crate::fast) and
//! [`fastprng::PerCpu`](crate::fastprng::PerCpu) use it on Linux x86_64
//! ([`os::cpu`](crate::os::cpu); [`os::cpu::disable_rseq`](crate::os::cpu::disable_rseq)
//! turns it off for a process); elsewhere they take an uncontended per-CPU try-lock.
//!
//! # Reseed schedule (the 100 ms rule)
//!
//! When a generator mixes fresh entropy into its key. Fortuna (Ferguson, Schneier and Kohno,
//! *Cryptography Engineering* §9.5.5) collects entropy events into 32 pools and reseeds only
//! when the first pool holds at least 64 bytes *and* at least 100 ms have passed since the
//! last reseed ([`RESEED_INTERVAL`][fortuna-reseed-interval]), so a flood of
//! events, even attacker-chosen ones, cannot force more than ten reseeds a second. Reseed
//! number r draws on pool i only when 2^i divides r: the later pools gather entropy for
//! longer, so some reseed eventually uses more entropy than an attacker who sees or controls
//! part of the input can guess ([`Accumulator`][fortuna-accumulator]). The node
//! pools reseed after a number of bytes or seconds instead
//! ([`ReseedPolicy`](crate::pool::numa::ReseedPolicy)), a condition their readers check every
//! few calls: no timer runs.
//!
//! # NUMA node
//!
//! On a machine with non-uniform memory access (several sockets, or one package built from
//! several dies), a node is a group of CPUs together with the memory nearest to them;
//! reaching another node's memory, or a cache line another node wrote last, takes longer.
//! Linux lists the nodes in `/sys/devices/system/node`. The node pools keep one ChaCha20 pool
//! per node, so the shared state a CPU's reads touch lives on its own node
//! ([`pool::numa::Topology`](crate::pool::numa::Topology) says which CPUs belong to which
//! node).
