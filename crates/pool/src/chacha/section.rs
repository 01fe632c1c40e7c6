//! [`Section`]: the one way this crate runs ChaCha on a key, and the one place that states
//! what every stretch of code holding key material promises.

use core::marker::PhantomData;

use super::dispatch;
use super::erasure;
use super::vocab::{BLOCK_LEN, KEY_LEN, Nonce, Rounds};

/// A stretch of code that holds key material: a key, a key's round state, or keystream not
/// yet handed out. The block function and the keystream run only as methods of a section,
/// and a section exists only inside [`Section::run`] (or [`Section::nested`]), whose end
/// runs on every path out of it (`Drop`: a return, a `?`, a panic). Code outside
/// `crate::chacha` cannot reach a backend any other way.
///
/// # The contract
///
/// - **Where key material may live while a section runs**: in registers; in memory a fork
///   child gets zeroed and that the caller names (a slot's batch frame, a read's
///   `scalrand_os::scratch::Scratch` frame, a node's work block, the AVX2 backend's spill
///   frame, the portable backend's work frame); in the caller's output buffer (keystream,
///   which is what the caller asked for); and in the frames of the functions the section
///   calls, below the caller's frame. Never in a local of the caller's own frame. The
///   backends' own frames hold no key word in optimised builds (their passes keep the state
///   in registers or in those frames of wipe-on-fork memory); a `Scratch` frame falls back
///   to the stack only when every one of its 4,080 frames is busy, or where the OS has no
///   wipe-on-fork memory (a fork child copies the heap there as well).
/// - **What its end does**: clears the vector registers and the general-purpose registers
///   a key copy passes through (`erasure::clear_vector_registers`), then zeroes the stack
///   below the caller's frame: the callees' frames (`erasure::WIPE_DEPTH`, measured per
///   backend by `tests/numa_erasure.rs`) when nothing interrupted the thread while the
///   section ran, else as far below them as a signal frame written meanwhile can reach
///   (`scalrand_os::signal::wipe_stack`), and the top of the thread's alternate signal
///   stack, where a handler installed with `SA_ONSTACK` gets its frame
///   (`scalrand_os::signal::wipe_alternate_stack`). Registers first, so that a signal
///   delivered during the wipe saves none that holds a key.
/// - **How it knows whether anything interrupted it**: a `scalrand_os::signal::Watch`
///   armed at its start (rseq's `rseq_cs` field, which the kernel clears when it delivers a
///   signal or preempts the thread). A restartable sequence replaces that field, so the
///   rseq refill runs its sequences through [`Section::restartable`], which asks the watch
///   before the sequence, counts the sequence's own abort, and arms a new watch after it.
///   A section nested in another (a fresh node key derived inside a refill) replaces the
///   outer watch too: the outer one then ends with the long wipe. Without rseq a watch is
///   never quiet and every section ends with the long wipe and the alternate-stack wipe.
/// - [`Section::nested`] (Fortuna) ends with the registers cleared and its own frames
///   wiped only: every Fortuna operation ends with a wipe of its own, from a frame above,
///   as deep as a signal frame can reach (`fortuna::prf::wipe_below`).
/// - **Locks**: a section that takes one of the pools' locks opens before it and ends after
///   releasing it (the node key's derivation, a large read's key from its slot), so that its
///   wipe, long when something interrupted it, holds up no other reader. A small read's batch
///   refill still ends under its slot's lock, which only readers of the same CPU share.
/// - A section is not `Send`: it ends on the thread it started on.
#[must_use]
pub(crate) struct Section {
    end: End,
    /// Set when a restartable sequence inside the section was aborted (a signal or a
    /// preemption landed while it held a key).
    interrupted: bool,
    /// Not `Send` or `Sync`.
    _thread: PhantomData<*mut ()>,
}

/// How a [`Section`] ends.
enum End {
    /// Watched: the short wipe if the watch stayed quiet, else the long one.
    Watched(scalrand_os::signal::Watch),
    /// Inside a Fortuna operation, which wipes deep itself: registers and own frames.
    #[cfg(feature = "fortuna")]
    Nested,
}

impl Section {
    /// Runs `f` in a section, watched from here; the section ends when `f` returns (or
    /// unwinds), with the wipe its watch calls for.
    #[inline(always)]
    pub(crate) fn run<R>(f: impl FnOnce(&mut Section) -> R) -> R {
        let mut s = Section {
            end: End::Watched(scalrand_os::signal::watch()),
            interrupted: false,
            _thread: PhantomData,
        };
        f(&mut s)
    }

    /// Runs `f` in a section inside a Fortuna operation, whose own end wipes as deep as a
    /// signal frame can reach: this one ends with the registers cleared and its own frames
    /// wiped.
    #[cfg(feature = "fortuna")]
    #[inline(always)]
    pub(crate) fn nested<R>(f: impl FnOnce(&mut Section) -> R) -> R {
        let mut s = Section {
            end: End::Nested,
            interrupted: false,
            _thread: PhantomData,
        };
        f(&mut s)
    }

    /// Keystream under `key` and `nonce` from block `counter` into `dest` (the contract of
    /// [`super::keystream`], with the nonce in words 13..15).
    #[inline(always)]
    pub(crate) fn keystream(
        &mut self,
        key: &[u8; KEY_LEN],
        nonce: &Nonce,
        counter: u32,
        dest: &mut [u8],
        rounds: Rounds,
    ) {
        dispatch::keystream_unwiped(key, nonce, counter, dest, rounds);
    }

    /// Block `counter` under `key` and `nonce` into `out`.
    #[inline(always)]
    pub(crate) fn block(
        &mut self,
        key: &[u8; KEY_LEN],
        nonce: &Nonce,
        counter: u32,
        rounds: Rounds,
        out: &mut [u8; BLOCK_LEN],
    ) {
        dispatch::block_leaving_registers(key, nonce, counter, rounds, out);
    }
}

scalrand_os::cfg_rseq! {
    if {
        impl Section {
            /// Runs a restartable sequence inside the section: `f` returns its value and
            /// whether the sequence was aborted while it held key material (pass `false` for
            /// one that holds none). The watch is asked before the sequence (which replaces
            /// it) and armed again after it.
            #[inline(always)]
            #[allow(irrefutable_let_patterns)] // without Fortuna, every section is watched
            pub(crate) fn restartable<T>(&mut self, f: impl FnOnce() -> (T, bool)) -> T {
                if let End::Watched(w) = &self.end {
                    self.interrupted |= !w.quiet();
                }
                let (t, aborted) = f();
                self.interrupted |= aborted;
                if let End::Watched(w) = &mut self.end {
                    *w = scalrand_os::signal::watch();
                }
                t
            }

            /// Clears the registers now, inside the section (its end clears them again):
            /// before a stretch in which a signal must find no key in them.
            #[inline(always)]
            pub(crate) fn clear_registers(&mut self) {
                erasure::clear_vector_registers();
            }
        }
    }
}

impl Drop for Section {
    #[inline(always)]
    fn drop(&mut self) {
        match &self.end {
            End::Watched(w) => erasure::end_section(w, self.interrupted),
            #[cfg(feature = "fortuna")]
            End::Nested => erasure::end_section_shallow(),
        }
    }
}
