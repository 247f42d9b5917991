//! Per-request scratch memory: `with_scratch`, `format_in!` and a memory limit.
//!
//! A tiny request handler parses `GET /data?chart=...&points=...` into an arena
//! `HashMap`, loads the points into an arena `Vec` and formats its answer in the
//! arena. It does not create or pass an arena: `with_scratch` lends the thread's
//! retained arena and resets it (pages kept) after every request.
//!
//! The handler caps memory with `set_limit`: the scratch arena may hold at most
//! 256 KiB (every page counts, those kept from earlier requests too). Under the limit
//! it uses the `try_` forms (`try_reserve`, `try_format_in!`), so a request that asks
//! for too much is cancelled cleanly with an error and the next one is served as
//! usual. The plain forms (`format_in!`, `Vec::push`, `HashMap::insert`) would end
//! the process on a refused allocation, as the standard collections do: they run
//! once the limit is lifted.
//!
//! Run it with `cargo run --example request_scratch`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{HashMap, String, Vec};
use onewayalloc::{
    AllocError, OneWayAlloc, SEPARATE_BLOCKS, format_in, try_format_in, with_scratch,
};

/// The most one request may make the thread's scratch arena hold.
const LIMIT: usize = 256 * 1024;

/// The stored value of `chart` at time `t`.
fn sample(chart: &str, t: usize) -> f64 {
    ((chart.len() * 31 + t * 7) % 101) as f64
}

/// The work of a request, every allocation fallible: it fails if it would need
/// more memory than the limit lets the arena hold.
fn answer<'a>(arena: &'a OneWayAlloc, request: &str) -> Result<String<'a>, AllocError> {
    let query = request.split_once('?').map_or("", |(_, query)| query);
    let pairs = query.split('&').filter_map(|pair| pair.split_once('='));
    let mut params = HashMap::new_in(arena);
    params
        .try_reserve(pairs.clone().count())
        .map_err(|_| AllocError)?;
    params.extend(pairs); // fits: room was reserved

    let chart = params.get("chart").copied().unwrap_or("none");
    let n = params
        .get("points")
        .and_then(|p| p.parse().ok())
        .unwrap_or(10);
    let mut points = Vec::new_in(arena);
    points.try_reserve_exact(n).map_err(|_| AllocError)?;
    points.extend((0..n).map(|t| sample(chart, t)));

    let average = points.iter().sum::<f64>() / n.max(1) as f64;
    try_format_in!(
        arena,
        "{{\"chart\":\"{chart}\",\"points\":{n},\"avg\":{average:.2}}}"
    )
}

/// Handles one request in the thread's scratch arena. Arena data cannot leave
/// `with_scratch`, so the response is copied out into a `std` `String`.
fn handle(request: &str) -> std::string::String {
    with_scratch(|arena| {
        arena.set_limit(Some(LIMIT));
        let body = answer(arena, request);
        // The arena is kept for this thread's next `with_scratch`: lift the limit.
        arena.set_limit(None);
        let response = match body {
            Ok(body) => format_in!(&*arena, "200 OK, {} bytes: {body}", body.len()),
            Err(AllocError) => format_in!(&*arena, "413 cancelled: over {} KiB", LIMIT / 1024),
        };
        response.to_string()
    })
}

fn main() {
    if SEPARATE_BLOCKS {
        println!("(sanitizer mode: every allocation is a block of its own; no pages)");
    }
    let requests = [
        "GET /data?chart=system.cpu&points=60",
        "GET /data?chart=disk.io&points=20000", // 160 KB: a second page
        "GET /data?chart=net.eth0&points=10000000", // 80 MB: over the limit
        "GET /data?chart=system.cpu&points=60",
    ];
    let mut responses = std::vec::Vec::new();
    for request in requests {
        let response = handle(request);
        // The same retained arena, between requests: reset, pages kept.
        let held = with_scratch(|arena| arena.stats());
        println!("{request}");
        println!("  {response}");
        println!(
            "  scratch arena between requests: {} KiB held in {} page(s), {} B used",
            held.capacity / 1024,
            held.pages,
            held.used
        );
        assert_eq!(held.used, 0);
        assert!(held.capacity <= LIMIT);
        responses.push(response);
    }
    assert!(responses[0].starts_with("200 OK"));
    assert!(responses[1].starts_with("200 OK"));
    assert!(responses[2].starts_with("413 cancelled"));
    assert_eq!(responses[3], responses[0]); // the next request works as before
    with_scratch(|arena| assert_eq!(arena.limit(), None));
}
