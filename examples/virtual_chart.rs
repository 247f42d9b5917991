//! The virtual chart of a Netdata context query, told in types: the crate's main use.
//!
//! A *context* (here `cpu.cpu`) is every chart of one kind (`cpu.cpu0`, `cpu.cpu1`,
//! ...), each with the same dimensions (`user`, `system`, ...). To answer a query on
//! it, Netdata builds a *virtual chart* holding every dimension of every chart,
//! groups the dimensions by name, answers, and throws it all away. Here the virtual
//! chart is made of `Chart<'a>` and `Dimension<'a>` in a `OneWayAlloc`: ids and names
//! are `&'a str` copied into the arena, points are arena `Vec`s, the id index is an
//! arena `HashMap`. After each query one `reset` frees it all in constant time and
//! keeps the pages, so the later queries obtain no new page.
//!
//! Run it with `cargo run --example virtual_chart`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{OneWayAlloc, SEPARATE_BLOCKS, Stats, format_in};

const CONTEXT: &str = "cpu.cpu";
const CHARTS: usize = 64;
const NAMES: [&str; 8] = [
    "user", "system", "nice", "iowait", "irq", "softirq", "steal", "idle",
];
const POINTS: usize = 120;

/// The stored value of dimension `d` of chart `c` at time `t`: the "database".
fn value(c: usize, d: usize, t: usize) -> f64 {
    (d * 10 + (c * 3 + t) % 7 + t / 100) as f64
}

/// One dimension of the virtual chart. Everything it refers to is in the arena.
struct Dimension<'a> {
    id: &'a str,          // unique: "cpu.cpu7.iowait"
    name: &'a str,        // shared by every chart: "iowait"
    points: Vec<'a, f64>, // the query's time window
}

/// One chart of the context.
struct Chart<'a> {
    id: &'a str,
    dimensions: Vec<'a, &'a Dimension<'a>>,
}

/// Every dimension of every chart of the context, and an index by id.
struct VirtualChart<'a> {
    charts: Vec<'a, Chart<'a>>,
    by_id: HashMap<'a, &'a str, &'a Dimension<'a>>,
}

/// Builds the virtual chart for the window `after..after + POINTS`.
fn build(arena: &OneWayAlloc, after: usize) -> VirtualChart<'_> {
    let mut charts = Vec::with_capacity_in(CHARTS, arena);
    let mut by_id = HashMap::with_capacity_in(CHARTS * NAMES.len(), arena);
    for c in 0..CHARTS {
        let id: &str = format_in!(arena, "{CONTEXT}{c}").into_str();
        let mut dimensions = Vec::with_capacity_in(NAMES.len(), arena);
        for (d, name) in NAMES.iter().enumerate() {
            let mut points = Vec::with_capacity_in(POINTS, arena);
            points.extend((after..after + POINTS).map(|t| value(c, d, t)));
            let dim: &Dimension = arena.alloc(Dimension {
                id: format_in!(arena, "{id}.{name}").into_str(),
                name: arena.alloc_str(name), // a copy, as Netdata's strdupz
                points,
            });
            by_id.insert(dim.id, dim);
            dimensions.push(dim);
        }
        charts.push(Chart { id, dimensions });
    }
    VirtualChart { charts, by_id }
}

/// One query: build, group by dimension name, answer. The answer leaves the arena
/// as plain values, (name, average) per name, highest first.
fn query(arena: &OneWayAlloc, after: usize) -> (std::vec::Vec<(String, f64)>, Stats) {
    let chart = build(arena, after);
    assert_eq!(chart.by_id.len(), CHARTS * NAMES.len());
    assert_eq!(chart.charts[7].id, "cpu.cpu7");
    assert_eq!(chart.by_id["cpu.cpu7.iowait"].points[0], value(7, 3, after));

    // name -> (dimensions, the sum of their points at each time)
    let mut groups = HashMap::new_in(arena);
    for dim in chart.charts.iter().flat_map(|c| &c.dimensions) {
        let (count, sums) = groups.entry(dim.name).or_insert_with(|| {
            let mut sums = Vec::with_capacity_in(POINTS, arena);
            sums.resize(POINTS, 0.0);
            (0, sums)
        });
        *count += 1;
        for (sum, point) in sums.iter_mut().zip(&dim.points) {
            *sum += point;
        }
    }
    let mut answer: std::vec::Vec<(String, f64)> = groups
        .iter()
        .map(|(name, (count, sums))| {
            let total: f64 = sums.iter().sum();
            (name.to_string(), total / (count * POINTS) as f64)
        })
        .collect();
    answer.sort_by(|a, b| b.1.total_cmp(&a.1));
    (answer, arena.stats()) // the arena at its fullest
}

/// What the query must answer for name `d`: the average of its values in the window.
fn expected(d: usize, after: usize) -> f64 {
    let values = (0..CHARTS).flat_map(|c| (after..after + POINTS).map(move |t| value(c, d, t)));
    values.sum::<f64>() / (CHARTS * POINTS) as f64
}

fn main() {
    let mut arena = OneWayAlloc::new();
    if SEPARATE_BLOCKS {
        println!("(sanitizer mode: every allocation is a block of its own; no pages)");
    }
    let (names, dims) = (NAMES.len(), CHARTS * NAMES.len());
    println!("context {CONTEXT}: {CHARTS} charts x {names} = {dims} dimensions");
    let mut first_query = None;
    for q in 0..4 {
        let after = q * POINTS;
        let (answer, full) = query(&arena, after);
        // Every arena value of the query is gone, so this compiles. With `chart` or
        // `groups` still alive it would not: `reset` needs `&mut arena`.
        arena.reset();
        let kept = arena.stats();

        assert_eq!(answer.len(), NAMES.len());
        for (name, average) in &answer {
            let d = NAMES.iter().position(|n| n == name).unwrap();
            assert!((average - expected(d, after)).abs() < 1e-9);
        }
        assert_eq!(kept.used, 0);
        if !SEPARATE_BLOCKS {
            assert_eq!((kept.pages, kept.capacity), (full.pages, full.capacity));
            let first = *first_query.get_or_insert(full.page_allocations);
            assert_eq!(full.page_allocations, first); // later queries reuse the pages
        }

        let top: std::vec::Vec<_> = answer.iter().map(|(n, v)| format!("{n} {v:.2}")).collect();
        let (n, end, top) = (q + 1, after + POINTS, top[..2].join(", "));
        println!("query {n} (t = {after}..{end}): grouped by name, top: {top}");
        let (used, pages, obtained) = (full.used / 1024, full.pages, full.page_allocations);
        println!("  used {used} KiB in {pages} pages ({obtained} obtained so far)");
        let (used, held) = (kept.used, kept.capacity / 1024);
        println!("  reset: used {used} B, {held} KiB kept");
    }
}
