//! Per-thread scratch arenas (with the `std` feature).

use std::cell::RefCell;
use std::thread_local;
use std::vec::Vec;

use crate::OneWayAlloc;

thread_local! {
    /// The calling thread's retained scratch arenas, free for the next call. One
    /// arena per nesting level: a nested `with_scratch` takes its own.
    static SCRATCH: RefCell<Vec<OneWayAlloc>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the calling thread's scratch arena, then resets the arena and keeps
/// it (with its pages) for the thread's next call: the per-request pattern in one
/// call, without threading an arena through the code.
///
/// A nested call on the same thread gets an arena of its own (the outer one is in
/// use), never the same one. The arenas, and so the most memory each ever needed,
/// stay with the thread until it ends; call [`OneWayAlloc::trim`] inside `f` to give
/// back what a rare large request left behind. If `f` panics, its arena is dropped
/// instead of kept. Either way the values `f` placed with
/// [`alloc_owned`](OneWayAlloc::alloc_owned) are dropped before the call returns.
///
/// A [limit](OneWayAlloc::set_limit) set inside `f` applies to that call only: the
/// arena goes back to the pool without it.
///
/// It never panics by itself, not even during thread teardown (from another
/// thread-local's destructor, once the thread's pool is gone): the call then runs
/// with a fresh arena that is dropped afterwards.
///
/// # Examples
/// ```
/// use onewayalloc::{with_scratch, allocator_api2::vec::Vec};
///
/// fn handle(request: &str) -> usize {
///     with_scratch(|arena| {
///         let mut words = Vec::new_in(&*arena);
///         words.extend(request.split_whitespace().map(|w| arena.alloc_str(w)));
///         words.len()
///     })
/// }
/// assert_eq!(handle("GET /index.html HTTP/1.1"), 3);
/// assert_eq!(handle("GET /"), 2); // the same pages again
/// ```
pub fn with_scratch<R>(f: impl FnOnce(&mut OneWayAlloc) -> R) -> R {
    // During thread teardown the pool may be gone (`try_with` fails): the call then
    // takes a fresh arena and drops it afterwards. The pool is never borrowed while
    // `f` runs, so `try_borrow_mut` fails only if that changes; it cannot panic.
    let pooled = SCRATCH
        .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut pool| pool.pop()))
        .ok()
        .flatten();
    let mut arena = pooled.unwrap_or_default();
    let result = f(&mut arena);
    arena.reset();
    // A limit set for this call does not follow the arena to the thread's next one.
    arena.set_limit(None);
    let _ = SCRATCH.try_with(move |pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            pool.push(arena);
        }
    });
    result
}
