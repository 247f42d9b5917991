//! Values the arena drops (`alloc_owned`): the order, every point where they are
//! dropped (reset, the end of a scope, a pool guard, `with_scratch`, the arena's
//! drop), panicking destructors, and values without drop glue. Runs in both modes
//! (the page mode and `--features separate-blocks`), under Miri and ASan too.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use onewayalloc::{OneWayAlloc, Pool, with_scratch};

/// How many values the larger cases place (fewer under Miri).
const MANY: usize = if cfg!(miri) { 40 } else { 20_000 };

/// A log of destructor runs, shared by the values of one test.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<usize>>>);

impl Log {
    fn take(&self) -> Vec<usize> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Records its id in the log when dropped; holds a heap `String` so that a
/// missed or doubled drop shows as a leak or a double free too.
struct Noisy {
    id: usize,
    name: String,
    log: Log,
}

impl Noisy {
    fn new(id: usize, log: &Log) -> Self {
        Noisy {
            id,
            name: format!("value {id}"),
            log: log.clone(),
        }
    }
}

impl Drop for Noisy {
    fn drop(&mut self) {
        assert_eq!(
            self.name,
            format!("value {}", self.id),
            "dropped a bad value"
        );
        self.log.0.lock().unwrap().push(self.id);
    }
}

/// Panics when dropped (after logging), if its flag says so.
struct Panicky {
    inner: Noisy,
    panic: bool,
}

impl Drop for Panicky {
    fn drop(&mut self) {
        if self.panic {
            panic!("destructor {} panics", self.inner.id);
        }
    }
}

fn descending(n: usize) -> Vec<usize> {
    (0..n).rev().collect()
}

#[test]
fn reset_drops_every_value_most_recent_first() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    for round in 0..3 {
        for id in 0..MANY {
            let value = arena.alloc_owned(Noisy::new(id, &log));
            assert_eq!(value.id, id);
        }
        assert_eq!(arena.stats().pending_drops, MANY);
        assert!(log.take().is_empty(), "round {round}: dropped before reset");
        arena.reset();
        assert_eq!(log.take(), descending(MANY), "round {round}");
        assert_eq!(arena.stats().pending_drops, 0);
        assert_eq!(arena.stats().used, 0);
    }
    // A second reset drops nothing again.
    arena.reset();
    assert!(log.take().is_empty());
}

#[test]
fn values_are_usable_and_mutable_until_the_reset() {
    let mut arena = OneWayAlloc::new();
    let names = arena.alloc_owned(vec![String::from("a")]);
    let total = arena.alloc_owned(String::new());
    for i in 0..MANY {
        names.push(i.to_string());
        total.push('x');
    }
    assert_eq!(names.len(), MANY + 1);
    assert_eq!(total.len(), MANY);
    arena.reset();
}

#[test]
fn dropping_the_arena_drops_the_values() {
    let log = Log::default();
    let arena = OneWayAlloc::new();
    for id in 0..MANY {
        arena.alloc_owned(Noisy::new(id, &log));
    }
    drop(arena);
    assert_eq!(log.take(), descending(MANY));
}

#[test]
fn values_mixed_with_plain_allocations_and_collections() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    for id in 0..MANY {
        arena.alloc_bytes(id % 300);
        let mut v = onewayalloc::collections::Vec::new_in(&arena);
        v.extend(0..id % 17);
        arena.alloc_owned(Noisy::new(id, &log));
        drop(v); // rolls back only when it is the most recent block
        arena.alloc_str("between");
    }
    arena.reset();
    assert_eq!(log.take(), descending(MANY));
}

#[test]
fn a_scope_drops_only_its_own_values() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    arena.alloc_owned(Noisy::new(1000, &log));
    arena.scope(|outer| {
        let kept = outer.alloc_owned(Noisy::new(100, &log));
        outer.alloc_owned(Noisy::new(101, &log));
        for round in 0..3 {
            outer.scope(|inner| {
                inner.alloc_owned(Noisy::new(200, &log));
                inner.alloc_owned(Noisy::new(201, &log));
                inner.scope(|innermost| {
                    innermost.alloc_owned(Noisy::new(300, &log));
                });
                assert_eq!(log.take(), [300], "round {round}");
            });
            assert_eq!(log.take(), [201, 200], "round {round}");
            assert_eq!(kept.name, "value 100", "an outer value is still alive");
        }
    });
    assert_eq!(log.take(), [101, 100]);
    assert_eq!(arena.stats().pending_drops, 1);
    drop(arena);
    assert_eq!(log.take(), [1000]);
}

#[test]
fn a_scope_that_panics_drops_its_values() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        arena.scope(|s| {
            s.alloc_owned(Noisy::new(1, &log));
            s.alloc_owned(Noisy::new(2, &log));
            panic!("the scope's closure panics");
        })
    }));
    assert!(result.is_err());
    assert_eq!(log.take(), [2, 1]);
    assert_eq!(arena.stats().pending_drops, 0);
    arena.alloc_owned(Noisy::new(3, &log));
    arena.reset();
    assert_eq!(log.take(), [3]);
}

#[test]
fn a_pool_guard_drops_the_values_when_it_drops() {
    let log = Log::default();
    let pool = Pool::new();
    for round in 0..3 {
        let arena = pool.get();
        for id in 0..10 {
            arena.alloc_owned(Noisy::new(id, &log));
        }
        assert!(log.take().is_empty());
        drop(arena);
        assert_eq!(log.take(), descending(10), "round {round}");
    }
    // A guard moved to another thread drops the values there.
    let arena = pool.get();
    arena.alloc_owned(Noisy::new(7, &log));
    std::thread::scope(|s| s.spawn(move || drop(arena)).join().unwrap());
    assert_eq!(log.take(), [7]);
}

#[test]
fn with_scratch_drops_the_values_when_it_returns() {
    let log = Log::default();
    for round in 0..3 {
        let n = with_scratch(|arena| {
            arena.alloc_owned(Noisy::new(1, &log));
            arena.alloc_owned(Noisy::new(2, &log));
            arena.scope(|s| {
                s.alloc_owned(Noisy::new(3, &log));
            });
            arena.stats().pending_drops
        });
        assert_eq!(n, 2);
        assert_eq!(log.take(), [3, 2, 1], "round {round}");
    }
}

#[test]
fn an_arena_moved_to_another_thread_drops_there() {
    let token = Arc::new(());
    let arena = OneWayAlloc::new();
    arena.alloc_owned(Arc::clone(&token));
    let handle = std::thread::spawn(move || {
        let mut arena = arena;
        arena.reset();
        arena.stats().pending_drops
    });
    assert_eq!(handle.join().unwrap(), 0);
    assert_eq!(Arc::strong_count(&token), 1);
}

#[test]
fn values_without_drop_glue_register_nothing() {
    let mut plain = OneWayAlloc::new();
    let mut owned = OneWayAlloc::new();
    for i in 0..MANY as u64 {
        assert_eq!(*plain.alloc(i), i);
        assert_eq!(*owned.alloc_owned(i), i);
        owned.alloc_owned([i as u8; 3]);
        plain.alloc([i as u8; 3]);
    }
    assert_eq!(owned.stats().pending_drops, 0);
    // The same bytes as `alloc`: no record.
    assert_eq!(owned.stats().used, plain.stats().used);
    assert!(!std::mem::needs_drop::<&'static str>());
    owned.alloc_owned("static str");
    assert_eq!(owned.stats().pending_drops, 0);
    owned.reset();
    plain.reset();
}

#[test]
fn zero_sized_and_over_aligned_values_are_dropped() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Zst;
    impl Drop for Zst {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    #[repr(align(256))]
    struct Wide(u8, String);
    impl Drop for Wide {
        fn drop(&mut self) {
            assert_eq!(self.1, "wide");
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut arena = OneWayAlloc::new();
    for _ in 0..10 {
        arena.alloc_owned(Zst);
        let wide = arena.alloc_owned(Wide(7, String::from("wide")));
        assert_eq!(std::ptr::from_mut(wide).addr() % 256, 0);
        assert_eq!(wide.0, 7);
    }
    assert_eq!(arena.stats().pending_drops, 20);
    arena.reset();
    assert_eq!(DROPS.load(Ordering::Relaxed), 20);
}

#[test]
fn a_refused_value_is_dropped_at_once_and_not_registered() {
    let log = Log::default();
    let arena = OneWayAlloc::new();
    // Fill what the arena holds, then cap it there: the next page is refused.
    arena.set_limit(Some(arena.stats().capacity.max(1)));
    struct Big {
        _pad: [u8; 70_000],
        _noisy: Noisy,
    }
    let big = Big {
        _pad: [0; 70_000],
        _noisy: Noisy::new(9, &log),
    };
    assert!(arena.try_alloc_owned(big).is_err());
    assert_eq!(log.take(), [9]);
    assert_eq!(arena.stats().pending_drops, 0);
    arena.set_limit(None);
    arena.alloc_owned(Noisy::new(10, &log));
    drop(arena);
    assert_eq!(log.take(), [10]);
}

/// A panicking destructor among others: every other one runs, the arena ends
/// reset and usable, and the first panic's payload comes out of `reset`.
#[test]
fn a_panicking_destructor_does_not_stop_the_reset() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    for round in 0..2 {
        for id in 0..10 {
            arena.alloc_owned(Panicky {
                inner: Noisy::new(id, &log),
                panic: id == 4,
            });
        }
        let caught = panic::catch_unwind(AssertUnwindSafe(|| arena.reset()));
        let payload = caught.expect_err("the destructor's panic propagates");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("destructor 4 panics")
        );
        assert_eq!(log.take(), descending(10), "round {round}");
        assert_eq!(arena.stats().pending_drops, 0);
        assert_eq!(arena.stats().used, 0, "the arena ended reset");
        assert_eq!(arena.alloc_str("usable"), "usable");
        arena.reset();
    }
}

#[test]
fn a_panicking_destructor_does_not_stop_a_scope_rollback() {
    let log = Log::default();
    let mut arena = OneWayAlloc::new();
    arena.alloc_owned(Noisy::new(100, &log));
    let used_outside = arena.stats().used;
    for round in 0..2 {
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            arena.scope(|s| {
                for id in 0..5 {
                    s.alloc_owned(Panicky {
                        inner: Noisy::new(id, &log),
                        panic: id == 3,
                    });
                }
            })
        }));
        assert!(caught.is_err(), "round {round}");
        assert_eq!(log.take(), descending(5), "round {round}");
        assert_eq!(arena.stats().pending_drops, 1, "the outer value stays");
        assert_eq!(arena.stats().used, used_outside, "the scope rolled back");
    }
    arena.reset();
    assert_eq!(log.take(), [100]);
}

#[test]
fn dropping_the_arena_with_a_panicking_destructor_frees_everything() {
    let log = Log::default();
    let arena = OneWayAlloc::new();
    for id in 0..10 {
        arena.alloc_owned(Panicky {
            inner: Noisy::new(id, &log),
            panic: id == 9,
        });
    }
    let caught = panic::catch_unwind(AssertUnwindSafe(move || drop(arena)));
    assert!(caught.is_err());
    assert_eq!(log.take(), descending(10));
}

#[test]
fn a_panicking_destructor_in_a_pool_guard_drops_the_arena() {
    let log = Log::default();
    let pool = Pool::new();
    let arena = pool.get();
    arena.alloc_owned(Noisy::new(1, &log));
    arena.alloc_owned(Panicky {
        inner: Noisy::new(2, &log),
        panic: true,
    });
    let caught = panic::catch_unwind(AssertUnwindSafe(move || drop(arena)));
    assert!(caught.is_err());
    assert_eq!(log.take(), [2, 1]);
    // The pool goes on serving.
    let arena = pool.get();
    arena.alloc_owned(Noisy::new(3, &log));
    drop(arena);
    assert_eq!(log.take(), [3]);
}

#[test]
fn many_values_over_many_pages_and_reused_pages() {
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    struct Counted(#[allow(dead_code)] String);
    impl Counted {
        fn new(i: usize) -> Self {
            LIVE.fetch_add(1, Ordering::Relaxed);
            Counted(i.to_string())
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let mut arena = OneWayAlloc::new();
    for round in 0..3 {
        for i in 0..MANY * 4 {
            arena.alloc_owned(Counted::new(i));
        }
        assert_eq!(LIVE.load(Ordering::Relaxed), MANY * 4, "round {round}");
        arena.reset();
        assert_eq!(LIVE.load(Ordering::Relaxed), 0, "round {round}");
    }
}
