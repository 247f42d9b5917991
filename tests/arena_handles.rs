//! Every handle a user holds on an arena works with `collect_in`, `vec![in ...]`,
//! `format_in!` and `try_format_in!` as `&OneWayAlloc` does (SPEC §5): a pool guard,
//! the `&mut OneWayAlloc` of `with_scratch` (reborrowed, so usable again), a scope
//! and its `s.arena()`, and a `&OneWayAlloc` held in a variable or behind another
//! reference. The handles that must not work are in tests/compile_fail/.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{self as arena, ArenaHandle, CollectIn};
use onewayalloc::{OneWayAlloc, Pool, format_in, try_format_in, vec, with_scratch};

/// The four calls through one handle, each checked against the arena `expected`.
macro_rules! all_four_calls {
    ($handle:expr, $expected:expr) => {{
        let collected: arena::Vec<u32> = (1..=3).collect_in($handle);
        let listed = vec![in $handle; 1u32, 2, 3];
        let repeated = vec![in $handle; 7u8; 2];
        let empty: arena::Vec<u8> = vec![in $handle];
        let text = format_in!($handle, "{}-{}", collected.len(), listed[2]);
        let tried = try_format_in!($handle, "{}", repeated[1]).unwrap();
        assert_eq!(collected, [1, 2, 3]);
        assert_eq!((repeated.len(), empty.len()), (2, 0));
        assert_eq!((text.as_str(), tried.as_str()), ("3-3", "7"));
        for allocator in [collected.allocator(), listed.allocator(), empty.allocator()] {
            assert!(core::ptr::eq(*allocator, $expected), "built in the arena behind the handle");
        }
        assert!(core::ptr::eq(text.arena(), $expected));
    }};
}

#[test]
fn a_pool_guard() {
    static POOL: Pool = Pool::new();
    let guard = POOL.get();
    all_four_calls!(&guard, &*guard);
}

#[test]
fn with_scratchs_mut_reference_is_reborrowed_not_moved() {
    with_scratch(|arena| {
        let expected: *const OneWayAlloc = arena;
        all_four_calls!(arena, expected);
        all_four_calls!(arena, expected); // still usable: each call reborrowed it
        arena.alloc(1u8); // and the arena itself still works
    });
}

#[test]
fn a_scope_and_its_arena() {
    let mut arena = OneWayAlloc::new();
    let expected: *const OneWayAlloc = &arena;
    arena.scope(|s| {
        all_four_calls!(s, expected);
        all_four_calls!(s.arena(), expected);
        s.scope(|inner| all_four_calls!(inner, expected));
    });
}

#[test]
fn a_shared_reference_held_or_borrowed_again() {
    let arena = OneWayAlloc::new();
    all_four_calls!(&arena, &arena);
    let held: &OneWayAlloc = &arena;
    all_four_calls!(held, &arena);
    all_four_calls!(&held, &arena); // a `&&OneWayAlloc` gives the `&OneWayAlloc`
}

#[test]
fn an_arena_with_another_backing_allocator() {
    let arena = OneWayAlloc::new_in(onewayalloc::Global);
    let collected: arena::Vec<u8> = (0..2).collect_in(&arena);
    let text = format_in!(&arena, "{}", collected.len());
    assert_eq!(text, "2");
}

#[test]
fn any_clone_allocator_by_reference_is_cloned() {
    let global: onewayalloc::allocator_api2::vec::Vec<u8, onewayalloc::Global> =
        vec![in &onewayalloc::Global; 1, 2];
    assert_eq!(global, [1, 2]);
}

#[test]
fn the_trait_gives_the_arena_behind_each_handle() {
    static POOL: Pool = Pool::new();
    let guard = POOL.get();
    assert!(core::ptr::eq(guard.alloc_handle(), &*guard));
    let mut arena = OneWayAlloc::new();
    let expected: *const OneWayAlloc = &arena;
    arena.scope(|s| assert!(core::ptr::eq(s.alloc_handle(), expected)));
}
