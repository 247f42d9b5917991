//! Per-request arenas in a (tiny) HTTP service: a `Pool` shared by worker threads.
//!
//! Two worker threads serve 127.0.0.1 (an ephemeral port). Each request takes an
//! arena from the pool, parses its head into an arena `Vec` of headers and an arena
//! `HashMap` of query parameters, computes points in an arena `Vec` and writes its
//! JSON body with `format_in!`; the body is copied out once and the arena goes back
//! to the pool, reset, for whichever worker is next.
//!
//! The handler is an `async fn`, run by a tiny `block_on`, to show the pattern that
//! keeps a future `Send`: arena work in a synchronous section, owned bytes out, then
//! `.await` (`&OneWayAlloc` and arena collections are not `Send`; the guard is).
//!
//! It sends a few requests to itself, prints the answers and exits:
//! `cargo run --example http_scratch`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::future::Future;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{OneWayAlloc, Pool, format_in};

/// The workers' arenas: up to 4 idle, each keeping at most 1 MiB beyond its first page.
static POOL: Pool = Pool::new().max_idle(4).keep(1 << 20);

const WORKERS: usize = 2;
const REQUESTS: [&str; 4] = [
    "/chart?name=cpu&points=5",
    "/chart?name=io",
    "/chart",
    "/missing",
];
/// Every socket read and write gives up after this, so the program always ends.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The synchronous section: everything in the arena, the body copied out at the end.
fn answer(arena: &OneWayAlloc, head: &str) -> (u16, std::vec::Vec<u8>) {
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let target = request_line.split(' ').nth(1).unwrap_or("/");
    let mut headers = Vec::new_in(arena);
    headers.extend(lines.filter_map(|line| line.split_once(": ")));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != "/chart" {
        return (404, b"{\"error\":\"no such path\"}".to_vec());
    }
    let mut params = HashMap::new_in(arena);
    params.extend(query.split('&').filter_map(|pair| pair.split_once('=')));
    let name = params.get("name").copied().unwrap_or("load");
    let n: usize = params.get("points").unwrap_or(&"3").parse().unwrap_or(3);
    let mut points = Vec::with_capacity_in(n, arena);
    points.extend((0..n).map(|t| ((name.len() * 31 + t * 7) % 101) as f64));
    let is_agent = |(key, _): &&(&str, &str)| key.eq_ignore_ascii_case("user-agent");
    let agent = headers
        .iter()
        .find(is_agent)
        .map_or("unknown", |&(_, value)| value);
    let body = format_in!(
        arena,
        "{{\"chart\":\"{name}\",\"points\":{points:?},\"agent\":\"{agent}\"}}"
    );
    (200, body.as_bytes().to_vec())
}

/// The async handler. No arena reference lives across the `.await`, so the future
/// is `Send` (`block_on` below requires it, as a multi-threaded executor would).
async fn handle(head: String) -> std::vec::Vec<u8> {
    let (status, body) = {
        let arena = POOL.get();
        answer(&arena, &head)
    }; // the arena goes back to the pool here, before the await
    std::future::ready(()).await; // stands in for asynchronous I/O
    let reason = if status == 200 { "OK" } else { "Not Found" };
    let length = body.len();
    let head = format!("HTTP/1.1 {status} {reason}\r\ncontent-length: {length}\r\n\r\n");
    [head.into_bytes(), body].concat()
}

/// Polls one future to completion on this thread, with a waker that does nothing.
fn block_on<F: Future + Send>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// A worker: accepts `count` connections; for each, reads the request head (up to
/// the blank line, at most 8 KiB), answers and closes.
fn serve(listener: &TcpListener, count: usize) -> io::Result<()> {
    for _ in 0..count {
        let (stream, _) = listener.accept()?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        let mut reader = BufReader::new((&stream).take(8 * 1024));
        let mut head = String::new();
        while reader.read_line(&mut head)? > 0 && !head.ends_with("\r\n\r\n") {}
        (&stream).write_all(&block_on(handle(head)))?;
    }
    Ok(())
}

/// A client: one GET, the whole response read until the server closes.
fn fetch(addr: SocketAddr, target: &str) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    write!(stream, "GET {target} HTTP/1.1\r\nUser-Agent: demo\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

fn main() -> io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    println!("serving on http://{addr} with {WORKERS} worker threads");
    let responses = thread::scope(|s| {
        let (listener, per_worker) = (&listener, REQUESTS.len() / WORKERS);
        let workers = [(); WORKERS].map(|()| s.spawn(move || serve(listener, per_worker)));
        // Every client at once, so the workers take arenas from the pool concurrently.
        let clients = REQUESTS.map(|target| s.spawn(move || fetch(addr, target)));
        for worker in workers {
            worker.join().expect("a worker panicked")?;
        }
        clients
            .map(|c| c.join().expect("a client panicked"))
            .into_iter()
            .collect::<io::Result<std::vec::Vec<_>>>()
    })?;
    for (target, response) in REQUESTS.iter().zip(&responses) {
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
        let status = head.lines().next().unwrap_or_default();
        println!("GET {target:<26} {status:<22} {body}");
        assert_eq!(status.contains("200"), target.starts_with("/chart"));
    }
    let stats = POOL.stats();
    let (idle, bound) = (stats.idle_bytes / 1024, POOL.max_idle_bytes() / 1024);
    println!(
        "pool: {} idle arenas, {idle} KiB (bound {bound} KiB)",
        stats.idle_arenas
    );
    Ok(())
}
