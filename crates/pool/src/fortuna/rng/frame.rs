//! A Concurrent reader's frame (its key and the PRF's keyed form of it, in wipe-on-fork
//! memory) and the unlocked half of a concurrent read, which generates from it.

use core::mem::MaybeUninit;

use scalrand_os::wipe::ZeroValid;
use scalrand_os::wipe::zero;

use crate::fortuna::generator::{MAX_REQUEST, READER_FIRST_BLOCK, WORK_BUF, keyed_in_frame};
use crate::fortuna::prf::Prf;

/// A Concurrent reader's secrets while it generates outside the lock: its private key `k_r`
/// and the PRF's keyed form of it (an expanded AES key schedule, or the ChaCha key). Held in a
/// [`Scratch`] frame (wipe-on-fork memory), never on the stack: a child forked from another
/// thread during the read finds zeros. `keyed` is initialised only between
/// [`ReaderFrame::expand`] and [`ReaderFrame::drop_keyed`].
#[repr(C)]
pub(super) struct ReaderFrame<P: Prf> {
    pub(super) key: [u8; 32],
    pub(super) keyed: MaybeUninit<P::Keyed>,
    /// The blocks of each key derived (the reader key and the next K; a locked read's next K;
    /// a long read's next reader key).
    pub(super) work: [u8; WORK_BUF],
}

// SAFETY: a byte array and a `MaybeUninit`, both valid at all zero; a zero frame has no
// keyed form (`keyed` is treated as uninitialised until `expand` writes it).
unsafe impl<P: Prf> ZeroValid for ReaderFrame<P> {}

impl<P: Prf> ReaderFrame<P> {
    /// Expands `key` into `keyed` (which must not hold a keyed form), wipes `key` and the
    /// stack the expansion used, and returns the keyed form.
    #[inline]
    pub(super) fn expand(&mut self) -> &P::Keyed {
        // The expansion's temporaries lie below this frame: gone before the long generation.
        crate::chacha::Section::nested(|_| {
            keyed_in_frame::<P>(&self.key, &mut self.keyed);
            zero(&mut self.key);
        });
        // SAFETY: `expand_in_frame` just initialised it.
        unsafe { self.keyed.assume_init_ref() }
    }

    /// Drops the keyed form (each wipes itself on drop).
    ///
    /// # Safety
    /// `keyed` holds a value written by [`expand`](Self::expand) and not dropped since.
    pub(super) unsafe fn drop_keyed(&mut self) {
        // SAFETY: the caller's promise.
        unsafe { self.keyed.assume_init_drop() };
    }
}

/// The unlocked half of a concurrent read ("Concurrent key schedule", step 2): ≤ 1 MiB
/// pieces under the reader's key from counter [`READER_FIRST_BLOCK`], the key replaced by
/// its own next blocks between pieces. The key is wiped as soon as it is expanded, and
/// reused in place for each private rekey; the keyed form is dropped (and wipes itself)
/// before each new expansion and at the end.
pub(super) fn generate_with_reader_key<P: Prf>(frame: &mut ReaderFrame<P>, dest: &mut [u8]) {
    let mut c = READER_FIRST_BLOCK;
    let mut pieces = dest.chunks_mut(MAX_REQUEST).peekable();
    frame.expand();
    while let Some(piece) = pieces.next() {
        // SAFETY: expanded above or at the end of the previous piece, not dropped since.
        let keyed = unsafe { frame.keyed.assume_init_ref() };
        c = P::keystream(keyed, c, piece);
        if pieces.peek().is_some() {
            c = P::derive_key(keyed, c, &mut frame.key, &mut frame.work);
            crate::chacha::observe_key(&frame.key);
            // SAFETY: expanded, and not dropped since; expanded again right after.
            unsafe { frame.drop_keyed() };
            frame.expand();
        }
    }
    // SAFETY: the last expansion, not dropped since.
    unsafe { frame.drop_keyed() };
}
