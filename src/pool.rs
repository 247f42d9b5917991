//! A pool of retained arenas shared by threads (with the `std` feature).

use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::vec::Vec;

use allocator_api2::alloc::{AllocError, Allocator};

use crate::{OneWayAlloc, Stats, SyncOneWayAlloc, arith};

/// A pool of retained arenas shared by threads: each request takes one with
/// [`get`](Pool::get), and the guard puts it back, reset, when it drops. The idle
/// arenas keep the pages the current load needs and give back the rest gradually
/// ([the policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest)),
/// within a stated [bound](Pool#the-bound-on-idle-memory).
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
/// static POOL: Pool = Pool::new().max_idle(8);
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
/// Outside the lock, the arena is [reset](OneWayAlloc::reset). Then, under the lock,
/// the pool records what the request used and goes on the idle list if it holds no
/// more than the pool's current per-arena target (below) and fits the [bound on idle
/// memory](Pool#the-bound-on-idle-memory). An arena over the target is first
/// [trimmed](OneWayAlloc::trim) to it, outside the lock. When the list is full
/// ([`max_idle`](Pool::max_idle) arenas) or the bound would be passed, the idle
/// arenas returned longest ago are dropped (outside the lock) to make room, since
/// the returned arena's pages are the warmest; an arena that cannot fit even alone
/// is dropped. The next [`get`](Pool::get) takes the arena returned last.
///
/// A [limit](OneWayAlloc::set_limit) set on one guard's arena does not carry over:
/// every `get` sets the pool's own [`limit`](Pool::limit) (or none) again.
///
/// [`DerefMut`] lets code replace the arena itself (`mem::replace(&mut *guard,
/// other)`). Whatever comes back is trimmed to the same target (a larger first page
/// leaves less room for the others) and checked: an arena whose first page alone is
/// over the target (which `trim` cannot free) is dropped instead of kept.
///
/// # The idle-memory policy: keep what the load needs, decay the rest
///
/// [`Pool::new`] does not trim every arena to a fixed size: an arena that comes back
/// keeps the pages its request used, so that under a steady load no request obtains
/// pages again, and what the load no longer uses is given back gradually, as
/// jemalloc decays its dirty pages (`dirty_decay_ms`) and mimalloc purges after a
/// delay. The pool counts time in returns, not in seconds:
///
/// - Each returned arena's *need* is the bytes of the pages its request touched:
///   its first page through its current one, or all its pages if the request
///   obtained a page. The per-arena target rises at once to the largest need
///   seen, and idle arenas keep up to the target, the pages used first (a
///   [`trim`](OneWayAlloc::trim) keeps the pages in list order).
/// - The arenas out on guards at once are counted at each [`get`](Pool::get); the
///   target number of arenas (idle plus out) rises at once to the most seen.
/// - Every [`DECAY_EPOCH`](Pool::DECAY_EPOCH) = 64 returns an epoch ends: each
///   target moves down toward the largest need (and the most arenas out) of the
///   epoch that ended, by half of its excess, and all of it once that half is
///   below 1 MiB (below one arena). Then each of the following returns does one
///   chore while any is left: it drops the oldest idle arena while the arenas
///   exceed their target, or trims one idle arena that holds more than the target.
///
/// The pool cannot see pages that a request touched only inside a
/// [scope](OneWayAlloc::scope) that has ended (the arena's position went back).
/// A load whose requests use pages only that way keeps them while they are being
/// obtained and for the two epochs after; then the target decays below them and
/// one request per arena in use obtains some of them again, which raises the
/// target at once: one request per arena every two epochs (128 returns) or more
/// seldom, against every request under a fixed `keep` that is too small.
///
/// So a burst of large requests leaves its pages behind for a few epochs and
/// then gives them back: once the requests stay small, the idle arenas come down
/// to what those requests use within at most 10 epochs (640 returns; with an
/// [`idle_limit`](Pool::idle_limit) above the default, one epoch more per
/// doubling), for example to one 64 KiB first page per arena the load keeps busy. Returns drive the decay,
/// as jemalloc's allocation activity drives its own without a background thread:
/// a pool that receives no request at all keeps what it holds (within the bound)
/// until [`decay`](Pool::decay), which ends an epoch at once (call it from a timer
/// to decay by time as well), or [`clear`](Pool::clear).
///
/// [`keep`](Pool::keep) replaces the policy with a fixed setting: every returned
/// arena is trimmed to its first page plus `keep` bytes, nothing decays, and the
/// idle arenas' total is bounded by `max_idle * (keep + first)` unless
/// [`idle_limit`](Pool::idle_limit) is set too.
///
/// # The bound on idle memory
///
/// At every moment, `stats().idle_bytes <= max_idle_bytes()`, and
/// [`max_idle_bytes`](Pool::max_idle_bytes) is
///
/// - with the decay policy: [`idle_limit`](Pool::idle_limit), by default
///   [`DEFAULT_IDLE_LIMIT`](Pool::DEFAULT_IDLE_LIMIT) = 128 MiB;
/// - with [`keep`](Pool::keep): `max_idle * (keep + first)`, where `first` is the
///   first page of an arena the pool creates (64 KiB, or `PAGE_HEADER_SIZE +
///   size_hint` when that is larger, rounded up to the OS page; see
///   [`OneWayAlloc::with_size_hint`]), or the `idle_limit` if one is set and smaller.
///
/// With a [`limit`](Pool::limit), no idle arena holds more than the limit (or its
/// first page, if larger), since the next request may not hold more, and the bound
/// is at most `max_idle` times that. An arena is checked against the bound under
/// the lock before it joins the list, so the bound holds between any two calls.
///
/// Arenas out on guards are not idle: they hold what their requests need, up to
/// the pool's `limit` each when one is set.
///
/// ```
/// use onewayalloc::Pool;
///
/// let pool = Pool::new();
/// for _ in 0..4 {
///     let arena = pool.get();
///     arena.alloc_bytes(3 << 20); // a request that needs 3 MiB
/// }
/// // Under a steady load an arena keeps what its request used.
/// let held = pool.stats().idle_bytes;
/// assert!(onewayalloc::SEPARATE_BLOCKS || held > 3 << 20);
/// assert!(held <= pool.max_idle_bytes());
///
/// // The load falls: small requests only. The 3 MiB decays away.
/// for _ in 0..10 * Pool::DECAY_EPOCH {
///     pool.get().alloc_bytes(100);
/// }
/// assert!(pool.stats().idle_bytes <= 64 << 10);
/// ```
///
/// # Defaults, and why
///
/// `Pool::new()` keeps up to [`DEFAULT_MAX_IDLE`](Pool::DEFAULT_MAX_IDLE) = 16 idle
/// arenas holding at most [`DEFAULT_IDLE_LIMIT`](Pool::DEFAULT_IDLE_LIMIT) = 128 MiB
/// together, with the decay policy above and no limit. Sixteen covers the worker
/// threads of most servers; the decay holds only as many of them as the load keeps
/// busy. 128 MiB holds the working sets of a few concurrent heavy requests (three
/// context queries of 39 MiB, for example) while capping what a burst can leave
/// behind; it is what the load *recently* needed that the pool keeps, so under
/// light load it holds far less. No limit is set by default, because only the
/// application knows what one request may take.
///
/// # Panics while a guard is out
///
/// If the code holding a guard panics, the guard drops during unwinding and its
/// arena is reset and returned to the idle list like any other: an arena
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
/// To keep the arena data itself across the `.await`, take the arena from a
/// [`SyncPool`] ([`Pool::new_sync`]): its guard's `&SyncOneWayAlloc` is `Send`.
///
/// # Contention
///
/// The idle list and the record of demand are behind one [`std::sync::Mutex`],
/// locked once to take an arena and once to return it (a pop or a push, a few
/// counters, and now and then a decay chore taken off the list), never while an
/// arena is in use; the reset, every trim, creating a new arena and dropping a
/// surplus one all happen outside it.
///
/// # The sanitizer mode
///
/// With `separate-blocks` (or under AddressSanitizer) every allocation is a block of
/// its own and a reset releases every block, so a returned arena holds nothing:
/// `idle_bytes` is 0, `keep`, the decay of bytes and `size_hint` have nothing to act
/// on, and no arena is dropped for its size. The bound still holds (0 is below it);
/// `max_idle`, the decay of the number of arenas and the `limit` (on the bytes of
/// outstanding blocks) apply as usual.
pub struct Pool<Arena: PoolArena = OneWayAlloc> {
    state: Mutex<State<Arena>>,
    config: Config,
    /// The size of the first page of an arena the pool creates, computed on first
    /// use (the OS page size is known only at run time); 0 until then.
    first_page: AtomicUsize,
}

/// The settings of a [`Pool`].
#[derive(Clone, Copy, Debug)]
struct Config {
    max_idle: usize,
    /// Set by `keep`: a fixed trim instead of the decay.
    keep: Option<usize>,
    /// Set by `idle_limit`.
    idle_limit: Option<usize>,
    size_hint: usize,
    limit: Option<usize>,
}

/// What the pool's lock guards.
struct State<Arena> {
    /// The idle arenas, the one returned last at the end.
    idle: Vec<Arena>,
    /// The sum of their capacities (an idle arena is never changed on the list).
    idle_bytes: usize,
    /// Arenas out on guards, counted from the `get` that hands one out to the
    /// return that puts it back (or drops it).
    out: usize,
    demand: Demand,
}

/// The record of recent demand that the decay follows (unused under `keep`).
#[derive(Clone, Copy, Debug)]
struct Demand {
    /// The bytes an idle arena may keep: raised at once to any returned arena's
    /// need, lowered at each epoch's end.
    arena_bytes: usize,
    /// The arenas (idle and out together) the pool keeps: raised at once to the
    /// arenas out at a `get`, lowered at each epoch's end.
    arenas: usize,
    /// Returns in the current epoch.
    returns: usize,
    /// The largest need returned in the current epoch.
    epoch_bytes: usize,
    /// The most arenas out at once in the current epoch.
    epoch_arenas: usize,
    /// Set when an epoch's end lowered a target: idle arenas may be over it.
    chores: bool,
}

/// [`Pool::DECAY_EPOCH`], for every arena type.
const DECAY_EPOCH: usize = 64;

/// [`Pool::DEFAULT_IDLE_LIMIT`], for every arena type.
const DEFAULT_IDLE_LIMIT: usize = 128 << 20;

/// [`Pool::DEFAULT_MAX_IDLE`], for every arena type.
const DEFAULT_MAX_IDLE: usize = 16;

/// Below this, a per-arena target's excess over the recent need goes at once.
const DECAY_SNAP: usize = 1 << 20;

impl Demand {
    const fn new() -> Demand {
        Demand {
            arena_bytes: 0,
            arenas: 0,
            returns: 0,
            epoch_bytes: 0,
            epoch_arenas: 0,
            chores: false,
        }
    }

    /// An arena handed out: `out` are out now, this one included.
    fn note_get(&mut self, out: usize) {
        self.epoch_arenas = self.epoch_arenas.max(out);
        self.arenas = self.arenas.max(out);
    }

    /// An arena given back whose request needed `need` bytes (at most what an
    /// arena may keep idle); `out` are still out.
    fn note_return(&mut self, need: usize, out: usize) {
        self.arena_bytes = self.arena_bytes.max(need);
        self.epoch_bytes = self.epoch_bytes.max(need);
        self.returns += 1;
        if self.returns >= DECAY_EPOCH {
            self.end_epoch(out);
        }
    }

    /// Moves each target toward the demand of the epoch that ends (see [the
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest))
    /// and starts the next epoch with `out` arenas out.
    fn end_epoch(&mut self, out: usize) {
        let before = (self.arena_bytes, self.arenas);
        self.arena_bytes = decayed(self.arena_bytes, self.epoch_bytes, DECAY_SNAP);
        self.arenas = decayed(self.arenas, self.epoch_arenas, 1);
        self.chores |= (self.arena_bytes, self.arenas) != before;
        self.returns = 0;
        self.epoch_bytes = 0;
        self.epoch_arenas = out;
    }
}

/// `target` moved down toward `recent`: by half of its excess, or all of it when
/// that half is below `snap`; `recent` if that is larger.
fn decayed(target: usize, recent: usize, snap: usize) -> usize {
    let half = target.saturating_sub(recent) / 2;
    recent + if half >= snap { half } else { 0 }
}

/// What a request needed of an arena with `stats` now, whose page allocations and
/// capacity were `at_get` when it was handed out: all its pages if it obtained any
/// (or grew one) since; otherwise, from each of its `page_lists` (one per serial
/// arena), the pages it touched: the first page through the current one (the used
/// pages come first in the list). 0 in the sanitizer mode.
fn need<'l, B: Allocator + 'l>(
    stats: Stats,
    at_get: (usize, usize),
    page_lists: impl Iterator<Item = &'l OneWayAlloc<B>>,
) -> usize {
    if stats.page_allocations > at_get.0 || stats.capacity > at_get.1 {
        return stats.capacity;
    }
    let mut bytes = 0usize;
    for arena in page_lists {
        for page in arena.pages() {
            bytes = bytes.saturating_add(page.size);
            if page.current {
                break;
            }
        }
    }
    bytes
}

/// Work one return does for the decay, outside the lock.
enum Chore<Arena> {
    /// An idle arena beyond the arenas the load needs.
    Drop(Arena),
    /// An idle arena over the per-arena target, to trim and put back.
    Trim(Arena),
}

impl Pool {
    /// How many idle arenas [`Pool::new`] keeps at most: 16 (see the
    /// [defaults](Pool#defaults-and-why)).
    ///
    /// # Examples
    /// ```
    /// assert_eq!(onewayalloc::Pool::DEFAULT_MAX_IDLE, 16);
    /// ```
    pub const DEFAULT_MAX_IDLE: usize = DEFAULT_MAX_IDLE;

    /// The most bytes the idle arenas of [`Pool::new`] hold together: 128 MiB (see
    /// [the bound](Pool#the-bound-on-idle-memory)).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// assert_eq!(Pool::DEFAULT_IDLE_LIMIT, 128 << 20);
    /// assert_eq!(Pool::new().max_idle_bytes(), Pool::DEFAULT_IDLE_LIMIT);
    /// ```
    pub const DEFAULT_IDLE_LIMIT: usize = DEFAULT_IDLE_LIMIT;

    /// The returns that make one epoch of the [decay
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest):
    /// 64. At the end of each, what the idle arenas may keep moves down toward what
    /// the epoch's requests used.
    ///
    /// # Examples
    /// ```
    /// assert_eq!(onewayalloc::Pool::DECAY_EPOCH, 64);
    /// ```
    pub const DECAY_EPOCH: usize = DECAY_EPOCH;

    /// Creates an empty pool with the [defaults](Pool#defaults-and-why): at most
    /// [`DEFAULT_MAX_IDLE`](Self::DEFAULT_MAX_IDLE) idle arenas holding at most
    /// [`DEFAULT_IDLE_LIMIT`](Self::DEFAULT_IDLE_LIMIT) bytes together, what they keep
    /// following the load ([the
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest)),
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
        Pool::empty()
    }
}

impl<Arena: PoolArena> Pool<Arena> {
    /// An empty pool with the defaults.
    const fn empty() -> Pool<Arena> {
        Pool {
            state: Mutex::new(State {
                idle: Vec::new(),
                idle_bytes: 0,
                out: 0,
                demand: Demand::new(),
            }),
            config: Config {
                max_idle: DEFAULT_MAX_IDLE,
                keep: None,
                idle_limit: None,
                size_hint: 0,
                limit: None,
            },
            first_page: AtomicUsize::new(0),
        }
    }

    /// Sets how many idle arenas the pool keeps at most; when an arena comes back
    /// and that many are idle, the one returned longest ago is dropped. Set it to at
    /// least the number of threads that take arenas at once (the worker count), so
    /// that each finds a warm one. 0 keeps none: every [`get`](Self::get) creates an
    /// arena.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().max_idle(1);
    /// let (a, b) = (POOL.get(), POOL.get());
    /// drop((a, b));
    /// assert_eq!(POOL.stats().idle_arenas, 1); // the first returned was dropped
    /// ```
    #[must_use]
    pub const fn max_idle(mut self, arenas: usize) -> Pool<Arena> {
        self.config.max_idle = arenas;
        self
    }

    /// Replaces the [decay
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest)
    /// with a fixed setting: every arena that comes back is trimmed to its first
    /// page plus at most `bytes` of its other pages (the `keep` of
    /// [`OneWayAlloc::trim`], applied after the reset), whatever the load, and the
    /// idle arenas hold at most `max_idle * (keep + first)` (see [the
    /// bound](Pool#the-bound-on-idle-memory)). Use it when the working set of a
    /// request is known: a `keep` at least that large never trims what the next
    /// request needs, a smaller one makes those requests obtain pages again.
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
    pub const fn keep(mut self, bytes: usize) -> Pool<Arena> {
        self.config.keep = Some(bytes);
        self
    }

    /// Sets the most bytes the idle arenas may hold together (their
    /// [`idle_bytes`](PoolStats::idle_bytes)): [`DEFAULT_IDLE_LIMIT`](Pool::DEFAULT_IDLE_LIMIT)
    /// unless set, or with [`keep`](Self::keep) `max_idle * (keep + first)`. An arena
    /// that would pass it makes the pool drop the idle arenas returned longest ago,
    /// and is trimmed to it if it is larger alone (see [the
    /// bound](Pool#the-bound-on-idle-memory)).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// static POOL: Pool = Pool::new().idle_limit(1 << 20);
    /// assert_eq!(POOL.max_idle_bytes(), 1 << 20);
    /// POOL.get().alloc_bytes(4 << 20);
    /// assert!(POOL.stats().idle_bytes <= 1 << 20); // trimmed on its way back
    /// ```
    #[must_use]
    pub const fn idle_limit(mut self, bytes: usize) -> Pool<Arena> {
        self.config.idle_limit = Some(bytes);
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
    pub const fn size_hint(mut self, bytes: usize) -> Pool<Arena> {
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
    pub const fn limit(mut self, bytes: usize) -> Pool<Arena> {
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
    pub fn get(&self) -> PooledArena<'_, Arena> {
        let arena = self.take_idle().unwrap_or_else(|| {
            let arena = Arena::create(self.config.size_hint);
            self.count_out(&mut self.lock());
            arena
        });
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
    pub fn try_get(&self) -> Result<PooledArena<'_, Arena>, AllocError> {
        let arena = match self.take_idle() {
            Some(arena) => arena,
            None => {
                let arena = Arena::try_create(self.config.size_hint)?;
                self.count_out(&mut self.lock());
                arena
            }
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
        let state = self.lock();
        PoolStats {
            idle_arenas: state.idle.len(),
            idle_bytes: state.idle_bytes,
        }
    }

    /// The most the idle arenas can hold together (see [the
    /// bound](Pool#the-bound-on-idle-memory)): the [`idle_limit`](Self::idle_limit),
    /// by default [`DEFAULT_IDLE_LIMIT`](Pool::DEFAULT_IDLE_LIMIT), and no more than
    /// `max_idle` times what one idle arena may hold: `keep + first` under
    /// [`keep`](Self::keep), where `first` is the first page of an arena the pool
    /// creates, or less under a smaller [`limit`](Self::limit); `usize::MAX` if
    /// that overflows.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// assert_eq!(Pool::new().max_idle_bytes(), 128 << 20);
    /// assert_eq!(Pool::new().idle_limit(8 << 20).max_idle_bytes(), 8 << 20);
    /// let pool = Pool::new().max_idle(2).keep(1 << 20);
    /// assert_eq!(pool.max_idle_bytes(), 2 * ((1 << 20) + (64 << 10)));
    /// assert_eq!(pool.limit(512 << 10).max_idle_bytes(), 2 * (512 << 10));
    /// ```
    pub fn max_idle_bytes(&self) -> usize {
        let limit = self.config.idle_limit.unwrap_or(match self.config.keep {
            Some(_) => usize::MAX,
            None => DEFAULT_IDLE_LIMIT,
        });
        limit.min(self.config.max_idle.saturating_mul(self.arena_bound()))
    }

    /// Drops every idle arena, returning its memory to the system: for example when
    /// a server goes quiet after a burst. Arenas out on guards are not affected and
    /// come back as usual. The idle arenas' large pages do not stay in the process's
    /// page heap (they would count in [`free_page_bytes`](crate::free_page_bytes)):
    /// their memory goes back to the system at once. (Their small pages go back to
    /// the global allocator, which keeps what it keeps.)
    ///
    /// The free pages of the process's page heap are given back too
    /// ([`release_free_pages`](crate::release_free_pages)): they hold the large
    /// pages of the arenas the pool dropped or trimmed earlier (past its bound, by
    /// its decay), which no arena uses any more and which the heap would otherwise
    /// keep, up to [`free_page_limit`](crate::free_page_limit), until its own decay
    /// runs at a later call. Arenas created after `clear` obtain their large pages
    /// afresh.
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
        let idle = {
            let mut state = self.lock();
            state.idle_bytes = 0;
            core::mem::take(&mut state.idle)
        };
        // Outside the lock; their large pages go to the page heap, which gives them
        // back to the system right below.
        drop(idle);
        // With those of arenas the pool dropped or trimmed before, still in the heap.
        crate::release_free_pages();
    }

    /// Ends the current epoch of the [decay
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest)
    /// now and does every chore it leaves: the idle memory the last epoch's requests
    /// did not need moves toward being given back, as it would after
    /// [`DECAY_EPOCH`](Pool::DECAY_EPOCH) more returns. Returns drive the decay by
    /// themselves; call this from a timer (say every second) to let an idle server
    /// give memory back too: an epoch with no request needs nothing, so a few calls
    /// release every idle arena. Nothing happens under [`keep`](Self::keep). The
    /// process's page heap decays on the same call
    /// ([`decay_free_pages`](crate::decay_free_pages)), under `keep` too.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::Pool;
    ///
    /// let pool = Pool::new();
    /// pool.get().alloc_bytes(8 << 20); // a burst
    /// assert_eq!(pool.stats().idle_arenas, 1);
    /// for _second in 0..10 {
    ///     pool.decay(); // a quiet server's timer
    /// }
    /// assert_eq!(pool.stats().idle_arenas, 0);
    /// ```
    pub fn decay(&self) {
        // The process's page heap decays on the same clock.
        crate::decay_free_pages();
        if self.config.keep.is_some() {
            return;
        }
        let mut chore = {
            let mut state = self.lock();
            let out = state.out;
            state.demand.end_epoch(out);
            self.chore(&mut state)
        };
        // Each chore drops an idle arena or leaves it within the target; bounded in
        // case other threads keep returning arenas meanwhile.
        for _ in 0..=self.config.max_idle.saturating_mul(2) {
            let Some(work) = chore.take() else { break };
            self.do_chore(work);
            chore = self.chore(&mut self.lock());
        }
        if let Some(work) = chore {
            self.do_chore(work);
        }
    }

    /// The pool's state, recovered if a panic elsewhere poisoned its lock (the
    /// state is valid at every point where a panic could occur: the pool never
    /// panics while it holds the lock).
    fn lock(&self) -> MutexGuard<'_, State<Arena>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pops the arena returned last, if any, counting it out.
    fn take_idle(&self) -> Option<Arena> {
        let mut state = self.lock();
        let mut arena = state.idle.pop()?;
        state.idle_bytes -= arena.capacity(); // it was counted when pushed
        self.count_out(&mut state);
        Some(arena)
    }

    /// Counts one more arena out on a guard.
    fn count_out(&self, state: &mut State<Arena>) {
        state.out += 1;
        let out = state.out;
        state.demand.note_get(out);
    }

    /// The most one idle arena may hold: under `keep`, `keep` plus the first page
    /// of an arena the pool creates, else the idle limit; with a limit no more than
    /// the limit (or that first page, if larger); `usize::MAX` if the size hint
    /// overflows a page size (no such arena can be created).
    fn arena_bound(&self) -> usize {
        let first = self.first_page();
        let bound = match self.config.keep {
            Some(keep) => keep.saturating_add(first),
            None => self.config.idle_limit.unwrap_or(DEFAULT_IDLE_LIMIT),
        };
        match self.config.limit {
            // No use keeping more than the next request may hold.
            Some(limit) => bound.min(limit.max(first)),
            None => bound,
        }
    }

    /// What a returned arena is trimmed to now: the fixed bound under `keep`, else
    /// the decayed per-arena target (at least a first page).
    fn arena_target(&self, demand: &Demand) -> usize {
        let bound = self.arena_bound().min(self.max_idle_bytes());
        match self.config.keep {
            Some(_) => bound,
            None => demand.arena_bytes.max(self.first_page()).min(bound),
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

    /// Trims a reset arena to `target` bytes, outside the lock. `false` if it stays
    /// over (its first page alone is larger), so it must be dropped.
    fn trim_to(&self, arena: &mut Arena, target: usize) -> bool {
        arena.capacity() <= target || arena.trim_to(target, self.first_page())
    }

    /// Takes an arena back from a guard: reset outside the lock, the return noted,
    /// then kept (trimmed first if over the target) or dropped, and one chore of
    /// the decay done.
    fn give_back(&self, mut arena: Arena, at_get: (usize, usize)) {
        /// Uncounts the arena if its reset panics (it is dropped while unwinding).
        struct Uncount<'p, Arena: PoolArena>(&'p Pool<Arena>);
        impl<Arena: PoolArena> Drop for Uncount<'_, Arena> {
            fn drop(&mut self) {
                self.0.lock().out -= 1;
            }
        }
        let need = match self.config.keep {
            Some(_) => 0, // unused: nothing decays
            None => arena.need(at_get),
        };
        let uncount = Uncount(self);
        arena.reset();
        core::mem::forget(uncount);
        // An arena type that keeps no pages while idle: its first pages, unless
        // `keep` says otherwise; after a request that needed large pages, without
        // their memory (see `DISCARD_AFTER`).
        let first_pages = (!Arena::KEEPS_PAGES_IDLE && self.config.keep.is_none()).then(|| {
            if need >= DISCARD_AFTER {
                arena.discard_free_room();
            }
            arena.first_pages()
        });

        let (bound, max_idle) = (self.max_idle_bytes(), self.config.max_idle);
        let (target, rest, chore) = {
            let mut state = self.lock();
            state.out -= 1; // counted when it was handed out
            let out = state.out;
            state.demand.note_return(need.min(self.arena_bound()), out);
            let target = first_pages.unwrap_or_else(|| self.arena_target(&state.demand));
            let capacity = arena.capacity();
            // The steady state: within the target, room on the list.
            if capacity <= target && state.has_room(capacity, max_idle, bound) {
                state.idle_bytes += capacity;
                state.idle.push(arena);
                (target, None, self.chore(&mut state))
            } else {
                (target, Some(arena), None)
            }
        };
        if let Some(mut arena) = rest {
            if self.trim_to(&mut arena, target) {
                self.keep_idle(arena, true);
            }
        }
        if let Some(work) = chore {
            self.do_chore(work);
        }
    }

    /// Puts a reset arena within the target on the idle list: as the newest
    /// (dropping the oldest idle arenas while there is no room) or, for an arena
    /// back from a chore, as the oldest (dropped itself if there is no room). Every
    /// drop happens outside the lock.
    fn keep_idle(&self, mut arena: Arena, newest: bool) {
        let (bound, max_idle) = (self.max_idle_bytes(), self.config.max_idle);
        let capacity = arena.capacity();
        let mut arena = Some(arena);
        while let Some(kept) = arena.take() {
            let oldest = {
                let mut state = self.lock();
                if state.has_room(capacity, max_idle, bound) {
                    state.idle_bytes += capacity;
                    match newest {
                        true => state.idle.push(kept),
                        false => state.idle.insert(0, kept),
                    }
                    return;
                }
                arena = Some(kept);
                match newest && !state.idle.is_empty() {
                    true => Some(state.remove(0)),
                    false => None,
                }
            };
            match oldest {
                Some(oldest) => drop(oldest),
                None => break, // no room even alone: `arena` drops below
            }
        }
    }

    /// The next chore of the decay, if any is left (none under `keep`): the oldest
    /// idle arena while the arenas exceed their target, else an idle arena over the
    /// per-arena target. Taken off the list; done by [`do_chore`](Self::do_chore)
    /// outside the lock.
    fn chore(&self, state: &mut State<Arena>) -> Option<Chore<Arena>> {
        if !state.demand.chores || self.config.keep.is_some() {
            return None;
        }
        if !state.idle.is_empty() && state.idle.len() + state.out > state.demand.arenas {
            return Some(Chore::Drop(state.remove(0)));
        }
        let target = self.arena_target(&state.demand);
        match state.idle.iter_mut().position(|a| a.capacity() > target) {
            Some(i) => Some(Chore::Trim(state.remove(i))),
            None => {
                state.demand.chores = false;
                None
            }
        }
    }

    /// Does a chore outside the lock: drops the arena, or trims it to the current
    /// target and puts it back as the oldest idle arena.
    fn do_chore(&self, chore: Chore<Arena>) {
        match chore {
            Chore::Drop(arena) => drop(arena),
            Chore::Trim(mut arena) => {
                let target = self.arena_target(&self.lock().demand);
                if self.trim_to(&mut arena, target) {
                    self.keep_idle(arena, false);
                }
            }
        }
    }
}

impl<Arena: PoolArena> State<Arena> {
    /// Whether an arena of `capacity` bytes fits on the list: fewer than
    /// `max_idle` idle, the idle bytes within `bound`, and room in the `Vec`
    /// reserved (`try_reserve` first, so the push cannot allocate or panic under
    /// the lock).
    fn has_room(&mut self, capacity: usize, max_idle: usize, bound: usize) -> bool {
        self.idle.len() < max_idle
            && self
                .idle_bytes
                .checked_add(capacity)
                .is_some_and(|total| total <= bound)
            && self.idle.try_reserve(1).is_ok()
    }

    /// Takes the idle arena at `index` off the list.
    fn remove(&mut self, index: usize) -> Arena {
        let mut arena = self.idle.remove(index);
        self.idle_bytes -= arena.capacity(); // it was counted when pushed
        arena
    }
}

impl Default for Pool {
    /// [`Pool::new`].
    fn default() -> Pool {
        Pool::new()
    }
}

impl<Arena: PoolArena> fmt::Debug for Pool<Arena> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("max_idle", &self.config.max_idle)
            .field("keep", &self.config.keep)
            .field("idle_limit", &self.config.idle_limit)
            .field("max_idle_bytes", &self.max_idle_bytes())
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
pub struct PooledArena<'p, Arena: PoolArena = OneWayAlloc> {
    /// Taken out only in `drop`.
    arena: ManuallyDrop<Arena>,
    pool: &'p Pool<Arena>,
    /// The arena's page allocations and capacity when it was handed out, to tell
    /// whether its request obtained pages.
    at_get: (usize, usize),
}

impl<'p, Arena: PoolArena> PooledArena<'p, Arena> {
    /// Hands `arena` out of `pool`, with the pool's limit.
    fn new(pool: &'p Pool<Arena>, mut arena: Arena) -> PooledArena<'p, Arena> {
        arena.set_limit(pool.config.limit);
        let stats = arena.figures();
        PooledArena {
            arena: ManuallyDrop::new(arena),
            pool,
            at_get: (stats.page_allocations, stats.capacity),
        }
    }
}

impl<Arena: PoolArena> Deref for PooledArena<'_, Arena> {
    type Target = Arena;

    #[inline]
    fn deref(&self) -> &Arena {
        &self.arena
    }
}

impl<Arena: PoolArena> DerefMut for PooledArena<'_, Arena> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Arena {
        &mut self.arena
    }
}

/// Returns the arena to its pool: reset, then kept (trimmed if over the pool's
/// target) or dropped (see [what
/// happens](Pool#what-happens-when-a-guard-drops)), also when the guard drops
/// during a panic. The reset drops the values placed with
/// [`alloc_owned`](OneWayAlloc::alloc_owned); if one of their destructors panics,
/// the others still run and the arena is dropped rather than kept.
impl<Arena: PoolArena> Drop for PooledArena<'_, Arena> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and `self.arena` is not used after this: the
        // value is taken out exactly once. Taken before the reset, so that if a
        // destructor of a value placed with `alloc_owned` panics, the arena is
        // dropped (its pages freed) while the panic unwinds, not leaked.
        let arena = unsafe { ManuallyDrop::take(&mut self.arena) };
        self.pool.give_back(arena, self.at_get);
    }
}

impl<Arena: PoolArena> fmt::Debug for PooledArena<'_, Arena> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PooledArena").field(&*self.arena).finish()
    }
}

/// The arena types a [`Pool`] hands out: [`OneWayAlloc`] (the default) and
/// [`SyncOneWayAlloc`] (see [`SyncPool`]). Sealed: what the pool's policy needs of
/// an arena, implemented by the crate for those two only.
pub trait PoolArena: Sized + Send + fmt::Debug + sealed::Sealed {
    /// A new arena whose first page fits `size_hint` bytes, panicking as
    /// `with_size_hint` does.
    #[doc(hidden)]
    fn create(size_hint: usize) -> Self;
    /// Like `create`, returning an error instead.
    #[doc(hidden)]
    fn try_create(size_hint: usize) -> Result<Self, AllocError>;
    /// The arena's `reset`.
    #[doc(hidden)]
    fn reset(&mut self);
    /// The arena's `set_limit`.
    #[doc(hidden)]
    fn set_limit(&mut self, limit: Option<usize>);
    /// The arena's `stats`.
    #[doc(hidden)]
    fn figures(&mut self) -> Stats;
    /// The bytes it holds from its backing allocator.
    #[doc(hidden)]
    fn capacity(&mut self) -> usize {
        self.figures().capacity
    }
    /// What its request needed (see `need`), before the reset.
    #[doc(hidden)]
    fn need(&mut self, at_get: (usize, usize)) -> usize;
    /// Trims the reset arena to at most `target` bytes, `first_page` being the first
    /// page of an arena the pool creates; `false` if it stays over.
    #[doc(hidden)]
    fn trim_to(&mut self, target: usize, first_page: usize) -> bool;
    /// Whether an idle arena keeps the pages its recent requests needed (the
    /// decayed target). `false`: an idle arena keeps its first pages only, and the
    /// rest goes back to its page source (the process-wide page heap), where
    /// whichever arena grows next takes them.
    #[doc(hidden)]
    const KEEPS_PAGES_IDLE: bool;
    /// The bytes of its first pages (one per serial arena).
    #[doc(hidden)]
    fn first_pages(&mut self) -> usize;
    /// Gives the memory of the free room of its current pages back to the OS, where
    /// its page source can (the arenas of `new()` on 64-bit Linux); after a reset,
    /// that is its first pages' payload.
    #[doc(hidden)]
    fn discard_free_room(&mut self);
}

/// What a request must have needed of a sync arena (one that keeps its first pages
/// only while idle) for the pool to give its first pages' memory back to the OS as
/// it returns: 1 MiB, the largest page target (the page heap's page). Such a
/// request filled its first pages, and an idle arena is handed to a request as it
/// arrives, which may hold it across awaits long before it needs more than a few
/// bytes: without this, 256
/// requests waiting at an await each held, resident, a first page that an earlier
/// query had filled (and the first pages of arenas the pool dropped came back,
/// resident, from `malloc` as the first pages of new ones). The call (`madvise`)
/// costs microseconds, next to the milliseconds of filling 1 MiB.
const DISCARD_AFTER: usize = crate::engine::arith::MAX_PAGE_TARGET;

mod sealed {
    /// Only the crate's arena types are [`PoolArena`](super::PoolArena)s.
    pub trait Sealed {}
    impl Sealed for crate::OneWayAlloc {}
    impl Sealed for crate::SyncOneWayAlloc {}
}

impl PoolArena for OneWayAlloc {
    const KEEPS_PAGES_IDLE: bool = true;

    fn first_pages(&mut self) -> usize {
        self.pages().next().map_or(0, |page| page.size)
    }

    fn discard_free_room(&mut self) {
        self.core_mut().discard_free_room();
    }

    fn create(size_hint: usize) -> Self {
        OneWayAlloc::with_size_hint(size_hint)
    }

    fn try_create(size_hint: usize) -> Result<Self, AllocError> {
        OneWayAlloc::try_with_size_hint(size_hint)
    }

    fn reset(&mut self) {
        OneWayAlloc::reset(self);
    }

    fn set_limit(&mut self, limit: Option<usize>) {
        OneWayAlloc::set_limit(self, limit);
    }

    fn figures(&mut self) -> Stats {
        self.stats()
    }

    fn need(&mut self, at_get: (usize, usize)) -> usize {
        need(self.stats(), at_get, core::iter::once(&*self))
    }

    fn trim_to(&mut self, target: usize, first_page: usize) -> bool {
        // After the reset the first page is current and every other page unused, so
        // `trim(budget)` leaves `first page + at most budget` bytes, keeping the
        // pages the last request used (they come first in the list).
        self.trim(target.saturating_sub(first_page));
        if self.stats().capacity <= target {
            return true;
        }
        // An arena swapped in through `DerefMut` with a larger first page: less
        // budget for its other pages.
        let own_first_page = self.first_pages();
        self.trim(target.saturating_sub(own_first_page));
        self.stats().capacity <= target
    }
}

/// A sync arena holds one serial arena per thread that allocated in it since it
/// was created (a task that moved between threads leaves one on each): its need is
/// what its request touched in each of them, and its target bounds them together.
///
/// Its guards are held across awaits, often long before the work that needs
/// pages starts: an idle arena that kept its pages would lend them, resident, to
/// a request that then waits with them (measured: 256 requests arriving while
/// earlier ones ran 37 MiB queries, each taking an arena as it arrived: a peak of
/// 2.5 GB with the pages kept in idle arenas, 54 MB with them in the page heap).
/// So an idle sync arena keeps its first pages only, and the pool's other pages
/// wait in the page heap for whichever arena grows next.
impl PoolArena for SyncOneWayAlloc {
    const KEEPS_PAGES_IDLE: bool = false;

    fn first_pages(&mut self) -> usize {
        self.serial_arenas()
            .map(|serial| serial.pages().next().map_or(0, |page| page.size))
            .fold(0, usize::saturating_add)
    }

    fn discard_free_room(&mut self) {
        SyncOneWayAlloc::discard_free_room(self);
    }

    fn create(size_hint: usize) -> Self {
        SyncOneWayAlloc::with_size_hint(size_hint)
    }

    fn try_create(size_hint: usize) -> Result<Self, AllocError> {
        SyncOneWayAlloc::try_with_size_hint(size_hint)
    }

    fn reset(&mut self) {
        SyncOneWayAlloc::reset(self);
    }

    fn set_limit(&mut self, limit: Option<usize>) {
        SyncOneWayAlloc::set_limit(self, limit);
    }

    fn figures(&mut self) -> Stats {
        self.stats()
    }

    fn need(&mut self, at_get: (usize, usize)) -> usize {
        let stats = self.stats();
        need(stats, at_get, self.serial_arenas())
    }

    fn trim_to(&mut self, target: usize, _first_page: usize) -> bool {
        let first_pages = self.first_pages();
        let serials = self.serial_arenas().count();
        // Each serial keeps at most `budget` past its first page: first as much as
        // the last request used there (the pages it used come first), then, if the
        // serials are still over together, an equal share each.
        let budget = target.saturating_sub(first_pages);
        self.trim(budget);
        if self.stats().capacity <= target {
            return true;
        }
        self.trim(budget / serials.max(1));
        self.stats().capacity <= target
    }
}

/// A [`Pool`] of [`SyncOneWayAlloc`]s, made by [`Pool::new_sync`]: the same
/// settings and bound (its idle arenas keep their first pages only, see
/// [`Pool::new_sync`]), and a guard whose arena many threads (or one task that
/// moves between threads) can allocate in through `&SyncOneWayAlloc`, so that
/// arena data can be held across an `.await` in a future that must be `Send`.
///
/// # Examples
/// ```
/// use onewayalloc::{SyncOneWayAlloc, SyncPool, Pool};
/// use onewayalloc::allocator_api2::vec::Vec;
///
/// static POOL: SyncPool = Pool::new_sync().max_idle(8);
///
/// async fn handle(request: &str) -> usize {
///     let arena = POOL.get();
///     let mut words: Vec<&str, &SyncOneWayAlloc> = Vec::new_in(&*arena);
///     words.extend(request.split_whitespace());
///     std::future::ready(()).await; // a timer or a socket in a real handler
///     words.len() // the arena data is still there after the await
/// }
///
/// fn require_send<F: std::future::Future + Send>(future: F) -> F { future }
/// let future = std::pin::pin!(require_send(handle("GET /index.html")));
/// # let mut future = future;
/// # let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// assert_eq!(future.as_mut().poll(&mut cx), std::task::Poll::Ready(2));
/// ```
pub type SyncPool = Pool<SyncOneWayAlloc>;

impl Pool<SyncOneWayAlloc> {
    /// Creates an empty [`SyncPool`]: a pool of [`SyncOneWayAlloc`]s with the
    /// [defaults](Pool#defaults-and-why) and the [decay
    /// policy](Pool#the-idle-memory-policy-keep-what-the-load-needs-decay-the-rest)
    /// of [`Pool::new`], and the same settings. Every figure counts all the serial
    /// arenas of an arena together (one per thread that allocated in it): its
    /// need, its target, the [bound](Pool#the-bound-on-idle-memory), and under
    /// [`keep`](Pool::keep) `keep` plus one first page, which a sync arena used on
    /// several threads passes unless `keep` holds their first pages (64 KiB each)
    /// too: such an arena is dropped instead of kept. It obtains nothing until the
    /// first [`get`](Pool::get).
    ///
    /// A guard held across an `.await` stays out while its request waits: with
    /// many requests in flight, as many arenas are out, and the pages each grows
    /// serve only its own request until it comes back. So, unlike [`Pool::new`]'s,
    /// an idle arena of a `SyncPool` keeps only its first pages (64 KiB per thread
    /// that used it): the rest goes back to the process-wide page heap (bounded by
    /// [`free_page_limit`](crate::free_page_limit), decaying, counted by
    /// [`free_page_bytes`](crate::free_page_bytes)), where the next arena that
    /// grows takes it, rather than to an arena that a new request would then hold
    /// while it waits. After a request that needed 1 MiB or more, even the first
    /// pages' memory goes back to the system (all of each but the OS page of its
    /// header; `madvise`, on 64-bit Linux): the next request touches only what it
    /// writes. [`keep`](Pool::keep) still keeps what it says. Keep in a
    /// guard what must cross the await (the parsed request, say); heavy work done
    /// after the await can take its scratch memory then (a [`Pool`] guard, or
    /// [`with_scratch`](crate::with_scratch)); see docs/GUIDE.md, "Async servers".
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::{Pool, SyncPool};
    ///
    /// static POOL: SyncPool = Pool::new_sync();
    /// let arena = POOL.get();
    /// std::thread::scope(|s| {
    ///     for worker in 0..2 {
    ///         let arena = &*arena;
    ///         s.spawn(move || arena.alloc(worker));
    ///     }
    /// });
    /// drop(arena);
    /// assert_eq!(POOL.stats().idle_arenas, 1);
    /// ```
    pub const fn new_sync() -> SyncPool {
        Pool::empty()
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
                let _state = pool.state.lock();
                panic!("poisoning the pool's lock on purpose");
            })
            .join()
        });
        assert!(poisoner.is_err());
        assert!(pool.state.is_poisoned());
        assert_eq!(pool.stats().idle_arenas, 1);
        let arena = pool.get();
        assert_eq!(pool.stats().idle_arenas, 0);
        drop(arena);
        assert_eq!(pool.stats().idle_arenas, 1);
        pool.clear();
        assert_eq!(pool.stats().idle_arenas, 0);
    }
}
