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

mod measure;
mod report;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::thread;

use onewayalloc_harness::contenders::{rotations, warm_up};
use onewayalloc_harness::{chart, progress};

use super::{QuerySizes, ReportArgs, Sizes, positive, sizes_help};
use measure::{CONTENDERS, Setup, Timings, first_queries, linear_capacity, parallel, sequential};
use report::{
    memory_notes, memory_table, owa_peers, sync_target, throughput_targets, timings_table,
};

/// The sizes of `--quick`, a run of a few seconds: 64 queries of 200 charts x 100
/// dimensions.
const QUICK: Sizes = Sizes::new(64, 200, 100);
/// The sizes of Netdata's benchmark, a run of about a minute on 2 cores: 256 queries
/// of 1000 charts x 100 dimensions.
const FULL: Sizes = Sizes::new(256, 1000, 100);

#[derive(clap::Args, Clone)]
#[command(mut_arg("notes", |a| a.help(
    "Add the benchmark notes: onewayalloc's targets (met or missed) and its pages"
)))]
#[command(mut_args = sizes_help(
    "Small sizes, a run of a few seconds: 64 queries of 200 charts x 100 dimensions, 3 \
     first-query trials (sizes given explicitly still apply)",
    "Queries per allocator and mode",
    FULL,
    QUICK,
))]
pub struct Args {
    #[command(flatten)]
    sizes: QuerySizes,
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
    /// Also write a chart of the rates over malloc's to this SVG file
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: &Args) {
    let sizes = args.sizes.resolve(FULL, QUICK);
    let (queries, charts, dims) = (sizes.queries, sizes.charts, sizes.dims);
    let trials = args.trials.unwrap_or(if args.sizes.quick { 3 } else { 5 });
    let (points, batches) = (args.sizes.points, args.batches);
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(2, |n| n.get()));
    let out = args.report.out();

    warm_up();
    // `thread::scope` gives this thread a `Thread` handle that std keeps until exit
    // through an interior pointer only, which Valgrind (run on this command in CI)
    // reports as "possibly lost"; a handle in a static keeps it plainly reachable.
    static MAIN_THREAD: OnceLock<thread::Thread> = OnceLock::new();
    MAIN_THREAD.get_or_init(thread::current);
    let db = args.sizes.database(sizes);
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
    parallel(&setup, CONTENDERS[0], warm, threads, &expected, &progress);
    // Other processes can only slow a batch down: keep each contender's fastest.
    let mut par: Vec<Option<Timings>> = vec![None; n];
    for (_, i) in rotations(batches, n) {
        let t = parallel(
            &setup,
            CONTENDERS[i],
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
         onewayalloc) other than the row's own, for the arenas' rows only.{} onewayalloc's \
         rows are marked *: `OneWayAlloc`, and `SyncOneWayAlloc` (its thread-safe arena, \
         one per worker here, compared with `OneWayAlloc` only). The linear buffer is no allocator but the \
         speed of light: a pre-faulted buffer and a bump. Checksums identical for every \
         allocator and query.",
        owa_peers(&seq, &par)
    ));
    if args.report.notes && !onewayalloc::SEPARATE_BLOCKS {
        out.para(&throughput_targets(&seq, &par));
        out.para(&sync_target(&seq, &par));
    }

    out.heading("First query and memory");
    out.table(&memory_table(&first, &memory));
    out.para(&format!(
        "First query: median of {trials} trials of create + one query + reset + drop in a \
         warmed-up process (the linear buffer's includes pre-faulting its buffer). Held and \
         peak used come from the sequential run's allocator; bumpalo does not report what it \
         has used."
    ));
    if args.report.notes && !onewayalloc::SEPARATE_BLOCKS {
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
                    c.name(),
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
