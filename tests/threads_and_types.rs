//! Thread-safety markers (SPEC §1.6), arenas moved between threads and one arena per
//! worker, and the contract with the backing allocator: the arena obtains nothing
//! but its pages, returns each page with the layout it was obtained with, releases
//! everything on drop (SPEC §1.1, §1.5), and survives refusals and bad input (§3).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;
use core::marker::PhantomData;
use core::ptr::NonNull;
use std::collections::HashMap as StdHashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};

use common::*;
use onewayalloc::allocator_api2::alloc::{AllocError, Allocator, Global};
use onewayalloc::allocator_api2::vec::Vec as AVec;
use onewayalloc::hashbrown::HashMap;
use onewayalloc::{OneWayAlloc, Stats};

// ----- Compile-time markers ------------------------------------------------------------

fn assert_send<T: Send>() {}

/// Fails to compile if `$t` implements `$trait` (the type inference of `_` becomes
/// ambiguous between the two impls).
macro_rules! assert_not_impl {
    ($t:ty, $trait:path) => {
        const _: fn() = || {
            #[allow(dead_code)]
            trait AmbiguousIfImpl<A> {
                fn some_item() {}
            }
            impl<T: ?Sized> AmbiguousIfImpl<()> for T {}
            #[allow(dead_code)]
            struct Invalid;
            impl<T: ?Sized + $trait> AmbiguousIfImpl<Invalid> for T {}
            let _ = <$t as AmbiguousIfImpl<_>>::some_item;
        };
    };
}

assert_not_impl!(OneWayAlloc, Sync);
assert_not_impl!(OneWayAlloc<Tracking>, Sync);
// A reference to an arena cannot cross threads, so neither can its collections.
assert_not_impl!(&'static OneWayAlloc, Send);
assert_not_impl!(AVec<u8, &'static OneWayAlloc>, Send);
// The arena is only as `Send` as its backing allocator.
assert_not_impl!(OneWayAlloc<RcAlloc>, Send);

#[test]
fn arena_is_send() {
    assert_send::<OneWayAlloc>();
    assert_send::<OneWayAlloc<Global>>();
    assert_send::<OneWayAlloc<Tracking>>();
    // And usable as an allocator through a shared reference.
    fn assert_allocator<A: Allocator + Copy>(_: A) {}
    assert_allocator(&OneWayAlloc::new());
    assert_allocator(&OneWayAlloc::new_in(Tracking::default()));
    let rc_arena = OneWayAlloc::new_in(RcAlloc(PhantomData));
    assert_eq!(*rc_arena.alloc(5u8), 5);
}

/// A backing allocator that is not `Send`.
#[derive(Clone)]
struct RcAlloc(PhantomData<Rc<()>>);

unsafe impl Allocator for RcAlloc {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        Global.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        unsafe { Global.deallocate(ptr, layout) }
    }
}

// ----- A recording backing allocator ----------------------------------------------------

#[derive(Default)]
struct Ledger {
    /// Blocks handed out and not yet returned: address -> layout.
    live: StdHashMap<usize, Layout>,
    /// Every layout ever handed out, in order.
    obtained: Vec<Layout>,
    /// Blocks returned.
    returned: usize,
    /// Deallocations that did not match an outstanding block exactly.
    errors: Vec<String>,
    /// Refuse every request while set.
    refuse: bool,
}

/// Wraps `Global`, records every block and checks every deallocation against it.
#[derive(Clone, Default)]
struct Tracking(Arc<Mutex<Ledger>>);

impl Tracking {
    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set_refuse(&self, refuse: bool) {
        self.ledger().refuse = refuse;
    }

    /// Sizes of the outstanding blocks, sorted.
    fn live_sizes(&self) -> Vec<usize> {
        let mut sizes: Vec<usize> = self.ledger().live.values().map(|l| l.size()).collect();
        sizes.sort_unstable();
        sizes
    }

    /// Checks that the outstanding blocks are exactly the arena's pages.
    fn check_matches<A: Allocator>(&self, arena: &OneWayAlloc<A>) {
        let mut pages = sizes(arena);
        pages.sort_unstable();
        assert_eq!(self.live_sizes(), pages, "outstanding blocks are the pages");
        let stats = arena.stats();
        let ledger = self.ledger();
        assert_eq!(ledger.live.len(), stats.pages);
        assert_eq!(
            ledger.live.values().map(|l| l.size()).sum::<usize>(),
            stats.capacity
        );
        assert_eq!(ledger.obtained.len(), stats.page_allocations);
        assert!(ledger.errors.is_empty(), "{:?}", ledger.errors);
    }

    /// Checks that everything obtained was returned, each with its own layout.
    fn check_all_returned(&self) {
        let ledger = self.ledger();
        assert!(ledger.errors.is_empty(), "{:?}", ledger.errors);
        assert!(ledger.live.is_empty(), "outstanding: {:?}", ledger.live);
        assert_eq!(ledger.returned, ledger.obtained.len());
    }
}

unsafe impl Allocator for Tracking {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let mut ledger = self.ledger();
        if ledger.refuse {
            return Err(AllocError);
        }
        let block = Global.allocate(layout)?;
        let previous = ledger
            .live
            .insert(addr(block.as_ptr().cast::<u8>()), layout);
        assert!(previous.is_none(), "Global handed out a live block twice");
        ledger.obtained.push(layout);
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let mut ledger = self.ledger();
        ledger.returned += 1;
        match ledger.live.remove(&addr(ptr.as_ptr())) {
            Some(recorded) if recorded == layout => unsafe { Global.deallocate(ptr, layout) },
            Some(recorded) => {
                let msg = format!("returned with {layout:?}, obtained with {recorded:?}");
                ledger.errors.push(msg);
                // Free it correctly anyway, so the test reports instead of crashing.
                unsafe { Global.deallocate(ptr, recorded) }
            }
            None => {
                // Not ours, or returned twice: leak it rather than risk UB.
                let msg = format!("returned an unknown block {ptr:?} with {layout:?}");
                ledger.errors.push(msg);
            }
        }
    }
}

// ----- Threads -------------------------------------------------------------------------

#[test]
fn arena_moves_to_another_thread_and_back() {
    let n = if cfg!(miri) { 200 } else { 10_000 };
    let arena = OneWayAlloc::new();
    arena.alloc_str("made on the main thread");
    bytes(&arena, 100 * KIB); // a second page
    let handle = std::thread::spawn(move || {
        let sum = {
            let mut v = AVec::new_in(&arena);
            v.extend(0..n as u64);
            let mut map = HashMap::new_in(&arena);
            for &i in &v {
                map.insert(i, i * 2);
            }
            assert_eq!(map.len(), n);
            map.values().sum::<u64>()
        };
        (arena, sum)
    });
    let (mut arena, sum) = handle.join().expect("the worker");
    let n64 = n as u64;
    assert_eq!(sum, n64 * (n64 - 1));
    let stats = arena.stats();
    // The string and the 100 KiB block made on the main thread are still there.
    assert!(stats.used >= 100 * KIB, "{stats:?}");
    // The arena keeps working on the main thread, pages and all.
    let s = arena.alloc_str("back home");
    assert_eq!(s, "back home");
    if PAGE_MODE {
        assert!(stats.pages >= 2);
        let pages = arena.stats().pages;
        arena.reset();
        assert_eq!(arena.stats().pages, pages);
        assert_eq!(arena.stats().used, 0);
    }
}

#[test]
fn one_arena_per_worker() {
    let n: u64 = if cfg!(miri) { 120 } else { 50_000 };
    let work = |seed: u64| {
        let mut arena = OneWayAlloc::new();
        let mut totals = Vec::new();
        for round in 0..3u64 {
            let total = {
                let mut map = HashMap::new_in(&arena);
                let mut keys = AVec::new_in(&arena);
                for i in 0..n {
                    let key = (i * seed + round) % 1000;
                    *map.entry(key).or_insert(0u64) += i;
                    keys.push(key);
                }
                let total: u64 = keys.iter().map(|k| map[k]).sum();
                total
            };
            totals.push(total);
            arena.reset();
        }
        (totals, arena.stats())
    };
    let expected = |seed: u64| -> Vec<u64> {
        (0..3u64)
            .map(|round| {
                let mut map = StdHashMap::new();
                for i in 0..n {
                    *map.entry((i * seed + round) % 1000).or_insert(0u64) += i;
                }
                (0..n).map(|i| map[&((i * seed + round) % 1000)]).sum()
            })
            .collect()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| work(7));
        let b = s.spawn(|| work(13));
        (a.join().expect("worker a"), b.join().expect("worker b"))
    });
    assert_eq!(a.0, expected(7));
    assert_eq!(b.0, expected(13));
    for stats in [a.1, b.1] {
        assert_eq!(stats.used, 0);
        assert!(stats.page_allocations >= 1 || !PAGE_MODE);
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn arena_with_a_tracking_backing_is_dropped_on_another_thread() {
    let tracker = Tracking::default();
    let arena = OneWayAlloc::new_in(tracker.clone());
    bytes_in(&arena, 200 * KIB);
    let arena = std::thread::spawn(move || {
        bytes_in(&arena, 300 * KIB);
        arena
    })
    .join()
    .expect("worker");
    tracker.check_matches(&arena);
    std::thread::spawn(move || drop(arena))
        .join()
        .expect("dropper");
    tracker.check_all_returned();
    assert_eq!(tracker.ledger().obtained.len(), 3);
}

fn bytes_in<A: Allocator>(arena: &OneWayAlloc<A>, n: usize) -> NonNull<u8> {
    arena.alloc_layout(layout(n, 1))
}

// ----- The backing allocator -----------------------------------------------------------

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn pages_go_back_with_the_layout_they_were_obtained_with() {
    let tracker = Tracking::default();
    let mut arena = OneWayAlloc::with_size_hint_in(100_000, tracker.clone());
    tracker.check_matches(&arena);
    let small = if cfg!(miri) { 150 } else { 3_000 };
    let mut rng = XorShift::new(42);
    for round in 0..4 {
        // Many ordinary pages.
        for _ in 0..small * (round + 1) {
            let size = 1 + rng.below(if round == 3 { 8 * KIB } else { 2 * KIB });
            arena.alloc_layout(layout(size, 1 << rng.below(6)));
        }
        // Large pages, a bigger one each round so that some are new.
        bytes_in(&arena, 3 * MIB + round * MIB);
        // Pages aligned above the OS page.
        let p = arena.alloc_layout(layout(64 * KIB + round, 2 * MIB));
        assert_eq!(addr(p.as_ptr()) % (2 * MIB), 0);
        let p = arena.alloc_layout(layout(200 * KIB, 256 * KIB));
        assert_eq!(addr(p.as_ptr()) % (256 * KIB), 0);
        // Collections.
        {
            let mut v = AVec::new_in(&arena);
            v.extend(0..small as u32);
            let mut m = HashMap::new_in(&arena);
            m.extend(v.iter().map(|&x| (x, x)));
            assert_eq!(m.len(), small);
        }
        tracker.check_matches(&arena);
        check_consistent(&arena);
        arena.reset();
        tracker.check_matches(&arena);
    }
    {
        let ledger = tracker.ledger();
        assert!(ledger.obtained.len() >= 8, "{:?}", ledger.obtained);
        assert!(
            ledger.obtained.iter().any(|l| l.align() >= 2 * MIB),
            "a 2 MiB-aligned page must be 2 MiB aligned"
        );
        assert!(ledger.obtained.iter().any(|l| l.size() >= 6 * MIB));
        assert!(ledger.obtained.iter().all(|l| l.size() % os_page() == 0));
        assert_eq!(ledger.returned, 0, "nothing is freed before drop");
    }
    drop(arena);
    tracker.check_all_returned();
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn construction_obtains_only_the_first_page() {
    let tracker = Tracking::default();
    let arena = OneWayAlloc::new_in(tracker.clone());
    {
        let ledger = tracker.ledger();
        assert_eq!(ledger.obtained.len(), 1);
        assert_eq!(ledger.obtained[0].size(), round_os(64 * KIB));
    }
    // Allocating inside the first page obtains nothing more.
    for i in 0..100 {
        arena.alloc(i as u64);
        arena.alloc_str("abc");
    }
    let mut v = AVec::new_in(&arena);
    v.extend(0..1000u32);
    drop(v);
    assert_eq!(tracker.ledger().obtained.len(), 1);
    assert!(tracker.ledger().obtained[0].align() >= 16);
    drop(arena);
    tracker.check_all_returned();
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn refused_pages_leave_the_arena_working() {
    let tracker = Tracking::default();
    tracker.set_refuse(true);
    assert!(OneWayAlloc::try_with_size_hint_in(0, tracker.clone()).is_err());
    assert!(OneWayAlloc::try_with_size_hint_in(MIB, tracker.clone()).is_err());
    assert!(tracker.ledger().obtained.is_empty());
    tracker.set_refuse(false);

    let arena = OneWayAlloc::new_in(tracker.clone());
    arena.alloc_bytes(100);
    tracker.set_refuse(true);
    let before: Stats = arena.stats();
    let pages_before: Vec<_> = arena.pages().collect();
    assert!(arena.try_alloc_bytes(200 * KIB).is_err());
    assert!(arena.try_alloc_layout(layout(100 * KIB, 2 * MIB)).is_err());
    assert!(arena.try_alloc_zeroed(1000, 1000).is_err());
    assert!(arena.try_alloc_slice_fill_with(100_000, |i| i).is_err());
    let a = &arena;
    assert!(a.allocate(layout(3 * MIB, 8)).is_err());
    assert_eq!(arena.stats(), before);
    assert_eq!(arena.pages().collect::<Vec<_>>(), pages_before);
    // The current page still serves what fits.
    assert_eq!(arena.alloc_str("still here"), "still here");
    assert_eq!(*arena.try_alloc(7u32).expect("fits"), 7);
    // And new pages come once the backing allocator gives them again.
    tracker.set_refuse(false);
    let big = arena.alloc_bytes(200 * KIB);
    assert_eq!(big.len(), 200 * KIB);
    assert_eq!(arena.stats().pages, 2);
    tracker.check_matches(&arena);
    drop(arena);
    tracker.check_all_returned();
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn overflow_panics_and_leaves_the_arena_working() {
    let tracker = Tracking::default();
    let arena = OneWayAlloc::new_in(tracker.clone());
    let kept = arena.alloc_str("kept");
    let before = arena.stats();

    assert!(arena.try_alloc_zeroed(usize::MAX, 2).is_err());
    assert!(arena.try_alloc_bytes(usize::MAX).is_err());
    assert!(arena.try_alloc_bytes(isize::MAX as usize).is_err());
    let huge = Layout::from_size_align(isize::MAX as usize - 8, 8).unwrap();
    assert!(arena.try_alloc_layout(huge).is_err());
    assert!((&arena).allocate(huge).is_err());
    assert!(
        arena
            .try_alloc_slice_fill_with(usize::MAX / 4, |_| 0u64)
            .is_err()
    );

    let message = |payload: Box<dyn std::any::Any + Send>| -> String {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    };
    let err = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_zeroed(usize::MAX, 2);
    }))
    .expect_err("nmemb * size overflows");
    assert!(message(err).contains("overflow"));
    let err = catch_unwind(AssertUnwindSafe(|| {
        arena.alloc_layout(huge);
    }))
    .expect_err("the layout plus the header overflows");
    assert!(message(err).contains("overflow"));
    let err = catch_unwind(|| OneWayAlloc::with_size_hint(usize::MAX))
        .expect_err("the hint plus the header overflows");
    assert!(message(err).contains("overflow"));

    assert_eq!(arena.stats(), before);
    assert_eq!(kept, "kept");
    arena.alloc_bytes(100 * KIB);
    assert_eq!(arena.stats().pages, 2);
    tracker.check_matches(&arena);
    drop(arena);
    tracker.check_all_returned();
}
