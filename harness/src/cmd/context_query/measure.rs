//! The measurements of the context query: the sequential and parallel runs and the
//! first queries, on every contender.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use onewayalloc_harness::contenders::{Agreement, Contender, rotations, run_query};
use onewayalloc_harness::linear::LinearBuffer;
use onewayalloc_harness::output::median;
use onewayalloc_harness::query::Database;
pub(super) use onewayalloc_harness::timings::Timings;
use onewayalloc_harness::worker::{Memory, Worker, worker};

/// The contenders, the reference (malloc) first, `SyncOneWayAlloc` (one per
/// worker) last.
pub(super) const CONTENDERS: [Contender; 8] = Contender::ALL_AND_SYNC;

/// Everything a worker may need to set itself up.
pub(super) struct Setup {
    pub(super) db: Database,
    /// What the linear buffer needs for one query, measured once.
    pub(super) linear_capacity: usize,
}

impl Setup {
    fn worker(&self, contender: Contender) -> Box<dyn Worker> {
        worker(contender, self.linear_capacity)
    }
}

/// Checksum bits: compared exactly.
fn bits(checksum: f64) -> u64 {
    checksum.to_bits()
}

pub(super) fn sequential(
    setup: &Setup,
    queries: usize,
    progress: &ProgressBar,
) -> (Vec<Timings>, Vec<Memory>, Vec<f64>) {
    let n = CONTENDERS.len();
    let mut workers: Vec<_> = CONTENDERS.iter().map(|&c| setup.worker(c)).collect();
    let mut timings = vec![Timings::default(); n];
    let mut checksums = Agreement::new(queries);
    for (q, i) in rotations(queries, n) {
        let start = Instant::now();
        let sum = workers[i].run(&setup.db, q);
        let took = start.elapsed();
        progress.inc(1);
        timings[i].add_response(took);
        timings[i].complete += took;
        checksums.check(q, bits(sum), || {
            format!(
                "query {q}: {} computed a different checksum",
                CONTENDERS[i].name()
            )
        });
    }
    let expected = (0..queries)
        .map(|q| checksums.get(q).map_or(0.0, |&b| f64::from_bits(b)))
        .collect();
    let memory = workers.iter().map(|w| w.memory()).collect();
    (timings, memory, expected)
}

pub(super) fn parallel(
    setup: &Setup,
    contender: Contender,
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
                    let mut worker = setup.worker(contender);
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
            contender.name()
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
    for (t, i) in rotations(trials, n) {
        let start = Instant::now();
        let mut worker = setup.worker(CONTENDERS[i]);
        worker.run(&setup.db, t);
        drop(worker);
        times[i].push(start.elapsed());
        progress.inc(1);
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
