//! Criterion benchmarks: onewayalloc against bumpalo, bump-scope, the global
//! allocator (the system `malloc`: no `#[global_allocator]` is set) and mimalloc.
//!
//! ```text
//! cargo bench -p onewayalloc-harness --bench alloc                # everything, about 4 minutes
//! cargo bench -p onewayalloc-harness --bench alloc -- vec_push    # one group
//! ```
//!
//! One module per kind of work (`calls.rs`, `collections.rs`, `slice_from_iter.rs`,
//! `reset.rs`, `owned.rs`), each with one generic body per measured operation; the contenders
//! are in `contenders.rs`.
//!
//! Every group runs the same work on each contender and sets `Throughput::Elements`,
//! so criterion prints a rate per allocation (or push, or insert). Arenas are created
//! once per benchmark and reset after every iteration, so their pages or chunks are
//! warm, as they are in a long-running program; the `malloc`-like contenders free
//! what they allocated at the same point instead. bump-scope runs twice: with
//! `reset` (keeps only its largest chunk) and with `reset_to_start` (keeps them
//! all, like onewayalloc).
//!
//! - `small_mixed`: 100,000 allocations of 8 to 64 bytes (8-aligned; sizes from a
//!   fixed seed), then a reset.
//! - `alloc_struct32`, `alloc_str`, `alloc_slice_copy_1k`: the typed calls, 10,000
//!   (1,000 for the 1 KiB copies) per reset.
//! - `vec_push_1m`: 1,000,000 `u64` pushes into a vector that starts empty (grows
//!   in place in the arenas).
//! - `hashmap_insert_100k`: 100,000 inserts into a `hashbrown::HashMap<u64, u64>`
//!   with its default hasher. bump-scope takes part through an adapter that
//!   forwards to its own `Allocator` trait exactly as its `allocator-api2-02`
//!   feature does (see `onewayalloc_harness::compat`); mimalloc through its
//!   `GlobalAlloc`.
//! - `slice_from_iter_1k`: 1,000 slices of 1,000 `u32` from a `map` iterator per
//!   reset, by each arena's own calls (`alloc_slice_fill_iter`, `alloc_iter`, ...).
//! - `reset`: a reset of an arena holding 1 page (chunk) and 10,000 pages. See
//!   `reset.rs` for what is and is not measured.
//! - `owned_values_1m`: 1,000,000 values holding a `String`, dropped by the arena
//!   (`alloc_owned` then `reset`) or by hand (std, bumpalo and bump-scope boxes),
//!   and typed-arena. See `owned.rs`.
//!
//! After criterion, when the `reset` group was measured, the binary prints the
//! reset-after-use table. The contenders' ratios come from criterion's own results:
//! `scripts/bench.sh` saves them as a baseline (`-- --save-baseline NAME`) and
//! compares the contenders of each group with `critcmp NAME -g '^([^/]+/)'`.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod calls;
mod collections;
mod contenders;
mod owned;
mod reset;
mod slice_from_iter;

use std::sync::atomic::Ordering;
use std::time::Duration;

use criterion::Criterion;

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    calls::bench_calls(&mut c);
    collections::bench_vec_push(&mut c);
    collections::bench_vec_push_cold(&mut c);
    collections::bench_hashmap_insert(&mut c);
    slice_from_iter::bench_slice_from_iter(&mut c);
    reset::bench_reset(&mut c);
    owned::bench_owned_values(&mut c);
    c.final_summary();
    // The reset-after-use table goes with the reset benchmarks: it runs when
    // criterion measured them in this run, not under a filter that skips them nor
    // under `cargo test --benches` (which runs each benchmark once, without the
    // `--bench` argument that `cargo bench` passes).
    let benching = std::env::args().any(|arg| arg == "--bench");
    if benching && reset::RESET_MEASURED.load(Ordering::Relaxed) {
        reset::print_resets(&reset::reset_after_use());
    }
}
