//! The derive's compile errors, checked with trybuild: every serde attribute it does
//! not honour is an error naming it, spanned at it, and all of them are reported.
//!
//! Stable only (the compiler's messages differ between toolchains) and not under
//! Miri: `cargo test -p onewayalloc-derive`.

#[cfg(not(miri))]
#[test]
fn unsupported_attributes_are_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
