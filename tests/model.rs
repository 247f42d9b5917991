//! Model-based tests of the page policy (SPEC §1): random programs of operations run
//! against an arena and against a plain model of the policy, which must agree after
//! every step on every block address, on `pages()` and on `stats()`, while every
//! live block keeps its contents and no two overlap. The model and the program
//! runner live in `model/runner.rs`, shared with the fuzz target in `fuzz/`; this
//! file holds the proptest strategies.
//!
//! A failure prints the shrunk program (`ops = [...]`); paste it into a `#[test]`
//! calling `runner::run(&[...])` to reproduce it.
#![cfg(not(feature = "separate-blocks"))]
#![cfg_attr(feature = "nightly", feature(allocator_api))]

#[path = "model/runner.rs"]
mod runner;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use runner::{Hits, Op};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// Miri is slow: fewer, shorter programs with smaller blocks.
const CASES: u32 = if cfg!(miri) { 8 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 30 } else { 200 };
const MAX_SIZE: usize = if cfg!(miri) { 256 * KIB } else { 2 * MIB };
const MAX_HINT: usize = if cfg!(miri) { MIB } else { 3 * MIB };

/// Request sizes: mostly small, some up to 64 KiB, a few up to `MAX_SIZE`.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => Just(0),
        78 => 1..=256usize,
        14 => 257..=64 * KIB,
        6 => 64 * KIB + 1..=MAX_SIZE,
    ]
}

/// Alignments 1..=4096, rarely up to 64 KiB (above the OS page).
fn align_log2() -> impl Strategy<Value = u8> {
    prop_oneof![70 => 0..=4u8, 28 => 5..=12u8, 2 => 13..=16u8]
}

/// A new alignment for `grow`/`shrink`: usually the block's own.
fn new_align_log2() -> impl Strategy<Value = Option<u8>> {
    prop_oneof![3 => Just(None), 1 => align_log2().prop_map(Some)]
}

fn extra() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0..=256usize, 2 => 257..=64 * KIB, 1 => 64 * KIB..=MAX_SIZE / 2]
}

fn index() -> impl Strategy<Value = usize> {
    0..16usize
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (size(), align_log2()).prop_map(|(size, align_log2)| Op::Layout { size, align_log2 }),
        8 => size().prop_map(|size| Op::Bytes { size }),
        4 => prop_oneof![
            20 => (0..=64usize, 0..=1024usize),
            1 => Just((usize::MAX / 2, 3)),
        ]
        .prop_map(|(nmemb, size)| Op::Zeroed { nmemb, size }),
        4 => prop_oneof![4 => 0..=64usize, 1 => 0..=4096usize].prop_map(|len| Op::Str { len }),
        10 => (size(), align_log2())
            .prop_map(|(size, align_log2)| Op::Allocate { size, align_log2 }),
        10 => (index(), extra(), new_align_log2(), any::<bool>()).prop_map(
            |(block, extra, align_log2, zeroed)| Op::Grow { block, extra, align_log2, zeroed }
        ),
        5 => (index(), 0..=MAX_SIZE, new_align_log2())
            .prop_map(|(block, size, align_log2)| Op::Shrink { block, size, align_log2 }),
        8 => index().prop_map(|block| Op::Deallocate { block }),
        8 => (index(), 1..=64usize).prop_map(|(vec, count)| Op::VecPush { vec, count }),
        2 => index().prop_map(|vec| Op::VecShrink { vec }),
        3 => index().prop_map(|vec| Op::VecDrop { vec }),
        4 => any::<bool>().prop_map(|big| Op::BoxNew { big }),
        2 => index().prop_map(|index| Op::BoxDrop { index }),
        5 => (index(), 1..=32usize).prop_map(|(map, count)| Op::MapInsert { map, count }),
        2 => index().prop_map(|map| Op::MapDrop { map }),
        2 => Just(Op::Reset),
        1 => prop_oneof![Just(0), 0..=MAX_HINT].prop_map(|size_hint| Op::NewArena { size_hint }),
    ]
}

fn program() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..=MAX_OPS)
}

/// No failure files (Miri's isolation forbids them); instead every run prints its
/// seed, and `PROPTEST_RNG_SEED=<seed>` replays it exactly, shrinking included.
/// `PROPTEST_CASES` still overrides the case count.
fn config() -> Config {
    use std::hash::BuildHasher;
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(CASES);
    let mut config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    if let RngSeed::Random = config.rng_seed {
        let seed = std::collections::hash_map::RandomState::new().hash_one(0u8);
        config.rng_seed = RngSeed::Fixed(seed);
    }
    eprintln!(
        "model test: seed {} (replay with PROPTEST_RNG_SEED={})",
        config.rng_seed, config.rng_seed
    );
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arena_agrees_with_the_page_policy_model(ops in program()) {
        runner::run(&ops);
    }
}

/// The generated programs reach every path of the policy the model distinguishes.
#[test]
#[cfg_attr(miri, ignore = "the programs are too many for Miri")]
fn programs_reach_every_path() {
    if onewayalloc::SEPARATE_BLOCKS {
        return;
    }
    let mut proptest = TestRunner::deterministic();
    let mut hits = Hits::default();
    for _ in 0..64 {
        let ops = program().new_tree(&mut proptest).unwrap().current();
        hits.add(runner::run(&ops));
    }
    eprintln!("{hits:?}");
    let Hits {
        new_pages,
        oversized_pages,
        reused_pages,
        reused_after_skipping,
        rollbacks,
        resized_in_place,
        realigned_in_place,
        moved,
        resets,
    } = hits;
    for (path, count) in [
        ("new page", new_pages),
        ("page larger than its target", oversized_pages),
        ("unused page reused", reused_pages),
        (
            "unused page reused after skipping one",
            reused_after_skipping,
        ),
        ("rollback", rollbacks),
        ("resize in place", resized_in_place),
        ("realign in place", realigned_in_place),
        ("resize by moving", moved),
        ("reset", resets),
    ] {
        assert!(count > 0, "no program reached: {path} ({hits:?})");
    }
}

/// Bug repro (`resize` in src/bump.rs): a block resized to an alignment larger than
/// its page guarantees stays in place when its *address* happens to be aligned that
/// much, so its alignment follows from where the page lies rather than from its
/// offset in the page: the invariant `MIN_PAGE_ALIGN` (src/arith.rs) promises and
/// Miri's `-Zmiri-symbolic-alignment-check` enforces (a typed access through it is
/// reported as misaligned). It must move to a page aligned that much, as an
/// allocation with that alignment would. `grow` to the same size takes the same path.
#[test]
fn resize_to_an_alignment_the_page_does_not_guarantee_moves_the_block() {
    use core::alloc::Layout;
    use onewayalloc::{Allocator, OneWayAlloc};

    let arena = OneWayAlloc::new();
    // The first page is aligned to `page` (the OS page, at least 4 KiB), not more.
    let page = page_size::get().max(4096);
    let old = Layout::from_size_align(1, page).unwrap();
    let new = Layout::from_size_align(1, 2 * page).unwrap();
    // Two blocks at offsets `page` and `2 * page`: one lies on a `2 * page` boundary.
    let a = arena.alloc_layout(old);
    let b = arena.alloc_layout(old);
    arena.alloc_layout(Layout::new::<u8>()); // neither is the most recent block
    let block = if a.addr().get() % new.align() == 0 {
        a
    } else {
        b
    };
    assert_eq!(block.addr().get() % new.align(), 0);
    assert_eq!(arena.stats().page_allocations, 1);
    // SAFETY: `block` is a live block of `arena` allocated with `old`.
    let shrunk = unsafe { (&arena).shrink(block, old, new) }.unwrap();
    assert_ne!(
        shrunk.cast::<u8>(),
        block,
        "the first page guarantees only {page}-byte alignment, yet the block stayed in it"
    );
    assert_eq!(arena.stats().page_allocations, 2);
}
