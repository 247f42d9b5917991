//! Model tests of `SyncOneWayAlloc`'s synchronization with loom: every interleaving
//! (up to loom's preemption bound) of the claim under the lock, the owners of the
//! home serial and of the second home (atomics the first claimers set; the second
//! home made outside the lock by the thread that marked it), the thread-local
//! `(epoch, serial)` cache of the other threads, `reset` releasing the claims,
//! thread exit and drop.
//!
//! Built with the library's primitives swapped for loom's (src/sync_arena/sync.rs):
//! the lock, the home's owner, the thread ids and identities and the thread-local
//! cache are loom's, and each serial
//! arena records every use as a write to a loom cell, so loom reports any two uses of
//! one serial by two threads that neither the lock nor a join orders (two threads
//! in one serial at once) as a data race, besides the values checked here.
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" cargo test --test loom_sync_arena
//! ```
//!
//! No preemption bound is needed: loom explores every interleaving of each test
//! (from 1 to under 20,000 per test; `LOOM_LOG=info` and `--nocapture` show the
//! counts) in under 20 seconds in all, so .ci/run runs them exhaustively.
//!
//! What loom does not model, and the stress test (tests/sync_arena_stress.rs, under
//! ThreadSanitizer and Miri) runs with the production primitives instead: std's
//! const-initialized thread-local (loom's thread-locals are lazily initialized),
//! std's `ThreadId` (loom's threads have ids of their own) and the global epoch
//! counter (a plain atomic increment whose only property is that ids are unique).
//!
//! loom's `Arc` (not scoped threads, which loom has not) shares the arena; a value
//! allocated on a spawned thread comes back to the joining thread as a raw pointer
//! ([`Sent`]), read after the join.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;

use onewayalloc::{Global, SEPARATE_BLOCKS, SyncOneWayAlloc};

/// A block of the arena handed from the thread that allocated it to the one that
/// joins it.
struct Sent<T>(*const T);

// SAFETY: only the address crosses threads; it is read after the join, which orders
// the read after the writes, while the arena (neither reset nor dropped) keeps the
// block valid.
unsafe impl<T: Sync> Send for Sent<T> {}

impl<T> Sent<T> {
    /// The block's value.
    ///
    /// # Safety
    /// The arena the block came from is alive and was not reset since, and the
    /// thread that wrote it was joined.
    unsafe fn read(&self) -> &T {
        // SAFETY: the caller's guarantee.
        unsafe { &*self.0 }
    }
}

/// An arena with `Global` pages (the page heap's locks are std's, which loom cannot
/// see; this arena never reaches them).
fn arena() -> SyncOneWayAlloc {
    SyncOneWayAlloc::new_in(Global)
}

/// How many serial arenas `arena` has (its `Debug` output tells).
fn serial_arenas(arena: &SyncOneWayAlloc) -> usize {
    let debug = format!("{arena:?}");
    let count = debug.split("serial_arenas: ").nth(1).expect(&debug);
    count.split(',').next().unwrap().parse().expect(&debug)
}

/// Allocates `[tag; 4]` and then `tag` (the first allocation of a thread claims a
/// serial, the second finds it: the home serial by its owner, another one in the
/// thread's cache), checks both, and returns them.
fn allocate_twice(arena: &SyncOneWayAlloc, tag: u64) -> (Sent<[u64; 4]>, Sent<u64>) {
    let slice = arena.alloc([tag; 4]);
    let value = arena.alloc(tag);
    assert_eq!((*slice, *value), ([tag; 4], tag));
    (Sent(slice), Sent(value))
}

/// Checks the values of [`allocate_twice`].
///
/// # Safety
/// As [`Sent::read`].
unsafe fn check(blocks: &(Sent<[u64; 4]>, Sent<u64>), tag: u64) {
    // SAFETY: the caller's guarantee.
    let (slice, value) = unsafe { (blocks.0.read(), blocks.1.read()) };
    assert_eq!((*slice, *value), ([tag; 4], tag));
}

/// Spawns a thread that runs [`allocate_twice`] in `arena` with `tag`.
fn spawn_allocating(
    arena: &Arc<SyncOneWayAlloc>,
    tag: u64,
) -> thread::JoinHandle<(Sent<[u64; 4]>, Sent<u64>)> {
    let arena = Arc::clone(arena);
    thread::spawn(move || allocate_twice(&arena, tag))
}

#[test]
fn two_threads_allocate_at_once_and_their_values_survive_the_join() {
    loom::model(|| {
        let arena = Arc::new(arena());
        let first = spawn_allocating(&arena, 1);
        let second = spawn_allocating(&arena, 2);
        let mine = allocate_twice(&arena, 3); // the main thread as a third user
        let (first, second) = (first.join().unwrap(), second.join().unwrap());
        // SAFETY: both threads were joined; the arena is alive and not reset.
        unsafe {
            check(&first, 1);
            check(&second, 2);
            check(&mine, 3);
        }
        // Three threads, three serials (the first one made with the arena).
        let mut arena = Arc::try_unwrap(arena).ok().unwrap();
        assert_eq!(serial_arenas(&arena), 3);
        assert_eq!(arena.stats().used, 3 * 40);
    });
}

#[test]
fn an_exited_threads_memory_stays_valid_until_reset_and_is_reused_after_it() {
    loom::model(|| {
        let mut arena = Arc::new(arena());
        let exited = spawn_allocating(&arena, 7).join().unwrap();
        // The thread is gone; its serial and its blocks are not.
        // SAFETY: joined; the arena is alive and not reset.
        unsafe { check(&exited, 7) };
        let before = Arc::get_mut(&mut arena).unwrap().stats();
        Arc::get_mut(&mut arena).unwrap().reset();
        // After the reset another thread claims the same serial (the only one) and
        // bumps from the start of the same page.
        let next = spawn_allocating(&arena, 8).join().unwrap();
        // SAFETY: joined; the arena is alive and not reset since.
        unsafe { check(&next, 8) };
        if !SEPARATE_BLOCKS {
            assert_eq!(next.0.0, exited.0.0, "the next round reuses the page");
        }
        let after = Arc::get_mut(&mut arena).unwrap().stats();
        assert_eq!(
            (after.pages, after.capacity),
            (before.pages, before.capacity)
        );
        assert_eq!(serial_arenas(&arena), 1);
    });
}

#[test]
fn after_a_reset_two_threads_claim_the_released_serials_at_once() {
    loom::model(|| {
        let mut arena = Arc::new(arena());
        // Epoch 1: two threads claim two serials at once.
        let (a, b) = (spawn_allocating(&arena, 1), spawn_allocating(&arena, 2));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        // SAFETY: joined; the arena is alive and not reset.
        unsafe {
            check(&a, 1);
            check(&b, 2);
        }
        Arc::get_mut(&mut arena).unwrap().reset();
        // Epoch 2: two new threads claim the two released serials, racing for them.
        let (c, d) = (spawn_allocating(&arena, 3), spawn_allocating(&arena, 4));
        let (c, d) = (c.join().unwrap(), d.join().unwrap());
        // SAFETY: joined; the arena is alive and not reset since.
        unsafe {
            check(&c, 3);
            check(&d, 4);
        }
        assert_eq!(serial_arenas(&arena), 2);
    });
}

#[test]
fn a_cache_entry_from_before_a_reset_never_shares_a_serial() {
    loom::model(|| {
        let mut arena = Arc::new(arena());
        // The main thread claims the first serial and caches it for epoch 1.
        let old = allocate_twice(&arena, 1);
        // SAFETY: this thread wrote it; the arena is alive and not reset.
        unsafe { check(&old, 1) };
        Arc::get_mut(&mut arena).unwrap().reset();
        // Epoch 2: the main thread's cache still names the first serial, now free;
        // a new thread may claim it first. The main thread must claim again, not
        // use the serial the other thread now bumps in (loom reports a race if it
        // does, and the values would overlap).
        let other = spawn_allocating(&arena, 2);
        let mine = allocate_twice(&arena, 3);
        let other = other.join().unwrap();
        // SAFETY: joined; the arena is alive and not reset since.
        unsafe {
            check(&other, 2);
            check(&mine, 3);
        }
        assert_ne!(other.1.0, mine.1.0);
    });
}

#[test]
fn a_thread_alternating_between_two_arenas_keeps_its_serial_in_each() {
    loom::model(|| {
        let (x, y) = (Arc::new(arena()), Arc::new(arena()));
        // Another thread in `x` meanwhile.
        let other = spawn_allocating(&x, 1);
        // This thread's cache moves x -> y -> x: the second visit to `x` finds the
        // serial it claimed there (a claim per visit), never the other thread's.
        let first = allocate_twice(&x, 2);
        let in_y = allocate_twice(&y, 3);
        let again = allocate_twice(&x, 4);
        let other = other.join().unwrap();
        // SAFETY: joined; both arenas are alive and not reset.
        unsafe {
            check(&other, 1);
            check(&first, 2);
            check(&in_y, 3);
            check(&again, 4);
        }
        assert_eq!(serial_arenas(&x), 2);
    });
}

#[test]
fn three_threads_at_once_take_the_two_homes_and_a_serial_of_the_list() {
    loom::model(|| {
        let x = Arc::new(arena());
        // The first claim takes the home serial; the next makes the second home
        // outside the lock (a third claim meanwhile finds it being made and takes
        // a serial of the list), or takes it once made.
        let a = spawn_allocating(&x, 1);
        let b = spawn_allocating(&x, 2);
        let mine = allocate_twice(&x, 3);
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        // SAFETY: joined; the arena is alive and not reset.
        unsafe {
            check(&a, 1);
            check(&b, 2);
            check(&mine, 3);
        }
        assert_eq!(serial_arenas(&x), 3);
    });
}

#[test]
fn a_thread_outside_both_homes_alternates_through_its_cache() {
    loom::model(|| {
        let (x, y) = (Arc::new(arena()), Arc::new(arena()));
        let in_both = |tag: u64| {
            let (x, y) = (Arc::clone(&x), Arc::clone(&y));
            thread::spawn(move || (allocate_twice(&x, tag), allocate_twice(&y, tag + 10)))
        };
        // A thread that exited holds the home serial of both arenas (claims last
        // until `reset`, and loom's thread identities are never reused).
        let homes = in_both(1).join().unwrap();
        // Another thread allocates in both, racing this one for the second homes:
        // in the interleavings where it claims both first, this thread allocates
        // in serials of the lists, through its one-entry cache, which moves
        // x -> y -> x (the second visit to `x` claims again under the lock and
        // finds its own serial); in the others it owns the second home of one or
        // both.
        let other = in_both(2);
        let first = allocate_twice(&x, 3);
        let in_y = allocate_twice(&y, 4);
        let again = allocate_twice(&x, 5);
        let other = other.join().unwrap();
        // SAFETY: joined; both arenas are alive and not reset.
        unsafe {
            for ((in_x, in_y), tag) in [(&homes, 1), (&other, 2)] {
                check(in_x, tag);
                check(in_y, tag + 10);
            }
            check(&first, 3);
            check(&in_y, 4);
            check(&again, 5);
        }
        assert_eq!(serial_arenas(&x), 3);
        assert_eq!(serial_arenas(&y), 3);
    });
}
