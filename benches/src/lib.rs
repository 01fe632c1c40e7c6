//! Shared pieces of the benches and the scaling harness.
