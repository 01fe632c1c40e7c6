//! Forces a narrower ChaCha backend from the environment: `SCALRAND_CHACHA_BACKEND=soft`,
//! `sse2` or `portable` sets the same cfg as `RUSTFLAGS="--cfg scalrand_chacha_soft"` (and so
//! on), for this crate alone. `RUSTFLAGS` reaches every crate of the build, so each forced
//! backend rebuilt the whole dependency graph; this rebuilds only this crate and what
//! depends on it. Unset or empty: nothing is forced. `SCALRAND_AES=soft` likewise sets
//! `scalrand_aes_soft`: Fortuna's AES-256 runs the bitsliced software AES even where the CPU
//! has AES-NI.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SCALRAND_CHACHA_BACKEND");
    let backend = std::env::var("SCALRAND_CHACHA_BACKEND").unwrap_or_default();
    match backend.as_str() {
        "" => {}
        "soft" | "sse2" | "portable" => println!("cargo:rustc-cfg=scalrand_chacha_{backend}"),
        other => {
            // A build script reports a refused input by failing the build.
            eprintln!("SCALRAND_CHACHA_BACKEND={other:?}: expected soft, sse2 or portable");
            std::process::exit(1);
        }
    }
    println!("cargo:rerun-if-env-changed=SCALRAND_AES");
    match std::env::var("SCALRAND_AES").unwrap_or_default().as_str() {
        "" => {}
        "soft" => println!("cargo:rustc-cfg=scalrand_aes_soft"),
        other => {
            eprintln!("SCALRAND_AES={other:?}: expected soft");
            std::process::exit(1);
        }
    }
}
