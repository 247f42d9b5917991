//! `SyncPool` (`Pool<SyncOneWayAlloc>`): sync arenas shared by threads, returned
//! reset and trimmed by the same policy as `Pool::new()`'s, in both modes. Threads
//! here allocate in one guard's arena at once, so the file runs under
//! ThreadSanitizer (.ci/run).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::thread;

use common::{KIB, MIB, PAGE_MODE};
use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::{Pool, PoolStats, PooledArena, SyncOneWayAlloc, SyncPool};

/// Fewer iterations under Miri, the same properties.
const fn miri_or(miri: usize, native: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

/// `threads` threads allocate `bytes` each into the guard's arena at once, in 60
/// KiB pieces, each checking its own values afterwards.
fn fill_from_threads(arena: &SyncOneWayAlloc, threads: usize, bytes: usize) {
    thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let mut pieces = std::vec::Vec::new();
                // Each piece takes 60 KiB of the arena; under Miri only its first
                // `STAMPED` words are written and checked (Miri pays for every word,
                // not for the bytes a piece reserves), elsewhere all of them.
                const STAMPED: usize = miri_or(4, 60 * KIB / 8);
                for i in 0..bytes.div_ceil(60 * KIB) {
                    let piece = arena.alloc_slice_fill_copy(STAMPED, (t * 1000 + i) as u64);
                    arena.alloc_bytes(60 * KIB - STAMPED * 8);
                    pieces.push(piece);
                }
                for (i, piece) in pieces.iter().enumerate() {
                    assert!(piece.iter().all(|&v| v == (t * 1000 + i) as u64));
                }
            });
        }
    });
}

#[test]
fn an_arena_filled_by_two_threads_comes_back_reset_with_its_first_pages_only() {
    let pool = Pool::new_sync();
    let mut arena = pool.get();
    fill_from_threads(&arena, 2, 3 * MIB);
    let held = arena.stats().capacity;
    assert!(!PAGE_MODE || held >= 6 * MIB, "two threads' pages: {held}");
    drop(arena);
    let stats = pool.stats();
    assert_eq!(stats.idle_arenas, 1);
    // An idle sync arena keeps its serials' first pages (64 KiB each, one per
    // thread that allocated); the rest went back to the page source, so that the
    // next request, which may hold its guard across an await before it needs
    // anything, does not hold them too.
    assert!(stats.idle_bytes <= 2 * 64 * KIB, "{stats:?}");
    let mut again = pool.get();
    assert_eq!(again.stats().used, 0, "handed out reset");
    assert_eq!(again.stats().capacity, stats.idle_bytes);
    assert_eq!(pool.stats(), PoolStats::default());
    // It grows again as any arena does.
    fill_from_threads(&again, 2, 3 * MIB);
    assert!(!PAGE_MODE || again.stats().capacity >= 6 * MIB);
}

#[test]
fn keep_still_keeps_a_sync_arenas_pages() {
    let pool = Pool::new_sync().keep(16 * MIB);
    let mut arena = pool.get();
    fill_from_threads(&arena, 2, 3 * MIB);
    let held = arena.stats().capacity;
    drop(arena);
    assert_eq!(pool.stats().idle_bytes, if PAGE_MODE { held } else { 0 });
    assert_eq!(
        pool.get().stats().capacity,
        if PAGE_MODE { held } else { 0 }
    );
}

#[test]
fn guards_moved_between_threads_are_returned_from_there() {
    let pool = Pool::new_sync().max_idle(4);
    thread::scope(|s| {
        for t in 0..4 {
            let guard = pool.get();
            s.spawn(move || {
                let value = guard.alloc(t);
                assert_eq!(*value, t);
                drop(guard); // returned from this thread
            });
        }
    });
    assert!(pool.stats().idle_arenas >= 1);
    assert!(pool.stats().idle_arenas <= 4);
}

#[test]
fn many_threads_take_and_return_arenas_within_the_bound() {
    static POOL: SyncPool = Pool::new_sync().max_idle(3).idle_limit(2 * MIB);
    let rounds = miri_or(3, 40);
    thread::scope(|s| {
        for t in 0..4usize {
            s.spawn(move || {
                for round in 0..rounds {
                    let arena = POOL.get();
                    let mut values: Vec<usize, &SyncOneWayAlloc> = Vec::new_in(&*arena);
                    values.extend((0..1000).map(|i| i * t + round));
                    if round % 7 == 0 {
                        arena.alloc_bytes(MIB); // now and then a larger request
                    }
                    assert!(values.iter().enumerate().all(|(i, &v)| v == i * t + round));
                    drop(values);
                    drop(arena);
                    let stats = POOL.stats();
                    assert!(stats.idle_bytes <= POOL.max_idle_bytes());
                    assert!(stats.idle_arenas <= 3);
                }
            });
        }
    });
}

#[test]
fn after_a_burst_idle_arenas_hold_first_pages_only() {
    let pool = Pool::new_sync();
    for _ in 0..2 {
        let arena = pool.get();
        fill_from_threads(&arena, 2, 3 * MIB);
    }
    // Each idle arena keeps its serials' first pages (two threads allocated in
    // it), nothing of the burst, at once and after small requests.
    let stats = pool.stats();
    assert!(stats.idle_arenas <= 2, "{stats:?}");
    assert!(stats.idle_bytes <= 2 * 2 * 64 * KIB, "{stats:?}");
    for _ in 0..10 * Pool::DECAY_EPOCH {
        pool.get().alloc_bytes(100);
    }
    let stats = pool.stats();
    assert!(stats.idle_arenas <= 2, "{stats:?}");
    assert!(stats.idle_bytes <= 3 * 64 * KIB, "{stats:?}");
}

#[test]
fn decay_calls_give_an_idle_servers_memory_back() {
    let pool = Pool::new_sync();
    fill_from_threads(&pool.get(), 2, 2 * MIB);
    assert_eq!(pool.stats().idle_arenas, 1);
    for _second in 0..10 {
        pool.decay();
    }
    assert_eq!(pool.stats(), PoolStats::default());
}

#[test]
fn keep_trims_each_returned_arena() {
    let pool = Pool::new_sync().keep(0);
    // One thread: its serial keeps its first page.
    pool.get().alloc_bytes(MIB);
    assert_eq!(pool.stats().idle_arenas, 1);
    assert_eq!(
        pool.stats().idle_bytes,
        if PAGE_MODE { 64 * KIB } else { 0 }
    );
    // Used on three threads, the arena's three first pages pass `keep + first`: it
    // is dropped, as the docs say.
    let arena = pool.get();
    fill_from_threads(&arena, 3, 100 * KIB);
    drop(arena);
    assert_eq!(pool.stats().idle_arenas, usize::from(!PAGE_MODE));
}

#[test]
fn the_pools_limit_applies_to_every_thread_of_every_guard() {
    static POOL: SyncPool = Pool::new_sync().limit(MIB);
    let mut arena = POOL.get();
    assert_eq!(arena.limit(), Some(MIB));
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| assert!(arena.try_alloc_bytes(2 * MIB).is_err()));
        }
    });
    arena.set_limit(None);
    drop(arena);
    assert_eq!(POOL.get().limit(), Some(MIB), "set again at every get");
}

#[test]
fn a_panic_with_a_guard_out_returns_the_arena_reset() {
    let pool = Pool::new_sync();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let arena = pool.get();
        arena.alloc_owned(std::string::String::from("dropped at the reset"));
        fill_from_threads(&arena, 2, 200 * KIB);
        panic!("a handler fails with its guard out");
    }));
    assert!(result.is_err());
    assert_eq!(pool.stats().idle_arenas, 1);
    let mut arena = pool.get();
    assert_eq!(arena.stats().used, 0);
    assert_eq!(arena.stats().pending_drops, 0);
    assert_eq!(*arena.alloc(5u8), 5);
}

#[test]
fn the_pool_is_sync_and_the_guard_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SyncPool>();
    send_sync::<PooledArena<'static, SyncOneWayAlloc>>();
    // So a shared borrow of the guard's arena crosses threads.
    let pool = Pool::new_sync();
    let guard = pool.get();
    let sum: usize = thread::scope(|s| {
        let handles: std::vec::Vec<_> = (0..2)
            .map(|t| {
                let guard = &guard;
                s.spawn(move || *guard.alloc(t + 1))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(sum, 3);
}
