//! Per-request scratch memory with `with_scratch`.
//!
//! A server loop handles many small text requests. For each one it parses the
//! request line, the query parameters and the headers into structs, looks up
//! parameters through a map, and builds a JSON response with `format_in!`, all in
//! the thread's scratch arena, which is reset (pages kept) after every request.
//! The same handler written with the global allocator (`std` `Vec`, `String`,
//! `format!` and a `hashbrown::HashMap`) runs in the same loop, and the example
//! prints requests per second for both and checks they answer the same.
//!
//! Most of a handler's time goes to parsing and formatting, which no allocator
//! changes: expect a modest gain here (about 1.1x on a 2-core machine). What the
//! example shows is the pattern: no arena to pass around, one reset per request,
//! and the same pages every time.
//!
//! ```text
//! cargo run --release --example request_scratch [-- --requests N]
//! ```

#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use onewayalloc::collections::{HashMap, String, Vec};
use onewayalloc::{OneWayAlloc, format_in, with_scratch};

/// A request as the parser sees it, borrowing from the request text.
struct Request<'t, P, H> {
    method: &'t str,
    path: &'t str,
    params: P,
    headers: H,
}

/// Makes the `i`-th request of the workload.
fn request_text(i: usize) -> std::string::String {
    let chart = ["system.cpu", "system.ram", "disk.io", "net.eth0"][i % 4];
    let mut text = format!(
        "GET /api/v1/data?chart={chart}&after=-{}&points={}&group=average&format=json&options=ms HTTP/1.1\r\n",
        60 * (1 + i % 10),
        30 + i % 31
    );
    for (name, value) in [
        ("Host", "netdata.local:19999"),
        ("User-Agent", "curl/8.5"),
        ("Accept", "application/json"),
        ("X-Request-Id", "0"),
    ] {
        let _ = write!(text, "{name}: {value}\r\n");
    }
    text.push_str("\r\n");
    text
}

/// Splits `a=b&c=d` into pairs.
fn split_params(query: &str) -> impl Iterator<Item = (&str, &str)> {
    query.split('&').filter_map(|pair| pair.split_once('='))
}

/// Splits the header lines into pairs.
fn split_headers(head: &str) -> impl Iterator<Item = (&str, &str)> {
    head.split("\r\n")
        .skip(1)
        .filter_map(|line| line.split_once(": "))
}

/// The request line's method, path and query.
fn request_line(text: &str) -> (&str, &str, &str) {
    let line = text.split("\r\n").next().unwrap_or("");
    let mut words = line.split(' ');
    let method = words.next().unwrap_or("");
    let target = words.next().unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    (method, path, query)
}

/// The handler in the scratch arena: returns the response length and a checksum.
fn handle_in_arena(text: &str, arena: &OneWayAlloc) -> (usize, u64) {
    let (method, path, query) = request_line(text);
    // Owned copies, as a server that reuses its read buffer must keep them.
    let copy = |(name, value): (&str, &str)| (&*arena.alloc_str(name), &*arena.alloc_str(value));
    let mut params: HashMap<&str, &str> = HashMap::new_in(arena);
    params.extend(split_params(query).map(copy));
    let mut headers: Vec<(&str, &str)> = Vec::new_in(arena);
    headers.extend(split_headers(text).map(copy));
    let request = Request {
        method,
        path,
        params,
        headers,
    };
    let points: usize = request
        .params
        .get("points")
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let mut body = String::with_capacity_in(64 + points * 24, arena);
    let _ = write!(
        body,
        "{{\"api\":1,\"method\":\"{}\",\"path\":\"{}\",\"chart\":\"{}\",\"host\":\"{}\",\"data\":[",
        request.method,
        request.path,
        request.params.get("chart").unwrap_or(&""),
        request
            .headers
            .iter()
            .find(|(n, _)| *n == "Host")
            .map_or("", |h| h.1),
    );
    for point in 0..points {
        let _ = write!(
            body,
            "{}[{},{}]",
            if point == 0 { "" } else { "," },
            point,
            1_700_000_000 + point * 37
        );
    }
    body.push_str("]}");
    let response = format_in!(
        arena,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        body
    );
    (response.len(), checksum(response.as_bytes()))
}

/// The same handler with the global allocator.
fn handle_global(text: &str) -> (usize, u64) {
    let (method, path, query) = request_line(text);
    // Owned copies, as a server that reuses its read buffer must keep them.
    let copy = |(name, value): (&str, &str)| (name.to_owned(), value.to_owned());
    let params: hashbrown::HashMap<std::string::String, std::string::String> =
        split_params(query).map(copy).collect();
    let headers: std::vec::Vec<(std::string::String, std::string::String)> =
        split_headers(text).map(copy).collect();
    let request = Request {
        method,
        path,
        params,
        headers,
    };
    let points: usize = request
        .params
        .get("points")
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let mut body = std::string::String::with_capacity(64 + points * 24);
    let _ = write!(
        body,
        "{{\"api\":1,\"method\":\"{}\",\"path\":\"{}\",\"chart\":\"{}\",\"host\":\"{}\",\"data\":[",
        request.method,
        request.path,
        request.params.get("chart").map_or("", |c| c.as_str()),
        request
            .headers
            .iter()
            .find(|(n, _)| n == "Host")
            .map_or("", |h| h.1.as_str()),
    );
    for point in 0..points {
        let _ = write!(
            body,
            "{}[{},{}]",
            if point == 0 { "" } else { "," },
            point,
            1_700_000_000 + point * 37
        );
    }
    body.push_str("]}");
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        body
    );
    (response.len(), checksum(response.as_bytes()))
}

fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() {
    let mut requests = 200_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--requests", Some(n)) => requests = n,
            _ => {
                eprintln!("usage: request_scratch [--requests N]");
                std::process::exit(2);
            }
        }
    }
    // Distinct request texts, made up front so only the handling is timed.
    let texts: std::vec::Vec<_> = (0..1000).map(request_text).collect();

    let (mut arena_time, mut global_time) = (Duration::ZERO, Duration::ZERO);
    let rounds = 10;
    for _ in 0..rounds {
        // Alternate the two handlers so machine noise hits both alike.
        let start = Instant::now();
        let mut arena_sum = 0u64;
        for i in 0..requests / rounds {
            let text = &texts[i % texts.len()];
            let (len, sum) = with_scratch(|arena| handle_in_arena(black_box(text), arena));
            arena_sum = arena_sum.wrapping_add(sum ^ len as u64);
        }
        arena_time += start.elapsed();

        let start = Instant::now();
        let mut global_sum = 0u64;
        for i in 0..requests / rounds {
            let text = &texts[i % texts.len()];
            let (len, sum) = handle_global(black_box(text));
            global_sum = global_sum.wrapping_add(sum ^ len as u64);
        }
        global_time += start.elapsed();
        assert_eq!(arena_sum, global_sum, "both handlers must answer alike");
    }
    let handled = (requests / rounds * rounds) as f64;
    let rate = |t: Duration| handled / t.as_secs_f64();
    println!("{handled} requests, {rounds} alternating rounds per handler");
    println!("{:<22} {:>12} {:>14}", "allocator", "time", "requests/s");
    println!(
        "{:<22} {:>10.3} s {:>14.0}",
        "global allocator",
        global_time.as_secs_f64(),
        rate(global_time)
    );
    println!(
        "{:<22} {:>10.3} s {:>14.0}",
        "with_scratch arena",
        arena_time.as_secs_f64(),
        rate(arena_time)
    );
    println!(
        "arena / global throughput: {:.2}x",
        rate(arena_time) / rate(global_time)
    );
    with_scratch(|arena| {
        println!(
            "scratch arena of this thread: {} page(s), {} KiB held",
            arena.stats().pages,
            arena.stats().capacity / 1024
        );
    });
}
