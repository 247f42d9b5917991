//! Netdata's context query (200 charts x 100 dimensions, 30 points each) N times on
//! one arena, reset between queries, for Callgrind: the instructions of one query
//! are `(Ir(12) - Ir(2)) / 10`, which removes start-up and the database.
//!
//! ```sh
//! cargo build --release -p onewayalloc-harness --bin query-count
//! for arena in owa sync; do for n in 2 12; do
//!   valgrind --tool=callgrind --callgrind-out-file=cg.$arena.$n \
//!     target/release/query-count $arena $n
//! done; done   # then each file's "summary:" line
//! ```
//!
//! `owa` is a `OneWayAlloc::new()`, `sync` a `SyncOneWayAlloc::new()` used by the
//! calling thread alone (the case of a task's arena). The checksum is printed so
//! that the work cannot be optimized away.

use onewayalloc::{OneWayAlloc, SyncOneWayAlloc};
use onewayalloc_harness::query::{Database, query};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(arena), Some(queries)) = (args.next(), args.next()) else {
        eprintln!("usage: query-count owa|sync QUERIES");
        std::process::exit(2);
    };
    let queries: usize = queries.parse().expect("QUERIES: a number");
    let db = Database::new(200, 100, 30);
    let mut checksum = 0.0;
    match arena.as_str() {
        "owa" => {
            let mut arena = OneWayAlloc::new();
            for seed in 0..queries {
                checksum += query(&arena, &db, seed);
                arena.reset();
            }
        }
        "sync" => {
            let mut arena = SyncOneWayAlloc::new();
            for seed in 0..queries {
                checksum += query(&arena, &db, seed);
                arena.reset();
            }
        }
        other => {
            eprintln!("unknown arena {other:?}: owa or sync");
            std::process::exit(2);
        }
    }
    println!("checksum {checksum}");
}
