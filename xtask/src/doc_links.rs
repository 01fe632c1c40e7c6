//! `cargo xtask ci --only doc-links`: every link in the facade's rendered docs resolves,
//! including those into the workspace crates it re-exports (documented alongside, as docs.rs
//! links them to their own pages).
//!
//! rustdoc checks intra-doc links itself (`-D warnings` in the `doc` step); this checks what
//! it leaves alone: relative Markdown links (`[x](docs/y.md)`, dead on docs.rs), images, and
//! `#fragment`s into other pages. External links (`https:`) are not fetched: CI stays offline.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use crate::Result;
use crate::cmd::cargo;
use crate::config::LIB_CRATES;

/// The rendered crate whose pages are checked (the facade).
const CRATE_DIR: &str = "scalrand";

/// Documents the workspace and checks the facade's pages.
pub fn run() -> Result {
    let doc = crate::project_root().join("target").join("doc");
    // Pages of items that no longer exist stay in target/doc until removed.
    let rendered = doc.join(CRATE_DIR);
    if rendered.exists() {
        std::fs::remove_dir_all(&rendered)
            .map_err(|e| format!("removing {}: {e}", rendered.display()))?;
    }
    // The crates the facade re-exports, then the facade with every feature, as docs.rs
    // builds it (not `--all-features` for the crates: scalrand-pool's `hwloc` needs the system
    // library, and the facade's pages do not depend on it). Two runs: documented together
    // with its dependencies in one run, the facade's intra-doc links come out unresolved.
    let mut libs = cargo("doc-links", ["doc", "--no-deps"]);
    for pkg in LIB_CRATES {
        libs = libs.args(["-p", pkg]);
    }
    libs.env("RUSTDOCFLAGS", "-D warnings").run()?;
    cargo(
        "doc-links",
        [
            "doc",
            "--no-deps",
            "-p",
            "scalrand",
            "--features",
            "async,tokio,getrandom-backend",
        ],
    )
    .env("RUSTDOCFLAGS", "-D warnings")
    .run()?;
    let broken = check_tree(&doc, &doc.join(CRATE_DIR))?;
    if broken.is_empty() {
        eprintln!("doc-links: every link under target/doc/{CRATE_DIR} resolves");
        return Ok(());
    }
    for b in &broken {
        eprintln!("broken link: {b}");
    }
    Err(format!(
        "doc-links: {} broken link(s) under target/doc/{CRATE_DIR}",
        broken.len()
    ))
}

/// Every broken link of the HTML pages under `dir`, as `page: link`. `root` is the doc root:
/// a link may not leave it.
fn check_tree(root: &Path, dir: &Path) -> Result<Vec<String>> {
    let mut pages = Vec::new();
    collect_html(dir, &mut pages)?;
    pages.sort();
    let mut ids: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page)?;
        let here = page.parent().unwrap_or(root);
        for link in links(own_part(&text)) {
            let (path, fragment) = match link.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (link.as_str(), None),
            };
            let path = path.split('?').next().unwrap_or_default();
            let target = if path.is_empty() {
                page.clone()
            } else {
                let Some(t) = resolve(here, path) else {
                    broken.push(format!("{}: {link}", shown(root, page)));
                    continue;
                };
                let t = if t.is_dir() { t.join("index.html") } else { t };
                if !t.starts_with(root) || !t.is_file() {
                    broken.push(format!("{}: {link}", shown(root, page)));
                    continue;
                }
                t
            };
            let Some(fragment) = fragment.filter(|f| checkable_fragment(f)) else {
                continue;
            };
            if target.extension().is_none_or(|e| e != "html") {
                continue;
            }
            // rustdoc writes a redirect page at an item's private path; its script carries
            // the fragment over, so the anchor must exist where it points.
            let target = follow_redirect(&target)?;
            if !ids.contains_key(&target) {
                let t = read(&target)?;
                ids.insert(target.clone(), element_ids(&t));
            }
            if !ids[&target].contains(fragment) {
                broken.push(format!("{}: {link} (no such anchor)", shown(root, page)));
            }
        }
    }
    Ok(broken)
}

/// The part of a rendered page that this workspace wrote: everything before the "Blanket
/// Implementations" list, which repeats other crates' trait docs (rand's `RngExt` on every
/// `Rng`, with links written relative to rand's own pages that rustdoc leaves unresolved).
fn own_part(html: &str) -> &str {
    html.find(r#"id="blanket-implementations-list""#)
        .map_or(html, |i| &html[..i])
}

/// Where a rustdoc redirect page (`<meta http-equiv="refresh" content="0;URL=...">`) points,
/// or the page itself.
fn follow_redirect(page: &Path) -> Result<PathBuf> {
    let text = read(page)?;
    let key = "http-equiv=\"refresh\" content=\"0;URL=";
    let Some(at) = text.find(key).map(|i| i + key.len()) else {
        return Ok(page.to_path_buf());
    };
    let url = text[at..].split('"').next().unwrap_or_default();
    let here = page.parent().unwrap_or(page);
    Ok(resolve(here, url).unwrap_or_else(|| page.to_path_buf()))
}

fn read(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))
}

fn shown(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

fn collect_html(dir: &Path, out: &mut Vec<PathBuf>) -> Result {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_html(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
    Ok(())
}

/// `here/rel` with `.` and `..` folded, without touching the file system; `None` for a path
/// that climbs above the file-system root.
fn resolve(here: &Path, rel: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in here.join(rel).components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// Fragments worth looking up: not rustdoc's source-line ranges (`#12-40`, set by script)
/// and not the empty one.
fn checkable_fragment(f: &str) -> bool {
    !f.is_empty() && !f.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// The local links of a page: `href` of `<a>` and `src` of `<img>`, minus external URLs and
/// rustdoc's script templates. Skipped too: the "All Items" sidebar link (`id="all-types"`),
/// which rustdoc writes into the index of every crate it inlines but renders `all.html` only
/// at the real crate root.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start + 1..];
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        rest = &rest[end..];
        let attr = if tag.starts_with("a ") {
            "href"
        } else if tag.starts_with("img ") {
            "src"
        } else {
            continue;
        };
        if tag.contains("id=\"all-types\"") {
            continue;
        }
        let Some(value) = attribute(tag, attr) else {
            continue;
        };
        let external = ["http:", "https:", "mailto:", "javascript:", "data:"]
            .iter()
            .any(|s| value.starts_with(s));
        if !external && !value.contains("${") {
            out.push(value.replace("&amp;", "&"));
        }
    }
    out
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let len = tag[at..].find('"')?;
    Some(&tag[at..at + len])
}

/// Every `id="..."` of a page (the anchors a fragment can name).
fn element_ids(html: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut rest = html;
    while let Some(at) = rest.find(" id=\"") {
        rest = &rest[at + 5..];
        if let Some(len) = rest.find('"') {
            out.insert(rest[..len].to_owned());
            rest = &rest[len..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_local_links_only() {
        let html = r##"<a href="../x/index.html#m">x</a> <a class="y" href="https://docs.rs">e</a>
            <img src="img.svg" alt=""> <a id="all-types" href="all.html">All</a>
            <a href="#local">l</a> <script src="s.js"></script>"##;
        assert_eq!(links(html), ["../x/index.html#m", "img.svg", "#local"]);
    }

    #[test]
    fn reports_missing_files_and_anchors() {
        let root = std::env::temp_dir().join(format!("xtask-doc-links-{}", std::process::id()));
        let dir = root.join("c");
        std::fs::create_dir_all(dir.join("m")).unwrap();
        std::fs::write(
            dir.join("index.html"),
            r##"<h2 id="top">t</h2><a href="m/index.html#here">ok</a> <a href="#top">ok</a>
                <a href="m/index.html#gone">anchor</a> <a href="../../README.md">file</a>
                <a href="m/">dir</a> <a href="../src/c/lib.rs.html#1-20">lines</a>
                <a href="old.html#here">moved</a> <a href="old.html#nowhere">moved, gone</a>"##,
        )
        .unwrap();
        std::fs::write(dir.join("m").join("index.html"), r#"<p id="here"></p>"#).unwrap();
        std::fs::write(
            dir.join("old.html"),
            r#"<meta http-equiv="refresh" content="0;URL=m/index.html">"#,
        )
        .unwrap();
        std::fs::create_dir_all(root.join("src").join("c")).unwrap();
        std::fs::write(root.join("src").join("c").join("lib.rs.html"), "").unwrap();
        let broken = check_tree(&root, &dir).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            broken,
            [
                "c/index.html: m/index.html#gone (no such anchor)",
                "c/index.html: ../../README.md",
                "c/index.html: old.html#nowhere (no such anchor)",
            ]
        );
    }

    #[test]
    fn blanket_implementations_are_other_crates_docs() {
        let page = r#"<a href="ok.html">x</a><div id="blanket-implementations-list"><a href="Self::random">y</a></div>"#;
        assert_eq!(links(own_part(page)), vec!["ok.html".to_owned()]);
        assert_eq!(own_part("<a href=\"a.html\">"), "<a href=\"a.html\">");
    }

    #[test]
    fn line_ranges_are_not_anchors() {
        assert!(!checkable_fragment("1-56"));
        assert!(!checkable_fragment(""));
        assert!(checkable_fragment("method.new"));
    }
}
