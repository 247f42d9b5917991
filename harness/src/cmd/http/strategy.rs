//! The per-request allocation strategies of the HTTP experiment, and the one
//! request handler they share: run the context query in the request's allocator,
//! write its JSON answer into an allocator string, copy it out once.
//!
//! A new strategy is a variant of [`Strategy`], its name, and one arm of
//! [`respond`].

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;

use bytes::Bytes;
use clap::ValueEnum;
use onewayalloc::allocator_api2::alloc::Global;
use onewayalloc::{OneWayAlloc, Pool};
use onewayalloc_harness::contenders::ScopeRef;
use onewayalloc_harness::json::write_answer;
use onewayalloc_harness::query::{Database, QueryAlloc, answer};

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
}

impl Strategy {
    /// Every strategy, malloc (the reference of the ratios) first.
    pub const ALL: [Strategy; 7] = [
        Strategy::Malloc,
        Strategy::Pool,
        Strategy::PoolDefaults,
        Strategy::Scratch,
        Strategy::PerRequest,
        Strategy::Bumpalo,
        Strategy::BumpScope,
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
        }
    }

    /// Whether its arenas come from a `Pool`.
    pub fn uses_pool(self) -> bool {
        matches!(self, Strategy::Pool | Strategy::PoolDefaults)
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
    }
}
