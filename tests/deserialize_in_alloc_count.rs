//! Feature `derive`: a JSON request parsed into the arena with serde_json allocates
//! nothing from the global allocator when the input has no escaped strings and no
//! nested unknown values; with them, serde_json's own scratch buffer is all that is
//! allocated (one allocation, grown when a longer escaped string or a deeper unknown
//! value needs it).
//!
//! A binary of its own: the counting allocator is this binary's
//! `#[global_allocator]`. It counts the calls made by the current thread only, so the
//! test harness's other threads do not disturb it. In the sanitizer mode every arena
//! allocation is a block of the backing (global) allocator, so the zero counts hold in
//! the page mode only; the sanitizer mode checks the parse and skips the counts.
#![cfg(feature = "derive")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use onewayalloc::collections::{HashMap, HashSet, String, Vec};
use onewayalloc::{DeserializeIn, OneWayAlloc};

struct Counting;

thread_local! {
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees are this allocator's; counting touches a const-initialized
// thread-local `Cell` (no allocation, no reentrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Global allocations (and reallocations) made by this thread while `f` runs.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = CALLS.with(Cell::get);
    let result = f();
    (CALLS.with(Cell::get) - before, result)
}

#[derive(DeserializeIn, Debug)]
#[allow(dead_code)]
struct Request<'a> {
    chart: &'a str,
    context: String<'a>,
    after: i64,
    before: i64,
    points: u32,
    dimensions: Vec<'a, &'a str>,
    labels: HashMap<'a, &'a str, &'a str>,
    options: HashSet<'a, &'a str>,
    group: Option<Group<'a>>,
    tier: Option<u8>,
}

#[derive(DeserializeIn, Debug)]
#[allow(dead_code)]
enum Group<'a> {
    Average,
    Percentile(f64),
    Custom { name: &'a str, window: u32 },
}

const PLAIN: &str = r#"{"chart":"system.cpu","context":"system.cpu","after":-600,
    "before":0,"points":60,"dimensions":["user","system","iowait"],
    "labels":{"host":"web1","env":"prod"},"options":["jsonwrap","nonzero"],
    "group":{"Custom":{"name":"p95","window":10}},"unknown":"flat","also":1.5}"#;

/// The parse: a `from_slice` deserializer, `end` checked.
fn parse<'a>(arena: &'a OneWayAlloc, json: &str) -> Request<'a> {
    let mut de = serde_json::Deserializer::from_slice(json.as_bytes());
    let request: Request = arena.deserialize(&mut de).unwrap();
    de.end().unwrap();
    request
}

fn page_mode() -> bool {
    !onewayalloc::SEPARATE_BLOCKS
}

#[test]
fn serde_json_into_the_arena_allocates_nothing_globally_without_escapes() {
    let arena = OneWayAlloc::with_size_hint(16 << 10);
    // The hasher's process-wide seed is made once, before any measurement.
    drop(parse(&arena, PLAIN));

    let (calls, request) = allocations(|| parse(&arena, PLAIN));
    assert_eq!(request.dimensions, ["user", "system", "iowait"]);
    assert_eq!(request.labels["env"], "prod");
    if page_mode() {
        assert_eq!(
            calls, 0,
            "a request without escapes or nested unknown values"
        );
    }

    // From a `&str` too.
    let (calls, _) = allocations(|| {
        let mut de = serde_json::Deserializer::from_str(PLAIN);
        let r: Request = arena.deserialize(&mut de).unwrap();
        de.end().unwrap();
        r
    });
    if page_mode() {
        assert_eq!(calls, 0);
    }
}

#[test]
fn serde_json_scratch_for_escapes_and_nested_unknown_values() {
    let arena = OneWayAlloc::with_size_hint(64 << 10);
    drop(parse(&arena, PLAIN));
    let escaped = PLAIN.replace(r#""chart":"system.cpu""#, r#""chart":"system\tcpu""#);
    let many_escapes = PLAIN
        .replace(r#""web1""#, r#""web\u00e91""#)
        .replace(r#""prod""#, r#""pr\"od""#)
        .replace(r#""iowait""#, r#""io\nwait""#);
    let long_escape = PLAIN.replace(
        r#""context":"system.cpu""#,
        &format!(r#""context":"{}\n""#, "x".repeat(1000)),
    );
    let nested = PLAIN.replace(r#""unknown":"flat""#, r#""unknown":{"a":[1,[2,{"b":[]}]]}"#);
    let both = nested.replace(r#""chart":"system.cpu""#, r#""chart":"system\tcpu""#);

    let mut table = std::vec::Vec::new();
    for (what, json) in [
        ("one escaped string", &escaped),
        ("three escaped strings", &many_escapes),
        ("an escaped string of 1001 bytes", &long_escape),
        ("an unknown value nested 4 deep", &nested),
        ("an escaped string and a nested unknown value", &both),
    ] {
        let (calls, request) = allocations(|| parse(&arena, json));
        assert!(request.chart.starts_with("system"));
        table.push((what, calls));
    }
    eprintln!("global allocations of one parse (serde_json's scratch buffer):");
    for (what, calls) in &table {
        eprintln!("  {calls:3}  {what}");
    }
    if page_mode() {
        // serde_json's scratch `Vec<u8>` is allocated once per deserializer, at its
        // first escaped string or nested unknown value (8 bytes at first), and grown
        // (a reallocation) when a longer escaped string needs it: measured with
        // serde_json 1.0.154, 2 for "system\tcpu" (11 bytes: 8, then 16), 1 for three
        // short ones, 2 for the 1001-byte one (1000 reserved, then doubled), 1 for the
        // nested unknown value (a stack of its open brackets).
        for (what, calls) in &table {
            assert!((1..=2).contains(calls), "{what}: {calls}");
        }
    }
}
