//! The page engine that both arena types are thin layers over.
//!
//! [`OneWayAlloc`](crate::OneWayAlloc) is one [`Core`] behind a `&self` API;
//! [`SyncOneWayAlloc`](crate::SyncOneWayAlloc) is a list of `OneWayAlloc`s, one per
//! thread. Everything that touches raw memory or decides where a block goes lives
//! here:
//!
//! - `arith`: the page-size and alignment arithmetic (no `unsafe`, tested and
//!   fuzzed on its own);
//! - `page`: page headers and the page list;
//! - `bump`: the bump cursor, its inlined fast path and `#[cold]` slow path,
//!   reset and release;
//! - `page_heap`: where pages come from (the backing allocator, or the
//!   process-wide heap of OS spans for `new()`'s large pages);
//! - `separate`: the sanitizer mode, where every allocation is its own block;
//! - `failure`: one allocation path for the plain and the `try_` calls.
//!
//! (The module is called `engine` rather than `core` so that it does not shadow the
//! `core` crate in paths.)

// In sanitizer mode the page arithmetic serves only the bad-input checks.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
pub(crate) mod arith;
#[cfg(not(onewayalloc_separate_blocks))]
pub(crate) mod bump;
pub(crate) mod failure;
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
pub(crate) mod page;
pub(crate) mod page_heap;
#[cfg(onewayalloc_separate_blocks)]
pub(crate) mod separate;

/// The allocation state behind every arena: pages and a bump cursor, or in
/// sanitizer mode a block of the backing allocator for every allocation.
#[cfg(not(onewayalloc_separate_blocks))]
pub(crate) type Core<A> = bump::BumpCore<A>;
#[cfg(onewayalloc_separate_blocks)]
pub(crate) type Core<A> = separate::SeparateBlocks<A>;
/// A saved position of the [`Core`], for scopes.
#[cfg(not(onewayalloc_separate_blocks))]
pub(crate) type Checkpoint = bump::Checkpoint;
#[cfg(onewayalloc_separate_blocks)]
pub(crate) type Checkpoint = separate::Checkpoint;
