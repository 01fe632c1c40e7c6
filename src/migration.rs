// The repository's docs/MIGRATION.md, rendered here so that the front page can link to it
// on docs.rs (which hosts no repository files). Its `rust` blocks run as this crate's
// doctests, with its dev-dependencies (rand 0.10, getrandom, fastrand); the rand 0.8 and 0.9
// blocks are `ignore` here, and run in tests/rand08.rs and tests/rand09.rs instead, where
// those versions are in scope. The guide's examples use the OS: without `std` the page is a
// line that says where the guide is.
#![cfg_attr(feature = "std", doc = include_str!("../docs/MIGRATION.md"))]
#![cfg_attr(
    not(feature = "std"),
    doc = "Coming from `rand`, `getrandom` or `fastrand`: the guide (the repository's `docs/MIGRATION.md`) is rendered here with the `std` feature."
)]
