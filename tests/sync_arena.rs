//! `SyncOneWayAlloc` (issue 31, SPEC §6): threads allocating into one arena at once,
//! collections moving and growing between threads, `reset` keeping every page,
//! memory of exited threads, `alloc_owned` destructors, and the markers.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use core::alloc::Layout;
use core::ptr::NonNull;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use onewayalloc::allocator_api2::alloc::{AllocError, Allocator, Global};
use onewayalloc::allocator_api2::vec::Vec as AVec;
use onewayalloc::collections::CollectIn;
use onewayalloc::{OneWayAlloc, SEPARATE_BLOCKS, SyncOneWayAlloc};

const THREADS: usize = 4;

/// Values per thread: small under Miri.
const N: usize = if cfg!(miri) { 200 } else { 20_000 };

/// Runs `work` on `threads` scoped threads that are all running at once: each waits
/// for the others before it exits. Threads that run at the same time have serials
/// of their own, whereas a thread started after another exited may take over that
/// one's (see `threads_after_a_reset_reuse_the_serials_of_exited_threads`). A
/// panic in `work` still reaches the barrier first, so the others do not hang.
fn at_once(threads: usize, work: impl Fn() + Sync) {
    let all_done = Barrier::new(threads);
    thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&work));
                all_done.wait();
                if let Err(panic) = done {
                    std::panic::resume_unwind(panic);
                }
            });
        }
    });
}

// ----- Markers ----------------------------------------------------------------------

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SyncOneWayAlloc>();
    assert_send_sync::<&SyncOneWayAlloc>();
    assert_send_sync::<AVec<u8, &SyncOneWayAlloc>>();
    assert_send_sync::<SyncOneWayAlloc<Counting>>();
};

/// Fails to compile if `$t` implements `$trait`.
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
assert_not_impl!(SyncOneWayAlloc, Clone);

// ----- A backing allocator that counts ----------------------------------------------

/// The global allocator, counting the bytes it holds for the arena.
#[derive(Default)]
struct Counting {
    held: AtomicUsize,
    blocks: AtomicUsize,
}

// SAFETY: forwards to `Global`; the counters are only statistics.
unsafe impl Allocator for Counting {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(layout)?;
        self.held.fetch_add(layout.size(), Ordering::Relaxed);
        self.blocks.fetch_add(1, Ordering::Relaxed);
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        self.held.fetch_sub(layout.size(), Ordering::Relaxed);
        self.blocks.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

// ----- Threads allocating at once ----------------------------------------------------

#[test]
fn threads_allocate_into_one_arena_at_once() {
    let arena = SyncOneWayAlloc::new();
    let start = Barrier::new(THREADS);
    let results: Vec<(&[u64], &str)> = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (arena, start) = (&arena, &start);
                s.spawn(move || {
                    start.wait();
                    let mut last: &[u64] = &[];
                    for i in 0..N {
                        let v = arena.alloc((t * N + i) as u64);
                        assert_eq!(*v, (t * N + i) as u64);
                        if i % 64 == 0 {
                            last = arena.alloc_slice_fill_copy(8, t as u64);
                        }
                    }
                    let name = arena.alloc_str(&format!("thread{t}"));
                    (last, &*name)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (t, (slice, name)) in results.iter().enumerate() {
        assert_eq!(*slice, [t as u64; 8]);
        assert_eq!(*name, format!("thread{t}"));
    }
}

#[test]
fn each_thread_sums_what_it_allocated() {
    let mut arena = SyncOneWayAlloc::new();
    at_once(THREADS, || {
        for _ in 0..10 {
            arena.alloc_bytes(112); // a multiple of the 16-byte alignment
        }
    });
    let stats = arena.stats();
    assert_eq!(stats.used, THREADS * 1120);
    if !SEPARATE_BLOCKS {
        // One serial arena (one 64 KiB page) per thread.
        assert_eq!(stats.pages, THREADS);
        assert_eq!(stats.capacity, THREADS * 64 * 1024);
    }
}

// ----- Collections between threads -------------------------------------------------

#[test]
fn a_vec_built_on_one_thread_grows_on_another_and_is_read_on_a_third() {
    let arena = &SyncOneWayAlloc::new();
    let n = if cfg!(miri) { 300 } else { 50_000 };
    let v = thread::scope(|s| {
        s.spawn(|| {
            let mut v: AVec<u64, &SyncOneWayAlloc> = AVec::new_in(arena);
            v.extend(0..n);
            arena.alloc(1u8); // the vector is no longer the thread's most recent block
            v
        })
        .join()
        .unwrap()
    });
    let v = thread::scope(|s| {
        s.spawn(move || {
            let mut v = v;
            arena.alloc_bytes(10); // this thread's serial, in its own pages
            v.extend(n..2 * n); // grows: moves into this thread's serial
            v.shrink_to(v.len());
            v
        })
        .join()
        .unwrap()
    });
    let sum = thread::scope(|s| s.spawn(move || v.iter().sum::<u64>()).join().unwrap());
    assert_eq!(sum, (0..2 * n).sum::<u64>());
}

#[test]
fn collect_in_and_vec_macro_accept_the_sync_arena() {
    let mut arena = SyncOneWayAlloc::new();
    {
        let evens: AVec<u32, &SyncOneWayAlloc> = (0..10).filter(|n| n % 2 == 0).collect_in(&arena);
        let listed = onewayalloc::vec![in &arena; 1u32, 2, 3];
        let repeated = onewayalloc::vec![in &arena; 7u8; 4];
        let evens_sum = thread::scope(|s| s.spawn(|| evens.iter().sum::<u32>()).join().unwrap());
        assert_eq!(evens_sum, 20);
        assert_eq!((listed.len(), repeated.len()), (3, 4));
    }
    let arena_ref = &mut arena;
    let n = (0..4u8).collect_in::<AVec<u8, _>>(arena_ref).len();
    assert_eq!(n, 4);
}

#[test]
fn the_most_recent_block_of_a_thread_rolls_back_and_grows_in_place() {
    if SEPARATE_BLOCKS {
        return; // no cursor to roll back in the sanitizer mode
    }
    let mut arena = SyncOneWayAlloc::new();
    // Three threads at once: in the home serial, the second home and a serial of
    // the list.
    at_once(3, || {
        let mut v: AVec<u8, &SyncOneWayAlloc> = AVec::with_capacity_in(16, &arena);
        let first = v.as_ptr();
        v.extend(0..200u8); // grows in place: the most recent block
        assert_eq!(v.as_ptr(), first);
        drop(v); // rolled back
    });
    assert_eq!(arena.stats().used, 0);
    assert_eq!(serial_arenas(&arena), 3);
}

#[test]
fn a_block_freed_on_another_thread_is_left_in_place() {
    let mut arena = SyncOneWayAlloc::new();
    let v = thread::scope(|s| {
        s.spawn(|| {
            let mut v: AVec<u64, &SyncOneWayAlloc> = AVec::new_in(&arena);
            v.extend(0..10);
            v
        })
        .join()
        .unwrap()
    });
    thread::scope(|s| {
        s.spawn(|| {
            let x = arena.alloc(5u64);
            let mut v = v;
            v.truncate(5);
            v.shrink_to_fit(); // shrinks another thread's block (kept, or copied)
            assert_eq!(v, [0, 1, 2, 3, 4]);
            drop(v); // not this thread's block: nothing rolls back here
            assert_eq!(*x, 5);
            let y = arena.alloc(6u64);
            assert_eq!((*x, *y), (5, 6));
        });
    });
    let stats = arena.stats();
    if !SEPARATE_BLOCKS {
        // The vector's bytes come back at reset (its 8 capacity reserved 64 bytes,
        // the shrink kept it in place).
        assert!(stats.used >= 64 + 16);
    }
}

#[test]
fn a_thread_whose_cache_moved_to_another_arena_still_frees_and_grows_correctly() {
    let a = SyncOneWayAlloc::new();
    let b = SyncOneWayAlloc::new();
    // The main thread owns both home serials: the spawned thread's serials are in
    // the lists, found through its one-entry thread-local cache.
    a.alloc(0u8);
    b.alloc(0u8);
    thread::scope(|s| {
        s.spawn(|| {
            let mut va: AVec<u32, &SyncOneWayAlloc> = AVec::new_in(&a);
            va.extend(0..100);
            let vb: AVec<u32, &SyncOneWayAlloc> = (0..100).collect_in(&b); // evicts `a`
            va.extend(100..1000); // `a` again: the thread finds its serial under the lock
            drop(vb);
            assert_eq!(va.iter().sum::<u32>(), (0..1000).sum());
            let vb2: AVec<u32, &SyncOneWayAlloc> = (0..10).collect_in(&b);
            drop(va); // the cache holds `b`: nothing rolls back in `a`
            assert_eq!(vb2.len(), 10);
        });
    });
}

#[test]
fn a_panicking_destructor_still_resets_every_serial() {
    struct Boom;
    impl Drop for Boom {
        fn drop(&mut self) {
            panic!("boom");
        }
    }
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mut arena = SyncOneWayAlloc::new();
    thread::scope(|s| {
        s.spawn(|| {
            arena.alloc_owned(Boom);
        });
        s.spawn(|| {
            for _ in 0..3 {
                arena.alloc_owned(Tracked(&DROPS));
            }
        });
    });
    let reset = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| arena.reset()));
    assert!(reset.is_err());
    assert_eq!(DROPS.load(Ordering::SeqCst), 3);
    let stats = arena.stats();
    assert_eq!((stats.used, stats.pending_drops), (0, 0));
    assert_eq!(*arena.alloc(1u8), 1);
}

// ----- Reset -----------------------------------------------------------------------

/// One round: `THREADS` threads each allocate the same amount, past the first page
/// (64 KiB) of their serial arena.
fn round<A: Allocator + Send + Sync>(arena: &SyncOneWayAlloc<A>) {
    let per_thread = if cfg!(miri) { 8 } else { 40 };
    at_once(THREADS, || {
        for i in 0..per_thread {
            let block = arena.alloc_bytes(9000);
            block[0].write(i as u8);
            block[8999].write(!(i as u8));
            // SAFETY: both bytes were just written.
            let ends = unsafe { (block[0].assume_init(), block[8999].assume_init()) };
            assert_eq!(ends, (i as u8, !(i as u8)));
        }
    });
}

#[test]
fn reset_keeps_every_page_and_the_next_round_reuses_them() {
    let mut arena = SyncOneWayAlloc::new();
    round(&arena);
    let before = arena.stats();
    arena.reset();
    let after = arena.stats();
    assert_eq!(after.used, 0);
    assert_eq!(after.pages, before.pages);
    // In the sanitizer mode, capacity counts the blocks outstanding: none after reset.
    let kept = if SEPARATE_BLOCKS { 0 } else { before.capacity };
    assert_eq!(after.capacity, kept);
    assert_eq!(after.page_allocations, before.page_allocations);
    round(&arena);
    let again = arena.stats();
    assert_eq!(again.page_allocations, before.page_allocations); // no new page
    assert_eq!(again.used, before.used);
    if SEPARATE_BLOCKS {
        assert_eq!((before.pages, before.page_allocations), (0, 0));
    } else {
        assert!(before.pages > THREADS); // each thread went past its first page
    }
}

#[test]
fn memory_from_an_exited_thread_stays_valid_until_reset() {
    let mut arena = SyncOneWayAlloc::new();
    let (words, text) = values_from_exited_threads(&arena);
    // The threads have exited; their blocks are still there.
    assert_eq!(words, &[1, 2, 3]);
    assert_eq!(text, "from a thread that exited");
    // Another thread, and the main thread, allocate without disturbing them.
    thread::scope(|s| {
        s.spawn(|| arena.alloc_slice_fill_copy(1000, 9u64));
    });
    arena.alloc_bytes(4096);
    assert_eq!(words, &[1, 2, 3]);
    assert_eq!(text, "from a thread that exited");
    let held = arena.stats().capacity;
    arena.reset();
    let kept = if SEPARATE_BLOCKS { 0 } else { held };
    assert_eq!(arena.stats().capacity, kept);
}

/// Two values allocated by threads that have exited when it returns.
fn values_from_exited_threads(arena: &SyncOneWayAlloc) -> (&[u64], &str) {
    let words = thread::scope(|s| {
        s.spawn(|| &*arena.alloc_slice_copy(&[1u64, 2, 3]))
            .join()
            .unwrap()
    });
    let text = thread::scope(|s| {
        s.spawn(|| &*arena.alloc_str("from a thread that exited"))
            .join()
            .unwrap()
    });
    (words, text)
}

#[test]
fn threads_after_a_reset_reuse_the_serials_of_exited_threads() {
    let mut arena = SyncOneWayAlloc::new();
    // Three threads allocating at once: each claims a serial of its own (the home
    // serial and two of the list).
    let all_allocated = Barrier::new(3);
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                arena.alloc_bytes(100);
                all_allocated.wait();
            });
        }
    });
    let first = arena.stats();
    if !SEPARATE_BLOCKS {
        assert_eq!(first.pages, 3);
    }
    arena.reset();
    // After the reset, threads one after another, each started after the previous
    // one exited: each takes the home serial over (a thread started after the home's
    // owner exited may have its identity) or claims a free one; none creates one.
    // (112 bytes: a multiple of the 16-byte alignment, so no padding whether the
    // threads share a serial or not.)
    for _ in 0..3 {
        thread::scope(|s| {
            s.spawn(|| arena.alloc_bytes(112));
        });
    }
    let second = arena.stats();
    assert_eq!(second.pages, first.pages);
    assert_eq!(second.page_allocations, first.page_allocations);
    assert_eq!(second.used, 336);
}

/// Each home serial's owner is one thread at a time: while the threads that claimed
/// the home and the second home run, two more allocate in serials of their own
/// from the list, even when the four take turns (each allocation between the
/// others').
#[test]
fn no_serial_is_shared_by_two_running_threads() {
    const TAKING_TURNS: usize = 4;
    let mut arena = SyncOneWayAlloc::new();
    let turn = Barrier::new(TAKING_TURNS);
    let taking_turns = || {
        let mut blocks = Vec::new();
        for _ in 0..100 {
            blocks.push(arena.alloc_layout(Layout::new::<u64>()).addr().get());
            turn.wait();
        }
        blocks
    };
    let threads: Vec<Vec<usize>> = thread::scope(|s| {
        let running: Vec<_> = (0..TAKING_TURNS).map(|_| s.spawn(taking_turns)).collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    if !SEPARATE_BLOCKS {
        // Each thread bumps through a page of its own: its blocks are 8 bytes apart.
        for blocks in &threads {
            assert!(blocks.windows(2).all(|w| w[1] == w[0] + 8), "{blocks:?}");
        }
        assert_eq!(arena.stats().pages, TAKING_TURNS);
    }
    let mut all: Vec<usize> = threads.into_iter().flatten().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 100 * TAKING_TURNS);
    assert_eq!(arena.stats().used, 800 * TAKING_TURNS);
    assert_eq!(serial_arenas(&arena), TAKING_TURNS);
}

/// The second home serial is made when a second thread first allocates at the same
/// time as the first: an arena that one thread uses holds one serial, one page.
#[test]
fn the_second_home_is_made_only_for_a_second_thread() {
    let mut arena = SyncOneWayAlloc::new();
    arena.alloc(1u64);
    let one = arena.stats();
    assert_eq!(serial_arenas(&arena), 1);
    assert!(!second_home_made(&arena));
    // The main thread keeps the home serial; this thread makes the second one.
    thread::scope(|s| {
        s.spawn(|| arena.alloc(2u64));
    });
    assert_eq!(serial_arenas(&arena), 2);
    assert!(second_home_made(&arena));
    let two = arena.stats();
    if !SEPARATE_BLOCKS {
        assert_eq!((one.pages, two.pages), (1, 2));
    }
    // `reset`, `trim` and `set_limit` reach it like every serial.
    arena.reset();
    assert_eq!(arena.stats().used, 0);
    arena.set_limit(Some(1 << 20));
    thread::scope(|s| {
        s.spawn(|| assert!(arena.try_alloc_bytes(2 << 20).is_err()));
    });
    arena.trim(0);
    if !SEPARATE_BLOCKS {
        assert_eq!(arena.stats().pages, 2);
    }
}

#[test]
fn one_thread_alternating_between_two_arenas() {
    let a = SyncOneWayAlloc::new();
    let b = SyncOneWayAlloc::new();
    let mut kept = Vec::new();
    for i in 0..100u32 {
        kept.push(&*a.alloc(i));
        kept.push(&*b.alloc(i + 1000));
    }
    for (i, pair) in kept.chunks(2).enumerate() {
        assert_eq!((*pair[0], *pair[1]), (i as u32, i as u32 + 1000));
    }
}

// ----- Destructors ------------------------------------------------------------------

/// Counts its drops.
struct Tracked<'a>(&'a AtomicUsize);

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn alloc_owned_values_are_dropped_once_at_reset_and_at_drop() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mut arena = SyncOneWayAlloc::new();
    let place = |arena: &SyncOneWayAlloc| {
        thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    for _ in 0..5 {
                        arena.alloc_owned(Tracked(&DROPS));
                    }
                });
            }
        });
    };
    place(&arena);
    assert_eq!(arena.stats().pending_drops, THREADS * 5);
    assert_eq!(DROPS.load(Ordering::SeqCst), 0);
    arena.reset();
    assert_eq!(DROPS.load(Ordering::SeqCst), THREADS * 5);
    assert_eq!(arena.stats().pending_drops, 0);
    arena.reset();
    assert_eq!(DROPS.load(Ordering::SeqCst), THREADS * 5);
    place(&arena);
    drop(arena);
    assert_eq!(DROPS.load(Ordering::SeqCst), 2 * THREADS * 5);
}

// ----- Backing, limit, trim, bad input ------------------------------------------------

#[test]
fn every_block_goes_back_to_the_backing_allocator_at_drop() {
    let backing = std::sync::Arc::new(Counting::default());
    {
        let mut arena = SyncOneWayAlloc::new_in(ArcBacking(backing.clone()));
        round(&arena);
        let held = arena.stats().capacity;
        if !SEPARATE_BLOCKS {
            assert_eq!(backing.held.load(Ordering::Relaxed), held);
        }
        arena.reset();
        round(&arena);
    }
    assert_eq!(backing.held.load(Ordering::Relaxed), 0);
    assert_eq!(backing.blocks.load(Ordering::Relaxed), 0);
}

/// `Counting` shared with the test.
struct ArcBacking(std::sync::Arc<Counting>);

// SAFETY: forwards to `Counting`.
unsafe impl Allocator for ArcBacking {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        self.0.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.0.deallocate(ptr, layout) }
    }
}

/// A backing allocator in the mood the test sets: it forwards to `Global`, refuses,
/// panics, or first allocates from the very arena it backs (once, then forwards).
#[derive(Default)]
struct Moody {
    mood: AtomicUsize,
    /// The arena this allocator backs, for `REENTER` (a raw pointer: the arena owns
    /// this allocator).
    arena: std::sync::atomic::AtomicPtr<SyncOneWayAlloc<Moody>>,
    /// The blocks allocated re-entrantly.
    reentrant: std::sync::Mutex<Vec<Block>>,
}

/// A block of the arena, kept by the backing allocator.
#[derive(Clone, Copy)]
struct Block(NonNull<u64>);

// SAFETY: only the address moves between threads; the test reads the block after
// the thread that wrote it was joined, while the arena keeps it.
unsafe impl Send for Block {}

const FINE: usize = 0;
const REFUSE: usize = 1;
const PANIC: usize = 2;
const REENTER: usize = 3;

impl Moody {
    fn set(&self, mood: usize) {
        self.mood.store(mood, Ordering::SeqCst);
    }
}

// SAFETY: forwards to `Global` for every block it hands out.
unsafe impl Allocator for Moody {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        match self.mood.load(Ordering::SeqCst) {
            REFUSE => return Err(AllocError),
            PANIC => panic!("the backing allocator panics"),
            REENTER => {
                self.set(FINE);
                let arena = self.arena.load(Ordering::SeqCst);
                assert!(!arena.is_null(), "REENTER needs the arena's address");
                // SAFETY: the test stores the address of the arena in place and
                // neither moves, resets nor drops it while this mood is set; the
                // arena calls this through a shared borrow.
                let arena = unsafe { &*arena };
                let value = arena.alloc(0xBAC_u64);
                self.reentrant
                    .lock()
                    .unwrap()
                    .push(Block(NonNull::from(value)));
            }
            _ => {}
        }
        Global.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: every block came from `Global` with this layout.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

/// How many serial arenas the arena has (its `Debug` output tells).
fn serial_arenas<A: Allocator>(arena: &SyncOneWayAlloc<A>) -> usize {
    let debug = format!("{arena:?}");
    let count = debug.split("serial_arenas: ").nth(1).expect(&debug);
    count.split(',').next().unwrap().parse().expect(&debug)
}

/// Once the backing allocator misbehaved on a second thread: it gives pages again,
/// and the main thread (the home serial's owner) and a new thread both allocate.
fn carries_on_after_the_mood(arena: &SyncOneWayAlloc<Moody>) {
    arena.backing().set(FINE);
    assert_eq!(*arena.alloc(3u64), 3);
    let value = thread::scope(|s| s.spawn(|| *arena.alloc(4u64)).join().unwrap());
    assert_eq!(value, 4);
}

/// Whether the arena made its second home serial (its `Debug` output tells).
fn second_home_made<A: Allocator>(arena: &SyncOneWayAlloc<A>) -> bool {
    format!("{arena:?}").contains("second_home_made: true")
}

/// A second thread's serial cannot be made when the backing allocator refuses its
/// first page: the thread gets the error, the arena goes on, and a later thread
/// makes the serial once the backing allocator gives pages again.
#[test]
fn a_refused_serial_leaves_the_arena_usable_and_is_made_later() {
    let mut arena = SyncOneWayAlloc::new_in(Moody::default());
    assert_eq!(*arena.alloc(1u64), 1); // the main thread's: the home serial
    arena.backing().set(REFUSE);
    thread::scope(|s| {
        s.spawn(|| assert!(arena.try_alloc(2u64).is_err()));
    });
    carries_on_after_the_mood(&arena);
    if !SEPARATE_BLOCKS {
        // The refusal left nothing behind: two serials, the home and the later
        // thread's. (The sanitizer mode makes serials without a page: the refused
        // thread had one, which a later thread takes over or not, as it may get
        // the exited thread's identity or not.)
        assert_eq!(serial_arenas(&arena), 2);
        assert_eq!(arena.stats().pages, 2);
        // The later thread's is the second home, which the refused one gave up.
        assert!(second_home_made(&arena));
    }
}

/// A backing allocator that panics while a second thread's serial is made: the
/// panic reaches that thread's call, and the arena stays usable by every thread.
#[test]
fn a_backing_allocator_panicking_for_a_new_serial_leaves_the_arena_usable() {
    let mut arena = SyncOneWayAlloc::new_in(Moody::default());
    assert_eq!(*arena.alloc(1u64), 1);
    arena.backing().set(PANIC);
    thread::scope(|s| {
        s.spawn(|| {
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *arena.alloc(2u64)));
            // The sanitizer mode makes its serials without a page: the panic comes
            // with the block instead. Either way, the call panicked.
            assert!(outcome.is_err());
        });
    });
    carries_on_after_the_mood(&arena);
    if !SEPARATE_BLOCKS {
        // The panic left nothing behind (see the refusal's test).
        assert_eq!(serial_arenas(&arena), 2);
        assert!(second_home_made(&arena));
    }
    arena.reset();
    let value = thread::scope(|s| s.spawn(|| *arena.alloc(5u64)).join().unwrap());
    assert_eq!(value, 5);
}

/// A backing allocator that allocates from the very arena it backs while a second
/// thread's serial is made: that allocation, on the same thread, takes a serial of
/// its own (the one being made is not yet the thread's), and both stay valid.
#[test]
fn a_backing_allocator_may_allocate_from_the_arena_while_a_serial_is_made() {
    let mut arena = SyncOneWayAlloc::new_in(Moody::default());
    assert_eq!(*arena.alloc(1u64), 1); // the main thread's: the home serial
    let address = core::ptr::from_ref(&arena).cast_mut();
    arena.backing().arena.store(address, Ordering::SeqCst);
    arena.backing().set(REENTER);
    let blocks: Vec<usize> = thread::scope(|s| {
        s.spawn(|| {
            (0..100u64)
                .map(|i| {
                    let value = arena.alloc(i);
                    assert_eq!(*value, i);
                    core::ptr::from_mut(value).addr()
                })
                .collect()
        })
        .join()
        .unwrap()
    });
    arena
        .backing()
        .arena
        .store(core::ptr::null_mut(), Ordering::SeqCst);
    let reentrant = arena.backing().reentrant.lock().unwrap().clone();
    if !SEPARATE_BLOCKS {
        assert_eq!(reentrant.len(), 1);
        // The home, the serial of the re-entrant call and the second thread's.
        assert_eq!(serial_arenas(&arena), 3);
        assert_eq!(arena.stats().pages, 3);
    }
    for Block(block) in reentrant {
        assert!(!blocks.contains(&block.addr().get()));
        // SAFETY: a block of the arena, which was neither reset nor dropped since,
        // written by a thread that was joined.
        assert_eq!(unsafe { *block.as_ref() }, 0xBAC);
    }
}

#[test]
fn the_size_hint_sizes_every_serials_first_page() {
    let mut arena = SyncOneWayAlloc::with_size_hint(300_000);
    at_once(2, || {
        arena.alloc_bytes(300_000);
    });
    let stats = arena.stats();
    if !SEPARATE_BLOCKS {
        assert_eq!(stats.pages, 2);
        assert_eq!(stats.page_allocations, 2);
    }
    assert!(SyncOneWayAlloc::try_with_size_hint(usize::MAX).is_err());
    assert!(SyncOneWayAlloc::try_with_size_hint_in(usize::MAX, Global).is_err());
}

#[test]
fn the_limit_bounds_each_threads_share() {
    let mut arena = SyncOneWayAlloc::new();
    arena.set_limit(Some(256 * 1024));
    at_once(2, || {
        assert!(arena.try_alloc_bytes(100_000).is_ok());
        assert!(arena.try_alloc_bytes(300_000).is_err());
    });
    assert!(arena.stats().capacity <= 2 * 256 * 1024);
    assert_eq!(arena.limit(), Some(256 * 1024));
}

#[test]
fn trim_returns_the_unused_pages_of_every_serial() {
    let mut arena = SyncOneWayAlloc::new();
    round(&arena);
    arena.reset();
    arena.trim(0);
    let stats = arena.stats();
    if !SEPARATE_BLOCKS {
        assert_eq!(stats.pages, THREADS);
        assert_eq!(stats.capacity, THREADS * 64 * 1024);
    }
    round(&arena);
}

// ----- The other Allocator traits ---------------------------------------------------

#[cfg(feature = "allocator-api2-04")]
#[test]
fn allocator_api2_04_vectors_live_in_the_sync_arena() {
    use onewayalloc::allocator_api2_04::vec::Vec as Vec04;
    let arena = &SyncOneWayAlloc::new();
    let v = thread::scope(|s| {
        s.spawn(|| {
            let mut v = Vec04::new_in(arena);
            v.extend(0..1000u32);
            v
        })
        .join()
        .unwrap()
    });
    let v = thread::scope(|s| {
        s.spawn(move || {
            let mut v = v;
            v.extend(1000..2000);
            v
        })
        .join()
        .unwrap()
    });
    assert_eq!(v.iter().sum::<u32>(), (0..2000).sum());
}

#[cfg(feature = "nightly")]
#[test]
fn std_vectors_live_in_the_sync_arena() {
    let arena = &SyncOneWayAlloc::new();
    let v = thread::scope(|s| {
        s.spawn(|| {
            let mut v = std::vec::Vec::new_in(arena);
            v.extend(0..1000u32);
            v
        })
        .join()
        .unwrap()
    });
    assert_eq!(v.iter().sum::<u32>(), (0..1000).sum());
}
