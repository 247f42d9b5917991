//! `onewayalloc-harness`: onewayalloc against glibc malloc, mimalloc, bumpalo,
//! bump-scope and a pre-faulted linear buffer (the speed of light).
//!
//! ```text
//! cargo run --release -p onewayalloc-harness                    # the context query, ~1 min
//! cargo run --release -p onewayalloc-harness -- --quick         # the same, small, seconds
//! cargo run --release -p onewayalloc-harness -- linked-list
//! cargo run --release -p onewayalloc-harness -- reuse
//! cargo run --release -p onewayalloc-harness -- parse-json    # and --bin parse-json-mimalloc
//! cargo run --release -p onewayalloc-harness -- http             # over HTTP, ~3 min
//! cargo run --release -p onewayalloc-harness -- http --quick     # seconds
//! cargo run --release -p onewayalloc-harness -- vec-push         # 1M pushes, warm
//! cargo run --release -p onewayalloc-harness -- index            # growing Vecs in a map
//! cargo run --release -p onewayalloc-harness -- instructions alloc_u8 1000 owa
//! cargo run --release -p onewayalloc-harness -- sync-arena       # SyncOneWayAlloc, ~20 s
//! cargo run --release -p onewayalloc-harness -- help [SUBCOMMAND]
//! ```

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod cmd;
mod counting;

use clap::{Parser, Subcommand};

#[global_allocator]
static GLOBAL: counting::CountingSystem = counting::CountingSystem;

/// onewayalloc against glibc malloc, mimalloc, bumpalo, bump-scope and a pre-faulted
/// linear buffer (the speed of light).
///
/// Without a subcommand it runs `context-query`, and takes its options.
#[derive(Parser)]
#[command(
    name = "onewayalloc-harness",
    args_conflicts_with_subcommands = true,
    max_term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    context_query: cmd::context_query::Args,
}

#[derive(Subcommand)]
enum Command {
    /// Netdata's context query on every allocator, sequential and parallel (the default)
    ContextQuery(cmd::context_query::Args),
    /// A million linked-list nodes created, walked and released (the linear-allocator
    /// article's experiment)
    LinkedList(cmd::linked_list::Args),
    /// Allocator calls and page faults per query once the first query is done
    Reuse(cmd::reuse::Args),
    /// JSON parsed into the arena with `#[derive(DeserializeIn)]`, against the same
    /// struct in `std` types with `serde::Deserialize` (malloc; the binary
    /// `parse-json-mimalloc` runs it on mimalloc)
    ParseJson(cmd::parse_json::Args),
    /// A million `u64` pushed into a vector on a warm allocator, with the moves and
    /// bytes copied (the criterion group `vec_push_1m` as an interleaved table)
    VecPush(cmd::vec_push::Args),
    /// An index of identifiers to line numbers (a map of small growing vectors) over
    /// the workspace's own source files, one file per request
    Index(cmd::index::Args),
    /// One allocation op N times, for counting instructions under Callgrind
    /// (scripts/callgrind.sh)
    Instructions(cmd::instructions::Args),
    /// Netdata's context query over HTTP, one run per per-request allocation strategy
    /// (malloc, a Pool, with_scratch, an arena per request, bumpalo, bump-scope)
    Http(cmd::http::Args),
    /// SyncOneWayAlloc against OneWayAlloc and the thread-safe arenas (blink-alloc,
    /// bumpalo-herd, bump-local, `Mutex<Bump>`): one and two threads, warm and cold,
    /// rayon, reset
    SyncArena(cmd::sync_arena::Args),
    /// The HTTP experiment's server, which `http` starts in a child process per
    /// strategy
    #[command(hide = true)]
    HttpServer(cmd::http::ServerArgs),
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        None => cmd::context_query::run(&cli.context_query),
        Some(Command::ContextQuery(args)) => cmd::context_query::run(&args),
        Some(Command::LinkedList(args)) => cmd::linked_list::run(&args),
        Some(Command::Reuse(args)) => cmd::reuse::run(&args),
        Some(Command::ParseJson(args)) => cmd::parse_json::run(&args),
        Some(Command::VecPush(args)) => cmd::vec_push::run(&args),
        Some(Command::Index(args)) => cmd::index::run(&args),
        Some(Command::Instructions(args)) => cmd::instructions::run(&args),
        Some(Command::Http(args)) => cmd::http::run(&args),
        Some(Command::HttpServer(args)) => cmd::http::serve(&args),
        Some(Command::SyncArena(args)) => cmd::sync_arena::run(&args),
    }
}
