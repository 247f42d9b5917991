//! Guides, in the documentation only (this module has no items).
//!
//! - [`from_bumpalo`]: moving a program from bumpalo, call by call.

// The ported program's text is a doctest; the bumpalo original is shown here and
// built and run with bumpalo by `tests/outside` (so the crate's own tests never
// build bumpalo); `tests/guide_programs.rs` checks that the two differ only in
// imports, type names and the lines marked `// ported:`.
#[doc = include_str!("from_bumpalo.md")]
#[doc = "```rust,ignore"]
#[doc = include_str!("bumpalo_original.rs")]
#[doc = "```"]
#[doc = ""]
#[doc = "The same program on the arena. It differs in its imports, its type names, and"]
#[doc = "the lines marked `// ported:`, the exceptions of the tables above:"]
#[doc = ""]
#[doc = "```"]
#[doc = include_str!("ported.rs")]
#[doc = "```"]
pub mod from_bumpalo {}
