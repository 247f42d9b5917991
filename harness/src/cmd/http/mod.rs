//! Netdata's context-query benchmark over HTTP: the same query as `context-query`,
//! answered by an HTTP/1.1 server (hyper 1 on tokio, `--threads` workers, on
//! 127.0.0.1) as a JSON body of a few kilobytes, once per per-request allocation
//! strategy (see [`strategy`]), under Netdata's two tests from a load generator in
//! this process: sequential (one client, Q queries one after another) and parallel
//! (Q clients at once, one query each).
//!
//! Each strategy's server is a child process of its own (this binary's hidden
//! `http-server` subcommand), so that its peak resident memory is its own; it is
//! warmed up with one query per worker, then the tests run, and the child reports
//! its peak resident memory during each and its pool's idle memory after them.
//! Strategies run in rounds, interleaved (the order rotates), and each test shows
//! its fastest round, since other processes can only slow a run down. Every
//! strategy must send the same JSON body, byte for byte, for every seed; the body of
//! seed 0 is also checked against the query run in this process, and parsed as JSON.

mod load;
mod report;
mod server;
mod strategy;

use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use indicatif::ProgressBar;
use onewayalloc::allocator_api2::alloc::Global;
use onewayalloc_harness::contenders::{Agreement, rotations};
use onewayalloc_harness::output::{met, times};
use onewayalloc_harness::progress;
use onewayalloc_harness::query::Database;

use super::{QuerySizes, ReportArgs, Sizes, positive, sizes_help};
use report::{Measured, memory_table, timings_table};
pub use server::{ServerArgs, serve};
use strategy::Strategy;

/// The sizes of `--quick`, a run of seconds: 64 queries of 200 charts x 100
/// dimensions.
const QUICK: Sizes = Sizes::new(64, 200, 100);
/// Netdata's sizes: 256 queries of 1000 charts x 100 dimensions.
const FULL: Sizes = Sizes::new(256, 1000, 100);

#[derive(clap::Args)]
#[command(mut_arg("notes", |a| a.help(
    "Add the benchmark notes: the pool's targets (met or missed)"
)))]
#[command(mut_args = sizes_help(
    "Small sizes, a run of seconds: 64 queries of 200 charts x 100 dimensions, one round \
     (sizes given explicitly still apply)",
    "Queries per strategy and test (Netdata's 256 callers)",
    FULL,
    QUICK,
))]
pub struct Args {
    #[command(flatten)]
    sizes: QuerySizes,
    /// The server's worker threads [default: the available parallelism]
    #[arg(long, value_name = "N", value_parser = positive())]
    threads: Option<usize>,
    /// Rounds of every strategy, interleaved; each test shows its fastest round
    /// [default: 2; with --quick: 1]
    #[arg(long, value_name = "N", value_parser = positive())]
    rounds: Option<usize>,
    /// Only these strategies, comma-separated (malloc, the reference, always runs)
    /// [default: all]
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    strategies: Vec<Strategy>,
    #[command(flatten)]
    report: ReportArgs,
}

/// How long a server may live, whatever happens.
const SERVER_MAX_SECONDS: usize = 1800;

pub fn run(args: &Args) {
    let sizes = args.sizes.resolve(FULL, QUICK);
    let queries = sizes.queries;
    let rounds = args.rounds.unwrap_or(if args.sizes.quick { 1 } else { 2 });
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(2, |n| n.get()));
    let out = args.report.out();
    let db = args.sizes.database(sizes);
    out.para(&format!(
        "Context query over HTTP: {} charts x {} dimensions = {} dimensions, {} points each, \
         answered as JSON by an HTTP/1.1 server (hyper 1, tokio, {threads} worker threads) on \
         127.0.0.1; {queries} queries per strategy and test, sequential (1 client) and parallel \
         ({queries} clients at once), {rounds} round{} (Netdata ran 256 queries of 1000 x 100 on \
         24 web threads).",
        sizes.charts,
        sizes.dims,
        db.dimensions(),
        db.points,
        if rounds == 1 { "" } else { "s" },
    ));

    let strategies: Vec<Strategy> = Strategy::ALL
        .into_iter()
        .filter(|&s| {
            s == Strategy::Malloc || args.strategies.is_empty() || args.strategies.contains(&s)
        })
        .collect();
    let n = strategies.len();
    let per_run = threads + 2 * queries;
    let progress = progress::bar(rounds * n * per_run, "requests");
    let load = Load {
        runtime: load::runtime(),
        queries,
        threads,
    };
    let mut bodies = Agreement::new(queries);
    let mut best: Vec<Option<Measured>> = vec![None; n];
    let mut parallel_rates = vec![Vec::with_capacity(rounds); n];
    for (round, i) in rotations(rounds, n) {
        let strategy = strategies[i];
        progress.set_message(format!("{} {}/{rounds}", strategy.arg(), round + 1));
        let (measured, runs) = measure(strategy, &db, &load, &progress);
        for (test, run) in ["sequential", "parallel"].into_iter().zip(runs) {
            for (seed, body) in run.into_iter().enumerate() {
                bodies.check(seed, body, || {
                    format!(
                        "{} sent another body for seed {seed} in the {test} test",
                        strategy.name()
                    )
                });
            }
        }
        parallel_rates[i].push(measured.parallel.rate());
        best[i] = Some(match best[i].take() {
            Some(b) => b.best(&measured),
            None => measured,
        });
    }
    progress.finish_and_clear();
    let best: Vec<Measured> = best.into_iter().map(Option::unwrap_or_default).collect();
    let body_bytes = check_body(&db, bodies.get(0));

    out.heading(&format!(
        "Sequential test (1 client, {queries} queries one after another)"
    ));
    let seq: Vec<_> = best.iter().map(|m| &m.sequential).collect();
    out.table(&timings_table(&strategies, &seq));
    out.heading(&format!(
        "Parallel test ({queries} clients at once, {threads} server workers)"
    ));
    let par: Vec<_> = best.iter().map(|m| &m.parallel).collect();
    out.table(&timings_table(&strategies, &par));
    out.para(&format!(
        "Rate: transactions per second; \"vs malloc\" is the rate over malloc's. Response times \
         include HTTP and the client; parallel ones count from the start of the batch, as in \
         Netdata's test. Fastest of {rounds} round{} per test, after one query per worker to \
         warm up. Every strategy sent the same JSON body, byte for byte, for every seed ({} \
         bytes for seed 0, which is also the query's answer computed in this process).",
        if rounds == 1 { "" } else { "s" },
        body_bytes,
    ));
    out.heading("Memory of the server process");
    out.table(&memory_table(&strategies, &best));
    out.para(
        "Resident memory (VmRSS) of each strategy's server once its database is built, and its \
         peak (VmHWM, reset between the tests) during the warm-up and the sequential test and \
         during the parallel test; the largest of the rounds.",
    );
    if rounds > 1 {
        out.para(&round_ratios(&strategies, &parallel_rates));
    }
    if args.report.notes {
        out.para(&targets(&strategies, &best, &parallel_rates));
        out.para(&await_targets(&strategies, &best, &parallel_rates));
    }
}

/// One strategy's round: a server of its own, the warm-up (one query per worker) and
/// the two tests. Returns the figures and each test's bodies by seed.
fn measure(
    strategy: Strategy,
    db: &Database,
    load: &Load,
    progress: &ProgressBar,
) -> (Measured, [Vec<Bytes>; 2]) {
    let mut server = Server::start(strategy, db, load.threads);
    let port = server.port;
    let start = server.memory();
    load::parallel(&load.runtime, port, load.threads, progress);
    let sequential = load::sequential(&load.runtime, port, load.queries, progress);
    let after_sequential = server.memory();
    let parallel = load::parallel(&load.runtime, port, load.queries, progress);
    let after_parallel = server.memory();
    server.stop();
    let measured = Measured {
        sequential: sequential.timings,
        parallel: parallel.timings,
        rss_start: start.rss,
        peak_sequential: after_sequential.peak,
        peak_parallel: after_parallel.peak,
        idle_arenas: after_parallel.idle_arenas,
        idle_bytes: after_parallel.idle_bytes,
    };
    (measured, [sequential.bodies, parallel.bodies])
}

/// What the load generator needs.
struct Load {
    runtime: tokio::runtime::Runtime,
    queries: usize,
    threads: usize,
}

/// A server's answer to `memory`.
struct Memory {
    /// Peak resident KiB since the previous answer.
    peak: u64,
    /// Resident KiB now.
    rss: u64,
    idle_arenas: usize,
    idle_bytes: usize,
}

/// A running server: a child process of this binary.
struct Server {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    port: u16,
    strategy: Strategy,
}

impl Server {
    fn start(strategy: Strategy, db: &Database, threads: usize) -> Server {
        let exe = std::env::current_exe().expect("the path of this binary");
        let mut child = Command::new(exe)
            .args(server::command_line(
                strategy,
                db,
                threads,
                SERVER_MAX_SECONDS,
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start the server process");
        let stdout = child.stdout.take().expect("the server's stdout");
        let mut server = Server {
            child,
            lines: BufReader::new(stdout).lines(),
            port: 0,
            strategy,
        };
        let line = server.line();
        server.port = line
            .strip_prefix("port ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the server said {line:?} instead of its port"));
        server
    }

    /// The server's next line.
    fn line(&mut self) -> String {
        match self.lines.next() {
            Some(Ok(line)) => line,
            _ => panic!("the {} server stopped", self.strategy.name()),
        }
    }

    fn memory(&mut self) -> Memory {
        let stdin = self.child.stdin.as_mut().expect("the server's stdin");
        writeln!(stdin, "memory")
            .and_then(|()| stdin.flush())
            .expect("the server is gone");
        let line = self.line();
        let numbers: Vec<u64> = line
            .strip_prefix("memory ")
            .map(|rest| rest.split(' ').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default();
        let [peak, rss, idle_arenas, idle_bytes] = numbers[..] else {
            panic!("the server said {line:?} instead of its memory");
        };
        Memory {
            peak,
            rss,
            idle_arenas: idle_arenas as usize,
            idle_bytes: idle_bytes as usize,
        }
    }

    /// Closes its stdin, which stops it, and waits for it (at most 30 s, then kills
    /// it).
    fn stop(mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    assert!(status.success(), "the server exited with {status}");
                    return;
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("the {} server did not stop", self.strategy.name());
                }
            }
        }
    }
}

/// Checks the agreed body of seed 0 against the query run here, and that it is JSON
/// with one group per dimension name, in name order. Returns its length.
fn check_body(db: &Database, body: Option<&Bytes>) -> usize {
    let body = body.expect("no body was received");
    let here = strategy::body_in(Global, db, 0);
    assert!(
        *body == here,
        "the servers' body for seed 0 is not the query's answer computed here"
    );
    let value: serde_json::Value = serde_json::from_slice(body).expect("the body is JSON");
    let names: Vec<&str> = value["groups"]
        .as_array()
        .expect("the body has groups")
        .iter()
        .filter_map(|group| group["name"].as_str())
        .collect();
    assert_eq!(names.len(), db.dims, "one group per dimension name");
    assert!(names.is_sorted(), "groups in name order");
    body.len()
}

/// The parallel rate of each round over malloc's in the same round.
fn round_ratios(strategies: &[Strategy], rates: &[Vec<f64>]) -> String {
    let per_round: Vec<String> = strategies
        .iter()
        .zip(rates)
        .skip(1)
        .map(|(s, r)| {
            let ratios: Vec<String> = r.iter().zip(&rates[0]).map(|(r, m)| times(r / m)).collect();
            format!("{} {}", s.name(), ratios.join(", "))
        })
        .collect();
    format!(
        "Parallel rate over malloc's in each round (rounds interleaved): {}.",
        per_round.join("; ")
    )
}

/// The pool's targets: at least 1.5x malloc's transaction rate in the parallel test,
/// and within 5% of `with_scratch`'s; and `Pool::new()` (issue 22) at least 0.90x
/// of the tuned pool's and of `with_scratch`'s parallel rate, with a peak resident
/// memory in the parallel test no higher than the tuned pool's. The ratios of
/// `Pool::new()` are the medians of the ratios within each round (both servers ran
/// in the same round, so a slow moment of the machine weighs on both less than on
/// the fastest rounds of each), the fastest rounds' ratio beside them.
fn targets(strategies: &[Strategy], best: &[Measured], rates: &[Vec<f64>]) -> String {
    let index = |s: Strategy| strategies.iter().position(|&x| x == s);
    let rate = |s: Strategy| index(s).map(|i| best[i].parallel.rate());
    let (Some(malloc), Some(scratch)) = (rate(Strategy::Malloc), rate(Strategy::Scratch)) else {
        return String::new();
    };
    let mut notes: Vec<String> = strategies
        .iter()
        .filter(|s| s.uses_pool())
        .filter_map(|&s| rate(s).map(|r| (s, r)))
        .map(|(s, r)| {
            format!(
                "{}: {:.2}x malloc's rate in the parallel test, target >= 1.5x: {}; {:.2}x \
                 with_scratch's, target >= 0.95x: {}.",
                s.name(),
                r / malloc,
                met(r / malloc >= 1.5),
                r / scratch,
                met(r / scratch >= 0.95),
            )
        })
        .collect();
    let (Some(defaults), Some(tuned), Some(scratch)) = (
        index(Strategy::PoolDefaults),
        index(Strategy::Pool),
        index(Strategy::Scratch),
    ) else {
        return format!("Targets: {}", notes.join(" "));
    };
    let median_ratio = |of: usize, to: usize| median_ratio(&rates[of], &rates[to]);
    let (over_tuned, over_scratch) = (
        median_ratio(defaults, tuned),
        median_ratio(defaults, scratch),
    );
    let fastest = |of: usize, to: usize| best[of].parallel.rate() / best[to].parallel.rate();
    let (d, t) = (&best[defaults], &best[tuned]);
    notes.push(format!(
        "{}: {over_tuned:.2}x the parallel rate of {} and {over_scratch:.2}x with_scratch's \
         (medians of the {} rounds' ratios; fastest rounds: {:.2}x and {:.2}x), target >= \
         0.90x of each: {}; peak resident in the parallel test {} KiB against {} KiB, target \
         no higher (within 1%, the variation of the same server's peak between runs): {}.",
        Strategy::PoolDefaults.name(),
        Strategy::Pool.name(),
        rates[defaults].len(),
        fastest(defaults, tuned),
        fastest(defaults, scratch),
        met(over_tuned >= 0.90 && over_scratch >= 0.90),
        d.peak_parallel,
        t.peak_parallel,
        met(d.peak_parallel <= t.peak_parallel + t.peak_parallel / 100),
    ));
    format!("Targets: {}", notes.join(" "))
}

/// The median over the rounds of the ratio of `of`'s rate to `to`'s within each
/// round.
fn median_ratio(of: &[f64], to: &[f64]) -> f64 {
    let mut ratios: Vec<f64> = of.iter().zip(to).map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    match ratios.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => ratios[n / 2],
        n => (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0,
    }
}

/// The sync pool's targets (issue 31): the awaiting handler on a `SyncPool` (the
/// request parsed into the arena and held across the await) at least 0.90x the
/// parallel rate of `Pool::new()` with the work split around the await, with a
/// peak resident memory in the parallel test at most 1.10x its; beside them its
/// rate over the awaiting handler on malloc and mimalloc and over `Pool::new()`
/// without an await, and the handlers that hold the whole query across the await
/// (rate and peak over the split one). Rate ratios are the medians of the rounds'
/// ratios, the fastest rounds' ratio beside them.
fn await_targets(strategies: &[Strategy], best: &[Measured], rates: &[Vec<f64>]) -> String {
    let index = |s: Strategy| strategies.iter().position(|&x| x == s);
    let ratio = |of: usize, to: usize| {
        format!(
            "{:.2}x (fastest rounds {:.2}x)",
            median_ratio(&rates[of], &rates[to]),
            best[of].parallel.rate() / best[to].parallel.rate()
        )
    };
    let peak = |of: usize, to: usize| best[of].peak_parallel as f64 / best[to].peak_parallel as f64;
    let mut notes = Vec::new();
    if let (Some(sync), Some(split)) = (index(Strategy::SyncPoolAwait), index(Strategy::PoolSplit))
    {
        let others: Vec<String> = [
            Strategy::MallocAwait,
            Strategy::MimallocAwait,
            Strategy::PoolDefaults,
        ]
        .into_iter()
        .filter_map(|other| index(other).map(|i| format!("{} {}", other.name(), ratio(sync, i))))
        .collect();
        notes.push(format!(
            "Awaiting handlers: {} is {} the parallel rate of {}, target >= 0.90x: {}; peak \
             resident in the parallel test {} KiB against {} KiB ({:.2}x), target <= 1.10x: {}. \
             Its parallel rate over {}.",
            Strategy::SyncPoolAwait.name(),
            ratio(sync, split),
            Strategy::PoolSplit.name(),
            met(median_ratio(&rates[sync], &rates[split]) >= 0.90),
            best[sync].peak_parallel,
            best[split].peak_parallel,
            peak(sync, split),
            met(peak(sync, split) <= 1.10),
            match others.is_empty() {
                true => "no other".to_string(),
                false => others.join("; "),
            },
        ));
        if let Some(then) = index(Strategy::SyncPoolThenPool) {
            notes.push(format!(
                "{}: {} the parallel rate of {}, peak resident {:.2}x.",
                Strategy::SyncPoolThenPool.name(),
                ratio(then, split),
                Strategy::PoolSplit.name(),
                peak(then, split),
            ));
        }
    }
    if let Some(split) = index(Strategy::PoolSplitQuery) {
        for holder in [Strategy::SyncPoolHoldsQuery, Strategy::MallocHoldsQuery] {
            if let Some(i) = index(holder) {
                notes.push(format!(
                    "{}: {} the parallel rate of {}, peak resident {:.2}x.",
                    holder.name(),
                    ratio(i, split),
                    Strategy::PoolSplitQuery.name(),
                    peak(i, split),
                ));
            }
        }
    }
    notes.join(" ")
}
