//! The One Way Allocator: a fast single-threaded arena for work whose allocations
//! can all be dropped together when the work ends (one query, one request, one
//! frame). It is the Rust home of the allocator [Netdata] built for its context
//! queries, made idiomatic: `&OneWayAlloc` implements the [`Allocator`] API, so
//! `Vec`, `Box` and `hashbrown::HashMap` live in it, and the borrow checker proves
//! that nothing allocated in it is alive when it is reset.
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections as arena; // arena::Vec beside std's Vec
//!
//! let mut arena = OneWayAlloc::new();
//! for query in 0..3 {
//!     let mut dims = arena::Vec::new_in(&arena);
//!     let mut by_name = arena::HashMap::new_in(&arena);
//!     for i in 0..100 {
//!         let name: &str = arena.alloc_str(&format!("dim{i}"));
//!         by_name.insert(name, dims.len());
//!         dims.push(i as f64 * query as f64);
//!     }
//!     assert_eq!(dims[by_name["dim7"]], 7.0 * query as f64);
//!     drop((dims, by_name));
//!     arena.reset(); // constant time; every page is kept for the next query
//! }
//! assert_eq!(arena.stats().page_allocations, 1);
//! ```
//!
//! Only `onewayalloc` needs to be in your `Cargo.toml`: [`collections`] names the
//! arena versions of `Vec`, `Box`, `HashMap`, `HashSet` and `String`, with
//! [`vec!`](crate::vec) and `collect_in`, and the crate re-exports the
//! [`allocator_api2`] and [`hashbrown`] versions it implements `Allocator` for.
//! Import the module (`use onewayalloc::collections as arena;`, then `arena::Vec`,
//! `arena::String`) rather than its types, so that `Vec` and `String` keep naming
//! `std`'s in the same module; the arena `String` converts to `std`'s with `into()`.
//!
//! **Coming from bumpalo?** [`guide::from_bumpalo`] maps every bumpalo call and type
//! to this crate's (the calls keep bumpalo's names), marks the few exceptions, and
//! ports a bumpalo program.
//!
//! # When to use it, and when not
//!
//! Use an arena when a unit of work (a query, a request, a frame, a compiler pass)
//! allocates many small things that all die together: allocation is a pointer
//! bump, freeing is one `reset`, and the pages are reused by the next unit of work
//! without asking the system allocator again. [`OneWayAlloc::scope`] gives nested
//! units constant-time rollback, `with_scratch` (with the `std` feature) gives each
//! thread a retained arena for per-request scratch work, [`Pool`] (with `std`)
//! shares retained arenas between the threads of a thread pool or an async
//! service with a bound on their idle memory (it says [which to
//! pick](Pool#which-per-request-strategy-to-pick)), and
//! [`set_limit`](OneWayAlloc::set_limit) caps what one unit of work may take.
//!
//! Do not use it for:
//! - **long-lived data**: nothing is freed until `reset` or drop, so an arena that
//!   lives as long as the program keeps its high-water memory forever;
//! - **data freed piecemeal**: `deallocate` only rolls back the most recent block,
//!   so a queue or cache that frees in another order only grows until reset;
//! - **sharing across threads**: the arena is `Send` but not `Sync`; use one arena
//!   per worker (or `with_scratch`), and move results out before the reset, or (with
//!   `std`) [`SyncOneWayAlloc`], one arena that many threads allocate into at once,
//!   each in pages of its own;
//! - **values that need their destructors run**, placed with the plain calls: the
//!   arena reclaims memory without dropping the values in it (an arena `Vec` or
//!   `Box` still drops its contents). Place them with
//!   [`alloc_owned`](OneWayAlloc::alloc_owned) instead, and the arena drops them at
//!   `reset`, at the end of their scope and at drop.
//!
//! # How it works
//!
//! - **Pages.** The arena obtains pages from a backing allocator (the global one by
//!   default). The first is 64 KiB (or bigger, see
//!   [`with_size_hint`](OneWayAlloc::with_size_hint)); each new page targets twice the
//!   previous target, 64, 128, 256, 512 KiB, up to 1 MiB, header included and rounded
//!   up to the OS page size. A request too big for its target gets a page of exactly
//!   the size it needs, without raising later targets.
//! - **Allocation** bumps a cursor in the current page: align, compare, bump,
//!   return. When the current page is full, the first retained unused page that
//!   fits is moved right after it and becomes current; only when none fits is a new
//!   page obtained.
//! - **Growing buffers.** `grow` extends the most recent block in place while its
//!   page has room. When it must leave the page, it takes the *largest* unused page
//!   that fits, or else a new page with room to double once more in place, so a
//!   `Vec` that keeps doubling is copied at most every other doubling, and after a
//!   reset at most once. Any other block (a `Vec` with something allocated after it)
//!   moves like a new request: a bump in the current page and a copy, inline.
//! - **Reset** ([`reset`](OneWayAlloc::reset)) makes the first page current again
//!   and every other page unused, in constant time. Nothing is freed or zeroed.
//! - **Drop** returns every page to the backing allocator.
//! - **Threads.** An arena is `Send` but not `Sync`: one arena per worker.
//!   [`SyncOneWayAlloc`] (with `std`) is `Sync`: it gives each thread that allocates
//!   in it an arena of its own, found without an atomic operation, and resets them all
//!   together.
//!
//! # The Netdata calls
//!
//! | Netdata (C)                          | `onewayalloc` (Rust)                        |
//! |--------------------------------------|---------------------------------------------|
//! | `onewayalloc_create(size_hint)`      | [`OneWayAlloc::with_size_hint`], [`OneWayAlloc::new`] |
//! | `onewayalloc_mallocz(owa, size)`     | [`OneWayAlloc::alloc_bytes`]                |
//! | `onewayalloc_callocz(owa, n, size)`  | [`OneWayAlloc::alloc_zeroed`]               |
//! | `onewayalloc_strdupz(owa, s)`        | [`OneWayAlloc::alloc_str`]                  |
//! | `onewayalloc_memdupz(owa, p, size)`  | [`OneWayAlloc::alloc_slice_copy`]           |
//! | `onewayalloc_freez(owa, p)`          | dropping an arena `Vec`/`Box` (rolls back the most recent block) |
//! | `onewayalloc_reset(owa)`             | [`OneWayAlloc::reset`]                      |
//! | `onewayalloc_destroy(owa)`           | dropping the arena                          |
//!
//! Slices come from bumpalo's calls, with bumpalo's names and generic parameters:
//! [`alloc_slice_clone`](OneWayAlloc::alloc_slice_clone),
//! [`alloc_slice_fill_copy`](OneWayAlloc::alloc_slice_fill_copy),
//! [`alloc_slice_fill_clone`](OneWayAlloc::alloc_slice_fill_clone),
//! [`alloc_slice_fill_default`](OneWayAlloc::alloc_slice_fill_default) and
//! [`alloc_slice_fill_iter`](OneWayAlloc::alloc_slice_fill_iter), and
//! [`alloc_slice_fill_with`](OneWayAlloc::alloc_slice_fill_with) (its closure is an
//! `impl FnMut`, so a turbofish names only `T`); from any iterator
//! with [`alloc_iter`](OneWayAlloc::alloc_iter), grown in place; and uninitialized
//! with [`alloc_uninit`](OneWayAlloc::alloc_uninit) and
//! [`alloc_uninit_slice`](OneWayAlloc::alloc_uninit_slice).
//!
//! Every allocating call of the arena, of [`Scope`] and of the arena
//! [`String`](collections::String) has a `try_` twin that returns [`AllocError`]
//! instead of panicking (on size overflow) or calling [`handle_alloc_error`] (when
//! the backing allocator refuses a page, or the limit is reached), and
//! [`try_format_in!`] is the fallible [`format_in!`]; the collections report the
//! same through `try_reserve`. After a failed call the arena still works.
//!
//! # Cargo features
//!
//! - `std` (default): [`with_scratch`], [`Pool`] and the OS page size from `page_size`.
//!   Without it the crate is `no_std` + `alloc` and rounds pages to 4 KiB.
//! - `nightly` (nightly toolchain): `allocator-api2` re-exports the standard
//!   library's `Allocator`, so `std::vec::Vec::new_in(&arena)` and
//!   `std::boxed::Box::new_in` work too.
//! - `serde`: `Serialize` for the arena [`String`](collections::String), and through
//!   the `serde` features of allocator-api2 and hashbrown for the arena `Vec`, sized
//!   `Box`, `HashMap` and `HashSet`; see the `serde` module for what does not
//!   serialize and why. It needs `std`.
//! - `allocator-api2-04`: allocator-api2 0.4's `Allocator` for `&OneWayAlloc` too,
//!   for crates that speak 0.4 (re-exported as `allocator_api2_04`); 0.2 stays the
//!   default.
//! - `separate-blocks`: the sanitizer mode. Every allocation is its own block of
//!   the backing allocator, so AddressSanitizer, Valgrind and Miri see each one.
//!   `deallocate` releases a block at once; `reset`, the end of a scope and drop
//!   release every block still outstanding, so a pointer kept past them is reported
//!   as a use-after-free and nothing is left to leak. It switches on by itself under
//!   `-Zsanitizer=address`; [`SEPARATE_BLOCKS`] tells which mode a build runs.
//!
//! [Netdata]: https://github.com/netdata/netdata
//! [`handle_alloc_error`]: allocator_api2::alloc::handle_alloc_error
#![no_std]
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![doc(test(attr(cfg_attr(feature = "nightly", feature(allocator_api)))))]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod allocator_impl;
mod arena;
// Freeing and growing by address alone, for the C API in capi/ (hidden).
mod by_address;
pub mod collections;
mod engine;
pub mod guide;
mod owned;
#[cfg(feature = "std")]
mod pool;
mod scope;
#[cfg(feature = "std")]
mod scratch;
#[cfg(feature = "serde")]
pub mod serde;
mod slices;
mod stats;
#[cfg(feature = "std")]
mod sync_arena;

use engine::{Checkpoint, Core, arith, page_heap};

/// Bytes at the start of every page that hold its bookkeeping (a multiple of 16).
/// A page of `size` bytes offers `size - PAGE_HEADER_SIZE` bytes of payload.
///
/// # Examples
/// ```
/// use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE};
/// let arena = OneWayAlloc::new();
/// arena.alloc_bytes(64 * 1024 - PAGE_HEADER_SIZE); // exactly fills the first page
/// assert_eq!(arena.stats().page_allocations, if onewayalloc::SEPARATE_BLOCKS { 0 } else { 1 });
/// ```
pub const PAGE_HEADER_SIZE: usize = arith::HEADER_SIZE;

/// Whether this build runs the sanitizer mode, where every allocation is its own
/// block of the backing allocator (under `-Zsanitizer=address`, or with the cargo
/// feature `separate-blocks`). Code and tests that depend on the page policy can
/// check it.
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let expected_pages = if onewayalloc::SEPARATE_BLOCKS { 0 } else { 1 };
/// assert_eq!(arena.stats().pages, expected_pages);
/// ```
pub const SEPARATE_BLOCKS: bool = cfg!(onewayalloc_separate_blocks);

pub use allocator_api2::alloc::{AllocError, Allocator, Global};
pub use arena::OneWayAlloc;
#[doc(hidden)]
pub use by_address::ByAddressError;
#[doc(hidden)]
pub use page_heap::mapped_spans;
pub use page_heap::{
    DEFAULT_FREE_PAGE_LIMIT, FREE_PAGE_DECAY_EPOCH, HUGE_PAGES_AFTER, decay_free_pages,
    free_page_bytes, free_page_limit, release_free_pages, set_free_page_limit,
};
#[cfg(feature = "std")]
pub use pool::{Pool, PoolArena, PoolStats, PooledArena, SyncPool};
pub use scope::Scope;
#[cfg(feature = "std")]
pub use scratch::with_scratch;
pub use stats::{PageInfo, Stats};
#[cfg(feature = "std")]
pub use sync_arena::SyncOneWayAlloc;

/// The `allocator-api2` crate this one implements `Allocator` from (version 0.2, the
/// one `hashbrown` uses), re-exported so its `Vec` and `Box` match.
pub use allocator_api2;
/// The `allocator-api2` crate at version 0.4 (feature `allocator-api2-04`), whose
/// own `Allocator` trait `&OneWayAlloc` implements too, re-exported so its `Vec` and
/// `Box` match.
#[cfg(feature = "allocator-api2-04")]
pub use allocator_api2_04;
/// The `hashbrown` crate, re-exported so its `HashMap` matches the arena's `Allocator`.
pub use hashbrown;
/// `#[derive(DeserializeIn)]` (feature `derive`): see [`serde::DeserializeIn`] and
/// the [`serde`] module for the serde attributes it honours.
///
/// ```
/// #[derive(onewayalloc::DeserializeIn)]
/// struct Point<'a> {
///     name: &'a str,
///     value: f64,
/// }
///
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut json = serde_json::Deserializer::from_str(r#"{"name":"user","value":1.5}"#);
/// let point: Point = arena.deserialize(&mut json).unwrap();
/// assert_eq!((point.name, point.value), ("user", 1.5));
/// ```
#[cfg(feature = "derive")]
pub use onewayalloc_derive::DeserializeIn;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
