//! Feature `allocator-api2-04`: allocator-api2 0.4's `Allocator` for `&OneWayAlloc`,
//! beside 0.2's, with the same behaviour.
#![cfg(feature = "allocator-api2-04")]
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use core::alloc::Layout;

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2_04::alloc::{AllocError, Allocator as Allocator04};
use onewayalloc::allocator_api2_04::boxed::Box;
use onewayalloc::allocator_api2_04::vec::Vec;

#[test]
fn a_04_vec_lives_in_the_arena_and_grows_in_place() {
    let mut arena = OneWayAlloc::new();
    let n: u64 = if cfg!(miri) { 300 } else { 1500 }; // fits in the first page
    for _ in 0..2 {
        let mut v = Vec::new_in(&arena);
        for i in 0..n {
            v.push(i * 3);
        }
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
        if !onewayalloc::SEPARATE_BLOCKS {
            // One buffer, grown in place at the top: no abandoned copies.
            assert!(
                arena.stats().used <= v.capacity() * 8,
                "{:?}",
                arena.stats()
            );
            assert_eq!(arena.stats().page_allocations, 1);
        }
        drop(v);
        arena.reset();
    }
}

/// Past the first page too, a 0.4 `Vec` takes exactly what a 0.2 `Vec` takes: the
/// same growth policy serves both.
#[test]
fn a_04_vec_grows_as_a_02_vec() {
    let n: u64 = if cfg!(miri) { 3_000 } else { 100_000 };
    let stats_after = |push: &dyn Fn(&OneWayAlloc)| {
        let arena = OneWayAlloc::new();
        push(&arena);
        arena.stats()
    };
    let with_04 = stats_after(&|arena| {
        let mut v = Vec::new_in(arena);
        v.extend(0..n);
        assert_eq!(v.len() as u64, n);
    });
    let with_02 = stats_after(&|arena| {
        let mut v = onewayalloc::collections::Vec::new_in(arena);
        v.extend(0..n);
        assert_eq!(v.len() as u64, n);
    });
    assert_eq!(with_04, with_02);
}

#[test]
fn a_04_box_and_the_scope_loan() {
    let mut arena = OneWayAlloc::new();
    let b = Box::new_in([7u32; 4], &arena);
    assert_eq!(b[3], 7);
    drop(b);
    let total = arena.scope(|s| {
        let mut v = Vec::new_in(s.arena());
        v.extend(1..=4u32);
        let b = Box::new_in(10u32, s.arena());
        v.iter().sum::<u32>() + *b
    });
    assert_eq!(total, 20);
    assert_eq!(arena.stats().used, 0);
}

#[test]
fn a_04_vec_reports_refusal_past_the_limit() {
    let arena = OneWayAlloc::new();
    let room = if onewayalloc::SEPARATE_BLOCKS {
        1024
    } else {
        0
    };
    arena.set_limit(Some(arena.stats().capacity + room));
    let mut v: Vec<u8, _> = Vec::new_in(&arena);
    assert!(v.try_reserve(100).is_ok());
    assert!(v.try_reserve(1 << 20).is_err());
    v.push(1);
    assert_eq!(v, [1]);
}

/// What one run of the raw calls saw: block offsets from the first block, lengths,
/// which calls failed, and the arena's statistics at the end.
#[derive(Debug, PartialEq)]
struct Trace {
    offsets: std::vec::Vec<usize>,
    lengths: std::vec::Vec<usize>,
    huge_refused: bool,
    stats: (usize, usize, usize),
}

/// The same raw calls through the trait `$allocator` on a fresh arena.
macro_rules! trace_through {
    ($allocator:path) => {{
        use $allocator as Trait;
        let arena = OneWayAlloc::new();
        let alloc = &arena;
        let small = Layout::from_size_align(24, 8).unwrap();
        let bigger = Layout::from_size_align(100, 8).unwrap();
        let aligned = Layout::from_size_align(64, 4096).unwrap();
        let zero = Layout::from_size_align(0, 16).unwrap();
        let huge = Layout::from_size_align(isize::MAX as usize - 4096, 1).unwrap();
        let first = Trait::allocate(&alloc, small).unwrap();
        let base = first.cast::<u8>().as_ptr() as usize;
        let mut offsets = std::vec::Vec::new();
        let mut lengths = std::vec::Vec::new();
        let mut record = |block: core::ptr::NonNull<[u8]>| {
            if !onewayalloc::SEPARATE_BLOCKS {
                // Blocks of the backing allocator have no offsets to compare.
                offsets.push(block.cast::<u8>().as_ptr() as usize - base);
            }
            lengths.push(block.len());
        };
        // SAFETY: every block passed back is live, from this arena, with its layout.
        let huge_refused = unsafe {
            first.cast::<u8>().as_ptr().write_bytes(0xab, 24);
            let grown = Trait::grow_zeroed(&alloc, first.cast(), small, bigger).unwrap();
            let bytes = core::slice::from_raw_parts(grown.cast::<u8>().as_ptr(), 100);
            assert!(bytes[..24].iter().all(|&b| b == 0xab));
            assert!(bytes[24..].iter().all(|&b| b == 0));
            record(grown);
            let shrunk = Trait::shrink(&alloc, grown.cast(), bigger, small).unwrap();
            record(shrunk);
            let over = Trait::allocate(&alloc, aligned).unwrap();
            assert_eq!(over.cast::<u8>().as_ptr() as usize % 4096, 0);
            record(over);
            Trait::deallocate(&alloc, over.cast(), aligned);
            let empty = Trait::allocate(&alloc, zero).unwrap();
            assert_eq!(empty.cast::<u8>().as_ptr() as usize % 16, 0);
            lengths.push(empty.len());
            let huge_refused = Trait::allocate(&alloc, huge).is_err();
            Trait::deallocate(&alloc, shrunk.cast(), small);
            huge_refused
        };
        assert_eq!(*arena.alloc(5u8), 5); // still usable after the refusal
        let stats = arena.stats();
        Trace {
            offsets,
            lengths,
            huge_refused,
            stats: (stats.used, stats.pages, stats.capacity),
        }
    }};
}

/// The same raw calls through 0.2's trait and 0.4's, on two fresh arenas: the same
/// blocks, the same answers, the same statistics. (With both traits in scope, a
/// method call such as `alloc.allocate(layout)` is ambiguous: name the trait.)
#[test]
fn the_04_impl_behaves_as_the_02_impl() {
    let through_02 = trace_through!(onewayalloc::Allocator);
    let through_04 = trace_through!(Allocator04);
    assert!(through_04.huge_refused);
    assert_eq!(through_02, through_04);
    assert_eq!(AllocError, AllocError); // 0.4's own error type
}
