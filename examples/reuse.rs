//! Reuse: once an allocator has served a first query, what does it still ask of the
//! system for each further one? 1000 context queries (200 charts x 50 dimensions,
//! the same generic query as `context_query`), each followed by the allocator's
//! reset, counting per query the calls into the backing allocator and the minor page
//! faults of the process (`getrusage(RUSAGE_SELF).ru_minflt`).
//!
//! The calls are counted by a counting `#[global_allocator]` around `System` (what
//! bumpalo, bump-scope and `OneWayAlloc` obtain their chunks and pages from, and what
//! malloc is), read before and after each query; `OneWayAlloc` also gets a counting
//! backing allocator of its own (`OneWayAlloc::new_in`), which must agree. The query
//! itself allocates nothing outside its allocator. Contenders run one after the other,
//! each starting with a fresh allocator after glibc's `malloc_trim`.
//!
//! ```text
//! cargo run --release --example reuse
//! cargo run --release --example reuse -- --queries 50 --charts 20 --dims 10
//! ```
//!
//! Options: `--queries N` (default 1000), `--charts N` (200), `--dims N` (50),
//! `--points N` (30), `--markdown`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use common::{
    Arena, Database, Malloc, Opt, ScopeReset, ScopeResetToStart, Table, met, mib, minor_faults,
    parse_args, run_query,
};
use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{AllocError, Allocator, Global};

/// Calls into the global allocator: allocations, frees and reallocations.
static GLOBAL_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `System`, counting every call.
struct CountingGlobal;

// SAFETY: forwards every call to `System` unchanged.
unsafe impl GlobalAlloc for CountingGlobal {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        GLOBAL_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        GLOBAL_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        GLOBAL_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        GLOBAL_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingGlobal = CountingGlobal;

/// Calls into the arena's own backing allocator.
static BACKING_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `Global`, counting every call: the backing allocator of the `OneWayAlloc` here.
#[derive(Clone, Copy, Default)]
struct CountingBacking;

// SAFETY: forwards every call to `Global` unchanged.
unsafe impl Allocator for CountingBacking {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        BACKING_CALLS.fetch_add(1, Relaxed);
        Global.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        BACKING_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { Global.deallocate(ptr, layout) }
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        BACKING_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { Global.grow(ptr, old, new) }
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        BACKING_CALLS.fetch_add(1, Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { Global.shrink(ptr, old, new) }
    }
}

trait Runner {
    fn run(&mut self, db: &Database, seed: usize) -> f64;
    fn capacity(&self) -> Option<usize>;
}

impl<S: Arena> Runner for S {
    fn run(&mut self, db: &Database, seed: usize) -> f64 {
        run_query(self, db, seed).0
    }

    fn capacity(&self) -> Option<usize> {
        Arena::capacity(self)
    }
}

struct Contender {
    name: &'static str,
    owa: bool,
    make: fn() -> Box<dyn Runner>,
}

const CONTENDERS: [Contender; 5] = [
    Contender {
        name: "malloc (glibc)",
        owa: false,
        make: || Box::new(Malloc),
    },
    Contender {
        name: "bumpalo (reset)",
        owa: false,
        make: || Box::new(bumpalo::Bump::new()),
    },
    Contender {
        name: "bump-scope (reset)",
        owa: false,
        make: || Box::new(ScopeReset(bump_scope::Bump::new())),
    },
    Contender {
        name: "bump-scope (reset_to_start)",
        owa: false,
        make: || Box::new(ScopeResetToStart(bump_scope::Bump::new())),
    },
    Contender {
        name: "onewayalloc",
        owa: true,
        make: || Box::new(OneWayAlloc::new_in(CountingBacking)),
    },
];

/// What one query cost besides its own work.
#[derive(Clone, Copy, Default)]
struct Sample {
    global_calls: usize,
    backing_calls: usize,
    faults: u64,
}

impl Sample {
    fn now() -> Self {
        Sample {
            global_calls: GLOBAL_CALLS.load(Relaxed),
            backing_calls: BACKING_CALLS.load(Relaxed),
            faults: minor_faults().unwrap_or(0),
        }
    }

    fn since(self, before: Sample) -> Sample {
        Sample {
            global_calls: self.global_calls - before.global_calls,
            backing_calls: self.backing_calls - before.backing_calls,
            faults: self.faults - before.faults,
        }
    }
}

/// Returns the free memory of glibc's heap to the system, so that every contender
/// starts from the same state.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn main() {
    let (mut queries, mut charts, mut dims, mut points) = (1000, 200, 50, 30);
    let mut markdown = false;
    parse_args(
        "usage: reuse [--queries N] [--charts N] [--dims N] [--points N] [--markdown]",
        &mut [
            Opt::Num("--queries", &mut queries),
            Opt::Num("--charts", &mut charts),
            Opt::Num("--dims", &mut dims),
            Opt::Num("--points", &mut points),
            Opt::Flag("--markdown", &mut markdown),
        ],
    );
    let db = Database::new(charts, dims, points);
    println!(
        "Reuse: {queries} queries of {charts} charts x {dims} dimensions ({} dimensions, {points} \
         points each), a reset after each; allocator calls and minor page faults per query.\n",
        db.dimensions()
    );
    if minor_faults().is_none() {
        println!("(minor page faults are not available on this platform)\n");
    }
    if onewayalloc::SEPARATE_BLOCKS {
        println!("Sanitizer mode: onewayalloc's reset frees nothing here, so it is left out.\n");
    }

    let mut table = Table::new(&[
        "allocator",
        "first query: allocator calls",
        "first query: minor faults",
        "later queries: allocator calls",
        "most in one query",
        "later queries: minor faults",
        "most in one query",
        "held after the run",
    ]);
    let mut expected: Vec<f64> = Vec::with_capacity(queries);
    let mut notes = Vec::new();
    let mut samples = Vec::with_capacity(queries);
    for contender in &CONTENDERS {
        if contender.owa && onewayalloc::SEPARATE_BLOCKS {
            continue;
        }
        trim_heap();
        let mut runner = (contender.make)();
        samples.clear();
        for q in 0..queries {
            let before = Sample::now();
            let checksum = runner.run(&db, q);
            samples.push(Sample::now().since(before));
            match expected.get(q) {
                Some(e) => assert_eq!(
                    checksum.to_bits(),
                    e.to_bits(),
                    "query {q}: {} computed a different checksum",
                    contender.name
                ),
                None => expected.push(checksum),
            }
        }
        let later = &samples[1..];
        let calls: usize = later.iter().map(|s| s.global_calls).sum();
        let faults: u64 = later.iter().map(|s| s.faults).sum();
        let max_calls = later.iter().map(|s| s.global_calls).max().unwrap_or(0);
        let max_faults = later.iter().map(|s| s.faults).max().unwrap_or(0);
        table.row(vec![
            contender.name.to_string(),
            samples[0].global_calls.to_string(),
            samples[0].faults.to_string(),
            calls.to_string(),
            max_calls.to_string(),
            faults.to_string(),
            max_faults.to_string(),
            runner.capacity().map_or("-".into(), mib),
        ]);
        if contender.owa {
            let backing: usize = later.iter().map(|s| s.backing_calls).sum();
            notes.push(format!(
                "onewayalloc's own counting backing allocator: {} calls in the first query, \
                 {backing} in the {} after it. Targets: no backing allocation after the first \
                 query: {}; no minor faults after the first query: {} ({faults} in all).",
                samples[0].backing_calls,
                later.len(),
                met(backing == 0 && calls == 0),
                met(faults == 0),
            ));
        }
    }
    println!("{}", table.render(markdown));
    println!(
        "\"Later queries\" are queries 2 to {queries}; allocator calls count allocations, frees \
         and reallocations in the global allocator; checksums identical for every allocator.\n"
    );
    for note in notes {
        println!("{note}\n");
    }
}
