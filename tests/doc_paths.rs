//! Every example a user might copy names `allocator_api2` and `hashbrown` through
//! the crate's re-exports (`onewayalloc::allocator_api2`, `onewayalloc::hashbrown`)
//! or the `collections` aliases. The crate's own doctests cannot see the
//! difference (both crates are its dependencies), but a user's crate with only
//! `onewayalloc` in its `Cargo.toml` fails on a direct path with E0432/E0433.
//! `tests/outside` builds the README and the front page as such a crate; this test
//! checks the code blocks of every doc comment in `src/`, of the README and of the
//! guide it links to (`docs/GUIDE.md`).

use std::path::Path;

/// The code lines of the fenced code blocks in `text` (Markdown), as (line number,
/// line). `doc_prefix` strips doc-comment markers first (`None` for plain
/// Markdown); lines outside doc comments are skipped.
fn code_lines(text: &str, doc_prefix: bool) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    // Inside a fenced block, and whether it is Rust.
    let mut in_block = false;
    let mut in_code = false;
    for (number, line) in text.lines().enumerate() {
        let line = if doc_prefix {
            let trimmed = line.trim_start();
            let Some(rest) = trimmed
                .strip_prefix("///")
                .or_else(|| trimmed.strip_prefix("//!"))
            else {
                continue;
            };
            rest.strip_prefix(' ').unwrap_or(rest)
        } else {
            line
        };
        if line.trim_start().starts_with("```") {
            if in_block {
                in_block = false;
                in_code = false;
            } else {
                let info = line.trim_start().trim_start_matches('`');
                // Code blocks that are not Rust (``text``, ``sh``) are not copied as
                // Rust.
                in_block = true;
                in_code = info.is_empty()
                    || info.split(',').any(|t| {
                        let t = t.trim();
                        matches!(t, "rust" | "no_run" | "should_panic")
                            || t.starts_with("compile_fail")
                            || t.starts_with("edition")
                    });
            }
            continue;
        }
        if in_code {
            lines.push((number + 1, line.to_string()));
        }
    }
    lines
}

/// Whether `line` names `allocator_api2::` or `hashbrown::` other than through
/// `onewayalloc::`.
fn direct_path(line: &str) -> Option<&'static str> {
    for krate in ["allocator_api2", "hashbrown"] {
        let pattern = format!("{krate}::");
        let mut from = 0;
        while let Some(at) = line[from..].find(&pattern) {
            let at = from + at;
            let before = &line[..at];
            // `onewayalloc::allocator_api2::...`, or inside `onewayalloc::{...}`.
            let qualified = before.ends_with("onewayalloc::")
                || before
                    .rfind("onewayalloc::{")
                    .is_some_and(|open| !before[open..].contains('}'));
            let part_of_name = before
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if !qualified && !part_of_name {
                return Some(krate);
            }
            from = at + pattern.len();
        }
        // `use allocator_api2;` or `use hashbrown as hb;`
        if line.trim_start().starts_with(&format!("use {krate}")) {
            return Some(krate);
        }
    }
    None
}

fn check(path: &Path, doc_prefix: bool, problems: &mut Vec<String>) {
    let text = std::fs::read_to_string(path).expect("readable");
    for (number, line) in code_lines(&text, doc_prefix) {
        // Hidden doctest lines (`# ...`) are copied too when a user expands them.
        if let Some(krate) = direct_path(&line) {
            problems.push(format!(
                "{}:{number}: `{}` names {krate} directly; use onewayalloc::{krate} or \
                 onewayalloc::collections",
                path.display(),
                line.trim()
            ));
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "reads source files, which Miri's isolation forbids; it checks text, not memory"
)]
fn examples_use_the_re_exports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(root.join("src")).expect("src/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            check(&path, true, &mut problems);
            files += 1;
        }
    }
    check(&root.join("README.md"), false, &mut problems);
    check(&root.join("docs/GUIDE.md"), false, &mut problems);
    assert!(files >= 10, "found only {files} source files");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checker_finds_direct_paths() {
    assert_eq!(
        direct_path("use allocator_api2::vec::Vec;"),
        Some("allocator_api2")
    );
    assert_eq!(
        direct_path("let m = hashbrown::HashMap::new_in(&a);"),
        Some("hashbrown")
    );
    assert_eq!(
        direct_path("use onewayalloc::allocator_api2::vec::Vec;"),
        None
    );
    assert_eq!(
        direct_path("use onewayalloc::{hashbrown::HashMap, OneWayAlloc};"),
        None
    );
    assert_eq!(direct_path("let x = 1; // no paths"), None);
    let doc = "/// ```\n/// use hashbrown::HashMap;\n/// ```\n/// use hashbrown::Outside;\n";
    assert_eq!(code_lines(doc, true).len(), 1);
    let md = "```text\nuse hashbrown::X;\n```\n```rust\nuse hashbrown::Y;\n```\n";
    let lines = code_lines(md, false);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].1.contains('Y'));
}
