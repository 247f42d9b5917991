//! The JSON parse benchmark (`parse-json`): a body parsed with serde_json into a
//! struct derived with `#[derive(onewayalloc::DeserializeIn)]` in an arena (reset
//! after every parse, as a pool arena is between requests), against the same struct
//! in `std` types with `serde::Deserialize` on the global allocator (the binary's:
//! glibc malloc in `onewayalloc-harness`, mimalloc in `parse-json-mimalloc`).
//!
//! Two bodies:
//! - `answer`: the context query's JSON answer ([`crate::json`]), one group per
//!   dimension name, each with its name and four numbers;
//! - `request`: a data query request of the same kind, mostly strings: dimension
//!   names, label pairs and options.
//!
//! bump-scope is not in the table: its `DeserializeSeed`s build a `BumpVec<T>` or a
//! `BumpString` only, with `T: Deserialize`, so the strings inside a struct element
//! still go to the global allocator unless a seed is written by hand for each struct
//! (which is what the derive writes).

use std::hint::black_box;
use std::time::{Duration, Instant};

use onewayalloc::OneWayAlloc;
use serde_json::de::SliceRead;

/// The answer and the request, in the arena.
pub mod arena {
    use onewayalloc::DeserializeIn;
    use onewayalloc::collections::{HashMap, Vec};

    /// The context query's answer.
    #[derive(DeserializeIn)]
    pub struct Answer<'a> {
        pub context: &'a str,
        pub seed: u64,
        pub dimensions: u64,
        pub checksum: f64,
        pub groups: Vec<'a, Group<'a>>,
    }

    /// One group of the answer.
    #[derive(DeserializeIn)]
    pub struct Group<'a> {
        pub name: &'a str,
        pub dimensions: u64,
        pub points: u64,
        pub sum: f64,
        pub average: f64,
    }

    /// A data query request.
    #[derive(DeserializeIn)]
    pub struct Request<'a> {
        pub context: &'a str,
        pub after: i64,
        pub before: i64,
        pub points: u32,
        pub dimensions: Vec<'a, &'a str>,
        pub labels: HashMap<'a, &'a str, &'a str>,
        pub options: Vec<'a, &'a str>,
        pub group_by: Option<&'a str>,
    }
}

/// The same structs in `std` types.
pub mod std_types {
    use std::collections::HashMap;

    /// The context query's answer.
    #[derive(serde::Deserialize)]
    pub struct Answer {
        pub context: String,
        pub seed: u64,
        pub dimensions: u64,
        pub checksum: f64,
        pub groups: Vec<Group>,
    }

    /// One group of the answer.
    #[derive(serde::Deserialize)]
    pub struct Group {
        pub name: String,
        pub dimensions: u64,
        pub points: u64,
        pub sum: f64,
        pub average: f64,
    }

    /// A data query request.
    #[derive(serde::Deserialize)]
    pub struct Request {
        pub context: String,
        pub after: i64,
        pub before: i64,
        pub points: u32,
        pub dimensions: Vec<String>,
        pub labels: HashMap<String, String, onewayalloc::hashbrown::DefaultHashBuilder>,
        pub options: Vec<String>,
        pub group_by: Option<String>,
    }
}

/// An answer body of `groups` groups, in the shape [`crate::json`] writes.
pub fn answer_body(groups: usize) -> String {
    let mut body = format!(
        r#"{{"context":"apps.cpu","seed":7,"dimensions":{},"checksum":{},"groups":["#,
        groups * 10,
        groups as f64 * 511.25
    );
    for g in 0..groups {
        if g > 0 {
            body.push(',');
        }
        body.push_str(&format!(
            r#"{{"name":"dim{g}","dimensions":10,"points":300,"sum":{},"average":{}}}"#,
            g * 300 + 17,
            (g * 300 + 17) as f64 / 300.0
        ));
    }
    body.push_str("]}");
    body
}

/// A request body with `dims` dimension names and `dims / 4` labels.
pub fn request_body(dims: usize) -> String {
    let names: Vec<String> = (0..dims)
        .map(|d| format!(r#""cpu{d}.user_time""#))
        .collect();
    let labels: Vec<String> = (0..dims / 4)
        .map(|l| format!(r#""label_{l}":"value-of-label-{l}""#))
        .collect();
    format!(
        r#"{{"context":"system.cpu","after":-600,"before":0,"points":60,"dimensions":[{}],"labels":{{{}}},"options":["jsonwrap","nonzero","flip","ms"],"group_by":"dimension"}}"#,
        names.join(","),
        labels.join(",")
    )
}

/// The best per-parse times of `rounds` rounds of `iters` parses each, the two
/// contenders interleaved round by round (a machine's load then weighs on both).
fn best(
    rounds: usize,
    iters: usize,
    mut first: impl FnMut(),
    mut second: impl FnMut(),
) -> (Duration, Duration) {
    let time = |parse: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..iters {
            parse();
        }
        start.elapsed() / iters as u32
    };
    let (mut a, mut b) = (Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        a = a.min(time(&mut first));
        b = b.min(time(&mut second));
    }
    (a, b)
}

/// One row: the body, its size, the arena's time, std's time.
pub struct Row {
    pub body: &'static str,
    pub bytes: usize,
    pub arena: Duration,
    pub std: Duration,
}

/// One row: `body` parsed `rounds` times by `ours` in `arena` (reset before each
/// parse) and by `theirs`, interleaved.
fn row(
    name: &'static str,
    body: &str,
    rounds: usize,
    arena: &mut OneWayAlloc,
    mut ours: impl FnMut(&OneWayAlloc, &mut serde_json::Deserializer<SliceRead<'_>>),
    mut theirs: impl FnMut(&[u8]),
) -> Row {
    let iters = (1_000_000 / body.len()).max(10);
    let (ours, theirs) = best(
        rounds,
        iters,
        || {
            arena.reset();
            ours(
                arena,
                &mut serde_json::Deserializer::from_slice(body.as_bytes()),
            );
        },
        || theirs(body.as_bytes()),
    );
    Row {
        body: name,
        bytes: body.len(),
        arena: ours,
        std: theirs,
    }
}

/// Runs both bodies; `quick` makes them small and the rounds few.
pub fn run(quick: bool) -> Vec<Row> {
    let (groups, dims, rounds) = if quick {
        (100, 100, 3)
    } else {
        (1000, 1000, 40)
    };
    let mut arena = OneWayAlloc::new();
    let answer = answer_body(groups);
    check_answer(&answer, &mut arena);
    let answer_row = row(
        "answer",
        &answer,
        rounds,
        &mut arena,
        |arena, de| {
            black_box(arena.deserialize::<arena::Answer, _>(de).unwrap());
        },
        |body| {
            black_box(serde_json::from_slice::<std_types::Answer>(body).unwrap());
        },
    );
    let request_row = row(
        "request",
        &request_body(dims),
        rounds,
        &mut arena,
        |arena, de| {
            black_box(arena.deserialize::<arena::Request, _>(de).unwrap());
        },
        |body| {
            black_box(serde_json::from_slice::<std_types::Request>(body).unwrap());
        },
    );
    vec![answer_row, request_row]
}

/// Both parses read the same values.
fn check_answer(body: &str, arena: &mut OneWayAlloc) {
    arena.reset();
    let mut de = serde_json::Deserializer::from_slice(body.as_bytes());
    let ours: arena::Answer = arena.deserialize(&mut de).unwrap();
    de.end().unwrap();
    let theirs: std_types::Answer = serde_json::from_str(body).unwrap();
    assert_eq!(ours.context, theirs.context);
    assert_eq!(
        (ours.seed, ours.dimensions),
        (theirs.seed, theirs.dimensions)
    );
    assert_eq!(ours.checksum.to_bits(), theirs.checksum.to_bits());
    assert_eq!(ours.groups.len(), theirs.groups.len());
    for (a, b) in ours.groups.iter().zip(&theirs.groups) {
        assert_eq!(
            (a.name, a.dimensions, a.points),
            (b.name.as_str(), b.dimensions, b.points)
        );
        assert_eq!(
            (a.sum.to_bits(), a.average.to_bits()),
            (b.sum.to_bits(), b.average.to_bits())
        );
    }
}

/// Prints the rows as a table, `global` naming the global allocator.
pub fn print(rows: &[Row], global: &str) {
    println!("| body | bytes | arena (DeserializeIn) | std types on {global} | speedup |");
    println!("|---|---:|---:|---:|---:|");
    for row in rows {
        println!(
            "| {} | {} | {:.1} µs | {:.1} µs | {:.2}x |",
            row.body,
            row.bytes,
            row.arena.as_secs_f64() * 1e6,
            row.std.as_secs_f64() * 1e6,
            row.std.as_secs_f64() / row.arena.as_secs_f64()
        );
    }
}
