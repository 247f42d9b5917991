//! A pool of retained arenas shared by threads (with the `std` feature).

use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::vec::Vec;

use allocator_api2::alloc::AllocError;

use crate::{OneWayAlloc, arith};

/// A pool of retained arenas shared by threads: each request takes one with
/// [`get`](Pool::get), and the guard puts it back, reset and trimmed, when it drops.
/// The memory the idle arenas hold is bounded.
///
/// It is for servers that run requests on a thread pool (a web framework's workers,
/// rayon, `spawn_blocking`) or in async tasks that move between threads: the pages
/// one request faulted in serve the next request on any thread, and a rare large
/// request does not leave its memory behind on every thread it ran on.
///
/// # Examples
/// ```
/// use onewayalloc::{Pool, format_in};
/// use onewayalloc::collections::Vec;
///
/// // A configured pool can be a `static`: every setting is a `const fn`.
/// static POOL: Pool = Pool::new().max_idle(8).keep(1 << 20);
///
/// fn handle(request: &str) -> std::string::String {
///     let arena = POOL.get(); // an idle arena, or a new one
///     let mut words = Vec::new_in(&*arena);
///     words.extend(request.split_whitespace());
///     let body = format_in!(&*arena, "{} words, first {:?}", words.len(), words[0]);
///     body.to_string() // owned bytes out; the arena goes back when `arena` drops
/// }
///
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| assert_eq!(handle("GET /index.html"), "2 words, first \"GET\""));
///     }
/// });
/// assert!(POOL.stats().idle_arenas <= 4);
/// ```
///
/// # Which per-request strategy to pick
///
/// - **A plain arena** ([`OneWayAlloc::new`], then [`reset`](OneWayAlloc::reset)
///   after each unit of work) for a single-threaded loop: the cheapest, and the
///   arena's lifetime says how long its memory is held.
/// - **[`with_scratch`](crate::with_scratch)** for per-thread work in synchronous
///   code: no lock at all, but each thread keeps its own high-water memory until it
///   ends, and the arena is bound to a closure.
/// - **`Pool`** for thread pools and async services: a guard that can move to
///   another thread and be held across an `.await`, and one bound on the memory
///   all idle arenas hold together. It costs an uncontended lock to take an arena
///   and one to give it back.
/// - An arena created per request (as Netdata's web server does) obtains and
///   page-faults its first page again for every request; a pool or `with_scratch`
///   avoids that.
///
/// # What happens when a guard drops
///
/// Outside the lock, the arena is [reset](OneWayAlloc::reset) and
/// [trimmed](OneWayAlloc::trim): it keeps its first page and at most
/// [`keep`](Pool::keep) bytes of its other pages. Then, under the lock, it goes on
/// the idle list, unless the list already holds [`max_idle`](Pool::max_idle) arenas,
/// in which case it is dropped (outside the lock). The next [`get`](Pool::get)
/// takes the arena returned last, whose pages are the likeliest to be in cache.
///
/// A [limit](OneWayAlloc::set_limit) set on one guard's arena does not carry over:
/// every `get` sets the pool's own [`limit`](Pool::limit) (or none) again.
///
/// [`DerefMut`] lets code replace the arena itself (`mem::replace(&mut *guard,
/// other)`). Whatever comes back is trimmed to the same total (a larger first page
/// leaves less room for the others) and checked: an arena that still holds more
/// than `keep` bytes plus the pool's first page (one whose first page alone is that
/// large, which `trim` cannot free) is dropped instead of kept.
///
/// # The bound on idle memory
///
/// Let `first` be the first page of an arena the pool creates: 64 KiB, or
/// `PAGE_HEADER_SIZE + size_hint` when that is larger, rounded up to the OS page
/// (see [`OneWayAlloc::with_size_hint`]). Each idle arena holds at most
/// `keep + first` bytes, and at most `max_idle` arenas are idle, so
///
/// > `stats().idle_bytes <= max_idle * (keep + first)`, which
/// > [`max_idle_bytes`](Pool::max_idle_bytes) computes.
///
/// With a [`limit`](Pool::limit) below `keep + first`, an arena is trimmed to the
/// limit instead (or to `first`, if that is larger), since the next request may not
/// hold more, and the bound is `max_idle` times that.
///
/// Arenas out on guards are not idle: they hold what their requests need, up to
/// the pool's `limit` each when one is set.
///
/// # Defaults, and why
///
/// `Pool::new()` keeps up to [`DEFAULT_MAX_IDLE`](Pool::DEFAULT_MAX_IDLE) = 16 idle
/// arenas of up to [`DEFAULT_KEEP`](Pool::DEFAULT_KEEP) = 4 MiB beyond their 64 KiB
/// first page, with no limit: at most 16 × (4 MiB + 64 KiB) = 65 MiB idle. Sixteen
/// covers the worker threads of most servers, so in a steady state every request
/// finds a warm arena; a server with more workers raises it to their number.
/// 4 MiB keeps every page of a request that needed up to about 4 MiB (the pages
/// grow 64 KiB, 128 KiB, ..., 1 MiB), which covers typical request scratch work,
/// while a rare larger request gives back its excess instead of pinning it on
/// every idle arena. No limit is set by default, because only the application
/// knows what one request may take.
///
/// # Panics while a guard is out
///
/// If the code holding a guard panics, the guard drops during unwinding and its
/// arena is reset, trimmed and returned to the idle list like any other: an arena
/// is always consistent after a reset (a panic in a closure, `Clone` or iterator
/// leaves it usable), so nothing is lost and nothing is poisoned. The pool never
/// panics while it holds its lock, and if the lock was poisoned anyway it recovers
/// the list ([`PoisonError::into_inner`]).
///
/// # Async services
///
/// An arena is `Send` but not `Sync`, so `&OneWayAlloc` and the arena collections
/// (which hold one) are not `Send`: a future that must be `Send` (one given to
/// `tokio::spawn`, for example) cannot keep them alive across an `.await`. The
/// guard itself is `Send` and can be held across an `.await`. So do the arena work
/// in a synchronous section, take the result out as owned bytes, then await:
///
/// ```
/// use std::future::Future;
/// use onewayalloc::{Pool, format_in};
/// use onewayalloc::collections::Vec;
///
/// static POOL: Pool = Pool::new();
///
/// async fn write_to_client(_bytes: &[u8]) {} // stands in for socket I/O
///
/// async fn handle(request: &str) -> usize {
///     // The synchronous section: arena work, then owned bytes out.
///     let body: std::vec::Vec<u8> = {
///         let arena = POOL.get();
///         let mut words = Vec::new_in(&*arena);
///         words.extend(request.split_whitespace());
///         format_in!(&*arena, "{} words", words.len()).as_bytes().to_vec()
///     }; // `words`, the `String` and the guard end here
///     write_to_client(&body).await;
///
///     // Holding the guard itself across an `.await` is fine too.
///     let mut arena = POOL.get();
///     for _ in 0..2 {
///         let n = { Vec::<u8, _>::with_capacity_in(100, &*arena).capacity() };
///         arena.reset();
///         write_to_client(&n.to_le_bytes()).await;
///     }
///     body.len()
/// }
///
/// fn require_send<F: Future + Send>(future: F) -> F { future }
/// let future = require_send(handle("GET /index.html"));
/// # let mut future = std::pin::pin!(future);
/// # let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// # assert_eq!(future.as_mut().poll(&mut cx), std::task::Poll::Ready(7));
/// ```
///
/// An arena collection alive across the `.await` makes the future not `Send`
/// (the compiler says "future cannot be sent between threads safely"):
///
/// ```compile_fail
/// use std::future::Future;
/// use onewayalloc::Pool;
/// use onewayalloc::collections::Vec;
///
/// static POOL: Pool = Pool::new();
/// async fn write_to_client(_bytes: &[u8]) {}
///
/// fn require_send<F: Future + Send>(future: F) -> F { future }
/// require_send(async {
///     let arena = POOL.get();
///     let mut words = Vec::new_in(&*arena);
///     words.push("GET");
///     write_to_client(b"...").await; // error: `words` holds a `&OneWayAlloc`
///     words.len()
/// });
/// ```
///
/// # Contention
///
/// The idle list is a `Vec` behind a [`std::sync::Mutex`], locked only to take or
/// return an arena (a pop or a push), never while an arena is in use; the reset,
/// the trim, creating a new arena and dropping a surplus one all happen outside it.
///
/// # The sanitizer mode
///
/// With `separate-blocks` (or under AddressSanitizer) every allocation is a block of
/// its own and a reset releases every block, so a returned arena holds nothing:
/// `idle_bytes` is 0, `keep` and `size_hint` have nothing to act on, and no arena is
/// dropped for its size. The bound still holds (0 is below it); `max_idle` and the
/// `limit` (on the bytes of outstanding blocks) apply as usual.
pub struct Pool {
    idle: Mutex<Vec<OneWayAlloc>>,
    config: Config,
    /// The size of the first page of an arena the pool creates, computed on first
    /// use (the OS page size is known only at run time); 0 until then.
    first_page: AtomicUsize,
}

/// The settings of a [`Pool`].
#[derive(Clone, Copy, Debug)]
struct Config {
    max_idle: usize,
    keep: usize,
    size_hint: usize,
    limit: Option<usize>,
}

impl Pool {
    /// How many idle arenas [`Pool::new`] keeps at most: 16 (see the
    /// [defaults](Pool#defaults-and-why)).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(onewayalloc::Pool::DEFAULT_MAX_IDLE, 16);
    /// ```
    pub const DEFAULT_MAX_IDLE: usize = 16;

    /// How many bytes of pages beyond the first an idle arena of [`Pool::new`] keeps
    /// at most: 4 MiB (see the [defaults](Pool#defaults-and-why)).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(onewayalloc::Pool::DEFAULT_KEEP, 4 << 20);
    /// ```
    pub const DEFAULT_KEEP: usize = 4 << 20;

    /// Creates an empty pool with the [defaults](Pool#defaults-and-why): at most
    /// [`DEFAULT_MAX_IDLE`](Self::DEFAULT_MAX_IDLE) idle arenas, each keeping at
    /// most [`DEFAULT_KEEP`](Self::DEFAULT_KEEP) bytes beyond its 64 KiB first page,
    /// no limit. It obtains nothing until the first [`get`](Self::get).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new();
    /// assert_eq!(POOL.stats().idle_arenas, 0);
    /// drop(POOL.get());
    /// assert_eq!(POOL.stats().idle_arenas, 1);
    /// ```
    pub const fn new() -> Pool {
        Pool {
            idle: Mutex::new(Vec::new()),
            config: Config {
                max_idle: Self::DEFAULT_MAX_IDLE,
                keep: Self::DEFAULT_KEEP,
                size_hint: 0,
                limit: None,
            },
            first_page: AtomicUsize::new(0),
        }
    }

    /// Sets how many idle arenas the pool keeps at most; an arena returned when
    /// that many are idle is dropped. Set it to the number of threads that take
    /// arenas at once (the worker count), so that each finds a warm one. 0 keeps
    /// none: every [`get`](Self::get) creates an arena.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().max_idle(1);
    /// let (a, b) = (POOL.get(), POOL.get());
    /// drop((a, b));
    /// assert_eq!(POOL.stats().idle_arenas, 1); // the second was dropped
    /// ```
    #[must_use]
    pub const fn max_idle(mut self, arenas: usize) -> Pool {
        self.config.max_idle = arenas;
        self
    }

    /// Sets how many bytes of pages beyond its first page an arena keeps when it
    /// comes back: the `keep` of [`OneWayAlloc::trim`], applied after the reset.
    /// Larger keeps more requests from obtaining pages again; smaller holds less
    /// memory while idle (see [the bound](Pool#the-bound-on-idle-memory)).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().keep(0);
    /// POOL.get().alloc_bytes(1 << 20); // needs a second page
    /// assert_eq!(POOL.stats().idle_bytes, if onewayalloc::SEPARATE_BLOCKS { 0 } else { 64 << 10 });
    /// ```
    #[must_use]
    pub const fn keep(mut self, bytes: usize) -> Pool {
        self.config.keep = bytes;
        self
    }

    /// Sets the size hint of the arenas the pool creates: their first page fits
    /// `bytes` of payload (see [`OneWayAlloc::with_size_hint`]), so a request of
    /// up to that size needs a single page. The first page always stays with the
    /// arena, so it counts in [the bound](Pool#the-bound-on-idle-memory).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().size_hint(256 << 10);
    /// let arena = POOL.get();
    /// arena.alloc_bytes(256 << 10);
    /// assert!(arena.stats().pages <= 1);
    /// ```
    #[must_use]
    pub const fn size_hint(mut self, bytes: usize) -> Pool {
        self.config.size_hint = bytes;
        self.first_page = AtomicUsize::new(0); // to be computed for the new hint
        self
    }

    /// Sets the [limit](OneWayAlloc::set_limit) that every arena handed out starts
    /// with: the most memory one request's arena may hold. Code holding a guard may
    /// change its arena's limit; the next [`get`](Self::get) sets this one again.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().limit(1 << 20);
    /// let arena = POOL.get();
    /// assert_eq!(arena.limit(), Some(1 << 20));
    /// assert!(arena.try_alloc_bytes(2 << 20).is_err()); // over this request's budget
    /// ```
    #[must_use]
    pub const fn limit(mut self, bytes: usize) -> Pool {
        self.config.limit = Some(bytes);
        self
    }

    /// Takes an idle arena (the one returned last), or creates one when none is
    /// idle. The guard derefs to the arena; when it drops, the arena comes back to
    /// the pool (see [what happens](Pool#what-happens-when-a-guard-drops)).
    ///
    /// # Panics
    /// Creating an arena panics with "overflow" if the [size
    /// hint](Self::size_hint) overflows a page size, and calls `handle_alloc_error`
    /// if its first page cannot be obtained (see [`try_get`](Self::try_get)).
    ///
    /// # Examples
    /// ```
    /// let pool = onewayalloc::Pool::new();
    /// let arena = pool.get();
    /// assert_eq!(arena.alloc_str("cpu"), "cpu");
    /// ```
    #[must_use]
    pub fn get(&self) -> PooledArena<'_> {
        let arena = self
            .take_idle()
            .unwrap_or_else(|| OneWayAlloc::with_size_hint(self.config.size_hint));
        PooledArena::new(self, arena)
    }

    /// Like [`get`](Self::get), returning an error instead when an arena must be
    /// created and cannot be.
    ///
    /// # Errors
    /// [`AllocError`] if the size hint overflows or the first page is refused.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// assert!(Pool::new().try_get().is_ok());
    /// assert!(Pool::new().size_hint(usize::MAX).try_get().is_err());
    /// ```
    pub fn try_get(&self) -> Result<PooledArena<'_>, AllocError> {
        let arena = match self.take_idle() {
            Some(arena) => arena,
            None => OneWayAlloc::try_with_size_hint(self.config.size_hint)?,
        };
        Ok(PooledArena::new(self, arena))
    }

    /// What the idle arenas hold now (arenas out on guards are not counted).
    ///
    /// # Examples
    /// ```
    /// let pool = onewayalloc::Pool::new();
    /// drop(pool.get());
    /// let stats = pool.stats();
    /// assert_eq!(stats.idle_arenas, 1);
    /// assert_eq!(stats.idle_bytes, if onewayalloc::SEPARATE_BLOCKS { 0 } else { 64 << 10 });
    /// ```
    pub fn stats(&self) -> PoolStats {
        let idle = self.lock();
        PoolStats {
            idle_arenas: idle.len(),
            // The capacities of distinct arenas count distinct memory: the sum cannot
            // overflow, and saturating keeps the lock free of any panic regardless.
            idle_bytes: idle.iter().fold(0, |sum: usize, arena| {
                sum.saturating_add(arena.stats().capacity)
            }),
        }
    }

    /// The most the idle arenas can hold together: `max_idle * (keep + first)`,
    /// where `first` is the first page of an arena the pool creates, or less under
    /// a smaller [`limit`](Self::limit) (see [the
    /// bound](Pool#the-bound-on-idle-memory)); `usize::MAX` if that overflows.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// assert_eq!(Pool::new().max_idle_bytes(), 16 * ((4 << 20) + (64 << 10)));
    /// let pool = Pool::new().max_idle(2).keep(1 << 20);
    /// assert_eq!(pool.max_idle_bytes(), 2 * ((1 << 20) + (64 << 10)));
    /// assert_eq!(pool.limit(512 << 10).max_idle_bytes(), 2 * (512 << 10));
    /// ```
    pub fn max_idle_bytes(&self) -> usize {
        self.config.max_idle.saturating_mul(self.arena_bound())
    }

    /// Drops every idle arena, returning its memory to the system: for example when
    /// a server goes quiet after a burst. Arenas out on guards are not affected and
    /// come back as usual.
    ///
    /// # Examples
    /// ```
    /// let pool = onewayalloc::Pool::new();
    /// drop((pool.get(), pool.get()));
    /// assert_eq!(pool.stats().idle_arenas, 2);
    /// pool.clear();
    /// assert_eq!(pool.stats().idle_arenas, 0);
    /// ```
    pub fn clear(&self) {
        let idle = core::mem::take(&mut *self.lock());
        drop(idle); // outside the lock
    }

    /// The idle list, recovered if a panic elsewhere poisoned its lock (the list
    /// is valid at every point where a panic could occur: it only pushes and pops
    /// whole arenas).
    fn lock(&self) -> MutexGuard<'_, Vec<OneWayAlloc>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pops the arena returned last, if any.
    fn take_idle(&self) -> Option<OneWayAlloc> {
        self.lock().pop()
    }

    /// The most one idle arena may hold: `keep` plus the first page of an arena
    /// the pool creates, and with a limit no more than the limit (or that first
    /// page, if larger); `usize::MAX` if the size hint overflows a page size (no
    /// such arena can be created).
    fn arena_bound(&self) -> usize {
        let first = self.first_page();
        let bound = self.config.keep.saturating_add(first);
        match self.config.limit {
            // No use keeping more than the next request may hold.
            Some(limit) => bound.min(limit.max(first)),
            None => bound,
        }
    }

    /// The size of the first page of an arena the pool creates (`usize::MAX` if
    /// the size hint overflows a page size), computed once. Threads that race to
    /// compute it store the same value, so `Relaxed` is enough.
    fn first_page(&self) -> usize {
        match self.first_page.load(Ordering::Relaxed) {
            0 => {
                let size = arith::first_page_layout(self.config.size_hint, arith::os_page())
                    .map_or(usize::MAX, |layout| layout.size());
                self.first_page.store(size, Ordering::Relaxed);
                size
            }
            size => size,
        }
    }

    /// Readies an arena coming back from a guard, in place and outside the lock:
    /// resets it and trims it to the bound. `false` if it stays over the bound (its
    /// first page alone is larger), so it must be dropped.
    fn ready_for_reuse(&self, arena: &mut OneWayAlloc) -> bool {
        arena.reset();
        let bound = self.arena_bound();
        // After the reset the first page is current and every other page unused, so
        // `trim(budget)` leaves `first page + at most budget` bytes: for an arena
        // the pool created, `trim(keep)` (or less under a limit).
        arena.trim(bound.saturating_sub(self.first_page()));
        if arena.stats().capacity <= bound {
            return true;
        }
        // An arena swapped in through `DerefMut` with a larger first page: less
        // budget for its other pages.
        let first_page = arena.pages().next().map_or(0, |page| page.size);
        arena.trim(bound.saturating_sub(first_page));
        arena.stats().capacity <= bound
    }

    /// Puts a readied arena on the idle list if it has room, else drops it (outside
    /// the lock).
    fn keep_idle(&self, arena: OneWayAlloc) {
        let surplus = {
            let mut idle = self.lock();
            // `try_reserve` first, so the push cannot allocate (or panic) under the
            // lock.
            if idle.len() < self.config.max_idle && idle.try_reserve(1).is_ok() {
                idle.push(arena);
                None
            } else {
                Some(arena)
            }
        };
        drop(surplus);
    }
}

impl Default for Pool {
    /// [`Pool::new`].
    fn default() -> Pool {
        Pool::new()
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("max_idle", &self.config.max_idle)
            .field("keep", &self.config.keep)
            .field("size_hint", &self.config.size_hint)
            .field("limit", &self.config.limit)
            .field("stats", &self.stats())
            .finish()
    }
}

/// What the idle arenas of a [`Pool`] hold, from [`Pool::stats`].
///
/// # Examples
/// ```
/// let pool = onewayalloc::Pool::new();
/// let stats = pool.stats();
/// assert_eq!((stats.idle_arenas, stats.idle_bytes), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct PoolStats {
    /// Arenas on the idle list, ready for the next [`get`](Pool::get).
    pub idle_arenas: usize,
    /// The bytes they hold from the backing allocator, page headers included (the
    /// sum of their [`Stats::capacity`](crate::Stats::capacity)); 0 in the sanitizer
    /// mode, where a reset releases every block.
    pub idle_bytes: usize,
}

/// An arena taken from a [`Pool`] by [`Pool::get`]: it derefs to [`OneWayAlloc`]
/// (mutably too, for [`reset`](OneWayAlloc::reset) and
/// [`scope`](OneWayAlloc::scope)) and goes back to the pool when it drops.
///
/// It is `Send`, so it can move to another thread or be held across an `.await`
/// (see [async services](Pool#async-services)), and not `Sync`, like the arena.
///
/// # Examples
/// ```
/// use onewayalloc::Pool;
/// use onewayalloc::collections::Vec;
///
/// let pool = Pool::new();
/// let mut arena = pool.get();
/// for query in 0..3 {
///     let mut points = Vec::new_in(&*arena);
///     points.extend([1.0, 2.0, query as f64]);
///     assert_eq!(points.len(), 3);
///     drop(points);
///     arena.reset(); // reuse it for several units of work before giving it back
/// }
/// let n = arena.scope(|s| s.alloc_str("scoped").len());
/// assert_eq!(n, 6);
/// std::thread::scope(|s| {
///     s.spawn(move || drop(arena)); // returned to the pool from another thread
/// });
/// assert_eq!(pool.stats().idle_arenas, 1);
/// ```
pub struct PooledArena<'p> {
    /// Taken out only in `drop`.
    arena: ManuallyDrop<OneWayAlloc>,
    pool: &'p Pool,
}

impl<'p> PooledArena<'p> {
    /// Hands `arena` out of `pool`, with the pool's limit.
    fn new(pool: &'p Pool, arena: OneWayAlloc) -> PooledArena<'p> {
        arena.set_limit(pool.config.limit);
        PooledArena {
            arena: ManuallyDrop::new(arena),
            pool,
        }
    }
}

impl Deref for PooledArena<'_> {
    type Target = OneWayAlloc;

    #[inline]
    fn deref(&self) -> &OneWayAlloc {
        &self.arena
    }
}

impl DerefMut for PooledArena<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut OneWayAlloc {
        &mut self.arena
    }
}

/// Returns the arena to its pool: reset, trimmed, then kept or dropped (see [what
/// happens](Pool#what-happens-when-a-guard-drops)), also when the guard drops
/// during a panic. The reset drops the values placed with
/// [`alloc_owned`](OneWayAlloc::alloc_owned); if one of their destructors panics,
/// the others still run and the arena is dropped rather than kept.
impl Drop for PooledArena<'_> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and `self.arena` is not used after this: the
        // value is taken out exactly once. Taken before the reset, so that if a
        // destructor of a value placed with `alloc_owned` panics, the arena is
        // dropped (its pages freed) while the panic unwinds, not leaked.
        let mut arena = unsafe { ManuallyDrop::take(&mut self.arena) };
        let reusable = self.pool.ready_for_reuse(&mut arena);
        if reusable {
            self.pool.keep_idle(arena);
        }
    }
}

impl fmt::Debug for PooledArena<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PooledArena").field(&*self.arena).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock poisoned by a panic elsewhere (which the pool itself never causes)
    /// is recovered: handing out, giving back, stats and clear all go on.
    #[test]
    fn a_poisoned_lock_is_recovered() {
        let pool = Pool::new();
        drop(pool.get());
        let poisoner = std::thread::scope(|s| {
            s.spawn(|| {
                let _idle = pool.idle.lock();
                panic!("poisoning the pool's lock on purpose");
            })
            .join()
        });
        assert!(poisoner.is_err());
        assert!(pool.idle.is_poisoned());
        assert_eq!(pool.stats().idle_arenas, 1);
        let arena = pool.get();
        assert_eq!(pool.stats().idle_arenas, 0);
        drop(arena);
        assert_eq!(pool.stats().idle_arenas, 1);
        pool.clear();
        assert_eq!(pool.stats().idle_arenas, 0);
    }
}
