//! Nested scopes: a request scope holds the request's own data, and each step of the
//! work runs in a scratch scope inside it.
//!
//! `arena.scope(|request| ...)` opens a scope: what `request.alloc_str`,
//! `request.alloc_slice_fill_with`, ... return lives until the closure returns, and
//! then the arena rolls back in constant time, keeping its pages.
//! `request.scope(|step| ...)` nests, and a step nests once more for a sorted copy
//! of its points. What a step builds (a `HashMap` and a `Vec` through `s.arena()`)
//! is gone when it ends, `stats().used` is back where it was, and the request's
//! data is still there.
//!
//! The borrow checker enforces it: nothing made in a scope can leave it, and a
//! collection built through `s.arena()` must be dropped before `s` opens an inner
//! scope, so data that must outlive inner scopes is made with the scope's own calls
//! (`s.alloc_str`, `s.alloc_slice_fill_with`, ...).
//!
//! Run it with `cargo run --example scopes`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{OneWayAlloc, SEPARATE_BLOCKS};

const REQUEST: &str = "system.cpu:60 disk.io:600 net.eth0:20000 mem.ram:60";
const NAMES: [&str; 3] = ["user", "system", "iowait"];

/// The stored value of chart `c` at time `t`.
fn value(c: usize, t: usize) -> f64 {
    ((c * 13 + t * 7) % 50 + (c + t) % 3 * 10) as f64
}

/// Serves one request: per chart, the median of its points and the dimension with
/// the largest total. The results leave the scope as plain values.
fn serve(arena: &mut OneWayAlloc, raw: &str) -> std::vec::Vec<(f64, &'static str)> {
    arena.scope(|request| {
        // The request's own data: lives for the whole request, across every step.
        let text: &str = request.alloc_str(raw);
        let mut words = text.split(' ');
        let charts = request.alloc_slice_fill_with(text.split(' ').count(), |_| {
            let (id, points) = words.next().unwrap().split_once(':').unwrap();
            (id, points.parse::<usize>().unwrap())
        });
        let results = request.alloc_slice_fill_with(charts.len(), |_| (0.0, ""));
        let base = request.stats().used;
        println!("request {text:?}: {base} B of request data");

        for (c, &(id, n)) in charts.iter().enumerate() {
            let peak = request.scope(|step| {
                // Made with the step's own call: it outlives the inner scope below.
                let points = step.alloc_slice_fill_with(n, |t| value(c, t));
                let median = step.scope(|tmp| {
                    let mut sorted = Vec::with_capacity_in(n, tmp.arena());
                    sorted.extend_from_slice(points);
                    sorted.sort_by(f64::total_cmp);
                    sorted[n / 2]
                });
                // Collections through the loan: dropped at the end of the step.
                let mut by_name = HashMap::new_in(step.arena());
                for (t, point) in points.iter().enumerate() {
                    *by_name.entry(NAMES[t % NAMES.len()]).or_insert(0.0) += point;
                }
                let top = by_name.iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
                let total: f64 = by_name.values().sum();
                assert_eq!(total, points.iter().sum::<f64>());
                results[c] = (median, *top.0); // the outer scope's data, written here
                step.stats().used
            });
            // The step rolled back: only the request's data is left, intact.
            assert_eq!(request.stats().used, base);
            assert_eq!(text, raw);
            println!(
                "  step {} {id:<10} {n:>5} points: median {:>4}, top {:<6}; used {base} -> \
                 {peak} -> {} B",
                c + 1,
                results[c].0,
                results[c].1,
                request.stats().used
            );
        }
        results.to_vec()
    })
}

fn main() {
    let mut arena = OneWayAlloc::new();
    if SEPARATE_BLOCKS {
        println!("(sanitizer mode: every allocation is a block of its own; no pages)");
    }
    let first = serve(&mut arena, REQUEST);
    let after_first = arena.stats();
    println!(
        "after the request: used {} B, {} pages kept, {} obtained",
        after_first.used, after_first.pages, after_first.page_allocations
    );

    let second = serve(&mut arena, REQUEST);
    let after_second = arena.stats();
    println!(
        "after the same request again: {} pages obtained in all",
        after_second.page_allocations
    );

    // The answers, checked against a plain computation.
    for (c, (median, _)) in first.iter().enumerate() {
        let word = REQUEST.split(' ').nth(c).unwrap();
        let n: usize = word.split_once(':').unwrap().1.parse().unwrap();
        let mut sorted: std::vec::Vec<f64> = (0..n).map(|t| value(c, t)).collect();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(*median, sorted[n / 2]);
    }
    assert_eq!(first, second);
    assert_eq!((after_first.used, after_second.used), (0, 0));
    if !SEPARATE_BLOCKS {
        assert!(after_first.pages > 1, "the large step took more pages");
        assert_eq!(after_second.page_allocations, after_first.page_allocations);
    }
}
