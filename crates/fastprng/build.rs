//! Sets `cfg(rseq_fast_path)` where the restartable-sequence fast path is compiled in:
//! Linux, x86_64, glibc, the `std` feature, and neither miri nor loom (which cannot run
//! inline assembly or model the kernel's restarts).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rseq_fast_path)");
    println!("cargo::rerun-if-changed=build.rs");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let cfg_set = |k: &str| std::env::var_os(k).is_some();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let loom = flags
        .split('\x1f')
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0] == "--cfg" && w[1] == "loom")
        || flags.split('\x1f').any(|f| f == "--cfg=loom");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && cfg_set("CARGO_FEATURE_STD")
        && !cfg_set("CARGO_CFG_MIRI")
        && !loom
    {
        println!("cargo::rustc-cfg=rseq_fast_path");
    }
}
