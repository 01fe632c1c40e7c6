//! `cargo xtask ci --only fresh-crate`: a new crate built from the README alone.
//!
//! The crate gets exactly the README's `[dependencies]` lines (its "Install" section, with the
//! `path` pointed at this checkout) and one binary per `rust` block of the README (the quick
//! start first); each must build and run to a zero exit. The rustdoc front page
//! (`docs/crate.md`) must carry the same install lines and quick start. The workspace's `Cargo.lock` is copied in,
//! so the same versions resolve, and nothing is downloaded once the workspace has built:
//! `CARGO_NET_OFFLINE=true` runs it without a network.

use std::path::Path;

use crate::cmd::Result;
use crate::cmd::cargo;

/// Where the README's dependency lines point at the facade; the step rewrites it to this
/// checkout's path.
const README_PATH: &str = "path = \"../scalrand\"";

/// Builds and runs the crate under `target/fresh-crate`.
pub fn run() -> Result {
    let root = crate::cmd::project_root();
    let readme = read(&root.join("README.md"))?;
    let page = read(&root.join("docs").join("crate.md"))?;
    let dependencies = install_lines(&readme, &root)?;
    let blocks = code_blocks(&readme, "rust");
    let quick = section_block(&readme, "## Quick start", "rust")
        .ok_or("README.md: no ```rust block under \"## Quick start\"")?;
    let on_page = section_block(&page, "# Quick start", "rust")
        .ok_or("docs/crate.md: no ```rust block under \"# Quick start\"")?;
    if quick != shown(&on_page) {
        return Err("the quick starts of README.md and docs/crate.md differ".into());
    }
    same_install_lines(&readme, &page)?;

    let dir = root.join("target").join("fresh-crate");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    let bin = dir.join("src").join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    let manifest = format!(
        "[package]\nname = \"fresh-crate\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n# Not a member of the scalrand workspace around it.\n[workspace]\n\n\
         {dependencies}"
    );
    write(&dir.join("Cargo.toml"), &manifest)?;
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("copying Cargo.lock: {e}"))?;
    for (i, code) in blocks.iter().enumerate() {
        write(&bin.join(format!("readme_{i}.rs")), code)?;
    }
    let manifest_path = dir.join("Cargo.toml");
    for i in 0..blocks.len() {
        cargo(
            &format!("fresh-crate readme_{i}"),
            [
                "run",
                "--quiet",
                "--bin",
                &format!("readme_{i}"),
                "--manifest-path",
            ],
        )
        .arg(&manifest_path)
        // One build cache with the workspace: the facade's crates compile once.
        .target_dir("")
        .run()?;
    }
    Ok(())
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))
}

fn write(p: &Path, text: &str) -> Result {
    std::fs::write(p, text).map_err(|e| format!("writing {}: {e}", p.display()))
}

/// The README's `toml` block under "## Install", with the facade's path pointed at `root`.
fn install_lines(readme: &str, root: &Path) -> Result<String> {
    let toml = section_block(readme, "## Install", "toml")
        .ok_or("README.md: no ```toml block under \"## Install\"")?;
    if toml.matches(README_PATH).count() != 1 {
        return Err(format!(
            "README.md's install block should name the facade once with `{README_PATH}`"
        ));
    }
    let here = root.display().to_string().replace('\\', "/");
    Ok(toml.replace(README_PATH, &format!("path = \"{here}\"")))
}

/// The install lines of the rustdoc front page (`docs/crate.md`, "# Install") are the
/// README's ("## Install"): a reader of docs.rs copies the lines that build.
fn same_install_lines(readme: &str, page: &str) -> Result {
    let ours = section_block(readme, "## Install", "toml")
        .ok_or("README.md: no ```toml block under \"## Install\"")?;
    let theirs = section_block(page, "# Install", "toml")
        .ok_or("docs/crate.md: no ```toml block under \"# Install\"")?;
    if ours != theirs {
        return Err(format!(
            "the install lines of docs/crate.md differ from README.md's:\n{theirs}\nREADME.md:\n{ours}"
        ));
    }
    Ok(())
}

/// A rustdoc code block as its reader sees it: without the lines rustdoc hides (`# ` and a
/// lone `#`), which the front page uses to compile a block only where its feature is on.
fn shown(block: &str) -> String {
    block
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t != "#" && !t.starts_with("# ")
        })
        .flat_map(|l| [l, "\n"])
        .collect()
}

/// The first fenced block of language `lang` after the line `heading`.
fn section_block(text: &str, heading: &str, lang: &str) -> Option<String> {
    let start = text.lines().position(|l| l.trim_end() == heading)?;
    let rest: Vec<&str> = text.lines().skip(start + 1).collect();
    code_blocks(&rest.join("\n"), lang).into_iter().next()
}

/// Every fenced block of language `lang`, in order, without its fences.
fn code_blocks(text: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == open => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => out.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# x\n\n## Install\n\n```toml\n[dependencies]\n\
        scalrand = { version = \"0.1\", path = \"../scalrand\" }\n```\n\n## Quick start\n\n\
        ```rust\nfn main() {}\n```\n\n```sh\nls\n```\n\n```rust\nfn main() { let _ = 1; }\n```\n";

    #[test]
    fn takes_the_install_lines_and_every_rust_block() {
        let deps = install_lines(README, Path::new("/src/scalrand")).unwrap();
        assert_eq!(
            deps,
            "[dependencies]\nscalrand = { version = \"0.1\", path = \"/src/scalrand\" }\n"
        );
        assert_eq!(
            code_blocks(README, "rust"),
            ["fn main() {}\n", "fn main() { let _ = 1; }\n"]
        );
        assert_eq!(
            section_block(README, "## Quick start", "rust").as_deref(),
            Some("fn main() {}\n")
        );
    }

    #[test]
    fn a_hidden_line_is_not_shown() {
        assert_eq!(shown("# #[cfg(x)]\nfn main() {}\n#\n"), "fn main() {}\n");
        assert_eq!(shown("#[test]\n"), "#[test]\n");
    }

    #[test]
    fn refuses_a_readme_without_the_path_line() {
        let r = README.replace("path = \"../scalrand\"", "git = \"x\"");
        assert!(install_lines(&r, Path::new("/")).is_err());
        assert!(section_block("no heading", "## Install", "toml").is_none());
    }

    /// The real README has the parts this step needs.
    #[test]
    fn the_readme_has_install_lines_and_a_quick_start() {
        let root = crate::cmd::project_root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let deps = install_lines(&readme, &root).unwrap();
        assert!(deps.contains("[dependencies]") && deps.contains("rand = "));
        let quick = section_block(&readme, "## Quick start", "rust").unwrap();
        assert!(quick.contains("digest_async"));
        let page = std::fs::read_to_string(root.join("docs").join("crate.md")).unwrap();
        assert_eq!(
            section_block(&page, "# Quick start", "rust").map(|b| shown(&b)),
            Some(quick)
        );
        // The front page's install lines are the README's (a path dependency until the
        // crates are published).
        same_install_lines(&readme, &page).unwrap();
    }
}
