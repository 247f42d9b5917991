//! The contenders: every allocator the harness compares, listed once in
//! [`Contender`], behind one [`Arena`] trait that a worker owns, runs queries on and
//! resets.
//!
//! An experiment lists the contenders it compares (a slice of [`Contender`], the
//! reference first) and makes its own runner of each with [`Contender::build`] and a
//! [`Build`]; [`rotations`] gives the interleaved order of its rounds and
//! [`Agreement`] checks that every contender computed the same results. A new
//! contender is a variant here, its name, and its `Arena` impl.

use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::boxed::Box;
use onewayalloc::{OneWayAlloc, SyncOneWayAlloc};

pub use crate::compat::{BumpScopeApi2 as ScopeRef, Mi as MiAlloc};
use crate::linear::LinearBuffer;
use crate::query::{Database, QueryAlloc, query};

/// An allocator that a worker owns and resets between queries.
pub trait Arena {
    type Alloc<'a>: QueryAlloc<'a>
    where
        Self: 'a;
    fn allocator(&self) -> Self::Alloc<'_>;
    fn reset(&mut self);
    /// Bytes held from the backing allocator, if the arena tells.
    fn capacity(&self) -> Option<usize> {
        None
    }
    /// Bytes consumed since the last reset, if the arena tells.
    fn used(&self) -> Option<usize> {
        None
    }
    /// Blocks (pages, chunks) obtained from the backing allocator so far, if the
    /// arena tells.
    fn blocks_obtained(&self) -> Option<usize> {
        None
    }
    /// The sizes of the blocks held, in list order, if the arena tells.
    fn block_sizes(&self) -> Option<Vec<usize>> {
        None
    }
}

/// Every allocator the experiments run on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Contender {
    /// glibc's malloc, the global allocator ([`Malloc`]).
    Malloc,
    /// mimalloc ([`Mimalloc`]).
    Mimalloc,
    /// bumpalo's `Bump`, reset with `reset`.
    Bumpalo,
    /// bump-scope's `Bump`, reset with `reset` ([`ScopeReset`]).
    BumpScopeReset,
    /// bump-scope's `Bump`, reset with `reset_to_start` ([`ScopeResetToStart`]).
    BumpScopeResetToStart,
    /// `OneWayAlloc` on the global allocator.
    OneWayAlloc,
    /// `SyncOneWayAlloc`, the thread-safe arena, one per worker: onewayalloc's own,
    /// compared with `OneWayAlloc` only (not in [`Contender::ALL`]).
    SyncOneWayAlloc,
    /// The pre-faulted linear buffer, the speed of light ([`LinearBuffer`]).
    Linear,
}

/// What part a contender plays in the comparisons.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A general-purpose heap allocator.
    Heap,
    /// A bump arena: the peers of `OneWayAlloc`.
    Arena,
    /// `OneWayAlloc` itself.
    Owa,
    /// `SyncOneWayAlloc`: onewayalloc's thread-safe arena, no peer of the others
    /// (the "vs best other arena" comparisons leave it out).
    SyncOwa,
    /// The speed-of-light reference.
    Linear,
}

impl Kind {
    /// An arena of the comparison "vs best other arena": a peer or onewayalloc.
    pub fn is_arena(self) -> bool {
        matches!(self, Kind::Arena | Kind::Owa)
    }
}

/// What an experiment makes of a contender's allocator: its worker or runner, usually
/// a `Box<dyn Trait>` of the experiment's own trait.
pub trait Build {
    type Output;
    fn build<S: Arena + 'static>(self, arena: S) -> Self::Output;
}

impl Contender {
    /// Every contender, malloc (the reference of every ratio) first.
    pub const ALL: [Contender; 7] = [
        Contender::Malloc,
        Contender::Mimalloc,
        Contender::Bumpalo,
        Contender::BumpScopeReset,
        Contender::BumpScopeResetToStart,
        Contender::OneWayAlloc,
        Contender::Linear,
    ];

    /// [`Contender::ALL`] and `SyncOneWayAlloc` last (the context query).
    pub const ALL_AND_SYNC: [Contender; 8] = [
        Contender::Malloc,
        Contender::Mimalloc,
        Contender::Bumpalo,
        Contender::BumpScopeReset,
        Contender::BumpScopeResetToStart,
        Contender::OneWayAlloc,
        Contender::Linear,
        Contender::SyncOneWayAlloc,
    ];

    /// One contender per allocator, without mimalloc (the experiments of growing
    /// vectors: `vec-push`, `index`): malloc (the reference) first, bump-scope with
    /// `reset`, the linear buffer last.
    pub const ONE_EACH: [Contender; 5] = [
        Contender::Malloc,
        Contender::Bumpalo,
        Contender::BumpScopeReset,
        Contender::OneWayAlloc,
        Contender::Linear,
    ];

    /// The name the tables show.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Malloc => "malloc (glibc)",
            Contender::Mimalloc => "mimalloc",
            Contender::Bumpalo => "bumpalo (reset)",
            Contender::BumpScopeReset => "bump-scope (reset)",
            Contender::BumpScopeResetToStart => "bump-scope (reset_to_start)",
            Contender::OneWayAlloc => "onewayalloc",
            Contender::SyncOneWayAlloc => "SyncOneWayAlloc",
            Contender::Linear => "linear buffer",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Contender::Malloc | Contender::Mimalloc => Kind::Heap,
            Contender::Bumpalo | Contender::BumpScopeReset | Contender::BumpScopeResetToStart => {
                Kind::Arena
            }
            Contender::OneWayAlloc => Kind::Owa,
            Contender::SyncOneWayAlloc => Kind::SyncOwa,
            Contender::Linear => Kind::Linear,
        }
    }

    /// Creates this contender's allocator, fresh (a linear buffer of `linear_bytes`,
    /// which must hold the whole job), and hands it to `build`.
    pub fn build<B: Build>(self, linear_bytes: usize, build: B) -> B::Output {
        match self {
            Contender::Malloc => build.build(Malloc),
            Contender::Mimalloc => build.build(Mimalloc),
            Contender::Bumpalo => build.build(bumpalo::Bump::new()),
            Contender::BumpScopeReset => build.build(ScopeReset(bump_scope::Bump::new())),
            Contender::BumpScopeResetToStart => {
                build.build(ScopeResetToStart(bump_scope::Bump::new()))
            }
            Contender::OneWayAlloc => build.build(OneWayAlloc::new()),
            Contender::SyncOneWayAlloc => build.build(SyncOneWayAlloc::new()),
            Contender::Linear => build.build(LinearBuffer::new(linear_bytes)),
        }
    }
}

/// The order of an interleaved run: `rounds` rounds of one step per contender, each
/// round starting one contender further (round `r` starts with contender `r % n`),
/// so that a noisy machine slows every contender alike. Yields `(round, contender)`.
pub fn rotations(rounds: usize, contenders: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..rounds).flat_map(move |r| (0..contenders).map(move |k| (r, (r + k) % contenders)))
}

/// The first result seen for each key (a query, a seed), which every later result
/// for that key must equal.
pub struct Agreement<T> {
    first: Vec<Option<T>>,
}

impl<T: PartialEq + Clone> Agreement<T> {
    pub fn new(keys: usize) -> Self {
        Agreement {
            first: vec![None; keys],
        }
    }

    /// Records `value` as the result for `key`, or checks it against the one recorded.
    ///
    /// # Panics
    /// If it differs, with `mismatch()` as the message.
    pub fn check(&mut self, key: usize, value: T, mismatch: impl FnOnce() -> String) {
        match &self.first[key] {
            Some(first) => assert!(*first == value, "{}", mismatch()),
            None => self.first[key] = Some(value),
        }
    }

    /// The result recorded for `key`, if any.
    pub fn get(&self, key: usize) -> Option<&T> {
        self.first[key].as_ref()
    }
}

/// Runs one query on `arena` and resets it. Returns the checksum and the bytes the
/// arena had consumed before the reset.
pub fn run_query<S: Arena>(arena: &mut S, db: &Database, seed: usize) -> (f64, Option<usize>) {
    let checksum = query(arena.allocator(), db, seed);
    let used = arena.used();
    arena.reset();
    (checksum, used)
}

/// The global allocator of the process (glibc's malloc through `std::alloc::System`).
pub struct Malloc;

impl Arena for Malloc {
    type Alloc<'a> = Global;
    fn allocator(&self) -> Global {
        Global
    }
    fn reset(&mut self) {}
}

/// mimalloc, through [`MiAlloc`].
pub struct Mimalloc;

impl Arena for Mimalloc {
    type Alloc<'a> = MiAlloc;
    fn allocator(&self) -> MiAlloc {
        MiAlloc
    }
    fn reset(&mut self) {}
}

impl<B: Allocator> Arena for OneWayAlloc<B> {
    type Alloc<'a>
        = &'a OneWayAlloc<B>
    where
        B: 'a;
    fn allocator(&self) -> &OneWayAlloc<B> {
        self
    }
    fn reset(&mut self) {
        OneWayAlloc::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.stats().capacity)
    }
    fn used(&self) -> Option<usize> {
        Some(self.stats().used)
    }
    fn blocks_obtained(&self) -> Option<usize> {
        Some(self.stats().page_allocations)
    }
    fn block_sizes(&self) -> Option<Vec<usize>> {
        Some(self.pages().map(|page| page.size).collect())
    }
}

/// A worker's own `SyncOneWayAlloc`, used by its thread only (its figures need
/// `&mut self`, so it tells none).
impl Arena for SyncOneWayAlloc {
    type Alloc<'a> = &'a SyncOneWayAlloc;
    fn allocator(&self) -> &SyncOneWayAlloc {
        self
    }
    fn reset(&mut self) {
        SyncOneWayAlloc::reset(self);
    }
}

impl Arena for bumpalo::Bump {
    type Alloc<'a> = &'a bumpalo::Bump;
    fn allocator(&self) -> &bumpalo::Bump {
        self
    }
    fn reset(&mut self) {
        bumpalo::Bump::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.allocated_bytes_including_metadata())
    }
}

/// bump-scope's `Bump`, reset with `reset` (keeps only its largest chunk).
pub struct ScopeReset(pub bump_scope::Bump);

/// bump-scope's `Bump`, reset with `reset_to_start` (keeps every chunk).
pub struct ScopeResetToStart(pub bump_scope::Bump);

/// The `Arena` impl of a bump-scope wrapper that resets with `$reset`.
macro_rules! bump_scope_arena {
    ($($wrapper:ident: $reset:ident),*) => {$(
        impl Arena for $wrapper {
            type Alloc<'a> = ScopeRef<'a>;
            fn allocator(&self) -> ScopeRef<'_> {
                ScopeRef(&self.0)
            }
            fn reset(&mut self) {
                self.0.$reset();
            }
            fn capacity(&self) -> Option<usize> {
                Some(self.0.stats().size())
            }
            fn used(&self) -> Option<usize> {
                Some(self.0.stats().allocated())
            }
        }
    )*};
}

bump_scope_arena!(ScopeReset: reset, ScopeResetToStart: reset_to_start);

impl Arena for LinearBuffer {
    type Alloc<'a> = &'a LinearBuffer;
    fn allocator(&self) -> &LinearBuffer {
        self
    }
    fn reset(&mut self) {
        LinearBuffer::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.capacity())
    }
    fn used(&self) -> Option<usize> {
        Some(self.used())
    }
}

/// Lets the heap allocators set themselves up (mimalloc builds its thread's heap on
/// first use), so that no round or query is charged for the process's start.
pub fn warm_up() {
    drop(std::hint::black_box(Box::new_in([0u64; 4], Global)));
    drop(std::hint::black_box(Box::new_in([0u64; 4], MiAlloc)));
}
