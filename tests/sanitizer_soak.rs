//! A long run of `with_scratch` requests keeps its memory flat, in both modes.
//!
//! In sanitizer mode (SPEC §1.7) every allocation is a block of the global
//! allocator, and `with_scratch` resets its arena after each call, which releases
//! every block outstanding: 100,000 requests must not leave 100,000 requests' worth
//! of blocks behind. In the page mode the arena keeps its pages, so memory is flat
//! too. The measure is exact: this binary's global allocator counts the bytes the
//! calling thread has out (per thread, so tests running in parallel do not
//! disturb it). Under AddressSanitizer a second test runs the soak again in a
//! child with `detect_leaks=1` and checks that LeakSanitizer reports nothing.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::process::Command;
use std::time::Instant;

use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{format_in, with_scratch};

/// The global allocator: `System`, counting per thread the bytes out, their
/// high-water mark, and every byte ever allocated.
struct CountingSystem;

thread_local! {
    // Const-initialised cells without destructors: usable from the allocator at
    // any point of a thread's life, without allocating.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
    if delta > 0 {
        let _ = TOTAL.try_with(|total| total.set(total.get() + delta.unsigned_abs()));
    }
}

/// Bytes of a layout as a signed delta (a layout's size is at most `isize::MAX`).
fn bytes(size: usize) -> isize {
    isize::try_from(size).unwrap_or(isize::MAX)
}

// SAFETY: every call is forwarded to `System` with the caller's arguments; the
// counting touches only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for CountingSystem {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantee, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(bytes(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantee, forwarded.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(bytes(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-bytes(layout.size()));
        // SAFETY: the caller's guarantee, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantee, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(-bytes(layout.size()));
            count(bytes(new_size));
        }
        p
    }
}

#[global_allocator]
static GLOBAL: CountingSystem = CountingSystem;

/// The calling thread's bytes out of the global allocator now.
fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Starts a new high-water mark at the current live bytes.
fn reset_peak() {
    PEAK.with(|peak| peak.set(live()));
}

fn peak() -> isize {
    PEAK.with(Cell::get)
}

fn total() -> usize {
    TOTAL.with(Cell::get)
}

/// One request, as a handler would make it: a few strings, a vector, a map and a
/// formatted string, all in the thread's scratch arena.
fn request(i: usize) -> usize {
    with_scratch(|arena| {
        let chart = arena.alloc_str(if i % 2 == 0 { "system.cpu" } else { "disk.io" });
        let mut dims: Vec<&str> = Vec::with_capacity_in(4, &*arena);
        for dim in ["user", "system", "nice", "iowait"] {
            dims.push(arena.alloc_str(dim));
        }
        let mut index: HashMap<&str, usize> = HashMap::with_capacity_in(4, &*arena);
        for (n, dim) in dims.iter().enumerate() {
            index.insert(dim, n);
        }
        let title = format_in!(&*arena, "{chart} request {i}");
        let values = arena.alloc_slice_fill_with(16, |k| (i + k) as u64);
        index.len() + dims.len() + usize::from(title.len() > 10) + usize::from(values[15] > 0)
    })
}

/// What [`request`] returns.
const ANSWER: usize = 10;

/// The requests of the soak (fewer under Miri, which is ~1000 times slower).
const REQUESTS: usize = if cfg!(miri) { 100 } else { 100_000 };

/// The process's resident size in bytes (Linux only; 0 elsewhere and under Miri,
/// which isolates the program from the file system), for the record.
fn resident() -> usize {
    if cfg!(miri) {
        return 0;
    }
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * page_size::get())
}

/// Set in the child that runs the soak under LeakSanitizer.
const CHILD_ENV: &str = "ONEWAYALLOC_SOAK_CHILD";

#[test]
fn scratch_soak_stays_flat() {
    if std::env::var_os(CHILD_ENV).is_none() && !cfg!(miri) && built_with_asan() {
        // Under ASan the soak runs once, in the child of the test below, which
        // checks this test's assertions and LeakSanitizer's silence together.
        eprintln!("built with AddressSanitizer: the soak runs in a child under LeakSanitizer");
        return;
    }
    let warm_up = REQUESTS / 100;
    for i in 0..warm_up {
        assert_eq!(request(i), ANSWER);
    }
    let rss_before = resident();
    let mut samples = std::vec::Vec::with_capacity(16);
    let start = Instant::now();
    let (live_before, total_before) = (live(), total());
    reset_peak();
    for i in warm_up..REQUESTS {
        assert_eq!(request(i), ANSWER);
        if i % (REQUESTS / 10) == 0 {
            samples.push(live());
        }
    }
    let (live_after, churned, high_water) = (live(), total() - total_before, peak() - live_before);
    let elapsed = start.elapsed();
    let rss_after = resident();
    eprintln!(
        "{} requests in {:.2?} (sanitizer mode: {}): live bytes {live_before} -> {live_after} \
         (samples {samples:?}), high-water {high_water} bytes above the start, {churned} bytes \
         allocated in all, resident {} -> {} KiB",
        REQUESTS - warm_up,
        elapsed,
        onewayalloc::SEPARATE_BLOCKS,
        rss_before / 1024,
        rss_after / 1024,
    );
    // Flat: every request leaves the thread's live bytes where they were. In the
    // page mode exactly (the pages); in sanitizer mode the record of outstanding
    // blocks keeps its tables' capacity, which its hash map may still grow once
    // to the request's high-water mark when its deleted slots run out.
    let slack = if onewayalloc::SEPARATE_BLOCKS {
        4096
    } else {
        0
    };
    for sample in samples.into_iter().chain([live_after]) {
        let growth = sample - live_before;
        assert!(
            (0..=slack).contains(&growth),
            "memory moved by {growth} bytes over the soak"
        );
    }
    // Bounded: no request holds more than one request's worth at a time.
    assert!(high_water <= 64 * 1024, "high-water {high_water} bytes");
    if onewayalloc::SEPARATE_BLOCKS {
        // Every allocation went to the global allocator and came back: without the
        // release at each reset, all of this would still be out. (Per request at
        // least the values, 128 bytes, the vector, 64, and the strings, 27.)
        let requests = REQUESTS - warm_up;
        assert!(
            churned >= requests * 200,
            "{churned} bytes for {requests} requests"
        );
    } else {
        // The pages are reused: nothing is allocated once warm (the map's seeds and
        // the formatting allocate nothing on the global heap).
        assert_eq!(churned, 0, "the page mode reuses its pages");
    }
}

/// Whether this binary is built with AddressSanitizer: its runtime answers
/// `ASAN_OPTIONS=help=1` with its list of flags.
fn built_with_asan() -> bool {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "no_such_test"])
        .env("ASAN_OPTIONS", "help=1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stderr).contains("AddressSanitizer")
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn scratch_soak_leaves_nothing_for_leak_sanitizer() {
    if !built_with_asan() {
        eprintln!("not built with AddressSanitizer: nothing to check");
        return;
    }
    let start = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "scratch_soak_stays_flat",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stderr.lines().find(|line| line.contains("requests in"));
    eprintln!(
        "child under LeakSanitizer in {:.2?}: {}",
        start.elapsed(),
        summary.unwrap_or("(no summary)")
    );
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Sanitizer"), "{stderr}");
    assert!(stderr.contains("requests in"), "the soak ran\n{stderr}");
}
