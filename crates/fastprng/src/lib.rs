#![no_std]
//! fastprng (in progress)
#![deny(missing_docs, missing_debug_implementations, unsafe_op_in_unsafe_fn)]
#[cfg(feature = "std")]
extern crate std;
