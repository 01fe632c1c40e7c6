//! Tests of the doc-links step: the links it finds in rustdoc's pages, what it reports as
//! broken, and what it reads from cargo's metadata.

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
#[test]
fn flags_raw_intra_doc_link_text() {
    // What rustdoc prints for ``[`rand_core::Rng`]`` and `[Digest]` it had no page for.
    let html = r#"<div class="docblock"><p>Implements [<code>rand_core::Rng</code>] and
            [Digest]; see [<code>Vec&lt;u8&gt;</code>] and [<code>fn@fill</code>].</p></div>"#;
    assert_eq!(
        raw_links(html),
        [
            "[`rand_core::Rng`]",
            "[`Vec<u8>`]",
            "[`fn@fill`]",
            "[Digest]"
        ]
    );
}

#[test]
fn leaves_code_signatures_links_and_prose_brackets_alone() {
    let html = r##"<!--[if lte IE 11]><![endif]-->
            <pre class="rust item-decl"><code>#[non_exhaustive]
            pub fn fill(dest: &amp;mut [T])</code></pre>
            <h4 class="code-header">pub fn f(&amp;self, b: &amp;mut [<a class="primitive" href="x">u8</a>])</h4>
            <div class="docblock"><p>Fills <code>&amp;mut [u8]</code> and <code>x[i]</code>, an
            array <code>[u64; 4]</code>, a probability in [0, 1], note [1]; links
            <a href="struct.Rng.html"><code>Rng</code></a> and <a href="p.html">[T]</a>.</p>
            <pre class="rust rust-example-rendered"><code>let a = [Rng; 2]; v[idx]</code></pre>
            <p>A code span in brackets: [<code>a</code>, <code>b</code>].</p></div>
            <script>let x = [Rng];</script>"##;
    assert!(raw_links(html).is_empty(), "{:?}", raw_links(html));
}

#[test]
fn paths_and_not_paths() {
    for p in [
        "Rng",
        "rand_core::Rng",
        "Self::new",
        "fill()",
        "vec!",
        "struct@X",
        "Vec<u8>",
    ] {
        assert!(is_path(p), "{p}");
    }
    for p in [
        "0, 1", "1", "u64; 4", "a b", "", "::", "x-y", "Vec<u8", "a<b>c",
    ] {
        assert!(!is_path(p), "{p}");
    }
}

#[test]
fn rustdoc_own_files_are_not_checked() {
    let html = r#"<link href="../static.files/a.css"><a href="../static.files/x.html">s</a>"#;
    assert!(links(html).is_empty());
}
#[test]
fn documents_the_publishable_members() {
    let meta: Value = serde_json::from_str(
        r#"{"workspace_members": ["a", "b", "c"], "packages": [
                {"id": "b", "name": "scalrand", "publish": null},
                {"id": "a", "name": "xtask", "publish": []},
                {"id": "c", "name": "scalrand-os", "publish": ["crates-io"]},
                {"id": "d", "name": "rand_core", "publish": null}
            ]}"#,
    )
    .unwrap();
    assert_eq!(publishable(&meta), ["scalrand", "scalrand-os"]);
}

#[test]
fn a_docs_rs_build_from_metadata() {
    let meta: Value = serde_json::from_str(
        r#"{"packages": [
                {"id": "a", "name": "scalrand-x", "version": "0.1.0",
                 "targets": [{"kind": ["bin"], "name": "x-cli"}, {"kind": ["lib"], "name": "scalrand-x"}],
                 "metadata": {"docs": {"rs": {"features": ["std", "serde"], "rustdoc-args": ["--cfg", "docsrs"]}}}},
                {"id": "b", "name": "rand_core", "version": "0.10.1", "targets": []},
                {"id": "c", "name": "proptest", "version": "1.6.0", "targets": []}
            ], "resolve": {"nodes": [{"id": "a", "deps": [
                {"name": "rand_core", "pkg": "b", "dep_kinds": [{"kind": null}]},
                {"name": "proptest", "pkg": "c", "dep_kinds": [{"kind": "dev"}]}
            ]}]}}"#,
    )
    .unwrap();
    let k = Krate::new(&meta, "scalrand-x").unwrap();
    assert_eq!(k.lib, "scalrand_x");
    assert_eq!(
        k.feature_sets(),
        [
            vec!["--features", "std,serde"],
            vec![],
            vec!["--all-features"]
        ]
    );
    assert_eq!(
        k.rustdoc_flags(),
        [
            "-D",
            "warnings",
            "-Z",
            "unstable-options",
            "--cfg",
            "docsrs",
            "--extern-html-root-url",
            "rand_core=https://docs.rs/rand_core/0.10.1/"
        ]
    );
    assert!(Krate::new(&meta, "missing").is_err());
}

#[test]
fn finds_inline_image_and_reference_links_outside_code() {
    let text = "See [a](docs/a.md) and ![b](b.svg), `[c](c.md)`.\n\n```\n[d](d.md)\n```\n\
                    [e]: https://docs.rs/e\n";
    assert_eq!(
        markdown_links(text),
        ["docs/a.md", "b.svg", "https://docs.rs/e"]
    );
}

/// Every packaged crate's README as it stands: no link crates.io cannot follow.
#[test]
fn the_packaged_readmes_link_only_to_docs_rs() {
    let meta = metadata().unwrap();
    assert_eq!(readme_links(&meta).unwrap(), Vec::<String>::new());
}
