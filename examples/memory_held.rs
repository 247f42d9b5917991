//! Where the memory of `OneWayAlloc::new()` goes, and how to give it back.
//!
//! An arena made by `OneWayAlloc::new()` takes its first, small pages (64 to 512
//! KiB) from malloc and its large pages (1 MiB and more) from one page heap that
//! the whole process shares. When the arena is dropped, its large pages stay
//! resident in the heap, so that the next arena gets them without page faults:
//!
//! - `onewayalloc::free_page_bytes()` says how much that is; it never exceeds
//!   `free_page_limit()` (64 MiB unless `set_free_page_limit` says otherwise);
//! - it decays: every second (`FREE_PAGE_DECAY_EPOCH`) half of what no arena took
//!   goes back to the system, observed at the next arena that takes or returns a
//!   large page;
//! - `release_free_pages()` gives all of it back at once, and `Pool::clear()` gives
//!   back the pool's idle arenas and the heap's free pages.
//!
//! This program runs a few scenarios, each in a fresh process (it runs itself
//! again), once with `OneWayAlloc::new()` and once with
//! `OneWayAlloc::new_in(Global)`, whose pages all come from malloc. After each step
//! it prints what the process holds beyond its start (VmRSS), the heap's free
//! pages, a pool's idle bytes and the mappings added (lines of /proc/self/maps).
//!
//! Run it with `cargo run --release --example memory_held` (Linux).

// With the `nightly` feature `Global` is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::process::Command;
use std::sync::Barrier;
use std::{env, fs, thread};

use onewayalloc::{
    FREE_PAGE_DECAY_EPOCH, Global, OneWayAlloc, Pool, SEPARATE_BLOCKS, free_page_bytes,
    release_free_pages, set_free_page_limit,
};

const MIB: usize = 1 << 20;

/// Where the arenas of a run take their pages.
#[derive(Clone, Copy, PartialEq)]
enum Pages {
    /// `OneWayAlloc::new()`: large pages from the page heap.
    New,
    /// `OneWayAlloc::new_in(Global)`: every page from malloc.
    Global,
}

impl Pages {
    fn arena(self) -> OneWayAlloc {
        match self {
            Pages::New => OneWayAlloc::new(),
            Pages::Global => OneWayAlloc::new_in(Global),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Pages::New => "new()",
            Pages::Global => "new_in(Global)",
        }
    }
}

/// A scenario: it runs with arenas of `Pages` and reports its steps against `Start`.
type Scenario = fn(Pages, &Start);

/// The scenarios: a name for the command line and the function that runs it.
const SCENARIOS: [(&str, Scenario); 4] = [
    ("threads", threads),
    ("limit", limit),
    ("pool", pool),
    ("many", many),
];

// ----- The scenarios (each runs in a process of its own) ----------------------------

/// Eight threads fill an arena each with 48 MiB of small blocks, all alive at once,
/// then drop them. Then: the decay after a quiet while, `release_free_pages()`, and
/// glibc's `malloc_trim(0)`.
fn threads(pages: Pages, start: &Start) {
    eight_threads_fill_48_mib(pages);
    start.step("8 threads x 48 MiB, arenas dropped", None);

    // The decay runs when an arena takes or returns a large page: wait 2.5 epochs,
    // then run one more small job.
    thread::sleep(FREE_PAGE_DECAY_EPOCH * 5 / 2);
    fill(&pages.arena(), 2 * MIB);
    start.step("2.5 s later, one 2 MiB arena", None);

    release_free_pages();
    start.step("release_free_pages()", None);

    malloc_trim();
    start.step("malloc_trim(0) (glibc)", None);
}

/// The same threads with the heap's bound lowered to 16 MiB first.
fn limit(pages: Pages, start: &Start) {
    set_free_page_limit(16 * MIB);
    eight_threads_fill_48_mib(pages);
    start.step("set_free_page_limit(16 MiB), 8 x 48 MiB", None);
}

/// A pool lends eight arenas at once, 48 MiB each; they come back; then
/// `pool.clear()`.
fn pool(pages: Pages, start: &Start) {
    let pool = Pool::new();
    let all_out = Barrier::new(8);
    thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let mut arena = pool.get();
                if pages == Pages::Global {
                    // The pool takes back whatever arena the guard holds.
                    *arena = OneWayAlloc::new_in(Global);
                }
                fill(&arena, 48 * MIB);
                all_out.wait();
            });
        }
    });
    start.step("Pool: 8 guards x 48 MiB returned", Some(&pool));
    pool.clear();
    start.step("pool.clear()", Some(&pool));
}

/// 200 arenas alive at once, each with one block of 1.1 MiB of which one byte is
/// written.
fn many(pages: Pages, start: &Start) {
    let arenas: Vec<OneWayAlloc> = (0..200)
        .map(|_| {
            let arena = pages.arena();
            arena.alloc_bytes(MIB + MIB / 10)[0].write(1);
            arena
        })
        .collect();
    start.step("200 live arenas, 1.1 MiB block each", None);
    drop(arenas);
}

/// Allocates `bytes` in blocks of 64 B to 4 KiB and writes them, as a query that
/// builds many small values would.
fn fill(arena: &OneWayAlloc, bytes: usize) {
    let mut size = 64;
    let mut done = 0;
    while done < bytes {
        arena.alloc_slice_fill_copy(size, 0xA5_u8);
        done += size;
        size = (size * 7 + 64) % 4096 + 64; // varied sizes, 64..4159
    }
}

fn eight_threads_fill_48_mib(pages: Pages) {
    let all_full = Barrier::new(8);
    thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let arena = pages.arena();
                fill(&arena, 48 * MIB);
                all_full.wait();
            });
        }
    });
}

/// glibc's `malloc_trim(0)`: malloc gives its free memory back to the system.
fn malloc_trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a plain call into glibc's malloc, which takes its own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

// ----- Measuring and reporting --------------------------------------------------------

/// The process at the start of a scenario.
struct Start {
    rss_kb: usize,
    maps: usize,
}

impl Start {
    fn now() -> Start {
        Start {
            rss_kb: rss_kb(),
            maps: mappings(),
        }
    }

    /// Prints a step's figures for the parent: `STEP` and tab-separated fields.
    fn step(&self, what: &str, pool: Option<&Pool>) {
        let idle = pool.map_or(String::from("-"), |p| mib(p.stats().idle_bytes));
        println!(
            "STEP\t{what}\t{}\t{}\t{idle}\t{:+}",
            mib((rss_kb().saturating_sub(self.rss_kb)) * 1024),
            mib(free_page_bytes()),
            mappings() as isize - self.maps as isize,
        );
    }
}

fn rss_kb() -> usize {
    let status = fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn mappings() -> usize {
    fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

// ----- The two roles: the parent prints the table, a child runs one scenario --------

fn main() {
    let args: Vec<String> = env::args().collect();
    if let [_, child, scenario, pages] = &args[..] {
        assert_eq!(child, "child");
        let pages = if pages == "new" {
            Pages::New
        } else {
            Pages::Global
        };
        let (_, run) = SCENARIOS.iter().find(|(name, _)| name == scenario).unwrap();
        let start = Start::now();
        run(pages, &start);
        return;
    }
    if !cfg!(target_os = "linux") {
        println!("This example reads /proc/self: Linux only.");
        return;
    }
    if SEPARATE_BLOCKS {
        println!("(Sanitizer mode: every allocation is its own malloc block, no page heap.)");
    }
    println!(
        "{:<42} {:<15} {:>10} {:>11} {:>10} {:>5}",
        "step", "pages from", "VmRSS +", "free pages", "pool idle", "maps"
    );
    for (scenario, _) in SCENARIOS {
        let runs = [Pages::New, Pages::Global].map(|pages| run_child(scenario, pages));
        for step in 0..runs[0].len() {
            for (pages, steps) in [Pages::New, Pages::Global].iter().zip(&runs) {
                let fields = &steps[step];
                let what = if *pages == Pages::New {
                    fields[0].as_str()
                } else {
                    ""
                };
                println!(
                    "{what:<42} {:<15} {:>10} {:>11} {:>10} {:>5}",
                    pages.name(),
                    fields[1],
                    fields[2],
                    fields[3],
                    fields[4]
                );
            }
        }
        println!();
    }
    println!(
        "VmRSS +: resident memory beyond the scenario's start. free pages: free_page_bytes(),\n\
         the pages the heap keeps for the next arenas (at most free_page_limit()).\n\
         pool idle: Pool::stats().idle_bytes. maps: mappings added (each thread adds its\n\
         stack and a malloc heap; the page heap adds one per 64 MiB span in use)."
    );
}

/// Runs `scenario` with `pages` in a fresh process; returns the fields of its steps.
fn run_child(scenario: &str, pages: Pages) -> Vec<Vec<String>> {
    let arg = if pages == Pages::New { "new" } else { "global" };
    let out = Command::new(env::current_exe().unwrap())
        .args(["child", scenario, arg])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{scenario} {arg}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("STEP\t"))
        .map(|fields| fields.split('\t').map(String::from).collect())
        .collect()
}
