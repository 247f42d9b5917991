//! The HTTP experiment's server, run in a child process of its own for each
//! strategy (the hidden `http-server` subcommand), so that its peak resident memory
//! is that strategy's alone.
//!
//! hyper 1's HTTP/1.1 server on a tokio multi-thread runtime of `--threads` worker
//! threads (the server's workers, Netdata's web threads), on 127.0.0.1 and an
//! ephemeral port. `GET /query?seed=N` answers the context query with seed N as
//! JSON; the query runs in the request's handler, on the worker that polls its
//! connection. The parent talks to it on stdin and stdout, one line each way:
//!
//! - the server prints `port P` once it listens;
//! - `memory` asks for `memory HWM RSS IDLE_ARENAS IDLE_BYTES` (peak and current
//!   resident KiB, the pool's idle arenas and bytes), after which the peak is reset
//!   (`/proc/self/clear_refs`), so the next answer is the peak since this one;
//! - the end of stdin (or `--max-seconds`) stops it.

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use onewayalloc_harness::query::Database;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use onewayalloc::Pool;

use super::strategy::{Shared, Strategy, awaits, respond, respond_awaiting};
use crate::cmd::positive;

#[derive(clap::Args)]
pub struct ServerArgs {
    #[arg(long, value_enum)]
    strategy: Strategy,
    #[arg(long, value_parser = positive())]
    charts: usize,
    #[arg(long, value_parser = positive())]
    dims: usize,
    #[arg(long, value_parser = positive())]
    points: usize,
    #[arg(long, value_parser = positive())]
    threads: usize,
    /// Stop after this long whatever happens.
    #[arg(long, value_parser = positive())]
    max_seconds: usize,
}

/// The command line that starts a server (the hidden subcommand and its options).
pub fn command_line(
    strategy: Strategy,
    db: &Database,
    threads: usize,
    max_seconds: usize,
) -> Vec<String> {
    let mut args = vec!["http-server".to_string()];
    for (name, value) in [
        ("--strategy", strategy.arg()),
        ("--charts", db.charts.len().to_string()),
        ("--dims", db.dims.to_string()),
        ("--points", db.points.to_string()),
        ("--threads", threads.to_string()),
        ("--max-seconds", max_seconds.to_string()),
    ] {
        args.push(name.to_string());
        args.push(value);
    }
    args
}

/// What the parent asks on stdin.
enum Control {
    Memory,
    Stop,
}

pub fn serve(args: &ServerArgs) {
    let shared = Arc::new(Shared {
        strategy: args.strategy,
        db: Database::new(args.charts, args.dims, args.points),
        pool: args.strategy.pool(),
        sync_pool: Pool::new_sync(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (control, mut requests) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line.as_deref().map(str::trim) {
                Ok("memory") => drop(control.send(Control::Memory)),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        drop(control.send(Control::Stop));
    });
    let deadline = Duration::from_secs(args.max_seconds as u64);
    runtime.block_on(async move {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("cannot listen on 127.0.0.1");
        let port = listener.local_addr().expect("a local address").port();
        say(&format!("port {port}"));
        let stop = tokio::time::sleep(deadline);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let shared = Arc::clone(&shared);
                    tokio::spawn(async move {
                        let service = service_fn(move |request| {
                            let shared = Arc::clone(&shared);
                            async move { Ok::<_, hyper::Error>(handle(&shared, &request).await) }
                        });
                        // A client that goes away is no error of the server's.
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                control = requests.recv() => match control {
                    Some(Control::Memory) => say(&memory_line(&shared)),
                    Some(Control::Stop) | None => break,
                },
                () = &mut stop => {
                    eprintln!("http-server: --max-seconds reached, stopping");
                    break;
                }
            }
        }
    });
    // Connections still open are dropped with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// One request: `GET /query?seed=N`.
async fn handle(shared: &Shared, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let seed = (request.uri().path() == "/query")
        .then(|| request.uri().query())
        .flatten()
        .and_then(|query| query.strip_prefix("seed="))
        .and_then(|seed| seed.parse::<usize>().ok());
    let Some(seed) = seed else {
        let mut response = Response::new(Full::new(Bytes::from_static(b"GET /query?seed=N\n")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    };
    let body = match awaits(shared.strategy) {
        true => {
            let target = request.uri().path_and_query().map_or("", |t| t.as_str());
            respond_awaiting(shared, target).await
        }
        false => respond(shared, seed),
    };
    let mut response = Response::new(Full::new(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// One line to the parent.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    // The parent has gone if this fails; the end of stdin stops the server then.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// `memory HWM RSS IDLE_ARENAS IDLE_BYTES`, then the peak reset.
fn memory_line(shared: &Shared) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (idle_arenas, idle_bytes) = pool_idle(shared);
    let line = format!(
        "memory {} {} {idle_arenas} {idle_bytes}",
        field("VmHWM:"),
        field("VmRSS:")
    );
    // "5" resets the peak resident size to the current one (Linux 4.0 and later).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    line
}

/// The pool's idle arenas and bytes (0 and 0 for the strategies without a pool).
fn pool_idle(shared: &Shared) -> (usize, usize) {
    let stats = match shared.strategy {
        // The pool whose arenas cross the await.
        Strategy::SyncPoolAwait | Strategy::SyncPoolThenPool | Strategy::SyncPoolHoldsQuery => {
            shared.sync_pool.stats()
        }
        _ => shared.pool.stats(),
    };
    (stats.idle_arenas, stats.idle_bytes)
}
