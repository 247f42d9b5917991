//! The memory limit (`set_limit`): it caps `stats().capacity` (pages held, headers
//! included; in the sanitizer mode, the bytes of outstanding blocks). A page that
//! would pass it is not obtained and the request fails as a refusal would; what fits
//! in the pages held keeps being served.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;

use allocator_api2::alloc::Allocator;
use common::{KIB, PAGE_MODE, check_consistent, header_size, round_os};
use onewayalloc::collections::{HashMap, String, Vec};
use onewayalloc::{AllocError, OneWayAlloc, try_format_in};

/// Bytes a request of `size` (align 1) adds to `capacity` when it needs a new page
/// of its own, or in the sanitizer mode its own block.
fn cost(size: usize) -> usize {
    if PAGE_MODE {
        round_os(header_size() + size)
    } else {
        size
    }
}

#[test]
fn exactly_at_the_limit_is_allowed_one_byte_over_is_refused() {
    let big = 300 * KIB; // larger than the second page's target: a page of its own
    let arena = OneWayAlloc::new();
    let base = arena.stats().capacity;

    arena.set_limit(Some(base + cost(big) - 1));
    assert_eq!(arena.try_alloc_bytes(big).map(|b| b.len()), Err(AllocError));
    assert_eq!(arena.stats().capacity, base, "nothing obtained");
    assert_eq!(
        arena.stats().page_allocations,
        if PAGE_MODE { 1 } else { 0 }
    );

    arena.set_limit(Some(base + cost(big)));
    assert_eq!(arena.try_alloc_bytes(big).map(|b| b.len()), Ok(big));
    assert_eq!(arena.stats().capacity, base + cost(big));
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

#[test]
fn the_arena_stays_usable_and_retained_pages_keep_serving() {
    let mut arena = OneWayAlloc::new();
    for _ in 0..4 {
        arena.alloc_bytes(200 * KIB);
    }
    let held = arena.stats().capacity;
    arena.reset();
    // The limit is what the arena holds: everything that fits in those pages works.
    arena.set_limit(Some(held));
    for _ in 0..4 {
        arena
            .try_alloc_bytes(200 * KIB)
            .expect("served by a retained page");
    }
    assert!(
        arena.try_alloc_bytes(200 * KIB).is_err(),
        "a fifth needs a page"
    );
    if PAGE_MODE {
        // Small requests that fit the current page still work after the refusal.
        assert_eq!(*arena.alloc(7u32), 7);
        assert_eq!(arena.alloc_str("still here"), "still here");
    } else {
        // In the sanitizer mode every block counts: the budget is spent.
        assert!(arena.try_alloc(7u32).is_err());
    }
    assert_eq!(arena.stats().capacity, held);
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

#[test]
fn a_limit_below_the_capacity_frees_nothing_and_stops_growth() {
    let arena = OneWayAlloc::new();
    let block = arena.alloc_bytes(500 * KIB);
    block[0].write(1);
    let held = arena.stats().capacity;
    arena.set_limit(Some(held / 2));
    assert_eq!(arena.limit(), Some(held / 2));
    assert_eq!(arena.stats().capacity, held, "nothing is freed");
    assert!(arena.try_alloc_bytes(500 * KIB).is_err());
    // The block made before the limit is intact.
    // SAFETY: byte 0 was written above.
    assert_eq!(unsafe { block[0].assume_init() }, 1);
}

#[test]
fn removing_the_limit_lets_the_arena_grow_again() {
    let arena = OneWayAlloc::new();
    arena.set_limit(Some(0));
    assert!(arena.try_alloc_bytes(1 << 20).is_err());
    arena.set_limit(None);
    assert_eq!(arena.limit(), None);
    assert_eq!(arena.try_alloc_bytes(1 << 20).map(|b| b.len()), Ok(1 << 20));
}

#[test]
fn collections_report_the_limit_through_try_reserve() {
    let arena = OneWayAlloc::new();
    arena.set_limit(Some(arena.stats().capacity + 256 * KIB));
    let mut v: Vec<u64> = Vec::new_in(&arena);
    assert!(v.try_reserve(1000).is_ok());
    assert!(
        v.try_reserve(10_000_000).is_err(),
        "80 MB over a 256 KiB budget"
    );
    v.extend(0..1000);
    assert_eq!(v.iter().sum::<u64>(), 999 * 1000 / 2);

    let mut m: HashMap<u64, u64> = HashMap::new_in(&arena);
    assert!(m.try_reserve(100).is_ok());
    assert!(m.try_reserve(10_000_000).is_err());
    m.insert(1, 2);
    assert_eq!(m[&1], 2);

    let mut s = String::new_in(&arena);
    assert!(s.try_push_str("fits").is_ok());
    assert!(s.try_reserve(100 << 20).is_err());
    let huge = "x".repeat(1 << 20);
    assert!(try_format_in!(&arena, "{huge}").is_err());
    assert_eq!(try_format_in!(&arena, "{}-{}", 1, 2).unwrap(), "1-2");

    // The Allocator API refuses too.
    let a = &arena;
    assert!(
        a.allocate(Layout::from_size_align(1 << 20, 8).unwrap())
            .is_err()
    );
}

#[test]
fn a_query_over_budget_is_cancelled_and_the_next_one_runs() {
    fn query(arena: &OneWayAlloc, dims: usize) -> Result<usize, AllocError> {
        let mut names: Vec<&str> = Vec::new_in(arena);
        for i in 0..dims {
            names.try_reserve(1).map_err(|_| AllocError)?;
            names.push(try_format_in!(arena, "dim{i}")?.into_str());
        }
        Ok(names.len())
    }
    // 128 KiB: the first page (64 KiB) and nothing more, since the next page alone
    // would take the arena to 192 KiB. 6,000 names need a 96 KiB vector of `&str`s.
    let dims = if cfg!(miri) { 6_000 } else { 100_000 };
    let mut arena = OneWayAlloc::new();
    arena.set_limit(Some(128 * KIB));
    assert_eq!(query(&arena, 100), Ok(100));
    arena.reset();
    assert_eq!(query(&arena, dims), Err(AllocError), "cancelled");
    assert!(arena.stats().capacity <= 128 * KIB);
    arena.reset();
    assert_eq!(query(&arena, 100), Ok(100));
}

// ----- Plain calls end in handle_alloc_error -----------------------------------------

const CHILD_ENV: &str = "ONEWAYALLOC_LIMIT_CHILD";

/// Run by `plain_calls_over_the_limit_end_in_handle_alloc_error` in a child process.
#[test]
fn child_plain_call_over_the_limit() {
    let Ok(case) = std::env::var(CHILD_ENV) else {
        return;
    };
    let arena = OneWayAlloc::new();
    arena.set_limit(Some(arena.stats().capacity));
    match case.as_str() {
        "alloc_bytes" => drop(arena.alloc_bytes(1 << 20)),
        "vec_push" => {
            let mut v: Vec<u8> = Vec::new_in(&arena);
            v.extend(core::iter::repeat_n(1, 1 << 20));
        }
        other => panic!("unknown case {other}"),
    }
    println!("CHILD-SURVIVED");
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn plain_calls_over_the_limit_end_in_handle_alloc_error() {
    for case in ["alloc_bytes", "vec_push"] {
        common::assert_child_ends_in_handle_alloc_error(
            "child_plain_call_over_the_limit",
            CHILD_ENV,
            case,
        );
    }
}
