//! Reuse: once an allocator has served a first query, what does it still ask of the
//! system for each further one? 1000 context queries (200 charts x 50 dimensions,
//! the same generic query as `context_query`), each followed by the allocator's
//! reset, counting per query the calls into the backing allocator and the minor page
//! faults of the process (`getrusage(RUSAGE_SELF).ru_minflt`).
//!
//! The calls are counted by the harness's `#[global_allocator]` around `System` (what
//! bumpalo, bump-scope and `OneWayAlloc` obtain their chunks and pages from, and what
//! malloc is; see `counting.rs`), read before and after each query; `OneWayAlloc` also gets a counting
//! backing allocator of its own (`OneWayAlloc::new_in`), which must agree. The query
//! itself allocates nothing outside its allocator. Contenders run one after the other,
//! each starting with a fresh allocator after glibc's `malloc_trim`.
//!
//! ```text
//! cargo run --release -p onewayalloc-harness -- reuse
//! cargo run --release -p onewayalloc-harness -- reuse --queries 50 --charts 20 --dims 10
//! ```

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{AllocError, Allocator, Global};
use onewayalloc_harness::contenders::{Agreement, Contender};
use onewayalloc_harness::output::{Table, met, mib};
use onewayalloc_harness::progress;
use onewayalloc_harness::worker::{Worker, tracked, worker};

use super::{QuerySizes, ReportArgs, Sizes, sizes_help};
use crate::counting;

/// The full sizes: 1000 queries of 200 charts x 50 dimensions.
const FULL: Sizes = Sizes::new(1000, 200, 50);
/// The sizes of `--quick`, a run of about a second: 100 queries of 50 charts x 20
/// dimensions.
const QUICK: Sizes = Sizes::new(100, 50, 20);

#[derive(clap::Args)]
#[command(mut_args = sizes_help(
    "Small sizes, a run of about a second: 100 queries of 50 charts x 20 dimensions \
     (sizes given explicitly still apply)",
    "Queries per allocator",
    FULL,
    QUICK,
))]
pub struct Args {
    #[command(flatten)]
    sizes: QuerySizes,
    #[command(flatten)]
    report: ReportArgs,
}

/// Calls into the arena's own backing allocator.
static BACKING_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `grow` and `shrink`, counted and forwarded to `Global`.
macro_rules! counted_resize {
    ($($method:ident),*) => {$(
        unsafe fn $method(
            &self,
            ptr: NonNull<u8>,
            old: Layout,
            new: Layout,
        ) -> Result<NonNull<[u8]>, AllocError> {
            BACKING_CALLS.fetch_add(1, Relaxed);
            // SAFETY: forwarded from the caller.
            unsafe { Global.$method(ptr, old, new) }
        }
    )*};
}

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

    counted_resize!(grow, shrink);
}

/// The contenders: every allocator whose calls the global allocator sees (not
/// mimalloc), and no linear buffer (it obtains nothing after its start).
const CONTENDERS: [Contender; 5] = [
    Contender::Malloc,
    Contender::Bumpalo,
    Contender::BumpScopeReset,
    Contender::BumpScopeResetToStart,
    Contender::OneWayAlloc,
];

/// A fresh worker of `contender`; onewayalloc's counts its backing allocator's calls.
fn counted_worker(contender: Contender) -> Box<dyn Worker> {
    match contender {
        Contender::OneWayAlloc => tracked(OneWayAlloc::new_in(CountingBacking)),
        other => worker(other, 0),
    }
}

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
            global_calls: counting::calls(),
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

/// The process's minor page faults so far (`getrusage(RUSAGE_SELF).ru_minflt`).
#[cfg(unix)]
pub fn minor_faults() -> Option<u64> {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage.ru_minflt as u64)
    }
}

#[cfg(not(unix))]
pub fn minor_faults() -> Option<u64> {
    None
}

pub fn run(args: &Args) {
    let sizes = args.sizes.resolve(FULL, QUICK);
    let (queries, charts, dims) = (sizes.queries, sizes.charts, sizes.dims);
    let points = args.sizes.points;
    let out = args.report.out();
    counting::start();
    let db = args.sizes.database(sizes);
    out.para(&format!(
        "Reuse: {queries} queries of {charts} charts x {dims} dimensions ({} dimensions, {points} \
         points each), a reset after each; allocator calls and minor page faults per query.",
        db.dimensions()
    ));
    if minor_faults().is_none() {
        out.para("(Minor page faults are not available on this platform.)");
    }
    if onewayalloc::SEPARATE_BLOCKS {
        out.para("Sanitizer mode: onewayalloc's reset frees nothing here, so it is left out.");
    }

    let mut table = Table::new(&[
        "allocator",
        "query 1:\ncalls",
        "query 1:\nfaults",
        "later:\ncalls",
        "most in\none",
        "later:\nfaults",
        "most in\none",
        "held after\nthe run",
    ]);
    let mut checksums = Agreement::new(queries);
    let mut facts = Vec::new();
    let mut targets = Vec::new();
    let mut samples = Vec::with_capacity(queries);
    let progress = progress::bar(queries * CONTENDERS.len(), "queries");
    for contender in CONTENDERS {
        let owa = contender == Contender::OneWayAlloc;
        if owa && onewayalloc::SEPARATE_BLOCKS {
            continue;
        }
        progress.set_message(contender.name());
        trim_heap();
        let mut worker = counted_worker(contender);
        samples.clear();
        for q in 0..queries {
            let before = Sample::now();
            let checksum = worker.run(&db, q);
            samples.push(Sample::now().since(before));
            // Drawing the bar allocates: outside the window that is counted.
            progress.inc(1);
            checksums.check(q, checksum.to_bits(), || {
                format!(
                    "query {q}: {} computed a different checksum",
                    contender.name()
                )
            });
        }
        let later = &samples[1..];
        let calls: usize = later.iter().map(|s| s.global_calls).sum();
        let faults: u64 = later.iter().map(|s| s.faults).sum();
        let max_calls = later.iter().map(|s| s.global_calls).max().unwrap_or(0);
        let max_faults = later.iter().map(|s| s.faults).max().unwrap_or(0);
        table.row(vec![
            contender.name().to_string(),
            samples[0].global_calls.to_string(),
            samples[0].faults.to_string(),
            calls.to_string(),
            max_calls.to_string(),
            faults.to_string(),
            max_faults.to_string(),
            worker.memory().capacity.map_or("-".into(), mib),
        ]);
        if owa {
            let backing: usize = later.iter().map(|s| s.backing_calls).sum();
            facts.push(format!(
                "onewayalloc's own counting backing allocator: {} calls in the first query, \
                 {backing} in the {} after it.",
                samples[0].backing_calls,
                later.len(),
            ));
            targets.push(format!(
                "Targets for onewayalloc: no backing allocation after the first query: {}; no \
                 minor faults after the first query: {} ({faults} in all).",
                met(backing == 0 && calls == 0),
                met(faults == 0),
            ));
        }
    }
    progress.finish_and_clear();
    out.table(&table);
    out.para(&format!(
        "\"Query 1\" is the first query, \"later\" the sum over queries 2 to {queries} and \
         \"most in one\" the most in one of them. Calls are the allocations, frees and \
         reallocations in the global allocator; faults are the process's minor page faults. \
         Checksums identical for every allocator."
    ));
    for fact in facts {
        out.para(&fact);
    }
    if args.report.notes {
        for target in targets {
            out.para(&target);
        }
    }
}
