//! `Pool`: arenas shared by threads, returned reset and trimmed, with idle memory
//! bounded; in both modes (in the sanitizer mode a reset releases every block, so
//! idle arenas hold nothing).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use common::{KIB, MIB, PAGE_MODE, XorShift, round_os};
use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{
    OneWayAlloc, PAGE_HEADER_SIZE, Pool, PoolStats, PooledArena, format_in, with_scratch,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm};

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
fn the_defaults_bound_sixteen_arenas_grown_to_16_mib_at_128_mib() {
    let pool = Pool::new();
    assert_eq!(pool.max_idle_bytes(), Pool::DEFAULT_IDLE_LIMIT);
    assert_eq!(Pool::DEFAULT_IDLE_LIMIT, 128 * MIB);
    let mut guards: std::vec::Vec<PooledArena<'_>> = (0..16).map(|_| pool.get()).collect();
    for arena in &guards {
        grow_to(arena, 16 * MIB);
        assert!(arena.stats().capacity >= 16 * MIB);
    }
    let per_arena = guards[0].stats().capacity;
    assert_eq!(
        pool.stats().idle_arenas,
        0,
        "arenas out on guards are not idle"
    );
    guards.clear(); // returned in order: the first ones are the oldest

    let stats = pool.stats();
    assert!(stats.idle_bytes <= 128 * MIB, "{stats:?}");
    if PAGE_MODE {
        // Each arena keeps every page its request used; the 128 MiB bound takes as
        // many of them as fit, the newest, and the oldest were dropped for room.
        assert_eq!(stats.idle_arenas, 128 * MIB / per_arena, "{stats:?}");
        assert_eq!(stats.idle_bytes, stats.idle_arenas * per_arena);
        assert!(stats.idle_bytes > 128 * MIB - per_arena);
    } else {
        assert_eq!(stats.idle_arenas, 16);
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
    assert_eq!(pool.max_idle_bytes(), Pool::DEFAULT_IDLE_LIMIT);
    let fixed = Pool::new().size_hint(usize::MAX).keep(0);
    assert_eq!(fixed.max_idle_bytes(), usize::MAX);
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

// ----- The decay policy of `Pool::new()` ------------------------------------------

/// A request's work: 60 KiB pieces until it has used `bytes` (a chain of pages of
/// 64 KiB, 128, 256, 512 KiB, then 1 MiB each, as a growing query's).
fn request(arena: &OneWayAlloc, bytes: usize) {
    while arena.stats().used < bytes {
        arena.alloc_bytes(60 * KIB);
    }
}

/// Pages obtained by the requests of `rounds` rounds of two requests at once (as on
/// two workers), each using `work` bytes, after the first round (the warm-up).
fn pages_obtained_after_the_warm_up(pool: &Pool, work: usize, rounds: usize) -> usize {
    let mut obtained = 0;
    for round in 0..rounds {
        let guards = [pool.get(), pool.get()];
        for arena in &guards {
            let before = arena.stats().page_allocations;
            request(arena, work);
            if round > 0 {
                obtained += arena.stats().page_allocations - before;
                // Two warm arenas, never a new one (which holds only a first page).
                assert!(!PAGE_MODE || before > 1, "round {round}: a new arena");
            }
        }
        drop(guards);
        let stats = pool.stats();
        assert_eq!(stats.idle_arenas, 2, "round {round}: {stats:?}");
        assert!(stats.idle_bytes <= pool.max_idle_bytes());
    }
    obtained
}

/// Under a steady load the default pool keeps every page the requests use, across
/// epoch ends: no request after the warm-up obtains a page. A fixed `keep` below
/// the working set (the old default's way) obtains pages in every round.
#[test]
fn a_steady_load_obtains_no_page_after_the_warm_up() {
    let work = miri_or(400 * KIB, 6 * MIB);
    let rounds = 2 * Pool::DECAY_EPOCH; // 4 epochs of returns
    assert_eq!(
        pages_obtained_after_the_warm_up(&Pool::new(), work, rounds),
        0
    );
    let fixed = Pool::new().keep(work / 2);
    let obtained = pages_obtained_after_the_warm_up(&fixed, work, rounds);
    if PAGE_MODE {
        assert!(obtained >= 2 * (rounds - 1), "{obtained}");
    } else {
        assert_eq!(obtained, 0, "no pages in the sanitizer mode");
    }
}

/// Pages used only inside scopes that ended are invisible to the pool (the arena's
/// position went back), so their target decays; the request that then obtains
/// them again raises it at once. Such a load obtains pages in at most one request
/// per two epochs, not in every request as under a fixed `keep` below it.
#[test]
fn pages_used_only_in_ended_scopes_are_obtained_again_rarely() {
    let pool = Pool::new();
    let requests = miri_or(3, 8) * Pool::DECAY_EPOCH;
    let mut obtaining = 0;
    for _ in 0..requests {
        let mut arena = pool.get();
        let before = arena.stats().page_allocations;
        arena.scope(|s| {
            for _ in 0..miri_or(4, 20) {
                s.alloc_bytes(60 * KIB);
            }
        });
        if arena.stats().page_allocations > before {
            obtaining += 1;
        }
    }
    if PAGE_MODE {
        // The warm-up, then at most one per two epochs.
        assert!(
            obtaining >= 2,
            "the target decayed at least once: {obtaining}"
        );
        assert!(
            obtaining <= 1 + requests / (2 * Pool::DECAY_EPOCH),
            "{obtaining}"
        );
    } else {
        assert_eq!(obtaining, 0);
    }
}

/// A burst of four large requests at once, then one small request at a time: the
/// burst's pages stay for the rest of its epoch and the next, then decay; within
/// 10 epochs (the figure the docs state) the pool holds one arena with only its
/// first page. Idle memory never grows meanwhile, and the bound holds at every
/// step.
#[test]
fn after_a_burst_small_requests_bring_idle_memory_down_within_ten_epochs() {
    let pool = Pool::new();
    let burst = miri_or(2 * MIB, 20 * MIB);
    let guards: std::vec::Vec<_> = (0..4).map(|_| pool.get()).collect();
    for arena in &guards {
        request(arena, burst);
    }
    drop(guards);
    let after_burst = pool.stats();
    assert_eq!(after_burst.idle_arenas, 4);
    if PAGE_MODE {
        assert!(after_burst.idle_bytes >= 4 * burst, "{after_burst:?}");
    }

    let settled = (1, if PAGE_MODE { 64 * KIB } else { 0 });
    let mut previous = after_burst;
    let mut settled_at = None;
    for i in 1..=10 * Pool::DECAY_EPOCH {
        let arena = pool.get();
        arena.alloc_bytes(100);
        drop(arena);
        let stats = pool.stats();
        assert!(stats.idle_bytes <= pool.max_idle_bytes(), "return {i}");
        assert!(stats.idle_bytes <= previous.idle_bytes, "return {i}: grew");
        assert!(
            stats.idle_arenas <= previous.idle_arenas,
            "return {i}: grew"
        );
        if i < 2 * Pool::DECAY_EPOCH - 4 {
            assert_eq!(stats, after_burst, "return {i}: nothing decays yet");
        }
        if (stats.idle_arenas, stats.idle_bytes) == settled && settled_at.is_none() {
            settled_at = Some(i);
        }
        previous = stats;
    }
    let settled_at = settled_at.expect("idle memory came down within 10 epochs");
    assert!(settled_at > 2 * Pool::DECAY_EPOCH - 4, "{settled_at}");
    let stats = pool.stats();
    assert_eq!((stats.idle_arenas, stats.idle_bytes), settled);
}

/// Without any request, nothing decays by itself; `decay` is the clock: the first
/// call ends the epoch of the burst (which needed it all), each later one halves
/// what is left over, and the third gives the last arena back.
#[test]
fn without_requests_decay_calls_give_the_idle_memory_back() {
    let pool = Pool::new();
    let guards: std::vec::Vec<_> = (0..3).map(|_| pool.get()).collect();
    for arena in &guards {
        request(arena, miri_or(MIB, 3 * MIB));
    }
    drop(guards);
    let held = pool.stats();
    assert_eq!(held.idle_arenas, 3);
    pool.decay();
    assert_eq!(pool.stats(), held, "the burst's own epoch needed it all");
    pool.decay();
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1, "{stats:?}");
    assert!(stats.idle_bytes < held.idle_bytes / 3 || !PAGE_MODE);
    pool.decay();
    assert_eq!(pool.stats(), PoolStats::default());
    // The pool goes on serving, and a new burst is kept again.
    request(&pool.get(), MIB);
    assert_eq!(pool.stats().idle_arenas, 1);
    assert!(!PAGE_MODE || pool.stats().idle_bytes > MIB);
}

/// `keep` is a fixed setting that overrides the decay: every arena is trimmed to
/// `keep` beyond its first page however the load goes, and neither its bytes nor
/// the number of idle arenas decays.
#[test]
fn keep_overrides_the_decay() {
    let keep = 256 * KIB;
    let pool = Pool::new().keep(keep);
    let guards: std::vec::Vec<_> = (0..3).map(|_| pool.get()).collect();
    for arena in &guards {
        request(arena, MIB);
    }
    drop(guards);
    let per_arena = held_after_return(|a| request(a, MIB), keep);
    let held = pool.stats();
    assert_eq!(held.idle_arenas, 3);
    assert_eq!(held.idle_bytes, 3 * if PAGE_MODE { per_arena } else { 0 });
    for _ in 0..3 * Pool::DECAY_EPOCH {
        pool.get().alloc_bytes(100);
    }
    pool.decay();
    assert_eq!(pool.stats(), held, "nothing decayed");
}

/// The idle limit is a hard bound on the bytes: a returned arena that would pass
/// it makes room by dropping the idle arenas returned longest ago (the newest is
/// kept, so the next `get` finds the warmest pages), and one larger than the limit
/// alone is trimmed to it.
#[test]
fn the_idle_limit_drops_the_oldest_arenas_and_trims_one_too_large() {
    let limit = 3 * MIB;
    let pool = Pool::new().idle_limit(limit);
    assert_eq!(pool.max_idle_bytes(), limit);
    let guards: std::vec::Vec<_> = (0..3).map(|_| pool.get()).collect();
    for arena in &guards {
        request(arena, MIB);
    }
    let newest = guards[2]
        .pages()
        .map(|p| p.size)
        .collect::<std::vec::Vec<_>>();
    drop(guards);
    let stats = pool.stats();
    assert!(stats.idle_bytes <= limit, "{stats:?}");
    if PAGE_MODE {
        let per_arena: usize = newest.iter().sum();
        assert_eq!(stats.idle_arenas, limit / per_arena);
        let arena = pool.get();
        let sizes: std::vec::Vec<_> = arena.pages().map(|p| p.size).collect();
        assert_eq!(sizes, newest, "the newest arena was kept, whole");
        drop(arena);
    }
    let big = pool.get();
    request(&big, 5 * MIB);
    drop(big);
    let stats = pool.stats();
    assert!(stats.idle_bytes <= limit, "{stats:?}");
    assert!(stats.idle_arenas >= 1, "trimmed and kept, not dropped");
}

fn proptest_config() -> Config {
    Config {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::XorShift,
        ..Config::default()
    }
}

/// One step of a pool's life in the property below.
#[derive(Clone, Debug)]
enum Step {
    /// Take an arena and use this many KiB in it.
    Get(usize),
    /// Give back the guard at this index (modulo those out).
    Give(usize),
    /// End an epoch now.
    Decay,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..miri_or(300, 3000usize)).prop_map(Step::Get),
        4 => any::<usize>().prop_map(Step::Give),
        1 => Just(Step::Decay),
    ]
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Any sequence of gets, returns in any order and decay calls, with any
    /// settings: after every step the idle arenas are within `max_idle` and their
    /// bytes within `max_idle_bytes`, and every arena comes out reset.
    #[test]
    fn the_bound_holds_at_every_step(
        max_idle in 0..5usize,
        idle_limit in prop::option::of(0..4 * MIB),
        keep in prop::option::of(0..2 * MIB),
        steps in prop::collection::vec(step(), 0..miri_or(30, 300)),
    ) {
        let mut pool = Pool::new().max_idle(max_idle);
        if let Some(bytes) = idle_limit {
            pool = pool.idle_limit(bytes);
        }
        if let Some(bytes) = keep {
            pool = pool.keep(bytes);
        }
        let mut out = std::vec::Vec::new();
        for step in steps {
            match step {
                Step::Get(kib) => {
                    let arena = pool.get();
                    prop_assert_eq!(arena.stats().used, 0);
                    request(&arena, kib * KIB);
                    out.push(arena);
                }
                Step::Give(i) if !out.is_empty() => drop(out.swap_remove(i % out.len())),
                Step::Give(_) => {}
                Step::Decay => pool.decay(),
            }
            let stats = pool.stats();
            prop_assert!(stats.idle_arenas <= max_idle, "{:?}", stats);
            prop_assert!(stats.idle_bytes <= pool.max_idle_bytes(), "{:?}", stats);
        }
        drop(out);
        let stats = pool.stats();
        prop_assert!(stats.idle_bytes <= pool.max_idle_bytes(), "{:?}", stats);
    }
}

/// Threads serving requests of mixed sizes from a pool with a small idle limit
/// while another thread calls `decay` as a timer would: every request gets a reset
/// arena of its own, and the bound holds whenever it is looked at (the test that
/// lets ThreadSanitizer see the decay's chores race with gets and returns).
#[test]
fn threads_serve_while_the_pool_decays() {
    const THREADS: usize = 3;
    let pool = Pool::new().max_idle(3).idle_limit(2 * MIB);
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                pool.decay();
                let stats = pool.stats();
                assert!(stats.idle_bytes <= 2 * MIB, "{stats:?}");
                thread::yield_now();
            }
        });
        let workers: std::vec::Vec<_> = (0..THREADS)
            .map(|t| {
                let pool = &pool;
                s.spawn(move || {
                    let mut rng = XorShift::new(t as u64 + 1);
                    for i in 0..miri_or(20, 400) {
                        let arena = pool.get();
                        assert_eq!(arena.stats().used, 0, "handed out reset");
                        let mine = arena.alloc((t, i));
                        let kib = if rng.below(8) == 0 {
                            1500
                        } else {
                            rng.below(200)
                        };
                        request(&arena, kib * KIB);
                        thread::yield_now();
                        assert_eq!(*mine, (t, i), "another thread wrote into this arena");
                        drop(arena);
                        let stats = pool.stats();
                        assert!(stats.idle_arenas <= 3, "{stats:?}");
                        assert!(stats.idle_bytes <= 2 * MIB, "{stats:?}");
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
    });
}
