//! A Netdata context query, built once with the global allocator and once in a
//! `OneWayAlloc` arena, with its timings.
//!
//! To answer a context query, Netdata builds a *virtual chart* holding every dimension
//! of every chart of that context, queries it, and throws it all away. This example
//! does the same for 1000 charts x 100 dimensions (100 000 dimensions): per dimension
//! it allocates the dimension itself, its id and name strings, a 30-point buffer, its
//! slot in its chart and in the virtual chart, and its entry in an id -> index map;
//! then it aggregates (an average per dimension name, 1000 lookups by id) into a
//! checksum, and drops everything.
//!
//! The same generic code runs with the global allocator (`Box<str>` strings,
//! `allocator_api2` `Vec` and `Box` and `hashbrown::HashMap` on `Global`) and with
//! `&OneWayAlloc` (arena strings, the same collections in the arena, and one
//! `reset` after each query). Both must compute the same checksum. Queries alternate
//! between the two, so a noisy machine slows both alike; times include dropping the
//! query and, for the arena, its `reset`.
//!
//! ```text
//! cargo run --release --example context_query
//! cargo run --release --example context_query -- --queries 4 --charts 50 --dims 20
//! ```
//!
//! Options: `--queries N` (default 256), `--charts N` (1000), `--dims N` (100),
//! `--points N` (30).
//!
//! In the sanitizer mode (feature `separate-blocks`, or under AddressSanitizer) every
//! arena allocation is its own block and `reset` frees nothing, so this example then
//! only checks correctness, and leaks its arena strings by design: use small sizes.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::fmt::{self, Write as _};
use std::time::{Duration, Instant};

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::{boxed::Box, vec::Vec};
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};

/// What a query needs from an allocator besides `Allocator`: a way to keep a string.
trait QueryAlloc: Allocator + Copy {
    type Str: AsRef<str>;
    fn keep_str(self, s: &str) -> Self::Str;
}

impl QueryAlloc for Global {
    type Str = std::boxed::Box<str>;
    fn keep_str(self, s: &str) -> Self::Str {
        s.into()
    }
}

impl<'a> QueryAlloc for &'a OneWayAlloc {
    type Str = &'a str;
    fn keep_str(self, s: &str) -> &'a str {
        self.alloc_str(s)
    }
}

struct Dimension<A: QueryAlloc> {
    /// Unique in the context: "app7.cpu.dim3".
    id: A::Str,
    /// Shared by the same dimension of every chart: "dim3".
    name: A::Str,
    points: Vec<f64, A>,
}

struct Chart<A: QueryAlloc> {
    id: A::Str,
    dimensions: Vec<Box<Dimension<A>, A>, A>,
}

/// Every dimension of the context, indexed by id and grouped by name.
struct VirtualChart<'q, A: QueryAlloc> {
    dimensions: Vec<&'q Dimension<A>, A>,
    by_id: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    by_name: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    /// Per name: the sum of all its points and how many there are.
    groups: Vec<(f64, usize), A>,
}

#[derive(Clone, Copy)]
struct Size {
    queries: usize,
    charts: usize,
    dims: usize,
    points: usize,
}

const LOOKUPS: usize = 1000;

/// A cheap deterministic sample, an integer so that sums are exact.
fn sample(query: usize, chart: usize, dim: usize, t: usize) -> f64 {
    ((query * 131 + chart * 31 + dim * 17 + t * 7) & 1023) as f64
}

/// Formats into the reusable `buf` and returns the text.
fn fmt_in<'b>(buf: &'b mut String, args: fmt::Arguments<'_>) -> &'b str {
    buf.clear();
    buf.write_fmt(args)
        .expect("formatting into a String cannot fail");
    buf
}

/// One context query: build, aggregate, drop. Returns the checksum.
fn query<A: QueryAlloc>(alloc: A, size: Size, seed: usize) -> f64 {
    let mut buf = String::with_capacity(64);
    let mut charts = Vec::new_in(alloc);
    for c in 0..size.charts {
        let chart_id = alloc.keep_str(fmt_in(&mut buf, format_args!("app{c}.cpu")));
        let mut dimensions = Vec::new_in(alloc);
        for d in 0..size.dims {
            let name = alloc.keep_str(fmt_in(&mut buf, format_args!("dim{d}")));
            let id = fmt_in(&mut buf, format_args!("{}.dim{d}", chart_id.as_ref()));
            let id = alloc.keep_str(id);
            let mut points = Vec::with_capacity_in(size.points, alloc);
            points.extend((0..size.points).map(|t| sample(seed, c, d, t)));
            dimensions.push(Box::new_in(Dimension { id, name, points }, alloc));
        }
        charts.push(Chart {
            id: chart_id,
            dimensions,
        });
    }

    let total = size.charts * size.dims; // known up front, as in Netdata
    let mut vc = VirtualChart {
        dimensions: Vec::with_capacity_in(total, alloc),
        by_id: HashMap::with_capacity_in(total, alloc),
        by_name: HashMap::new_in(alloc),
        groups: Vec::new_in(alloc),
    };
    for chart in &charts {
        for dim in &chart.dimensions {
            vc.by_id.insert(dim.id.as_ref(), vc.dimensions.len());
            vc.dimensions.push(&**dim);
            let groups = &mut vc.groups;
            let g = *vc.by_name.entry(dim.name.as_ref()).or_insert_with(|| {
                groups.push((0.0, 0));
                groups.len() - 1
            });
            groups[g].0 += dim.points.iter().sum::<f64>();
            groups[g].1 += dim.points.len();
        }
    }

    let mut checksum: f64 = vc.groups.iter().map(|&(sum, n)| sum / n as f64).sum();
    for k in 0..LOOKUPS {
        let (c, d) = (k * 7919 % size.charts, k * 104_729 % size.dims);
        let id = fmt_in(&mut buf, format_args!("{}.dim{d}", charts[c].id.as_ref()));
        let dim = vc.dimensions[vc.by_id[id]];
        debug_assert_eq!(dim.name.as_ref(), format!("dim{d}"));
        checksum += dim.points.last().copied().unwrap_or(0.0);
    }
    checksum
}

#[derive(Default)]
struct Timings {
    total: Duration,
    min: Option<Duration>,
    max: Duration,
}

impl Timings {
    fn add(&mut self, t: Duration) {
        self.total += t;
        self.min = Some(self.min.map_or(t, |m| m.min(t)));
        self.max = self.max.max(t);
    }

    fn row(&self, label: &str, queries: usize) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{label:<18} {:>9.3} s {:>11.2} {:>9.2} ms {:>9.2} ms {:>9.2} ms",
            self.total.as_secs_f64(),
            queries as f64 / self.total.as_secs_f64(),
            ms(self.total) / queries as f64,
            ms(self.min.unwrap_or_default()),
            ms(self.max),
        );
    }
}

fn parse_args() -> Size {
    let mut size = Size {
        queries: 256,
        charts: 1000,
        dims: 100,
        points: 30,
    };
    let usage = "usage: context_query [--queries N] [--charts N] [--dims N] [--points N]";
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let field = match flag.as_str() {
            "--queries" => &mut size.queries,
            "--charts" => &mut size.charts,
            "--dims" => &mut size.dims,
            "--points" => &mut size.points,
            "--help" | "-h" => {
                println!("{usage}");
                std::process::exit(0);
            }
            _ => {
                eprintln!("unknown option {flag}\n{usage}");
                std::process::exit(2);
            }
        };
        match args.next().and_then(|v| v.parse().ok()) {
            Some(n) if n > 0 => *field = n,
            _ => {
                eprintln!("{flag} needs a positive number\n{usage}");
                std::process::exit(2);
            }
        }
    }
    size
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let size = parse_args();
    println!(
        "context query: {} charts x {} dimensions = {} dimensions, {} points each; \
         {} queries per allocator, alternating\n",
        size.charts,
        size.dims,
        size.charts * size.dims,
        size.points,
        size.queries
    );
    if onewayalloc::SEPARATE_BLOCKS {
        println!(
            "sanitizer mode (feature `separate-blocks` or ASan): every allocation is its own \
             block of the global allocator and `reset` frees nothing, so the arena's strings \
             are never freed and the timings say nothing about the arena; use small sizes\n"
        );
    }

    let mut arena = OneWayAlloc::new();
    let (mut global, mut owa) = (Timings::default(), Timings::default());
    let (mut pages_after_first, mut peak_used, mut peak_requested) = (0, 0, 0);
    for q in 0..size.queries {
        let start = Instant::now();
        let expected = query(Global, size, q);
        global.add(start.elapsed());

        let start = Instant::now();
        let checksum = query(&arena, size, q);
        let stats = arena.stats();
        arena.reset();
        owa.add(start.elapsed());

        assert_eq!(
            checksum.to_bits(),
            expected.to_bits(),
            "query {q}: checksums differ"
        );
        peak_used = peak_used.max(stats.used);
        peak_requested = peak_requested.max(stats.requested);
        if q == 0 {
            pages_after_first = stats.page_allocations;
        }
    }

    println!(
        "{:<18} {:>11} {:>11} {:>12} {:>12} {:>12}",
        "allocator", "total", "queries/s", "avg/query", "min/query", "max/query"
    );
    global.row("global allocator", size.queries);
    owa.row("OneWayAlloc", size.queries);
    let ratio = global.total.as_secs_f64() / owa.total.as_secs_f64();
    println!("\nOneWayAlloc / global allocator throughput: {ratio:.2}x (checksums identical)");

    if onewayalloc::SEPARATE_BLOCKS {
        return; // no pages to show
    }
    let stats = arena.stats();
    let mut runs = std::vec::Vec::<(usize, usize)>::new(); // (KiB, how many in a row)
    for kib in arena.pages().map(|page| page.size / 1024) {
        match runs.last_mut() {
            Some((k, n)) if *k == kib => *n += 1,
            _ => runs.push((kib, 1)),
        }
    }
    let runs = runs.iter().map(|&(k, n)| match n {
        1 => k.to_string(),
        _ => format!("{k} x{n}"),
    });
    println!(
        "\narena after the run: pages {}, capacity {:.1} MiB, page_allocations {} \
         ({} in the first query, {} in the {} after it)",
        stats.pages,
        mib(stats.capacity),
        stats.page_allocations,
        pages_after_first,
        stats.page_allocations - pages_after_first,
        size.queries - 1
    );
    println!(
        "peak per query: used {:.1} MiB, requested {:.1} MiB",
        mib(peak_used),
        mib(peak_requested)
    );
    println!(
        "page sizes in KiB, list order: {}",
        runs.collect::<std::vec::Vec<_>>().join(", ")
    );
}
