//! The comparison harness of `onewayalloc`: what its benchmarks and experiments are
//! built from, shared by the `onewayalloc-harness` binary (its subcommands) and the
//! criterion benchmarks (`benches/alloc/`).
//!
//! - [`query`]: Netdata's context query, generic over the allocator;
//! - [`contenders`]: the allocators it runs on (glibc malloc, mimalloc, bumpalo,
//!   bump-scope, onewayalloc), listed once, behind one `Arena` trait, and the order
//!   and the result check of an interleaved run;
//! - [`worker`]: a contender's allocator running queries and what it used;
//! - [`timings`]: the columns of Netdata's table;
//! - [`json`]: the context query's answer as JSON (the HTTP experiment's body);
//! - [`parse_json`]: JSON parsed into the arena with the derive, against `std` types;
//! - [`linear`]: the pre-faulted linear buffer, the speed-of-light reference;
//! - [`compat`]: mimalloc and bump-scope as `allocator_api2` 0.2 allocators;
//! - [`output`], [`chart`], [`progress`]: tables, the SVG chart, the progress bar.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

pub mod chart;
pub mod compat;
pub mod contenders;
pub mod json;
pub mod linear;
pub mod output;
pub mod owned_value;
pub mod parse_json;
pub mod progress;
pub mod query;
pub mod timings;
pub mod worker;
