//! Per-thread scratch arenas, and trimming what an arena keeps.

use std::cell::RefCell;

use allocator_api2::alloc::Allocator;

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
/// instead of kept.
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
    let mut arena = SCRATCH.with_borrow_mut(Vec::pop).unwrap_or_default();
    let result = f(&mut arena);
    arena.reset();
    // During thread teardown the pool may be gone: the arena is then just dropped.
    let _ = SCRATCH.try_with(|pool| pool.borrow_mut().push(arena));
    result
}

impl<A: Allocator> OneWayAlloc<A> {
    /// Returns unused pages to the backing allocator, keeping the first unused pages
    /// in list order while their sizes add up to at most `keep` bytes. Used pages and
    /// the current page stay. After a [`reset`](Self::reset), `trim(0)` leaves only the
    /// first page.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.alloc_bytes(5 << 20); // one large request: a 5 MiB page
    /// arena.reset();
    /// arena.trim(256 * 1024);
    /// assert_eq!(arena.stats().capacity, 64 * 1024);
    /// ```
    pub fn trim(&mut self, keep: usize) {
        self.core_mut().trim(keep);
    }
}
