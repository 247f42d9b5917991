//! Extracts the crate front page (the `//!` lines of `src/lib.rs`) into a Markdown
//! file that `src/lib.rs` here runs as doctests.

use std::path::PathBuf;

fn main() {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../src/lib.rs");
    println!("cargo::rerun-if-changed={}", lib.display());
    let source = std::fs::read_to_string(&lib).expect("the crate's src/lib.rs");
    let front_page: String = source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .map(|line| format!("{}\n", line.strip_prefix(' ').unwrap_or(line)))
        .collect();
    assert!(front_page.contains("```"), "the front page has examples");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("front_page.md");
    std::fs::write(out, front_page).expect("write the front page");
}
