//! Scaling rows, one module per crate.

pub mod fastprng;
pub mod fortuna;
pub mod numa;
