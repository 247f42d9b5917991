//! The measurements of the context query: the contenders, the sequential and
//! parallel runs and the first queries.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use onewayalloc::OneWayAlloc;
use onewayalloc_harness::contenders::{
    Arena, Malloc, Mimalloc, ScopeReset, ScopeResetToStart, run_query,
};
use onewayalloc_harness::linear::LinearBuffer;
use onewayalloc_harness::output::median;
use onewayalloc_harness::query::Database;

/// Everything a worker may need to set itself up.
pub(super) struct Setup {
    pub(super) db: Database,
    /// What the linear buffer needs for one query, measured once.
    pub(super) linear_capacity: usize,
}

/// One contender's allocator, owned by one worker.
pub(super) trait Worker {
    fn run(&mut self, db: &Database, seed: usize) -> f64;
    fn memory(&self) -> Memory;
}

#[derive(Clone, Default)]
pub(super) struct Memory {
    pub(super) capacity: Option<usize>,
    pub(super) peak_used: Option<usize>,
    pub(super) blocks_after_first: Option<usize>,
    pub(super) blocks: Option<usize>,
    pub(super) block_sizes: Option<Vec<usize>>,
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

fn tracked<S: Arena + 'static>(arena: S) -> Box<dyn Worker> {
    Box::new(Tracked {
        arena,
        queries: 0,
        peak_used: None,
        blocks_after_first: None,
    })
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    /// A general-purpose heap allocator.
    Heap,
    /// A bump arena: the peers of `OneWayAlloc`.
    Arena,
    /// `OneWayAlloc` itself.
    Owa,
    /// The speed-of-light reference.
    Linear,
}

impl Kind {
    /// An arena of the comparison "vs best other arena": a peer or onewayalloc.
    pub(super) fn is_arena(self) -> bool {
        matches!(self, Kind::Arena | Kind::Owa)
    }
}

pub(super) struct Contender {
    pub(super) name: &'static str,
    pub(super) kind: Kind,
    pub(super) make: fn(&Setup) -> Box<dyn Worker>,
}

/// The contenders, the reference (malloc) first.
pub(super) const CONTENDERS: [Contender; 7] = [
    Contender {
        name: "malloc (glibc)",
        kind: Kind::Heap,
        make: |_| tracked(Malloc),
    },
    Contender {
        name: "mimalloc",
        kind: Kind::Heap,
        make: |_| tracked(Mimalloc),
    },
    Contender {
        name: "bumpalo (reset)",
        kind: Kind::Arena,
        make: |_| tracked(bumpalo::Bump::new()),
    },
    Contender {
        name: "bump-scope (reset)",
        kind: Kind::Arena,
        make: |_| tracked(ScopeReset(bump_scope::Bump::new())),
    },
    Contender {
        name: "bump-scope (reset_to_start)",
        kind: Kind::Arena,
        make: |_| tracked(ScopeResetToStart(bump_scope::Bump::new())),
    },
    Contender {
        name: "onewayalloc",
        kind: Kind::Owa,
        make: |_| tracked(OneWayAlloc::new()),
    },
    Contender {
        name: "linear buffer",
        kind: Kind::Linear,
        make: |setup| tracked(LinearBuffer::new(setup.linear_capacity)),
    },
];

/// The columns of Netdata's table for one contender in one mode.
#[derive(Clone, Default)]
pub(super) struct Timings {
    pub(super) transactions: usize,
    /// Sequential: the sum of the query times; parallel: the batch's wall time.
    pub(super) complete: Duration,
    pub(super) response_sum: Duration,
    pub(super) min: Option<Duration>,
    pub(super) max: Duration,
}

impl Timings {
    fn add_response(&mut self, t: Duration) {
        self.transactions += 1;
        self.response_sum += t;
        self.min = Some(self.min.map_or(t, |m| m.min(t)));
        self.max = self.max.max(t);
    }

    pub(super) fn rate(&self) -> f64 {
        self.transactions as f64 / self.complete.as_secs_f64()
    }
}

pub(super) fn sequential(
    setup: &Setup,
    queries: usize,
    progress: &ProgressBar,
) -> (Vec<Timings>, Vec<Memory>, Vec<f64>) {
    let n = CONTENDERS.len();
    let mut workers: Vec<_> = CONTENDERS.iter().map(|c| (c.make)(setup)).collect();
    let mut timings = vec![Timings::default(); n];
    let mut expected = Vec::with_capacity(queries);
    for q in 0..queries {
        let mut checksum = None;
        for k in 0..n {
            let i = (q + k) % n;
            let start = Instant::now();
            let sum = workers[i].run(&setup.db, q);
            let took = start.elapsed();
            progress.inc(1);
            timings[i].add_response(took);
            timings[i].complete += took;
            let first = *checksum.get_or_insert(sum);
            assert_eq!(
                sum.to_bits(),
                first.to_bits(),
                "query {q}: {} computed a different checksum",
                CONTENDERS[i].name
            );
        }
        expected.push(checksum.unwrap_or_default());
    }
    let memory = workers.iter().map(|w| w.memory()).collect();
    (timings, memory, expected)
}

pub(super) fn parallel(
    setup: &Setup,
    contender: &Contender,
    queries: usize,
    threads: usize,
    expected: &[f64],
    progress: &ProgressBar,
) -> Timings {
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    let done: Vec<Vec<(usize, Duration, f64)>> = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut worker = (contender.make)(setup);
                    let mut done = Vec::with_capacity(queries);
                    loop {
                        let q = next.fetch_add(1, Ordering::Relaxed);
                        if q >= queries {
                            break done;
                        }
                        let checksum = worker.run(&setup.db, q);
                        done.push((q, start.elapsed(), checksum));
                        progress.inc(1);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked"))
            .collect()
    });
    let mut timings = Timings {
        complete: start.elapsed(),
        ..Timings::default()
    };
    for (q, completed, checksum) in done.into_iter().flatten() {
        assert_eq!(
            checksum.to_bits(),
            expected[q].to_bits(),
            "query {q}: {} computed a different checksum in parallel",
            contender.name
        );
        timings.add_response(completed);
    }
    assert_eq!(timings.transactions, queries);
    timings
}

/// A fresh allocator for one query, `trials` times: the median time.
pub(super) fn first_queries(setup: &Setup, trials: usize, progress: &ProgressBar) -> Vec<Duration> {
    let n = CONTENDERS.len();
    let mut times = vec![Vec::with_capacity(trials); n];
    for t in 0..trials {
        for k in 0..n {
            let i = (t + k) % n;
            let start = Instant::now();
            let mut worker = (CONTENDERS[i].make)(setup);
            worker.run(&setup.db, t);
            drop(worker);
            times[i].push(start.elapsed());
            progress.inc(1);
        }
    }
    times.iter_mut().map(|t| median(t)).collect()
}

/// Bytes the linear buffer needs for one query: one run in a generous buffer.
pub(super) fn linear_capacity(db: &Database) -> usize {
    let estimate = db.dimensions() * (db.points * 8 + 512) * 2 + (4 << 20);
    let mut buffer = LinearBuffer::new(estimate);
    let (_, used) = run_query(&mut buffer, db, 0);
    used.unwrap_or(estimate).next_multiple_of(4096) + 4096
}
