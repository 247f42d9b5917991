//! The HTTP experiment's tables and notes.

use onewayalloc_harness::output::{Table, mib, times};
use onewayalloc_harness::timings::Timings;

use super::strategy::Strategy;

/// What one strategy's server did and held in one round.
#[derive(Clone, Default)]
pub struct Measured {
    pub sequential: Timings,
    pub parallel: Timings,
    /// Resident KiB once the database is built, before any request.
    pub rss_start: u64,
    /// Peak resident KiB during the warm-up and the sequential test.
    pub peak_sequential: u64,
    /// Peak resident KiB during the parallel test.
    pub peak_parallel: u64,
    /// The pool's idle arenas and bytes after the parallel test.
    pub idle_arenas: usize,
    pub idle_bytes: usize,
}

impl Measured {
    /// The best of two rounds: each test's fastest, each memory figure's largest.
    pub fn best(self, other: &Measured) -> Measured {
        let faster = |a: Timings, b: &Timings| {
            if b.complete < a.complete {
                b.clone()
            } else {
                a
            }
        };
        Measured {
            sequential: faster(self.sequential, &other.sequential),
            parallel: faster(self.parallel, &other.parallel),
            rss_start: self.rss_start.max(other.rss_start),
            peak_sequential: self.peak_sequential.max(other.peak_sequential),
            peak_parallel: self.peak_parallel.max(other.peak_parallel),
            idle_arenas: self.idle_arenas.max(other.idle_arenas),
            idle_bytes: self.idle_bytes.max(other.idle_bytes),
        }
    }
}

/// Netdata's table for one test, with the rate over malloc's (the first row).
pub fn timings_table(strategies: &[Strategy], all: &[&Timings]) -> Table {
    let mut header = vec!["strategy", "trans-\nactions"];
    header.extend(Timings::HEADER);
    header.push("vs\nmalloc");
    let mut table = Table::new(&header);
    let reference = all[0].rate();
    for (s, t) in strategies.iter().zip(all) {
        let mut row = vec![s.name().to_string(), t.transactions.to_string()];
        row.extend(t.cells());
        row.push(times(t.rate() / reference));
        table.row(row);
    }
    table
}

fn kib(kib: u64) -> String {
    mib(kib as usize * 1024)
}

pub fn memory_table(strategies: &[Strategy], all: &[Measured]) -> Table {
    let mut table = Table::new(&[
        "strategy",
        "resident\nat start",
        "peak resident\nsequential",
        "peak resident\nparallel",
        "pool idle after\n(arenas, bytes)",
    ]);
    for (s, m) in strategies.iter().zip(all) {
        table.row(vec![
            s.name().to_string(),
            kib(m.rss_start),
            kib(m.peak_sequential),
            kib(m.peak_parallel),
            match s.uses_pool() {
                true => format!("{}, {}", m.idle_arenas, mib(m.idle_bytes)),
                false => "-".to_string(),
            },
        ]);
    }
    table
}
