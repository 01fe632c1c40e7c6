//! `cargo xtask ci --only getrandom-suites`: getrandom's own published test suites, run with
//! scalrand as getrandom's backend.
//!
//! For each entry of [`GETRANDOM_SUITES`] a crate of its own under
//! `target/getrandom-suites/` depends on that getrandom version (the one the workspace's
//! `Cargo.lock` resolves) and on scalrand with its `getrandom-backend` feature. cargo resolves
//! and downloads getrandom's registry package (`cargo metadata`), and the test files that
//! package ships (`tests/*.rs`, as published: they are never copied into this repository)
//! are copied from there into the crate's `tests/`, each with `scalrand::getrandom_backend!();`
//! and one test of its own appended (the pools served the suite's calls). The crate is then
//! tested with `--cfg getrandom_backend="custom"`. A test that assumes getrandom's own test
//! backend is skipped by name, with the reason, printed.

use std::path::{Path, PathBuf};

use crate::cmd::Result;
use crate::cmd::cargo;
use crate::config::{GETRANDOM_BACKEND_RUSTFLAGS, GETRANDOM_SUITES, GetrandomSuite};

/// What each copied file gets at its end: the backend, and a test that the pools took the
/// suite's calls (a suite that passes on getrandom's default backend would pass unseen).
const APPENDED: &str = r#"

// Appended by `cargo xtask ci --only getrandom-suites`: scalrand serves this suite's calls.
scalrand::getrandom_backend!();

#[test]
fn scalrand_served_the_suite() {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).unwrap();
    assert!(scalrand::getrandom_backend::served() > 0);
}
"#;

/// Runs every suite of [`GETRANDOM_SUITES`].
pub fn run() -> Result {
    let root = crate::cmd::project_root();
    let base = root.join("target").join("getrandom-suites");
    for suite in GETRANDOM_SUITES {
        run_suite(&root, &base, suite)?;
    }
    Ok(())
}

fn run_suite(root: &Path, base: &Path, suite: &GetrandomSuite) -> Result {
    let label = format!("getrandom-suites {}", suite.version);
    let dir = base.join(format!("getrandom-{}", suite.version));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    let tests = dir.join("tests");
    std::fs::create_dir_all(&tests).map_err(|e| format!("creating {}: {e}", tests.display()))?;
    let here = root.display().to_string().replace('\\', "/");
    let features = suite
        .features
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    // The suite's files test the crate's own features (`#![cfg(feature = "sys_rng")]`): this
    // crate has features of those names, on by default, that turn on getrandom's.
    let own_features: String = suite
        .features
        .iter()
        .map(|f| format!("{f} = [\"getrandom/{f}\"]\n"))
        .collect();
    let manifest = format!(
        "[package]\nname = \"getrandom-suite\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n# Not a member of the scalrand workspace around it.\n[workspace]\n\n\
         [dependencies]\ngetrandom = {{ version = \"{}\", features = [{features}] }}\n\
         scalrand = {{ path = \"{here}\", features = [\"getrandom-backend\"] }}\n\n\
         [features]\ndefault = [{features}]\n{own_features}\n\
         # The published files test cfgs of getrandom's own build (its backends, wasm_js).\n\
         [lints.rust]\nunexpected_cfgs = \"allow\"\n",
        suite.version
    );
    write(&dir.join("Cargo.toml"), &manifest)?;
    // cargo wants a target besides the tests: an empty library.
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| format!("creating {}: {e}", src.display()))?;
    write(
        &src.join("lib.rs"),
        "//! getrandom's published tests (tests/), with scalrand as its backend.\n",
    )?;
    // The workspace's versions, getrandom's included.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("copying Cargo.lock: {e}"))?;
    let manifest_path = dir.join("Cargo.toml");
    let published = published_tests(&label, &manifest_path, suite.version)?;
    for file in suite.tests {
        let from = published.join(file);
        let text = std::fs::read_to_string(&from)
            .map_err(|e| format!("[{label}] reading {}: {e}", from.display()))?;
        let mut text = text;
        for (f, module, reason) in suite.skip {
            if f == file {
                text = skip_module(&text, module, reason)
                    .map_err(|e| format!("[{label}] {}: {e}", from.display()))?;
                eprintln!("[{label}] skipped {file}: mod {module} ({reason})");
            }
        }
        text.push_str(APPENDED);
        write(&tests.join(file), &text)?;
        eprintln!("[{label}] {} -> tests/{file}", from.display());
    }
    cargo(&label, ["test", "--manifest-path"])
        .arg(&manifest_path)
        .env("RUSTFLAGS", GETRANDOM_BACKEND_RUSTFLAGS)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .target_dir("getrandom-suites/target")
        .run()
}

/// The `tests/` directory of the getrandom package that `manifest` resolves for `version`
/// (downloaded by `cargo metadata` if it is not in cargo's registry cache yet).
fn published_tests(label: &str, manifest: &Path, version: &str) -> Result<PathBuf> {
    let meta = cargo(
        label,
        ["metadata", "--format-version", "1", "--manifest-path"],
    )
    .arg(manifest)
    .json()?;
    let prefix = format!("{version}.");
    meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| {
            p["name"] == "getrandom"
                && p["version"]
                    .as_str()
                    .is_some_and(|v| v.starts_with(&prefix))
        })
        .and_then(|p| p["manifest_path"].as_str())
        .and_then(|m| Path::new(m).parent().map(|d| d.join("tests")))
        .ok_or_else(|| format!("[{label}] no getrandom {version}.x in the resolved packages"))
}

/// `text` with the module `module` compiled out (`#[cfg(any())]` put before its `mod`
/// line, with the reason): an error unless the module is there exactly once.
fn skip_module(text: &str, module: &str, reason: &str) -> Result<String> {
    let line = format!("\nmod {module} {{");
    match text.matches(&line).count() {
        1 => Ok(text.replacen(
            &line,
            &format!("\n// Skipped: {reason}\n#[cfg(any())]{line}"),
            1,
        )),
        n => Err(format!(
            "expected one `mod {module} {{` to skip, found {n}: the published suite changed"
        )),
    }
}

fn write(p: &Path, text: &str) -> Result {
    std::fs::write(p, text).map_err(|e| format!("writing {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_module_is_compiled_out_with_its_reason() {
        let text =
            "use x;\n\n#[cfg(getrandom_backend = \"custom\")]\nmod custom {\n    fn f() {}\n}\n";
        let out = skip_module(text, "custom", "its own backend").unwrap();
        assert!(out.contains("\n// Skipped: its own backend\n#[cfg(any())]\nmod custom {\n"));
        assert!(skip_module(text, "other", "r").is_err());
        let twice = format!("{text}{text}");
        assert!(skip_module(&twice, "custom", "r").is_err());
    }
}
