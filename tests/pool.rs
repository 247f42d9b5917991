//! `Pool`: arenas shared by threads, returned reset and trimmed, with idle memory
//! bounded; in both modes (in the sanitizer mode a reset releases every block, so
//! idle arenas hold nothing).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Barrier;
use std::thread;

use common::{KIB, MIB, PAGE_MODE, XorShift, round_os};
use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE, Pool, PooledArena, format_in, with_scratch};

/// Fewer iterations under Miri, the same properties.
const fn miri_or(miri: usize, native: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// Allocates in 60 KiB pieces, as a request would, until the arena holds at least
/// `bytes` (pages grow 64 KiB, 128 KiB, ..., then 1 MiB each; in the sanitizer mode
/// each piece is a block of its own).
fn grow_to(arena: &OneWayAlloc, bytes: usize) {
    while arena.stats().capacity < bytes {
        arena.alloc_bytes(60 * KIB);
    }
}

/// What an arena grown like `grow` holds once reset and trimmed to `keep`: the
/// oracle for what the pool must keep of it.
fn held_after_return(grow: impl FnOnce(&OneWayAlloc), keep: usize) -> usize {
    let mut arena = OneWayAlloc::new();
    grow(&arena);
    arena.reset();
    arena.trim(keep);
    arena.stats().capacity
}

#[test]
fn the_defaults_bound_sixteen_arenas_grown_to_16_mib_to_128_mib() {
    let pool = Pool::new();
    let mut guards: std::vec::Vec<PooledArena<'_>> = (0..16).map(|_| pool.get()).collect();
    for arena in &guards {
        grow_to(arena, 16 * MIB);
        assert!(arena.stats().capacity >= 16 * MIB);
    }
    assert_eq!(
        pool.stats().idle_arenas,
        0,
        "arenas out on guards are not idle"
    );
    guards.clear();

    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 16);
    assert!(stats.idle_bytes <= 128 * MIB, "{stats:?}");
    assert!(stats.idle_bytes <= pool.max_idle_bytes());
    assert_eq!(pool.max_idle_bytes(), 16 * (4 * MIB + 64 * KIB));
    if PAGE_MODE {
        let per_arena = held_after_return(|a| grow_to(a, 16 * MIB), Pool::DEFAULT_KEEP);
        // 64 KiB + 128 + 256 + 512 KiB + three 1 MiB pages fit in the first page plus
        // 4 MiB; the others go back.
        assert!(per_arena <= 64 * KIB + Pool::DEFAULT_KEEP);
        assert!(per_arena > Pool::DEFAULT_KEEP - MIB);
        assert_eq!(stats.idle_bytes, 16 * per_arena);
    } else {
        assert_eq!(stats.idle_bytes, 0, "a reset releases every block");
    }
}

#[test]
fn arenas_returned_past_max_idle_are_dropped() {
    let pool = Pool::new().max_idle(3);
    let guards: std::vec::Vec<_> = (0..5).map(|_| pool.get()).collect();
    drop(guards);
    assert_eq!(pool.stats().idle_arenas, 3);
    let none = Pool::new().max_idle(0);
    drop(none.get());
    assert_eq!(none.stats().idle_arenas, 0);
    assert_eq!(none.max_idle_bytes(), 0);
}

#[test]
fn get_takes_the_arena_returned_last_reset() {
    let pool = Pool::new();
    let first_block = {
        let arena = pool.get();
        let block = arena.alloc_str("request one").as_ptr();
        arena.alloc_bytes(200 * KIB);
        block
    };
    assert_eq!(pool.stats().idle_arenas, 1);
    let arena = pool.get();
    assert_eq!(pool.stats().idle_arenas, 0, "the idle arena was taken");
    assert_eq!(arena.stats().used, 0, "it comes back reset");
    if PAGE_MODE {
        assert_eq!(
            arena.stats().page_allocations,
            2,
            "the same arena, not a new one"
        );
        assert_eq!(arena.stats().pages, 2, "its second page was kept");
        assert_eq!(arena.alloc_str("request two").as_ptr(), first_block);
    }
}

#[test]
fn many_threads_take_and_return_arenas_with_the_bound_checked_each_round() {
    const THREADS: usize = 4;
    let pool = Pool::new().max_idle(3).keep(256 * KIB);
    for round in 0..miri_or(3, 60) {
        // One round: every thread takes an arena at once, serves a request in it,
        // and gives it back. `scope` joins them all (and passes on any panic).
        let kept = thread::scope(|s| {
            let workers: std::vec::Vec<_> = (0..THREADS)
                .map(|t| {
                    let pool = &pool;
                    s.spawn(move || serve_one(pool, (round * THREADS + t) as u64))
                })
                .collect();
            let kept = workers.into_iter().map(|w| w.join().unwrap());
            kept.filter(|&kept| kept).count()
        });
        let stats = pool.stats();
        assert!(stats.idle_arenas <= 3, "round {round}: {stats:?}");
        assert!(
            stats.idle_bytes <= pool.max_idle_bytes(),
            "round {round}: {stats:?}"
        );
        // An arena given back within the bound finds room, or the list is full.
        assert!(stats.idle_arenas >= kept.min(1), "round {round}: {stats:?}");
        if PAGE_MODE {
            assert!(stats.idle_bytes >= stats.idle_arenas * 64 * KIB);
        } else {
            assert_eq!(stats.idle_bytes, 0);
        }
    }
}

/// Threads released together by a barrier that take and return arenas in a tight
/// loop, so the idle list is locked by all of them at once, over and over (the test
/// that lets ThreadSanitizer see any access to the list made outside its lock): each
/// arena comes out reset, serves only its holder, and the idle bound holds.
#[test]
fn threads_take_and_return_arenas_at_the_same_moment() {
    const THREADS: usize = 4;
    let pool = Pool::new().max_idle(2);
    let start = Barrier::new(THREADS);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (pool, start) = (&pool, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..miri_or(10, 500) {
                    let arena = pool.get();
                    assert_eq!(arena.stats().used, 0, "handed out reset");
                    let mine = arena.alloc((t, i));
                    thread::yield_now();
                    assert_eq!(*mine, (t, i), "another thread wrote into this arena");
                }
            });
        }
    });
    let stats = pool.stats();
    assert!(stats.idle_arenas <= 2, "{stats:?}");
    assert!(stats.idle_bytes <= pool.max_idle_bytes(), "{stats:?}");
}

/// One request on an arena of `pool`: a map and a vector filled with a tag and read
/// back (two threads given one arena would clash here), sometimes a large block, a
/// limit left behind or the arena swapped for one over the bound. Returns whether
/// the arena it gives back is within the bound (so the pool may keep it).
fn serve_one(pool: &Pool, tag: u64) -> bool {
    let mut rng = XorShift::new(tag + 1);
    let mut arena = pool.get();
    assert_eq!(arena.stats().used, 0, "handed out reset");
    assert_eq!(arena.limit(), None, "no limit carried over");
    let mut by_name = HashMap::new_in(&*arena);
    let mut values = Vec::new_in(&*arena);
    let n = 1 + rng.below(miri_or(50, 5000));
    for i in 0..n as u64 {
        by_name.insert(i, tag);
        values.push(tag ^ i);
    }
    if rng.below(4) == 0 {
        arena.alloc_bytes(rng.below(2 * MIB) + 1); // a large request
    }
    thread::yield_now(); // let the other threads run on their own arenas meanwhile
    assert!(values.iter().enumerate().all(|(i, &v)| v == tag ^ i as u64));
    assert!(by_name.values().all(|&v| v == tag));
    drop((by_name, values));
    match rng.below(8) {
        0 => arena.set_limit(Some(0)), // must not reach the next get
        1 => {
            drop(mem::replace(&mut *arena, OneWayAlloc::with_size_hint(MIB)));
            return !PAGE_MODE; // a 1 MiB first page: dropped when given back
        }
        _ => {}
    }
    true
}

#[test]
fn a_guard_moved_to_another_thread_is_returned_from_there() {
    let pool = Pool::new();
    let arena = pool.get();
    let text = arena.alloc_str("made here").to_string();
    thread::scope(|s| {
        s.spawn(move || {
            let mut arena = arena; // the guard moved here
            assert_eq!(
                format_in!(&*arena, "{text}, used there"),
                "made here, used there"
            );
            arena.reset();
            arena.alloc_bytes(300 * KIB);
        }); // and dropped here
    });
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1);
    if PAGE_MODE {
        assert!(stats.idle_bytes > 300 * KIB, "its pages came back with it");
    }

    // With a static pool a guard can move to a plain spawned thread.
    static STATIC_POOL: Pool = Pool::new();
    let arena = STATIC_POOL.get();
    thread::spawn(move || assert_eq!(arena.alloc(7u64), &7))
        .join()
        .unwrap();
    assert_eq!(STATIC_POOL.stats().idle_arenas, 1);
}

#[test]
fn a_panic_with_a_guard_out_returns_the_arena_reset_and_poisons_nothing() {
    let pool = Pool::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut arena = pool.get();
        let mut v = Vec::new_in(&*arena);
        v.extend(0..miri_or(1000, 100_000) as u32);
        drop(v);
        arena.scope(|s| {
            s.alloc_bytes(500 * KIB);
            panic!("the handler failed");
        })
    }));
    assert!(result.is_err());
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1, "the arena was returned, not lost");
    let arena = pool.get();
    assert_eq!(arena.stats().used, 0, "reset");
    if PAGE_MODE {
        assert_eq!(stats.idle_bytes, arena.stats().capacity);
        assert!(stats.idle_bytes > 500 * KIB, "its pages were kept");
    }
    drop(arena);

    // A panic on another thread, with the guard dropped by that thread's unwinding.
    let failed = thread::scope(|s| {
        s.spawn(|| {
            let arena = pool.get();
            arena.alloc_bytes(100);
            panic!("worker failed");
        })
        .join()
    });
    assert!(failed.is_err());
    assert_eq!(pool.stats().idle_arenas, 1);
    assert_eq!(*pool.get().alloc(5u8), 5, "the pool still works");
}

#[test]
fn with_scratch_and_the_pool_together() {
    let pool = Pool::new();
    let total = with_scratch(|scratch| {
        let pooled = pool.get();
        assert!(!std::ptr::eq(&*pooled, &*scratch), "two distinct arenas");
        let a = scratch.alloc_str("from scratch");
        let scratch_used = scratch.stats().used;
        let b = pooled.alloc_str("from the pool");
        assert_eq!(
            scratch.stats().used,
            scratch_used,
            "the pool's arena served `b`"
        );
        assert_eq!(pooled.stats().used, 13);
        // And a scratch call nested inside a pooled arena's work.
        let inner = with_scratch(|inner| {
            let mut v = Vec::new_in(&*inner);
            v.extend(b.bytes());
            v.len()
        });
        a.len() + inner
    });
    assert_eq!(total, 12 + 13);
    assert_eq!(pool.stats().idle_arenas, 1);
    let arena = pool.get();
    let n = with_scratch(|scratch| format_in!(&*arena, "{}", scratch.alloc_str("x")).len());
    assert_eq!(n, 1);
}

#[test]
fn a_static_configured_pool_applies_its_settings() {
    static POOL: Pool = Pool::new()
        .max_idle(2)
        .keep(128 * KIB)
        .size_hint(200 * KIB)
        .limit(MIB);
    let first = round_os(PAGE_HEADER_SIZE + 200 * KIB);
    assert_eq!(POOL.max_idle_bytes(), 2 * (128 * KIB + first));

    let arena = POOL.get();
    assert_eq!(arena.limit(), Some(MIB));
    assert!(
        arena.try_alloc_bytes(2 * MIB).is_err(),
        "over the per-arena limit"
    );
    if PAGE_MODE {
        assert_eq!(
            arena.stats().capacity,
            first,
            "the size hint sized the first page"
        );
        arena.alloc_bytes(200 * KIB); // fits the first page
        assert_eq!(arena.stats().pages, 1);
    }
    for _ in 0..5 {
        arena.alloc_bytes(60 * KIB); // 300 KiB more: pages of 128 and 256 KiB
    }
    let held = arena.stats().capacity;
    let extra = (POOL.get(), POOL.get());
    drop((arena, extra));
    let stats = POOL.stats();
    assert_eq!(stats.idle_arenas, 2, "max_idle");
    assert!(stats.idle_bytes <= POOL.max_idle_bytes());
    if PAGE_MODE {
        assert!(held > first + 128 * KIB);
        // The two arenas that kept only their first page, or the grown one trimmed
        // to 128 KiB beyond it: each holds at most `first + keep`.
        assert!(stats.idle_bytes >= 2 * first);
        assert!(stats.idle_bytes <= 2 * (first + 128 * KIB));
    } else {
        assert_eq!(stats.idle_bytes, 0);
    }
}

#[test]
fn a_limit_set_on_one_guard_does_not_carry_over() {
    let pool = Pool::new().max_idle(1);
    let arena = pool.get();
    arena.set_limit(Some(arena.stats().capacity));
    assert!(arena.try_alloc_bytes(MIB).is_err());
    drop(arena);
    let arena = pool.get();
    assert_eq!(arena.limit(), None);
    assert_eq!(arena.alloc_bytes(MIB).len(), MIB);
    drop(arena);

    let limited = Pool::new().max_idle(1).limit(2 * MIB);
    let arena = limited.get();
    arena.set_limit(None);
    arena.alloc_bytes(3 * MIB);
    drop(arena);
    // Trimmed to the limit: the next request may not hold more anyway.
    assert!(limited.stats().idle_bytes <= 2 * MIB);
    assert_eq!(limited.max_idle_bytes(), 2 * MIB);
    let arena = limited.get();
    assert_eq!(arena.limit(), Some(2 * MIB), "the pool's own limit again");
    assert!(arena.try_alloc_bytes(3 * MIB).is_err());
}

#[test]
fn an_arena_replaced_through_deref_mut_is_kept_only_within_the_bound() {
    let keep = 256 * KIB;
    let pool = Pool::new().max_idle(4).keep(keep);
    let bound = keep + 64 * KIB; // per arena: keep plus the pool's first page

    // A huge first page, which trim cannot free: dropped on return.
    let mut arena = pool.get();
    let original = mem::replace(&mut *arena, OneWayAlloc::with_size_hint(8 * MIB));
    drop(original);
    drop(arena);
    let stats = pool.stats();
    if PAGE_MODE {
        assert_eq!(stats.idle_arenas, 0, "an arena over the bound was dropped");
    } else {
        // It holds nothing after its reset, so it is kept.
        assert_eq!(stats.idle_arenas, 1);
        assert_eq!(stats.idle_bytes, 0);
        pool.clear();
    }

    // A larger first page within the bound leaves less of `keep` for other pages:
    // the arena is trimmed to the bound and kept.
    let first = round_os(200 * KIB);
    let mut arena = pool.get();
    *arena = OneWayAlloc::with_size_hint(first - PAGE_HEADER_SIZE);
    arena.alloc_bytes(first - PAGE_HEADER_SIZE);
    arena.alloc_bytes(100 * KIB); // a second page, past `bound - first`
    if PAGE_MODE {
        assert_eq!(arena.stats().pages, 2);
        assert!(arena.stats().capacity > bound);
    }
    drop(arena);
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1);
    assert_eq!(stats.idle_bytes, if PAGE_MODE { first } else { 0 });
    assert!(stats.idle_bytes <= bound);

    let arena = pool.get();
    assert_eq!(arena.stats().capacity, if PAGE_MODE { first } else { 0 });
}

#[test]
fn stats_count_idle_arenas_and_the_bytes_they_hold() {
    let pool = Pool::new();
    let stats = pool.stats();
    assert_eq!((stats.idle_arenas, stats.idle_bytes), (0, 0));

    let (a, b) = (pool.get(), pool.get());
    a.alloc_bytes(MIB); // a page of its own beyond the first (kept: below 4 MiB)
    let held = a.stats().capacity;
    assert_eq!(
        pool.stats(),
        onewayalloc::PoolStats::default(),
        "none idle yet"
    );
    drop(a);
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1);
    assert_eq!(stats.idle_bytes, if PAGE_MODE { held } else { 0 });
    drop(b);
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 2);
    assert_eq!(
        stats.idle_bytes,
        if PAGE_MODE { held + 64 * KIB } else { 0 }
    );

    // `keep` trims what comes back.
    let small = Pool::new().keep(0);
    let arena = small.get();
    arena.alloc_bytes(MIB);
    drop(arena);
    assert_eq!(
        small.stats().idle_bytes,
        if PAGE_MODE { 64 * KIB } else { 0 }
    );

    pool.clear();
    assert_eq!(pool.stats().idle_arenas, 0);
    assert_eq!(pool.stats().idle_bytes, 0);
}

#[test]
fn clear_leaves_arenas_out_on_guards_alone() {
    let pool = Pool::new();
    drop(pool.get());
    let out = pool.get();
    drop(pool.get());
    pool.clear();
    assert_eq!(pool.stats().idle_arenas, 0);
    assert_eq!(*out.alloc(3u32), 3);
    drop(out);
    assert_eq!(pool.stats().idle_arenas, 1);
}

#[test]
fn an_impossible_size_hint_is_an_error_or_an_overflow_panic() {
    let pool = Pool::new().size_hint(usize::MAX);
    assert!(pool.try_get().is_err());
    assert_eq!(pool.max_idle_bytes(), usize::MAX);
    let panic = panic::catch_unwind(|| drop(pool.get())).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(message.contains("overflow"), "{message}");
    // An idle arena is handed out without creating one.
    let ok = Pool::new();
    drop(ok.get());
    assert!(ok.try_get().is_ok());
}

#[test]
fn the_pool_is_sync_and_the_guard_is_send() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Pool>();
    send::<PooledArena<'static>>();
    let pool = Pool::default();
    let arena = pool.get();
    assert!(format!("{arena:?}").starts_with("PooledArena(OneWayAlloc"));
    assert!(format!("{pool:?}").contains("max_idle: 16"));
}
