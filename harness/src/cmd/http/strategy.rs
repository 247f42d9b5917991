//! The per-request allocation strategies of the HTTP experiment, and the one
//! request handler they share: run the context query in the request's allocator,
//! write its JSON answer into an allocator string, copy it out once.
//!
//! A new strategy is a variant of [`Strategy`], its name, and one arm of
//! [`respond`] (or of [`respond_awaiting`], for the handlers that await while they
//! hold the query: `tokio::task::yield_now()`, which sends the task to the back of
//! the run queue, from where another worker may take it).

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use clap::ValueEnum;
use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::{OneWayAlloc, Pool, SyncOneWayAlloc, SyncPool};
use onewayalloc_harness::compat::Mi;
use onewayalloc_harness::contenders::ScopeRef;
use onewayalloc_harness::json::{write_answer, write_answer_of};
use onewayalloc_harness::query::{Database, Group, QueryAlloc, answer, answer_after_await};

/// How a request gets its memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum Strategy {
    /// The global allocator (glibc's malloc): every block allocated and freed alone
    Malloc,
    /// An arena from a `onewayalloc::Pool` shared by the workers, whose `keep` (64 MiB)
    /// holds a whole query's pages
    Pool,
    /// An arena from a `Pool::new()` (its default policy: arenas keep what the
    /// recent load needed, the rest decays; at most 128 MiB idle)
    PoolDefaults,
    /// `onewayalloc::with_scratch`: each worker thread's retained arena
    Scratch,
    /// A `OneWayAlloc` created and dropped per request, as Netdata does
    PerRequest,
    /// A bumpalo `Bump` per worker thread, reset after each request
    Bumpalo,
    /// A bump-scope `Bump` per worker thread, reset after each request
    BumpScope,
    /// The awaiting handler (it parses the request target into its allocator,
    /// awaits, then runs the query from the parsed request) on the global
    /// allocator (glibc's malloc)
    MallocAwait,
    /// The awaiting handler on mimalloc (through the `Allocator` API)
    MimallocAwait,
    /// The awaiting handler's work on `Pool::new()` arenas, split around the await:
    /// the request parsed in one arena and copied into `std` types, the await,
    /// then the query in a second arena
    PoolSplit,
    /// The awaiting handler on a `SyncOneWayAlloc` from a `SyncPool`
    /// (`Pool::new_sync()`): the parsed request held in the arena across the
    /// await, the query in the same arena after it
    SyncPoolAwait,
    /// The awaiting handler with the parsed request in a `SyncPool` arena across
    /// the await, and the query after it in a `Pool::new()` arena taken then
    SyncPoolThenPool,
    /// A handler that awaits while it holds the whole query (every request's
    /// query memory alive at once), on malloc
    MallocHoldsQuery,
    /// The same on `Pool::new()` arenas, split around the await: the query in a
    /// synchronous section, its groups copied into `std` types, the await, then
    /// the body written in a second arena
    PoolSplitQuery,
    /// The same on a `SyncPool` arena, which holds the query across the await
    SyncPoolHoldsQuery,
}

impl Strategy {
    /// Every strategy, malloc (the reference of the ratios) first.
    pub const ALL: [Strategy; 15] = [
        Strategy::Malloc,
        Strategy::Pool,
        Strategy::PoolDefaults,
        Strategy::Scratch,
        Strategy::PerRequest,
        Strategy::Bumpalo,
        Strategy::BumpScope,
        Strategy::MallocAwait,
        Strategy::MimallocAwait,
        Strategy::PoolSplit,
        Strategy::SyncPoolAwait,
        Strategy::SyncPoolThenPool,
        Strategy::MallocHoldsQuery,
        Strategy::PoolSplitQuery,
        Strategy::SyncPoolHoldsQuery,
    ];

    /// The name the tables show.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Malloc => "malloc (glibc)",
            Strategy::Pool => "Pool (keep 64 MiB)",
            Strategy::PoolDefaults => "Pool (defaults)",
            Strategy::Scratch => "with_scratch",
            Strategy::PerRequest => "arena per request",
            Strategy::Bumpalo => "bumpalo per worker",
            Strategy::BumpScope => "bump-scope per worker",
            Strategy::MallocAwait => "awaits: malloc",
            Strategy::MimallocAwait => "awaits: mimalloc",
            Strategy::PoolSplit => "awaits: Pool (defaults), split",
            Strategy::SyncPoolAwait => "awaits: SyncPool (defaults)",
            Strategy::SyncPoolThenPool => "awaits: SyncPool, then Pool",
            Strategy::MallocHoldsQuery => "holds query: malloc",
            Strategy::PoolSplitQuery => "holds query: Pool, split",
            Strategy::SyncPoolHoldsQuery => "holds query: SyncPool",
        }
    }

    /// Whether its arenas come from a `Pool`.
    pub fn uses_pool(self) -> bool {
        matches!(
            self,
            Strategy::Pool
                | Strategy::PoolDefaults
                | Strategy::PoolSplit
                | Strategy::SyncPoolAwait
                | Strategy::SyncPoolThenPool
                | Strategy::PoolSplitQuery
                | Strategy::SyncPoolHoldsQuery
        )
    }

    /// The pool a server of this strategy shares between its workers (unused by the
    /// strategies without one).
    pub fn pool(self) -> Pool {
        match self {
            Strategy::Pool => Pool::new().keep(POOL_KEEP),
            _ => Pool::new(),
        }
    }

    /// The value of `--strategy` that selects it.
    pub fn arg(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
}

/// The `keep` of the [`Strategy::Pool`] pool: more than the 39 MiB of pages a query
/// of 1000 charts x 100 dimensions holds, so that an arena comes back with all of
/// them. (Its `max_idle`, 16 by default, is more than the workers.)
pub const POOL_KEEP: usize = 64 << 20;

/// An allocator a request can write its JSON body into: a string type of its own
/// that takes `fmt::Write`.
pub trait BodyAlloc<'a>: QueryAlloc<'a> {
    type Text: fmt::Write + Deref<Target = str>;
    fn text(self, capacity: usize) -> Self::Text;
}

impl BodyAlloc<'_> for Global {
    type Text = String;
    fn text(self, capacity: usize) -> String {
        String::with_capacity(capacity)
    }
}

impl<'a> BodyAlloc<'a> for &'a OneWayAlloc {
    type Text = onewayalloc::collections::String<'a>;
    fn text(self, capacity: usize) -> Self::Text {
        onewayalloc::collections::String::with_capacity_in(capacity, self)
    }
}

/// A string in any `Allocator`: the body text of the allocators without a string
/// type of their own here.
pub struct TextIn<A: Allocator>(Vec<u8, A>);

impl<A: Allocator> fmt::Write for TextIn<A> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

impl<A: Allocator> Deref for TextIn<A> {
    type Target = str;
    fn deref(&self) -> &str {
        // Only whole `str`s are ever written (`write_str`).
        std::str::from_utf8(&self.0).expect("UTF-8 written by write_str")
    }
}

impl<'a> BodyAlloc<'a> for &'a SyncOneWayAlloc {
    type Text = TextIn<&'a SyncOneWayAlloc>;
    fn text(self, capacity: usize) -> Self::Text {
        TextIn(Vec::with_capacity_in(capacity, self))
    }
}

impl BodyAlloc<'_> for Mi {
    type Text = TextIn<Mi>;
    fn text(self, capacity: usize) -> Self::Text {
        TextIn(Vec::with_capacity_in(capacity, self))
    }
}

impl<'a> BodyAlloc<'a> for &'a bumpalo::Bump {
    type Text = bumpalo::collections::String<'a>;
    fn text(self, capacity: usize) -> Self::Text {
        bumpalo::collections::String::with_capacity_in(capacity, self)
    }
}

impl<'a> BodyAlloc<'a> for ScopeRef<'a> {
    type Text = bump_scope::BumpString<&'a bump_scope::Bump>;
    fn text(self, capacity: usize) -> Self::Text {
        bump_scope::BumpString::with_capacity_in(capacity, self.0)
    }
}

/// Room for the body of a query of 100 dimensions per chart (about 9 KiB).
const BODY_CAPACITY: usize = 12 << 10;

/// The handler's work, the same for every strategy: the context query in `alloc`,
/// its JSON answer written into a string of `alloc`, and that copied out once.
pub fn body_in<'a, A: BodyAlloc<'a>>(alloc: A, db: &Database, seed: usize) -> Bytes {
    answer(alloc, db, seed, |result| {
        let mut body = result.allocator().text(BODY_CAPACITY);
        write_answer(&mut body, result, seed).expect("writing to a string cannot fail");
        Bytes::copy_from_slice(body.as_bytes())
    })
}

thread_local! {
    static BUMPALO: RefCell<bumpalo::Bump> = RefCell::new(bumpalo::Bump::new());
    static BUMP_SCOPE: RefCell<bump_scope::Bump> = RefCell::new(bump_scope::Bump::new());
}

/// What the server shares between its workers.
pub struct Shared {
    pub strategy: Strategy,
    pub db: Database,
    pub pool: Pool,
    /// The pool of the `SyncPool` strategies.
    pub sync_pool: SyncPool,
}

/// The response body to the query with `seed`, with `shared.strategy`'s memory.
pub fn respond(shared: &Shared, seed: usize) -> Bytes {
    let db = &shared.db;
    match shared.strategy {
        Strategy::Malloc => body_in(Global, db, seed),
        Strategy::Pool | Strategy::PoolDefaults => body_in(&*shared.pool.get(), db, seed),
        Strategy::Scratch => onewayalloc::with_scratch(|arena| body_in(&*arena, db, seed)),
        Strategy::PerRequest => body_in(&OneWayAlloc::new(), db, seed),
        Strategy::Bumpalo => BUMPALO.with_borrow_mut(|bump| {
            let body = body_in(&*bump, db, seed);
            bump.reset();
            body
        }),
        Strategy::BumpScope => BUMP_SCOPE.with_borrow_mut(|bump| {
            let body = body_in(ScopeRef(bump), db, seed);
            bump.reset();
            body
        }),
        strategy => unreachable!("{} awaits: see respond_awaiting", strategy.name()),
    }
}

/// Whether the strategy's handler awaits while it holds the query.
pub fn awaits(strategy: Strategy) -> bool {
    matches!(
        strategy,
        Strategy::MallocAwait
            | Strategy::MimallocAwait
            | Strategy::PoolSplit
            | Strategy::SyncPoolAwait
            | Strategy::SyncPoolThenPool
            | Strategy::MallocHoldsQuery
            | Strategy::PoolSplitQuery
            | Strategy::SyncPoolHoldsQuery
    )
}

/// A request target parsed into an allocator: its path and its query's parameters.
struct ParsedTarget<'a, A: QueryAlloc<'a>> {
    path: A::Str,
    params: Vec<(A::Str, A::Str), A>,
}

impl<'a, A: QueryAlloc<'a>> ParsedTarget<'a, A> {
    /// `target` (`/query?seed=N`) parsed into `alloc`.
    fn parse(alloc: A, target: &str) -> Self {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut params = Vec::new_in(alloc);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            params.push((alloc.keep_str(name), alloc.keep_str(value)));
        }
        ParsedTarget {
            path: alloc.keep_str(path),
            params,
        }
    }

    /// The query's seed (the server answers only targets that have one).
    fn seed(&self) -> usize {
        assert_eq!(self.path.as_ref(), "/query");
        seed_of(self.params.iter().map(|(n, v)| (n.as_ref(), v.as_ref())))
    }
}

/// The value of the `seed` parameter.
fn seed_of<'p>(mut params: impl Iterator<Item = (&'p str, &'p str)>) -> usize {
    params
        .find_map(|(name, value)| (name == "seed").then(|| value.parse().ok()).flatten())
        .expect("the server answers only targets with a seed")
}

/// The awaiting handler's work, the same for every allocator that can hold data
/// across the await: the request target parsed into `alloc`, the await, then the
/// query and its JSON answer, from the parsed request, in `alloc` or (with
/// `query_pool`) in an arena of that pool taken after the await.
fn body_after_await<'f, A: BodyAlloc<'f> + Send + Sync>(
    alloc: A,
    db: &'f Database,
    target: &'f str,
    query_pool: Option<&'f Pool>,
) -> SendAcrossAwait<'f> {
    SendAcrossAwait(Box::pin(async move {
        let parsed = ParsedTarget::parse(alloc, target);
        tokio::task::yield_now().await;
        match query_pool {
            // After the last await: the `&OneWayAlloc` never crosses one.
            Some(pool) => body_in(&*pool.get(), db, parsed.seed()),
            None => body_in(alloc, db, parsed.seed()),
        }
    }))
}

/// The handler that holds the whole query across the await: the query in `alloc`,
/// the await, then the JSON answer written from the query's structures.
fn body_holding_query<'f, A: BodyAlloc<'f> + Send + Sync>(
    alloc: A,
    db: &'f Database,
    seed: usize,
) -> SendAcrossAwait<'f> {
    SendAcrossAwait(Box::pin(answer_after_await(
        alloc,
        db,
        seed,
        tokio::task::yield_now(),
        move |result| {
            let mut body = result.allocator().text(BODY_CAPACITY);
            write_answer(&mut body, result, seed).expect("writing to a string cannot fail");
            Bytes::copy_from_slice(body.as_bytes())
        },
    )))
}

/// The future of [`body_after_await`] and [`body_holding_query`], declared `Send`. It is: it holds `A`, which
/// is `Send` and `Sync`, `&Database`, and the query's structures, which are `Vec`s
/// and `HashMap`s of `A` whose items are `A`'s strings and values (`&str` and
/// `&mut T` in an arena, `Box<_, A>` on a heap) and references to them. rustc
/// cannot prove it yet for a future held inside another (hyper's connection,
/// spawned): in the outer future's witness every lifetime is erased, and
/// `QueryAlloc<'a>`'s impls for arenas hold for one lifetime only
/// ("implementation of `Send` is not general enough", rust-lang/rust#110338).
/// tests/async_arena.rs shows the same kind of future `Send` where rustc can check
/// it. One allocation per request (the box), the same for every awaiting strategy
/// but the split one.
pub struct SendAcrossAwait<'f>(Pin<Box<dyn Future<Output = Bytes> + 'f>>);

// SAFETY: see the type's docs: everything the future holds is `Send`, as
// `body_after_await`'s bounds require of its allocator.
unsafe impl Send for SendAcrossAwait<'_> {}

impl Future for SendAcrossAwait<'_> {
    type Output = Bytes;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Bytes> {
        self.0.as_mut().poll(cx)
    }
}

/// A group of the query's answer copied into `std` types, to survive an await.
struct OwnedGroup {
    name: String,
    dimensions: usize,
    points: usize,
    sum: f64,
}

/// The response body to the request `target` (`/query?seed=N`) with an await in
/// the middle of the handler (the strategies for which [`awaits`] is true).
pub async fn respond_awaiting(shared: &Shared, target: &str) -> Bytes {
    let db = &shared.db;
    match shared.strategy {
        Strategy::MallocAwait => body_after_await(Global, db, target, None).await,
        Strategy::MimallocAwait => body_after_await(Mi, db, target, None).await,
        Strategy::SyncPoolAwait => {
            let arena = shared.sync_pool.get();
            body_after_await(&*arena, db, target, None).await
        }
        Strategy::SyncPoolThenPool => {
            let arena = shared.sync_pool.get();
            body_after_await(&*arena, db, target, Some(&shared.pool)).await
        }
        Strategy::PoolSplit => {
            // Before the await: the request parsed in an arena, copied into `std`
            // types (an arena reference cannot be held across it).
            let params: std::vec::Vec<(String, String)> = {
                let arena = shared.pool.get();
                let parsed = ParsedTarget::parse(&*arena, target);
                assert_eq!(parsed.path, "/query");
                let params = parsed.params.iter();
                params
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect()
            };
            tokio::task::yield_now().await;
            // After it: the query in a second arena.
            let seed = seed_of(params.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            body_in(&*shared.pool.get(), db, seed)
        }
        Strategy::MallocHoldsQuery => body_holding_query(Global, db, seed_of_target(target)).await,
        Strategy::SyncPoolHoldsQuery => {
            let arena = shared.sync_pool.get();
            body_holding_query(&*arena, db, seed_of_target(target)).await
        }
        Strategy::PoolSplitQuery => {
            let seed = seed_of_target(target);
            // Before the await: the query in an arena, what the answer needs copied
            // into `std` types.
            let (dimensions, checksum, groups) = answer(&*shared.pool.get(), db, seed, |result| {
                let groups: std::vec::Vec<OwnedGroup> = result
                    .groups_by_name()
                    .iter()
                    .map(|g| OwnedGroup {
                        name: g.name.to_string(),
                        dimensions: g.dimensions,
                        points: g.points,
                        sum: g.sum,
                    })
                    .collect();
                (result.dimensions(), result.checksum(), groups)
            });
            tokio::task::yield_now().await;
            // After it: the body written in a second arena from the copy.
            let arena = shared.pool.get();
            let mut borrowed = Vec::with_capacity_in(groups.len(), &*arena);
            borrowed.extend(groups.iter().map(|g| Group {
                name: &g.name,
                dimensions: g.dimensions,
                points: g.points,
                sum: g.sum,
            }));
            let mut body = (&*arena).text(BODY_CAPACITY);
            write_answer_of(&mut body, seed, dimensions, checksum, &borrowed)
                .expect("writing to a string cannot fail");
            Bytes::copy_from_slice(body.as_bytes())
        }
        _ => respond(shared, seed_of_target(target)),
    }
}

/// The seed of `target`, parsed in `std` types.
fn seed_of_target(target: &str) -> usize {
    let query = target.split_once('?').map_or("", |(_, query)| query);
    seed_of(
        query
            .split('&')
            .map(|pair| pair.split_once('=').unwrap_or((pair, ""))),
    )
}
