//! Scopes roll the arena back in constant time, keep pages, and leave outer blocks
//! intact; scratch arenas are per thread and per nesting level; trim gives pages back.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![cfg(not(feature = "separate-blocks"))]

use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::hashbrown::HashMap;
use onewayalloc::{OneWayAlloc, Stats, with_scratch};

/// What a rollback restores: the bytes used since the last reset.
fn counters(stats: Stats) -> usize {
    stats.used
}

#[test]
fn a_scope_restores_used() {
    let mut arena = OneWayAlloc::new();
    arena.alloc_str("before the scope");
    let before = arena.stats();
    arena.scope(|s| {
        for i in 0..1000u64 {
            s.alloc(i);
        }
        s.alloc_bytes(300_000); // forces new pages
        assert!(s.stats().page_allocations > before.page_allocations);
    });
    let after = arena.stats();
    assert_eq!(counters(after), counters(before));
    // The pages taken inside are kept, as unused pages after the current one.
    assert!(after.pages > before.pages);
    let pages: std::vec::Vec<_> = arena.pages().collect();
    assert!(pages[0].current);
    assert!(pages[1..].iter().all(|p| p.used == 0 && !p.current));
}

#[test]
fn running_the_same_scope_twice_takes_no_new_page() {
    let mut arena = OneWayAlloc::new();
    let work = |arena: &mut OneWayAlloc| {
        arena.scope(|s| {
            let mut v = Vec::new_in(s.arena());
            v.extend(0..if cfg!(miri) { 2_000 } else { 50_000u32 });
            let mut m: HashMap<u32, u32, onewayalloc::hashbrown::DefaultHashBuilder, _> =
                HashMap::with_hasher_in(Default::default(), s.arena());
            m.extend((0..1000).map(|i| (i, i)));
            v.len()
        })
    };
    assert_eq!(work(&mut arena), if cfg!(miri) { 2_000 } else { 50_000 });
    let first = arena.stats();
    for _ in 0..5 {
        assert_eq!(work(&mut arena), if cfg!(miri) { 2_000 } else { 50_000 });
    }
    assert_eq!(arena.stats(), first);
}

#[test]
fn outer_blocks_survive_inner_scopes_and_the_outer_resumes_where_it_was() {
    let mut arena = OneWayAlloc::new();
    arena.scope(|outer| {
        let kept = outer.alloc_slice_fill_with(1000, |i| i as u32);
        let name = outer.alloc_str("outer");
        let before = outer.stats();
        let first_after = outer.alloc(0u8) as *const u8;
        // Roll the probe back by opening and closing a scope at the same place.
        let at_inner = outer.scope(|inner| {
            let block = inner.alloc(7u8) as *const u8 as usize;
            inner.alloc_bytes(200_000); // a new page inside the inner scope
            // Outer blocks are readable and writable inside.
            kept[999] += 1;
            block
        });
        assert_eq!(kept[999], 1000);
        assert_eq!(name, "outer");
        // After the inner scope the outer allocates right where the inner began.
        let next = outer.alloc(1u8) as *const u8 as usize;
        assert_eq!(next, at_inner);
        assert_eq!(outer.stats().used, before.used + 2);
        assert!(first_after as usize + 1 == at_inner);
    });
}

#[test]
fn nested_scopes_three_deep() {
    let mut arena = OneWayAlloc::new();
    let depth_used = arena.scope(|a| {
        a.alloc(1u64);
        a.scope(|b| {
            b.alloc(2u64);
            b.scope(|c| {
                c.alloc_bytes(500_000);
                c.stats().used
            })
        })
    });
    assert!(depth_used >= 500_000);
    assert_eq!(arena.stats().used, 0);
}

#[test]
fn a_panicking_scope_still_rolls_back() {
    let mut arena = OneWayAlloc::new();
    arena.alloc(5u32);
    let before = arena.stats();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        arena.scope(|s| {
            s.alloc_bytes(100_000);
            panic!("in the scope");
        })
    }));
    assert!(result.is_err());
    assert_eq!(counters(arena.stats()), counters(before));
    assert_eq!(*arena.alloc(6u32), 6);
}

#[test]
fn scope_collections_grow_in_place() {
    let mut arena = OneWayAlloc::new();
    arena.scope(|s| {
        let mut v: Vec<u64, _> = Vec::new_in(s.arena());
        let n = if cfg!(miri) { 200 } else { 1000 };
        for i in 0..n {
            v.push(i);
        }
        assert!(s.stats().used < n as usize * 8 + 4096);
    });
}

#[test]
fn reset_after_scopes_reuses_every_page() {
    let mut arena = OneWayAlloc::new();
    let mut page_allocations = std::vec::Vec::new();
    for _ in 0..3 {
        arena.scope(|s| {
            s.alloc_bytes(150_000); // a second page, unused again after the scope
        });
        arena.alloc_bytes(70_000); // does not fit the first page: reuses the second
        page_allocations.push(arena.stats().page_allocations);
        arena.reset();
    }
    assert_eq!(page_allocations, [2, 2, 2]);
}

#[test]
fn trim_frees_unused_pages_beyond_keep() {
    let mut arena = OneWayAlloc::new();
    for _ in 0..6 {
        arena.alloc_bytes(60 * 1024);
    }
    arena.alloc_bytes(3 << 20);
    let sizes: std::vec::Vec<usize> = arena.pages().map(|p| p.size).collect();
    arena.reset();
    arena.trim(sizes[1] + sizes[2]);
    let kept: std::vec::Vec<usize> = arena.pages().map(|p| p.size).collect();
    assert_eq!(kept, sizes[..3]);
    assert_eq!(arena.stats().capacity, kept.iter().sum::<usize>());
    assert_eq!(arena.stats().pages, 3);
    arena.trim(0);
    assert_eq!(arena.pages().count(), 1);
    // Trim never touches used pages or the current one.
    arena.alloc_bytes(60 * 1024);
    arena.alloc_bytes(60 * 1024);
    let pages = arena.stats().pages;
    arena.trim(0);
    assert_eq!(arena.stats().pages, pages);
    assert!(arena.pages().last().unwrap().current);
}

#[test]
fn scratch_arenas_are_per_thread_and_per_nesting_level() {
    let outer_ptr = with_scratch(|outer| {
        let a = outer.alloc(1u64) as *const u64 as usize;
        let b = with_scratch(|inner| inner.alloc(2u64) as *const u64 as usize);
        // The inner call had its own arena: its block is not the outer's next one.
        let next = outer.alloc(3u64) as *const u64 as usize;
        assert_eq!(next, a + 8);
        assert_ne!(b, next);
        a
    });
    // The same thread gets the same, reset arena back.
    let again = with_scratch(|arena| {
        assert_eq!(arena.stats().used, 0);
        arena.alloc(9u64) as *const u64 as usize
    });
    assert_eq!(again, outer_ptr);
    // Another thread has its own.
    let other =
        std::thread::spawn(|| with_scratch(|arena| arena.alloc(1u64) as *const u64 as usize))
            .join()
            .unwrap();
    assert_ne!(other, outer_ptr);
}

#[test]
fn scratch_arena_keeps_its_pages_between_calls() {
    let run = || {
        with_scratch(|arena| {
            arena.alloc_bytes(300_000);
            arena.stats().page_allocations
        })
    };
    let first = run();
    assert_eq!(run(), first);
    // Trimming inside the closure gives the pages back.
    with_scratch(|arena| {
        arena.trim(0);
        assert_eq!(arena.stats().pages, 1);
    });
}

/// A scope's `pages()` and `stats()` are the arena's, as they stand inside it.
#[test]
fn a_scope_shows_the_arenas_pages_and_stats() {
    let mut arena = OneWayAlloc::new();
    arena.scope(|s| {
        s.alloc_bytes(100_000); // a second page
        let pages: std::vec::Vec<_> = s.pages().collect();
        assert_eq!(pages, s.arena().pages().collect::<std::vec::Vec<_>>());
        assert_eq!(pages.len(), 2);
        assert!(pages[1].current && pages[1].used == 100_000);
        assert_eq!(s.stats(), s.arena().stats());
    });
}
