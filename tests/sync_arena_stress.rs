//! A stress test of `SyncOneWayAlloc`'s synchronization, beside the loom model
//! tests (tests/loom_sync_arena.rs): many threads, many rounds, a reset between
//! rounds. Each round has long-lived workers (their thread-local cache still naming
//! the previous epoch's serial when the round starts) and short-lived threads that
//! exit before the reset (their serials free for the next round's threads), all
//! allocating into the arena at once; every value is checked after every thread
//! finished allocating, and the short-lived threads' values after the join. Runs
//! under ThreadSanitizer and Miri (.ci/run), smaller under Miri.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::sync::{Barrier, RwLock};
use std::thread;

use onewayalloc::allocator_api2::vec::Vec as AVec;
use onewayalloc::{SEPARATE_BLOCKS, SyncOneWayAlloc};

/// Threads that live through every round.
const WORKERS: usize = 2;
/// Threads spawned for one round and joined before its reset.
const SHORT_LIVED: usize = 2;
const ROUNDS: u64 = if cfg!(miri) { 2 } else { 100 };
/// Blocks each thread allocates per round.
const BLOCKS: u64 = if cfg!(miri) { 8 } else { 1000 };

/// The `i`-th element of the `block`-th block of the thread tagged `tag`.
fn element(tag: u64, block: u64, i: u64) -> u64 {
    tag << 32 | block << 16 | i
}

/// A thread's allocations for one round: blocks of several sizes and kinds (a
/// value, a slice, a vector grown by pushes, a string), each recorded as a slice
/// whose content [`check`] recomputes.
fn fill(arena: &SyncOneWayAlloc, tag: u64) -> Vec<&[u64]> {
    let mut blocks = Vec::new();
    for block in 0..BLOCKS {
        let len = block % 7;
        match block % 4 {
            0 => blocks.push(core::slice::from_ref(arena.alloc(element(tag, block, 0)))),
            1 => blocks
                .push(arena.alloc_slice_fill_with(len as usize, |i| element(tag, block, i as u64))),
            2 => {
                let mut grown = AVec::new_in(arena);
                grown.extend((0..len * 5).map(|i| element(tag, block, i)));
                blocks.push(grown.leak());
            }
            _ => {
                let text = arena.alloc_str(&format!("{tag}/{block}"));
                assert_eq!(*text, format!("{tag}/{block}"));
            }
        }
    }
    if !cfg!(miri) && tag % 3 == 0 {
        // Past the first page: the serial takes a new one, kept at reset.
        blocks.push(arena.alloc_slice_fill_with(20_000, |i| element(tag, BLOCKS, i as u64)));
    }
    blocks
}

/// Checks the blocks of [`fill`] for `tag`.
fn check(blocks: &[&[u64]], tag: u64) {
    for slice in blocks {
        let block = slice.first().map_or(0, |first| first >> 16 & 0xffff);
        for (i, &value) in slice.iter().enumerate() {
            assert_eq!(value, element(tag, block, i as u64), "thread {tag:#x}");
        }
    }
}

/// One thread's part in the meetings at a barrier: if the thread panics, its
/// remaining meetings are kept while it unwinds, so that the other threads go on
/// (and the test fails with the panic) instead of waiting forever.
struct Meetings<'a> {
    barrier: &'a Barrier,
    left: u64,
}

impl Meetings<'_> {
    fn wait(&mut self) {
        self.left -= 1;
        self.barrier.wait();
    }
}

impl Drop for Meetings<'_> {
    fn drop(&mut self) {
        while self.left > 0 {
            self.wait();
        }
    }
}

/// Meetings per round.
const MEETINGS: u64 = 3;

/// The tag of a thread in a round (nonzero, unique per thread and round).
fn tag(round: u64, thread: usize) -> u64 {
    (round + 1) << 8 | thread as u64
}

#[test]
fn threads_allocate_check_and_exit_across_many_resets() {
    let arena = RwLock::new(SyncOneWayAlloc::new());
    // The main thread and the workers meet at each round's start, when every
    // thread of the round has allocated, and when the workers' reads have ended.
    let barrier = Barrier::new(WORKERS + 1);
    let meetings = || Meetings {
        barrier: &barrier,
        left: ROUNDS * MEETINGS,
    };
    thread::scope(|s| {
        for worker in 0..WORKERS {
            let (arena, mut meet) = (&arena, meetings());
            s.spawn(move || {
                for round in 0..ROUNDS {
                    meet.wait();
                    let arena = arena.read().unwrap();
                    let tag = tag(round, worker);
                    let blocks = fill(&arena, tag);
                    meet.wait(); // every thread of the round has allocated
                    check(&blocks, tag);
                    drop(arena);
                    meet.wait();
                }
            });
        }
        let mut meet = meetings();
        for round in 0..ROUNDS {
            meet.wait();
            {
                let arena = &*arena.read().unwrap();
                let short_lived: Vec<(u64, Vec<&[u64]>)> = thread::scope(|inner| {
                    let threads: Vec<_> = (WORKERS..WORKERS + SHORT_LIVED)
                        .map(|t| {
                            inner.spawn(move || {
                                let tag = tag(round, t);
                                (tag, fill(arena, tag))
                            })
                        })
                        .collect();
                    threads.into_iter().map(|t| t.join().unwrap()).collect()
                });
                let mine = tag(round, WORKERS + SHORT_LIVED);
                let my_blocks = fill(arena, mine);
                meet.wait(); // every thread of the round has allocated
                for (tag, blocks) in &short_lived {
                    check(blocks, *tag);
                }
                check(&my_blocks, mine);
            }
            meet.wait(); // the workers' reads have ended
            let mut arena = arena.write().unwrap();
            assert!(arena.stats().used > 0);
            let before = arena.stats();
            arena.reset();
            let after = arena.stats();
            assert_eq!(after.used, 0);
            if !SEPARATE_BLOCKS {
                assert_eq!(after.capacity, before.capacity, "reset keeps every page");
            }
            // Every thread of a round claimed a serial of its own, and the next
            // round's threads take those again (short-lived threads' serials
            // included): as many serials as threads in one round, not in all.
            let debug = format!("{arena:?}");
            assert!(
                debug.contains(&format!("serial_arenas: {},", WORKERS + SHORT_LIVED + 1)),
                "{debug}"
            );
        }
    });
}
