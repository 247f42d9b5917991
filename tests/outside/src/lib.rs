//! The README's and the crate front page's examples, compiled and run as doctests of
//! a crate whose only dependency is `onewayalloc`: what a user who copies them gets.
//! `cargo test -p onewayalloc-outside --doc`
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![doc(test(attr(cfg_attr(feature = "nightly", feature(allocator_api)))))]

/// The README.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct Readme;

/// The crate front page (`src/lib.rs`).
#[cfg(doctest)]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/front_page.md"))]
pub struct FrontPage;
