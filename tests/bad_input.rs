//! Bad input never corrupts the arena (SPEC section 3): sizes that overflow are
//! answered by `Err` from the `try_` calls and by a panic naming the overflow from
//! the plain calls; panicking closures leave the arena usable; and afterwards the
//! arena still serves requests and frees everything when dropped.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;

use common::{assert_usable, check_overflow, panic_message};
use onewayalloc::OneWayAlloc;

#[test]
fn calloc_size_that_overflows() {
    check_overflow(
        "alloc_zeroed(usize::MAX, 2)",
        |a| a.try_alloc_zeroed(usize::MAX, 2).map(|s| s.len()),
        |a| {
            let _ = a.alloc_zeroed(usize::MAX, 2);
        },
    );
    // The product fits usize but not isize.
    check_overflow(
        "alloc_zeroed(isize::MAX, 2)",
        |a| a.try_alloc_zeroed(isize::MAX as usize, 2).map(|s| s.len()),
        |a| {
            let _ = a.alloc_zeroed(isize::MAX as usize, 2);
        },
    );
}

#[test]
fn slice_length_that_overflows() {
    check_overflow(
        "alloc_slice_fill_with(usize::MAX / 2) of u64",
        |a| {
            a.try_alloc_slice_fill_with(usize::MAX / 2, |_| 0u64)
                .map(|s| s.len())
        },
        |a| {
            let _ = a.alloc_slice_fill_with(usize::MAX / 2, |_| 0u64);
        },
    );
}

#[test]
fn byte_count_that_overflows() {
    check_overflow(
        "alloc_bytes(usize::MAX)",
        |a| a.try_alloc_bytes(usize::MAX).map(|s| s.len()),
        |a| {
            let _ = a.alloc_bytes(usize::MAX);
        },
    );
}

#[test]
fn layout_of_isize_max_overflows_with_the_header() {
    let huge = Layout::from_size_align(isize::MAX as usize, 1).unwrap();
    check_overflow(
        "Layout of isize::MAX bytes",
        |a| a.try_alloc_layout(huge),
        |a| {
            let _ = a.alloc_layout(huge);
        },
    );
    // The same through the Allocator trait: an error, never a short block.
    let arena = OneWayAlloc::new();
    assert!(allocator_api2::alloc::Allocator::allocate(&&arena, huge).is_err());
    assert_usable(&arena);
}

#[test]
fn alignment_of_a_gib_that_overflows_with_the_payload() {
    let align = 1usize << 30;
    // The largest size `Layout` allows with this alignment: the page header, padded
    // to the alignment, pushes the page past isize::MAX.
    let size = isize::MAX as usize - (align - 1);
    let layout = Layout::from_size_align(size, align).unwrap();
    check_overflow(
        "Layout with alignment 1 << 30",
        |a| a.try_alloc_layout(layout),
        |a| {
            let _ = a.alloc_layout(layout);
        },
    );
}

#[test]
fn size_hints_that_overflow() {
    for hint in [usize::MAX, isize::MAX as usize, isize::MAX as usize - 10] {
        assert!(
            OneWayAlloc::try_with_size_hint(hint).is_err(),
            "hint {hint}"
        );
        let message = panic_message(|| {
            let _ = OneWayAlloc::with_size_hint(hint);
        });
        assert!(message.contains("overflow"), "hint {hint}: {message}");
    }
}

#[test]
fn size_hint_zero_is_the_default_arena() {
    let arena = OneWayAlloc::with_size_hint(0);
    let default = OneWayAlloc::new();
    assert_eq!(arena.stats(), default.stats());
    assert_usable(&arena);
}

#[test]
fn panicking_alloc_with_leaves_the_arena_usable() {
    let arena = OneWayAlloc::new();
    let kept = arena.alloc(11u32);
    let message = panic_message(|| {
        arena.alloc_with(|| -> u64 { panic!("closure failed") });
    });
    assert_eq!(message, "closure failed");
    assert_eq!(*kept, 11);
    assert_usable(&arena);
}

#[test]
fn panicking_slice_fill_leaves_the_arena_usable() {
    use std::cell::Cell;
    /// Counts its drops: on a panic the elements already made are dropped, once.
    struct Counted<'a>(&'a Cell<usize>);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    let drops = Cell::new(0);
    let arena = OneWayAlloc::new();
    let kept = arena.alloc_str("kept");
    let message = panic_message(|| {
        arena.alloc_slice_fill_with(50, |i| {
            assert!(i < 20, "element {i} failed");
            Counted(&drops)
        });
    });
    assert_eq!(message, "element 20 failed");
    assert_eq!(
        drops.get(),
        20,
        "the elements already made are dropped, once"
    );
    assert_eq!(kept, "kept");
    assert_usable(&arena);
}

#[test]
fn reentrant_closures_allocate_from_the_same_arena() {
    let arena = OneWayAlloc::new();
    let outer = arena.alloc_with(|| {
        let inner = arena.alloc_str("inner");
        inner.len()
    });
    assert_eq!(*outer, 5);
    let nested = arena.alloc_slice_fill_with(3, |i| &*arena.alloc(i * 10));
    assert_eq!(nested.iter().map(|r| **r).collect::<Vec<_>>(), [0, 10, 20]);
    assert_usable(&arena);
}
