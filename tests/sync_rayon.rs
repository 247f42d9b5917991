//! rayon's `par_iter().map(..)` allocating into one `SyncOneWayAlloc` (issue 31,
//! bumpalo's issue #83): the vectors built on rayon's threads reach the calling
//! thread without a copy, hold what was written, do not overlap, grow on another
//! thread, and a reset keeps the pages for the next round.
//!
//! Not under Miri: rayon's work queues (crossbeam-epoch) cast integers to pointers,
//! which Miri refuses under the `-Zmiri-strict-provenance` that CI's Miri lanes use
//! ("integer-to-pointer casts ... are not supported"). Miri checks the same
//! properties with `std::thread` in tests/sync_arena.rs; ThreadSanitizer runs this
//! file (.ci/run).
#![cfg(not(miri))]
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::allocator_api2::vec::Vec as AVec;
use onewayalloc::{SEPARATE_BLOCKS, SyncOneWayAlloc};
use rayon::prelude::*;

/// Vectors per round.
const VECTORS: u32 = 20_000;

/// Threads of the pool.
const THREADS: usize = 4;

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool")
}

/// The elements of the `i`-th vector: 1 to 16 of them.
fn items(i: u32) -> impl Iterator<Item = u64> {
    (0..1 + i % 16).map(move |k| u64::from(i) << 8 | u64::from(k))
}

/// Builds every vector on the pool; each comes with the address its buffer had on
/// the thread that built it.
fn build<'a>(
    arena: &'a SyncOneWayAlloc,
    pool: &rayon::ThreadPool,
) -> Vec<(AVec<u64, &'a SyncOneWayAlloc>, usize)> {
    pool.install(|| {
        (0..VECTORS)
            .into_par_iter()
            .map(|i| {
                let mut v = AVec::new_in(arena);
                v.extend(items(i));
                let addr = v.as_ptr().addr();
                (v, addr)
            })
            .collect()
    })
}

#[test]
fn vectors_built_on_rayon_threads_are_read_on_the_calling_thread_without_a_copy() {
    let arena = SyncOneWayAlloc::new();
    let pool = pool();
    let built = build(&arena, &pool);
    assert_eq!(built.len(), VECTORS as usize);
    let mut spans = Vec::new();
    for (i, (v, addr)) in built.iter().enumerate() {
        assert!(v.iter().copied().eq(items(i as u32)), "vector {i}");
        // The same buffer the building thread wrote: not moved nor copied since.
        assert_eq!(v.as_ptr().addr(), *addr, "vector {i} moved");
        spans.push((*addr, *addr + v.len() * size_of::<u64>()));
    }
    // No two vectors share a byte (they came from several threads' serial arenas).
    spans.sort_unstable();
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "overlapping vectors {pair:?}");
    }
}

#[test]
fn a_vector_built_on_a_rayon_thread_grows_on_the_calling_thread() {
    let arena = SyncOneWayAlloc::new();
    let pool = pool();
    let mut built = build(&arena, &pool);
    for (i, (v, _)) in built.iter_mut().enumerate().step_by(97) {
        v.extend(items(i as u32));
        let expected: Vec<u64> = items(i as u32).chain(items(i as u32)).collect();
        assert_eq!(v.as_slice(), expected, "vector {i}");
    }
    // The others are intact after those grew.
    for (i, (v, _)) in built.iter().enumerate() {
        if i % 97 != 0 {
            assert!(v.iter().copied().eq(items(i as u32)), "vector {i}");
        }
    }
}

#[test]
fn reset_after_a_parallel_round_keeps_the_pages_for_the_next() {
    let mut arena = SyncOneWayAlloc::new();
    let pool = pool();
    let mut page_allocations = Vec::new();
    for round in 0..3 {
        let built = build(&arena, &pool);
        let sum: u64 = built.iter().flat_map(|(v, _)| v.iter()).sum();
        let expected: u64 = (0..VECTORS).flat_map(items).sum();
        assert_eq!(sum, expected, "round {round}");
        drop(built);
        let stats = arena.stats();
        assert!(stats.used >= expected_bytes(), "round {round}: {stats:?}");
        page_allocations.push(stats.page_allocations);
        arena.reset();
        let after = arena.stats();
        assert_eq!(after.used, 0, "round {round}");
        if !SEPARATE_BLOCKS {
            // Every page is kept, whichever thread obtained it (in the sanitizer
            // mode every block is its own allocation, released by the reset).
            assert_eq!(after.capacity, stats.capacity, "round {round}");
            assert_eq!(after.pages, stats.pages, "round {round}");
        }
    }
    if !SEPARATE_BLOCKS {
        // The pages kept are reused: a later round obtains at most what the first
        // did (a thread whose share grew may need a page more than it held).
        assert!(
            page_allocations[2] - page_allocations[1] <= page_allocations[0],
            "{page_allocations:?}"
        );
    }
}

/// The bytes of every vector's elements.
fn expected_bytes() -> usize {
    (0..VECTORS)
        .map(|i| items(i).count() * size_of::<u64>())
        .sum()
}
