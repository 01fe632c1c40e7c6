#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations, unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod entropy;
pub mod fork;
pub mod fortuna;
pub mod numa;
