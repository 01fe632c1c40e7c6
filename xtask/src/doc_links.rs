//! `cargo xtask ci --only doc-links`: every publishable crate documented alone, as docs.rs
//! builds it, and its rendered pages scanned for what rustdoc leaves broken without failing.
//!
//! docs.rs documents one crate per build (`cargo rustdoc --lib -Zrustdoc-map`, nightly, the
//! features and rustdoc arguments of the crate's `[package.metadata.docs.rs]`) and links the
//! crate's *direct* dependencies to their own docs.rs pages; nothing else is documented
//! beside it. This step builds each crate the same way, with docs.rs's features, with its
//! default features (as `cargo doc` in a project that depends on it shows it) and with every
//! feature, one run each into an emptied `doc/` directory (rustdoc treats any crate
//! whose directory it finds there as documented alongside; the last run's pages stay), with
//! `--extern-html-root-url` for each direct dependency, and scans that crate's pages for:
//!
//! - raw intra-doc link text: a `` [`Name`] `` that rustdoc could resolve but had no page to
//!   link to (an item of a crate that is not a direct dependency, such as one whose docs are
//!   inlined from a dependency and link into its own dependencies), which rustdoc prints as
//!   written, brackets and all, without a warning (written `[text](path)`, such a link comes
//!   out as a dead relative `href`, which the next check finds);
//! - dead relative links: Markdown links to files (`[x](docs/y.md)`, dead on docs.rs),
//!   images, and `#fragment`s that no page defines.
//!
//! rustdoc checks that intra-doc links resolve itself (`-D warnings` here and in the `doc`
//! step). External links (`https:`) are not fetched: CI stays offline.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::cmd::Result;
use crate::cmd::{cargo, cargo_nightly};
use crate::config::DOCS_RS_URL;

/// The step's target directory, under the workspace's.
const TARGET_DIR: &str = "doc-links";

/// Documents each publishable crate of the workspace alone and checks its pages.
pub fn run() -> Result {
    let meta = metadata()?;
    // A target directory of the step's own (as `Cmd::target_dir` names it): it runs in CI's
    // second lane, beside the first lane's builds (and its `doc` step's pages).
    let doc = crate::cmd::project_root()
        .join("target")
        .join(TARGET_DIR)
        .join("doc");
    let mut problems = readme_links(&meta)?;
    for pkg in publishable(&meta) {
        let pkg = pkg.as_str();
        let krate = Krate::new(&meta, pkg)?;
        for features in krate.feature_sets() {
            // Only this crate's pages may be there: rustdoc links into any crate it finds.
            if doc.exists() {
                std::fs::remove_dir_all(&doc)
                    .map_err(|e| format!("removing {}: {e}", doc.display()))?;
            }
            // Nightly, as on docs.rs (the `--extern-html-root-url` map is unstable), the
            // library target only.
            let shown = if features.is_empty() {
                "default features".to_owned()
            } else {
                features.join(" ")
            };
            let label = format!("doc-links {pkg} ({shown})");
            cargo_nightly(&label, ["doc", "--lib", "--no-deps", "-p", pkg])
                .args(&features)
                .target_dir(TARGET_DIR)
                .env(
                    "CARGO_ENCODED_RUSTDOCFLAGS",
                    krate.rustdoc_flags().join("\x1f"),
                )
                .env_remove("RUSTDOCFLAGS")
                .run()?;
            let found = check_tree(&doc, &doc.join(&krate.lib))?;
            eprintln!("{label}: {} problem(s)", found.len());
            problems.extend(found.into_iter().map(|p| format!("{pkg} ({shown}): {p}")));
        }
    }
    if problems.is_empty() {
        eprintln!("doc-links: every crate's pages, each documented alone, are clean");
        return Ok(());
    }
    for p in &problems {
        eprintln!("{p}");
    }
    Err(format!(
        "doc-links: {} problem(s) in pages documented as docs.rs builds them",
        problems.len()
    ))
}

/// Where a link in a packaged crate's README may point: crates.io shows the README with no
/// repository to resolve a relative link against, so only docs.rs (every crate's API pages,
/// and `https://docs.rs/crate/NAME/VERSION/source/PATH` for a file the package contains)
/// and the README's own headings.
const README_LINK_PREFIXES: &[&str] = &["https://docs.rs/", "#"];

/// Every Markdown link target of `text`: inline (`[x](target)`, `![x](target)`) and
/// reference definitions (`[x]: target`), outside code blocks and code spans.
fn markdown_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let plain: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].trim().to_owned());
            rest = &after[end..];
        }
        let t = plain.trim_start();
        if t.starts_with('[')
            && let Some(i) = t.find("]: ")
        {
            out.push(t[i + 3..].trim().to_owned());
        }
    }
    out
}

/// The links of each publishable crate's README that crates.io cannot follow.
fn readme_links(meta: &Value) -> Result<Vec<String>> {
    let empty = Vec::new();
    let names = publishable(meta);
    let mut problems = Vec::new();
    for p in meta["packages"].as_array().unwrap_or(&empty) {
        let Some(name) = p["name"].as_str() else {
            continue;
        };
        if !names.iter().any(|n| n == name) {
            continue;
        }
        let (Some(manifest), Some(readme)) = (p["manifest_path"].as_str(), p["readme"].as_str())
        else {
            continue;
        };
        let dir = Path::new(manifest).parent().unwrap_or(Path::new("."));
        let path = dir.join(readme);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        for link in markdown_links(&text) {
            if !README_LINK_PREFIXES.iter().any(|pre| link.starts_with(pre)) {
                problems.push(format!(
                    "{name}: README link `{link}` resolves on neither docs.rs nor crates.io"
                ));
            }
        }
    }
    Ok(problems)
}

/// `cargo metadata` with every feature (the dependency graph the doc runs resolve).
fn metadata() -> Result<Value> {
    cargo(
        "doc-links metadata",
        ["metadata", "--format-version", "1", "--all-features"],
    )
    .json()
}

/// The workspace's packages that can be published (all but `publish = false`), by name:
/// the crates docs.rs will document.
fn publishable(meta: &Value) -> Vec<String> {
    let empty = Vec::new();
    let members = meta["workspace_members"].as_array().unwrap_or(&empty);
    let mut names: Vec<String> = meta["packages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|p| members.contains(&p["id"]))
        .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// What a docs.rs build of one package needs from its metadata.
#[derive(Debug)]
struct Krate {
    /// The library's crate name (its directory under `doc/`).
    lib: String,
    /// `[package.metadata.docs.rs] rustdoc-args`.
    rustdoc_args: Vec<String>,
    /// The features docs.rs builds with, as cargo arguments: `--all-features` where the
    /// metadata says `all-features = true`, else `--features` of its list (and
    /// `--no-default-features` where it says so).
    docs_rs_features: Vec<String>,
    /// `(crate name, docs.rs root)` of each direct normal dependency.
    deps: Vec<(String, String)>,
}

impl Krate {
    fn new(meta: &Value, pkg: &str) -> Result<Self> {
        let no = |what: &str| format!("cargo metadata: {pkg}: no {what}");
        let empty = Vec::new();
        let packages = meta["packages"].as_array().unwrap_or(&empty);
        let by_id = |id: &Value| packages.iter().find(|p| &p["id"] == id);
        let package = packages
            .iter()
            .find(|p| p["name"] == pkg)
            .ok_or_else(|| no("package"))?;
        let lib = package["targets"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .find(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib"))
            })
            .and_then(|t| t["name"].as_str())
            .ok_or_else(|| no("library target"))?
            .replace('-', "_");
        let docs_rs = &package["metadata"]["docs"]["rs"];
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap_or(&empty)
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect()
        };
        let rustdoc_args = strings(&docs_rs["rustdoc-args"]);
        let mut docs_rs_features = Vec::new();
        if docs_rs["all-features"] == true {
            docs_rs_features.push("--all-features".to_owned());
        } else {
            if docs_rs["no-default-features"] == true {
                docs_rs_features.push("--no-default-features".to_owned());
            }
            let list = strings(&docs_rs["features"]);
            if !list.is_empty() {
                docs_rs_features.push("--features".to_owned());
                docs_rs_features.push(list.join(","));
            }
        }
        let node = meta["resolve"]["nodes"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .find(|n| n["id"] == package["id"])
            .ok_or_else(|| no("resolve node"))?;
        let mut deps = Vec::new();
        for d in node["deps"].as_array().unwrap_or(&empty) {
            // `kind: null` is a normal dependency (not dev, not build).
            let normal = d["dep_kinds"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k["kind"].is_null()));
            let (Some(name), Some(dep)) = (d["name"].as_str(), by_id(&d["pkg"])) else {
                continue;
            };
            if normal {
                let (n, v) = (dep["name"].as_str(), dep["version"].as_str());
                let (Some(n), Some(v)) = (n, v) else { continue };
                deps.push((name.to_owned(), format!("{DOCS_RS_URL}{n}/{v}/")));
            }
        }
        Ok(Self {
            lib,
            rustdoc_args,
            docs_rs_features,
            deps,
        })
    }

    /// The feature sets the crate is documented with: docs.rs's (what docs.rs shows,
    /// including a link that resolves only with a feature docs.rs leaves off), the default
    /// features (what `cargo doc` shows in a project that depends on the crate as it comes:
    /// a link to an item behind a feature is raw text there), then every feature (pages
    /// docs.rs does not render, scanned too); each once.
    fn feature_sets(&self) -> Vec<Vec<String>> {
        let mut sets = vec![self.docs_rs_features.clone()];
        for set in [Vec::new(), vec!["--all-features".to_owned()]] {
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
        sets
    }

    /// rustdoc's flags for the crate: warnings denied, docs.rs's arguments, and each direct
    /// dependency's docs.rs root, as cargo's `-Zrustdoc-map` passes them on docs.rs.
    fn rustdoc_flags(&self) -> Vec<String> {
        let mut f: Vec<String> = ["-D", "warnings", "-Z", "unstable-options"]
            .map(str::to_owned)
            .into();
        f.extend(self.rustdoc_args.iter().cloned());
        for (name, url) in &self.deps {
            f.push("--extern-html-root-url".into());
            f.push(format!("{name}={url}"));
        }
        f
    }
}

/// Every problem of the HTML pages under `dir`: a broken link as `page: link`, raw intra-doc
/// link text as ``page: raw link text [`Name`]``. `root` is the doc root: a link may not leave
/// it.
fn check_tree(root: &Path, dir: &Path) -> Result<Vec<String>> {
    let mut pages = Vec::new();
    collect_html(dir, &mut pages)?;
    pages.sort();
    let mut ids: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    let mut broken = Vec::new();
    for page in &pages {
        let text = read(page)?;
        let here = page.parent().unwrap_or(root);
        for raw in raw_links(own_part(&text)) {
            broken.push(format!("{}: raw link text {raw}", shown(root, page)));
        }
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

/// The local links of a page: `href` of `<a>` and `src` of `<img>`, minus external URLs,
/// rustdoc's script templates and its own files (`static.files/`). Skipped too: the "All
/// Items" sidebar link (`id="all-types"`), which rustdoc writes into the index of every crate
/// it inlines but renders `all.html` only at the real crate root.
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
        if !external && !value.contains("${") && !value.contains("static.files/") {
            out.push(value.replace("&amp;", "&"));
        }
    }
    out
}

/// Intra-doc link text that rustdoc printed as written: ``[`Name`]`` (rendered
/// `[<code>Name</code>]`) or a bare `[Name]`, where `Name` reads as a Rust path, returned as
/// written in the source. Left out, as not prose: comments, scripts, code blocks and
/// signatures (`<pre>`, `class="code-header"`), link texts (rustdoc links a slice type as
/// `<a>[T]</a>`) and, for the bare form, code spans (`` `[u8]` ``, `` `x[i]` ``).
fn raw_links(html: &str) -> Vec<String> {
    let mut prose = html.to_owned();
    for (open, close) in [
        ("<!--", "-->"),
        ("<script", "</script>"),
        ("<pre", "</pre>"),
        ("<a ", "</a>"),
        ("<a>", "</a>"),
    ] {
        prose = without(&prose, open, close);
    }
    prose = without_class(&prose, "code-header");
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("[<code>") {
        rest = &rest[at + "[<code>".len()..];
        let Some(end) = rest.find("</code>") else {
            break;
        };
        let inner = unescape(&rest[..end]);
        if rest[end + "</code>".len()..].starts_with(']') && is_path(&inner) {
            out.push(format!("[`{inner}`]"));
        }
    }
    let text = without(&without(&prose, "<code>", "</code>"), "<", ">");
    let mut rest = text.as_str();
    while let Some(at) = rest.find('[') {
        rest = &rest[at + 1..];
        let Some(end) = rest.find([']', '[']) else {
            break;
        };
        if rest[end..].starts_with(']') {
            let inner = unescape(&rest[..end]);
            if is_path(&inner) {
                out.push(format!("[{inner}]"));
            }
        }
    }
    out
}

/// `text` without each span from `open` to the next `close`, both included.
fn without(text: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        out.push_str(&rest[..at]);
        match rest[at..].find(close) {
            Some(len) => rest = &rest[at + len + close.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// `html` without the elements whose `class` attribute starts with `class` (rustdoc does not
/// nest them in elements of the same name).
fn without_class(html: &str, class: &str) -> String {
    let key = format!(" class=\"{class}");
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find(&key) {
        let Some(open) = rest[..at].rfind('<') else {
            break;
        };
        let name: String = rest[open + 1..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        out.push_str(&rest[..open]);
        let close = format!("</{name}>");
        match rest[at..].find(&close) {
            Some(len) => rest = &rest[at + len + close.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Whether `s` reads as an intra-doc link target: an optional disambiguator (`struct@`), a
/// `::`-separated path of identifiers with optional generics, and an optional `()` or `!`.
/// Not a number, a range or an interval (`[0, 1]`, `[1]`), which are prose.
fn is_path(s: &str) -> bool {
    let s = s.split_once('@').map_or(s, |(kind, rest)| {
        if kind.chars().all(|c| c.is_ascii_lowercase()) {
            rest
        } else {
            s
        }
    });
    let s = s
        .strip_suffix("()")
        .or_else(|| s.strip_suffix('!'))
        .unwrap_or(s);
    let s = match s.find('<') {
        Some(at) if s.ends_with('>') => {
            let generics = &s[at + 1..s.len() - 1];
            let ok = |c: char| c.is_ascii_alphanumeric() || "_:<>, &'[];".contains(c);
            if !generics.chars().all(ok) {
                return false;
            }
            &s[..at]
        }
        _ => s,
    };
    !s.is_empty()
        && s.split("::").all(|seg| {
            seg.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
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
mod tests;
