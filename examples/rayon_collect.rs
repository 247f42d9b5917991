//! rayon's `par_iter().map(..)` allocating into one arena, the results used on the
//! calling thread afterwards without a copy (bumpalo's issue #83).
//!
//! 100,000 small vectors (a word's letter codes) are built in parallel, each in the
//! `SyncOneWayAlloc` through `&arena` (every rayon thread allocates in its own serial
//! arena, with no lock or atomic per allocation), collected into one `Vec` on this
//! thread, and read there. Then `reset` takes every block back at once, keeping the
//! pages, and the second round reuses them.
//!
//! Run it with `cargo run --release --example rayon_collect`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::SyncOneWayAlloc;
use onewayalloc::allocator_api2::vec::Vec as ArenaVec;
use rayon::prelude::*;

const WORDS: usize = 100_000;

/// The `i`-th word's letter codes: 4 to 19 of them.
fn letters(i: u32) -> impl Iterator<Item = u32> {
    let len = 4 + i % 16;
    (0..len).map(move |k| u32::from(b'a') + (i.wrapping_mul(31) + k * 7) % 26)
}

/// One round: the vectors built in parallel, then summed on this thread.
fn round(arena: &SyncOneWayAlloc) -> u64 {
    let words: Vec<ArenaVec<u32, &SyncOneWayAlloc>> = (0..WORDS as u32)
        .into_par_iter()
        .map(|i| {
            let mut word = ArenaVec::new_in(arena);
            word.extend(letters(i));
            word
        })
        .collect();
    // The vectors are used here, on the calling thread: their elements were written
    // by rayon's threads into the arena and were not copied since.
    assert_eq!(words.len(), WORDS);
    assert!(
        words
            .iter()
            .enumerate()
            .all(|(i, w)| w.iter().eq(letters(i as u32).collect::<Vec<_>>().iter()))
    );
    words.iter().flatten().map(|&c| u64::from(c)).sum()
}

fn main() {
    let mut arena = SyncOneWayAlloc::new();
    let first = round(&arena);
    let after_first = arena.stats();
    println!(
        "round 1: checksum {first}, {} bytes used in {} pages, {} rayon threads",
        after_first.used,
        after_first.pages,
        rayon::current_num_threads()
    );
    arena.reset();
    let second = round(&arena);
    let after_second = arena.stats();
    assert_eq!(first, second);
    println!(
        "round 2: checksum {second}, {} bytes used; pages obtained so far: {} (after round 1: {})",
        after_second.used, after_second.page_allocations, after_first.page_allocations
    );
}
