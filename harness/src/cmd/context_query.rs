//! Netdata's context-query benchmark, reproduced: the same query run sequentially by
//! one worker and in parallel by one worker per core, on the global allocator
//! (glibc's malloc), mimalloc, bumpalo, bump-scope, `OneWayAlloc`, and a linear
//! buffer that shows the speed of light.
//!
//! To answer a context query, Netdata builds a *virtual chart* holding every dimension
//! of every chart of that context, queries it, and throws it all away. Netdata timed
//! 256 such queries of 1000 charts x 100 dimensions, one caller after the other and
//! 256 callers at once on a 24-core server, with `mallocz()` and with its One Way
//! Allocator. This subcommand does the same with the query of
//! [`onewayalloc_harness::query`], identical for every allocator: the heap
//! allocators free each block on its own, the arenas free everything at once with
//! their reset after each query.
//!
//! - **Sequential**: one worker runs every query; queries alternate between the
//!   contenders (in a rotating order), so a noisy machine slows all alike. The
//!   response time of a query is its duration, reset included.
//! - **Parallel**: one worker thread per core, each with its own allocator (one arena
//!   per worker), takes the next query from a shared counter until all are done. As
//!   in Netdata's test all queries are submitted at once, so the response time of a
//!   query is the time from the start of the batch until it completes. Each contender
//!   runs `--batches` batches (alternating with the others) and the fastest is shown,
//!   since other processes on the machine can only slow a batch down.
//! - **First query**: a fresh allocator for one query (created, used, reset and
//!   dropped), as Netdata creates an arena per query; the median of a few trials.
//!
//! In the sanitizer mode (onewayalloc's feature `separate-blocks`, or under
//! AddressSanitizer) every arena allocation is its own block and `reset` frees
//! nothing, so the `OneWayAlloc` timings then say nothing: use small sizes.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use onewayalloc::OneWayAlloc;
use onewayalloc_harness::contenders::{
    Arena, Malloc, Mimalloc, ScopeReset, ScopeResetToStart, run_query, warm_up,
};
use onewayalloc_harness::linear::LinearBuffer;
use onewayalloc_harness::output::{Out, Table, fmt_duration, median, met, mib, times};
use onewayalloc_harness::query::Database;
use onewayalloc_harness::{chart, progress};

use super::positive;

/// The sizes of `--quick`: a run of a few seconds.
const QUICK: Sizes = Sizes {
    queries: 64,
    charts: 200,
    dims: 100,
    trials: 3,
};
/// The sizes of Netdata's benchmark: a run of about a minute on 2 cores.
const FULL: Sizes = Sizes {
    queries: 256,
    charts: 1000,
    dims: 100,
    trials: 5,
};

struct Sizes {
    queries: usize,
    charts: usize,
    dims: usize,
    trials: usize,
}

#[derive(clap::Args, Clone)]
pub struct Args {
    /// Small sizes, a run of a few seconds: 64 queries of 200 charts x 100 dimensions,
    /// 3 first-query trials (sizes given explicitly still apply)
    #[arg(long)]
    quick: bool,
    /// Queries per allocator and mode [default: 256; with --quick: 64]
    #[arg(long, value_name = "N", value_parser = positive())]
    queries: Option<usize>,
    /// Charts in the context [default: 1000; with --quick: 200]
    #[arg(long, value_name = "N", value_parser = positive())]
    charts: Option<usize>,
    /// Dimensions per chart [default: 100]
    #[arg(long, value_name = "N", value_parser = positive())]
    dims: Option<usize>,
    /// Points per dimension
    #[arg(long, value_name = "N", value_parser = positive(), default_value_t = 30)]
    points: usize,
    /// Workers of the parallel test [default: one per core]
    #[arg(long, value_name = "N", value_parser = positive())]
    threads: Option<usize>,
    /// Parallel batches per allocator; the fastest is shown
    #[arg(long, value_name = "N", value_parser = positive(), default_value_t = 2)]
    batches: usize,
    /// Trials of the first query (fresh allocator); the median is shown
    /// [default: 5; with --quick: 3]
    #[arg(long, value_name = "N", value_parser = positive())]
    trials: Option<usize>,
    /// Print Markdown instead of text
    #[arg(long)]
    markdown: bool,
    /// Also write a chart of the rates over malloc's to this SVG file
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Add the benchmark notes: onewayalloc's targets (met or missed) and its pages
    #[arg(long)]
    notes: bool,
}

/// Everything a worker may need to set itself up.
struct Setup {
    db: Database,
    /// What the linear buffer needs for one query, measured once.
    linear_capacity: usize,
}

/// One contender's allocator, owned by one worker.
trait Worker {
    fn run(&mut self, db: &Database, seed: usize) -> f64;
    fn memory(&self) -> Memory;
}

#[derive(Clone, Default)]
struct Memory {
    capacity: Option<usize>,
    peak_used: Option<usize>,
    blocks_after_first: Option<usize>,
    blocks: Option<usize>,
    block_sizes: Option<Vec<usize>>,
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
enum Kind {
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
    fn is_arena(self) -> bool {
        matches!(self, Kind::Arena | Kind::Owa)
    }
}

struct Contender {
    name: &'static str,
    kind: Kind,
    make: fn(&Setup) -> Box<dyn Worker>,
}

/// The contenders, the reference (malloc) first.
const CONTENDERS: [Contender; 7] = [
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
struct Timings {
    transactions: usize,
    /// Sequential: the sum of the query times; parallel: the batch's wall time.
    complete: Duration,
    response_sum: Duration,
    min: Option<Duration>,
    max: Duration,
}

impl Timings {
    fn add_response(&mut self, t: Duration) {
        self.transactions += 1;
        self.response_sum += t;
        self.min = Some(self.min.map_or(t, |m| m.min(t)));
        self.max = self.max.max(t);
    }

    fn rate(&self) -> f64 {
        self.transactions as f64 / self.complete.as_secs_f64()
    }
}

fn sequential(
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

fn parallel(
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
fn first_queries(setup: &Setup, trials: usize, progress: &ProgressBar) -> Vec<Duration> {
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
fn linear_capacity(db: &Database) -> usize {
    let estimate = db.dimensions() * (db.points * 8 + 512) * 2 + (4 << 20);
    let mut buffer = LinearBuffer::new(estimate);
    let (_, used) = run_query(&mut buffer, db, 0);
    used.unwrap_or(estimate).next_multiple_of(4096) + 4096
}

/// For each contender, the fastest arena other than itself (bumpalo, bump-scope or
/// onewayalloc; the linear buffer is not one) and its rate.
fn best_other_arena(all: &[Timings]) -> Vec<Option<(usize, f64)>> {
    (0..CONTENDERS.len())
        .map(|i| {
            CONTENDERS
                .iter()
                .enumerate()
                .filter(|&(j, c)| j != i && c.kind.is_arena())
                .map(|(j, _)| (j, all[j].rate()))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .collect()
}

fn timings_table(all: &[Timings]) -> Table {
    let mut table = Table::new(&[
        "allocator",
        "time to\ncomplete",
        "rate\n(per s)",
        "average\nresponse",
        "min\nresponse",
        "max\nresponse",
        "vs\nmalloc",
        "vs best\nother arena",
    ]);
    let reference = all[0].rate();
    let best = best_other_arena(all);
    for ((c, t), best) in CONTENDERS.iter().zip(all).zip(best) {
        table.row(vec![
            c.name.to_string(),
            fmt_duration(t.complete),
            format!("{:.2}", t.rate()),
            fmt_duration(t.response_sum / t.transactions.max(1) as u32),
            fmt_duration(t.min.unwrap_or_default()),
            fmt_duration(t.max),
            times(t.rate() / reference),
            best.map_or("-".into(), |(_, rate)| times(t.rate() / rate)),
        ]);
    }
    table
}

/// Where the contender of `kind` sits in [`CONTENDERS`] (the first of them).
fn position_of(kind: Kind) -> Option<usize> {
    CONTENDERS.iter().position(|c| c.kind == kind)
}

/// What "vs best other arena" compares onewayalloc with in each mode.
fn owa_peers(seq: &[Timings], par: &[Timings]) -> String {
    let Some(owa) = position_of(Kind::Owa) else {
        return String::new();
    };
    let peer =
        |all: &[Timings]| best_other_arena(all)[owa].map_or("-", |(j, _)| CONTENDERS[j].name);
    format!(
        " For onewayalloc that is {} sequentially and {} in parallel.",
        peer(seq),
        peer(par)
    )
}

/// The throughput targets of issue 4 for onewayalloc, per mode: at least 4x malloc's
/// transaction rate, within 1.1x of the linear buffer's time, and no slower than the
/// best peer arena. The linear buffer spends nothing on allocation beyond a bump, so
/// its ratio to malloc is the most that any allocator can reach on this workload.
fn throughput_targets(seq: &[Timings], par: &[Timings]) -> String {
    let (Some(owa), Some(linear)) = (position_of(Kind::Owa), position_of(Kind::Linear)) else {
        return String::new();
    };
    let mut text = String::from("Throughput targets for onewayalloc:");
    for (mode, all) in [("sequential", seq), ("parallel", par)] {
        let vs_malloc = |i: usize| all[i].rate() / all[0].rate();
        let (best, peer) = CONTENDERS
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind == Kind::Arena)
            .map(|(i, c)| (all[i].rate(), c.name))
            .fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
        let vs_linear = all[linear].rate() / all[owa].rate();
        let _ = write!(
            text,
            " {mode}: {:.2}x malloc, target >= 4x: {} (the linear buffer, the speed of light, \
             reaches {:.2}x); {vs_linear:.2}x the linear buffer's time, target <= 1.1x: {}; \
             {:.2}x the rate of the best peer ({peer}), target >= 1: {}.",
            vs_malloc(owa),
            met(vs_malloc(owa) >= 4.0),
            vs_malloc(linear),
            met(vs_linear <= 1.1),
            all[owa].rate() / best,
            met(all[owa].rate() >= best),
        );
    }
    text
}

/// The first-query and capacity targets for onewayalloc, and its pages.
fn memory_notes(out: Out, first: &[Duration], memory: &[Memory]) {
    let owa = position_of(Kind::Owa);
    let peers = CONTENDERS
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == Kind::Arena);
    let best_peer = peers.min_by_key(|&(i, _)| first[i]);
    if let (Some(o), Some((p, peer))) = (owa, best_peer) {
        let mut text = String::new();
        let _ = write!(
            text,
            "Targets for onewayalloc: first query {} vs the best peer's ({}) {}: {}. ",
            fmt_duration(first[o]),
            peer.name,
            fmt_duration(first[p]),
            met(first[o] <= first[p])
        );
        if let (Some(cap), Some(used)) = (memory[o].capacity, memory[o].peak_used) {
            let ratio = cap as f64 / used.max(1) as f64;
            let _ = write!(
                text,
                "Capacity {} <= 1.25 x peak used {} ({ratio:.2}x): {}.",
                mib(cap),
                mib(used),
                met(ratio <= 1.25)
            );
        }
        out.para(&text);
    }
    if let Some(sizes) = owa.and_then(|o| memory[o].block_sizes.as_ref()) {
        out.para(&format!(
            "onewayalloc's pages after the run, in list order (KiB): {}.",
            runs(sizes)
        ));
    }
}

fn memory_table(first: &[Duration], memory: &[Memory]) -> Table {
    let mut table = Table::new(&[
        "allocator",
        "first query\n(fresh)",
        "held after\nthe run",
        "peak used\nper query",
        "held /\npeak used",
        "blocks obtained\nafter query 1",
    ]);
    for ((c, t), m) in CONTENDERS.iter().zip(first).zip(memory) {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let ratio = m
            .capacity
            .zip(m.peak_used)
            .filter(|&(_, used)| used > 0)
            .map(|(cap, used)| format!("{:.2}", cap as f64 / used as f64));
        let after = m
            .blocks
            .zip(m.blocks_after_first)
            .map(|(all, first)| (all - first).to_string());
        table.row(vec![
            c.name.to_string(),
            fmt_duration(*t),
            opt(m.capacity.map(mib)),
            opt(m.peak_used.map(mib)),
            opt(ratio),
            opt(after),
        ]);
    }
    table
}

pub fn run(args: &Args) {
    let sizes = if args.quick { QUICK } else { FULL };
    let queries = args.queries.unwrap_or(sizes.queries);
    let charts = args.charts.unwrap_or(sizes.charts);
    let dims = args.dims.unwrap_or(sizes.dims);
    let trials = args.trials.unwrap_or(sizes.trials);
    let (points, batches) = (args.points, args.batches);
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(2, |n| n.get()));
    let out = Out {
        markdown: args.markdown,
    };

    warm_up();
    // `thread::scope` gives this thread a `Thread` handle that std keeps until exit
    // through an interior pointer only, which Valgrind (run on this command in CI)
    // reports as "possibly lost"; a handle in a static keeps it plainly reachable.
    static MAIN_THREAD: OnceLock<thread::Thread> = OnceLock::new();
    MAIN_THREAD.get_or_init(thread::current);
    let db = Database::new(charts, dims, points);
    let setup = Setup {
        linear_capacity: linear_capacity(&db),
        db,
    };
    out.para(&format!(
        "Context query: {charts} charts x {dims} dimensions = {} dimensions, {points} points \
         each; {queries} queries per allocator and mode, sequential and in parallel on \
         {threads} workers (Netdata ran 256 queries of 1000 x 100, in parallel on 24 cores).",
        setup.db.dimensions(),
    ));
    if onewayalloc::SEPARATE_BLOCKS {
        out.para(
            "Sanitizer mode (feature `separate-blocks` or ASan): every onewayalloc allocation \
             is its own block of the global allocator and `reset` frees nothing, so its \
             timings and memory say nothing here; use small sizes.",
        );
    }

    let n = CONTENDERS.len();
    let warm = threads.min(queries);
    let progress = progress::bar(n * (trials + queries + batches * queries) + warm, "queries");
    progress.set_message("first queries");
    let first = first_queries(&setup, trials, &progress);
    progress.set_message("sequential");
    let (seq, memory, expected) = sequential(&setup, queries, &progress);
    progress.set_message("parallel");
    // One query per worker first, so that the first contender does not pay alone for
    // setting up the threads' malloc arenas.
    parallel(&setup, &CONTENDERS[0], warm, threads, &expected, &progress);
    // Other processes can only slow a batch down: keep each contender's fastest.
    let mut par: Vec<Option<Timings>> = vec![None; n];
    for round in 0..batches {
        for k in 0..n {
            let i = (round + k) % n;
            let t = parallel(
                &setup,
                &CONTENDERS[i],
                queries,
                threads,
                &expected,
                &progress,
            );
            if par[i]
                .as_ref()
                .is_none_or(|best| t.complete < best.complete)
            {
                par[i] = Some(t);
            }
        }
    }
    progress.finish_and_clear();
    let par: Vec<Timings> = par.into_iter().map(Option::unwrap_or_default).collect();

    out.heading("Sequential test (one worker)");
    out.table(&timings_table(&seq));
    out.heading(&format!(
        "Parallel test ({threads} workers, fastest of {batches} batches)"
    ));
    out.table(&timings_table(&par));
    out.para(&format!(
        "Rate: queries per second. Parallel response times count from the submission of the \
         whole batch, as in Netdata's test. \"vs malloc\" is the rate over malloc's; \"vs best \
         other arena\" the rate over that of the fastest arena (bumpalo, bump-scope, \
         onewayalloc) other than the row's own.{} The linear buffer is no allocator but the \
         speed of light: a pre-faulted buffer and a bump. Checksums identical for every \
         allocator and query.",
        owa_peers(&seq, &par)
    ));
    if args.notes && !onewayalloc::SEPARATE_BLOCKS {
        out.para(&throughput_targets(&seq, &par));
    }

    out.heading("First query and memory");
    out.table(&memory_table(&first, &memory));
    out.para(&format!(
        "First query: median of {trials} trials of create + one query + reset + drop in a \
         warmed-up process (the linear buffer's includes pre-faulting its buffer). Held and \
         peak used come from the sequential run's allocator; bumpalo does not report what it \
         has used."
    ));
    if args.notes && !onewayalloc::SEPARATE_BLOCKS {
        memory_notes(out, &first, &memory);
    }

    if let Some(path) = &args.svg {
        let caption = format!(
            "{charts} charts x {dims} dims, {queries} queries, {threads} workers in parallel"
        );
        let rows: Vec<(&str, [f64; 2])> = CONTENDERS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    c.name,
                    [seq[i].rate() / seq[0].rate(), par[i].rate() / par[0].rate()],
                )
            })
            .collect();
        let title = "Context query throughput vs malloc (higher is better)";
        match chart::ratio_bars(path, title, &caption, ["sequential", "parallel"], &rows) {
            Ok(()) => out.para(&format!("Chart written to {}.", path.display())),
            Err(e) => {
                eprintln!("cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
}

/// Page sizes in KiB with runs collapsed: "64, 128, 1024 x3, 2112".
fn runs(sizes: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for kib in sizes.iter().map(|size| size / 1024) {
        match runs.last_mut() {
            Some((k, n)) if *k == kib => *n += 1,
            _ => runs.push((kib, 1)),
        }
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|&(k, n)| match n {
            1 => k.to_string(),
            _ => format!("{k} x{n}"),
        })
        .collect();
    runs.join(", ")
}
