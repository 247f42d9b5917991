//! The README's, the guide's (`docs/GUIDE.md`) and the crate front page's examples, compiled and run as doctests of
//! a crate whose only dependency is `onewayalloc`: what a user who copies them gets.
//! Also the migration guide's two programs: the bumpalo original, run with bumpalo
//! (the one other dependency, used by nothing else), and the ported one.
//! `cargo test -p onewayalloc-outside --doc`
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![doc(test(attr(cfg_attr(feature = "nightly", feature(allocator_api)))))]

/// The README.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct Readme;

/// The guide that the README links to (`docs/GUIDE.md`): its examples moved there
/// from the README.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/GUIDE.md")]
pub struct Guide;

/// The crate front page (`src/lib.rs`).
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/front_page.md"))]
pub struct FrontPage;

/// The migration guide's bumpalo program (`src/guide/bumpalo_original.rs`), built and
/// run with bumpalo: it asserts the same report as the ported program below.
#[cfg(doctest)]
#[doc = "```"]
#[doc = include_str!("../../../src/guide/bumpalo_original.rs")]
#[doc = "```"]
pub struct BumpaloOriginal;

/// The migration guide's ported program (`src/guide/ported.rs`), as a user's crate
/// builds it.
#[cfg(doctest)]
#[doc = "```"]
#[doc = include_str!("../../../src/guide/ported.rs")]
#[doc = "```"]
pub struct PortedFromBumpalo;
