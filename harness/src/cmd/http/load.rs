//! The HTTP experiment's load generator: hyper 1's HTTP/1.1 client on a tokio
//! current-thread runtime in the parent process, to 127.0.0.1 only, Netdata's two
//! tests: sequential (one client, one connection, the queries one after another)
//! and parallel (one client per query, every connection opened at once). Every
//! request and every test is bounded in time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use indicatif::ProgressBar;
use onewayalloc_harness::timings::Timings;
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// The longest one test may take.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(600);

/// A client runtime: one thread, so that the load generator takes at most one core
/// from the server, and usually far less.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// One test's result: Netdata's columns, and the body of each seed's response.
pub struct Run {
    pub timings: Timings,
    pub bodies: Vec<Bytes>,
}

async fn connect(port: u16) -> SendRequest<Empty<Bytes>> {
    let stream = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .expect("cannot connect to the server");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(async move {
        // The connection ends when its sender is dropped or the server closes it.
        let _ = connection.await;
    });
    sender
}

/// `GET /query?seed=N`: the response body.
async fn query(sender: &mut SendRequest<Empty<Bytes>>, port: u16, seed: usize) -> Bytes {
    let request = Request::get(format!("/query?seed={seed}"))
        .header(hyper::header::HOST, format!("127.0.0.1:{port}"))
        .body(Empty::new())
        .expect("a valid request");
    sender.ready().await.expect("the connection is ready");
    let response = sender.send_request(request).await.expect("a response");
    assert!(
        response.status().is_success(),
        "query {seed}: status {}",
        response.status()
    );
    let body = response.into_body().collect().await.expect("the body");
    body.to_bytes()
}

/// Runs `test` within [`TEST_TIMEOUT`].
fn bounded<T>(runtime: &Runtime, what: &str, test: impl Future<Output = T>) -> T {
    runtime
        .block_on(async { tokio::time::timeout(TEST_TIMEOUT, test).await })
        .unwrap_or_else(|_| panic!("the {what} test took longer than {TEST_TIMEOUT:?}"))
}

/// One client sends `queries` queries (seeds 0, 1, ...) one after another on one
/// connection; the response time of each is from its request to its last byte.
pub fn sequential(runtime: &Runtime, port: u16, queries: usize, progress: &ProgressBar) -> Run {
    bounded(runtime, "sequential", async {
        let mut sender = connect(port).await;
        let mut timings = Timings::default();
        let mut bodies = Vec::with_capacity(queries);
        let start = Instant::now();
        for seed in 0..queries {
            let sent = Instant::now();
            bodies.push(query(&mut sender, port, seed).await);
            timings.add_response(sent.elapsed());
            progress.inc(1);
        }
        timings.complete = start.elapsed();
        Run { timings, bodies }
    })
}

/// `queries` clients at once, one connection and one query each (seeds 0, 1, ...);
/// as in Netdata's test the response time of each is from the start of the batch.
pub fn parallel(runtime: &Runtime, port: u16, queries: usize, progress: &ProgressBar) -> Run {
    bounded(runtime, "parallel", async {
        let start = Instant::now();
        let clients: Vec<_> = (0..queries)
            .map(|seed| {
                tokio::spawn(async move {
                    let mut sender = connect(port).await;
                    let body = query(&mut sender, port, seed).await;
                    (body, start.elapsed())
                })
            })
            .collect();
        let mut timings = Timings::default();
        let mut bodies = Vec::with_capacity(queries);
        for client in clients {
            let (body, done) = client.await.expect("a client panicked");
            timings.add_response(done);
            bodies.push(body);
            progress.inc(1);
        }
        // The batch is complete when its last response is.
        timings.complete = timings.max;
        Run { timings, bodies }
    })
}
