//! The contenders: every allocator the harness compares, behind one [`Arena`] trait
//! that a worker owns, runs queries on and resets.

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::boxed::Box;

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

impl Arena for ScopeReset {
    type Alloc<'a> = ScopeRef<'a>;
    fn allocator(&self) -> ScopeRef<'_> {
        ScopeRef(&self.0)
    }
    fn reset(&mut self) {
        self.0.reset();
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.0.stats().size())
    }
    fn used(&self) -> Option<usize> {
        Some(self.0.stats().allocated())
    }
}

impl Arena for ScopeResetToStart {
    type Alloc<'a> = ScopeRef<'a>;
    fn allocator(&self) -> ScopeRef<'_> {
        ScopeRef(&self.0)
    }
    fn reset(&mut self) {
        self.0.reset_to_start();
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.0.stats().size())
    }
    fn used(&self) -> Option<usize> {
        Some(self.0.stats().allocated())
    }
}

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
