//! A query worker: one contender's allocator, owned by one worker thread, that runs
//! context queries and remembers what they used. The context query, reuse and HTTP
//! experiments all run their queries through it.

use crate::contenders::{Arena, Build, Contender, run_query};
use crate::query::Database;

/// One contender's allocator, owned by one worker.
pub trait Worker {
    /// Runs one query and resets the allocator; returns the query's checksum.
    fn run(&mut self, db: &Database, seed: usize) -> f64;
    /// What the allocator holds and has used so far.
    fn memory(&self) -> Memory;
}

/// What a worker's allocator held and used, where the allocator tells.
#[derive(Clone, Default)]
pub struct Memory {
    /// Bytes held from the backing allocator now.
    pub capacity: Option<usize>,
    /// The most bytes one query consumed.
    pub peak_used: Option<usize>,
    /// Blocks obtained from the backing allocator by the end of the first query.
    pub blocks_after_first: Option<usize>,
    /// Blocks obtained from the backing allocator so far.
    pub blocks: Option<usize>,
    /// The sizes of the blocks held, in list order.
    pub block_sizes: Option<Vec<usize>>,
}

struct Tracked<S> {
    arena: S,
    queries: usize,
    peak_used: Option<usize>,
    blocks_after_first: Option<usize>,
}

impl<S: Arena> Worker for Tracked<S> {
    fn run(&mut self, db: &Database, seed: usize) -> f64 {
        let (checksum, used) = run_query(&mut self.arena, db, seed);
        self.peak_used = self.peak_used.max(used);
        if self.queries == 0 {
            self.blocks_after_first = self.arena.blocks_obtained();
        }
        self.queries += 1;
        checksum
    }

    fn memory(&self) -> Memory {
        Memory {
            capacity: self.arena.capacity(),
            peak_used: self.peak_used,
            blocks_after_first: self.blocks_after_first,
            blocks: self.arena.blocks_obtained(),
            block_sizes: self.arena.block_sizes(),
        }
    }
}

/// A [`Worker`] around `arena`.
pub fn tracked<S: Arena + 'static>(arena: S) -> Box<dyn Worker> {
    Box::new(Tracked {
        arena,
        queries: 0,
        peak_used: None,
        blocks_after_first: None,
    })
}

/// Builds a [`Worker`] of a contender: `contender.build(bytes, Workers)`.
pub struct Workers;

impl Build for Workers {
    type Output = Box<dyn Worker>;
    fn build<S: Arena + 'static>(self, arena: S) -> Box<dyn Worker> {
        tracked(arena)
    }
}

/// A fresh worker of `contender` (a linear buffer of `linear_bytes`).
pub fn worker(contender: Contender, linear_bytes: usize) -> Box<dyn Worker> {
    contender.build(linear_bytes, Workers)
}
