//! The memory a whole program holds with `OneWayAlloc::new()` (its large pages from
//! the process's page heap, src/engine/page_heap/) against the same program with
//! `OneWayAlloc::new_in(Global)` (every page from malloc): the rows of issue 30.
//!
//! Each test runs its scenario twice, in fresh child processes (this binary again,
//! `--exact <test>`, the allocator named by [`CHILD_ENV`]), so that every scenario
//! starts from a clean process and no other test moves its figures. The child prints
//! one line, `FIGURES source=<new|global> key=value ...` (sizes in kB), and the
//! parent prints both lines and asserts the row's target. VmRSS, VmHWM and VmSize
//! come from /proc/self/status, mappings are the lines of /proc/self/maps.
//!
//! `cargo test --test page_heap_memory -- --nocapture` shows the figures.
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]
// With the `nightly` feature `Global` is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use onewayalloc::{
    Global, OneWayAlloc, Pool, SEPARATE_BLOCKS, free_page_bytes, free_page_limit,
    release_free_pages,
};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// The environment variable that makes a run of this binary the child of a test:
/// `new` or `global`, the allocator its scenario uses.
const CHILD_ENV: &str = "ONEWAYALLOC_MEMORY_SCENARIO";

/// The longest a scenario's child may run before the parent kills it (the test
/// fails rather than hangs).
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

/// Where an arena's pages come from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    /// `OneWayAlloc::new()`: large pages from the page heap.
    New,
    /// `OneWayAlloc::new_in(Global)`: every page from malloc.
    Global,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::New => "new",
            Source::Global => "global",
        }
    }

    fn arena(self) -> OneWayAlloc {
        match self {
            Source::New => OneWayAlloc::new(),
            Source::Global => OneWayAlloc::new_in(Global),
        }
    }

    /// A guard of `pool` whose arena is of this source. The scenarios take every
    /// guard before any comes back, so each holds a fresh arena of `new()`; for
    /// `Global` it is replaced by one of `new_in(Global)`, which the pool takes
    /// back as any other.
    fn pool_guard(self, pool: &Pool) -> onewayalloc::PooledArena<'_> {
        let mut guard = pool.get();
        if self == Source::Global {
            *guard = OneWayAlloc::new_in(Global);
        }
        guard
    }
}

/// The source this process runs a scenario with, if it is a test's child.
fn child_source() -> Option<Source> {
    match std::env::var(CHILD_ENV).ok()?.as_str() {
        "new" => Some(Source::New),
        "global" => Some(Source::Global),
        other => panic!("{CHILD_ENV}={other}"),
    }
}

// ----- Measuring ---------------------------------------------------------------------

/// A field of /proc/self/status, in kB.
fn status_kb(key: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .unwrap_or_else(|| panic!("{key} not in /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn rss_kb() -> usize {
    status_kb("VmRSS")
}

/// The mappings of the process: lines of /proc/self/maps.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

/// glibc's `malloc_trim(0)`: gives the free memory of malloc's heaps back to the OS.
fn malloc_trim() {
    #[cfg(target_env = "gnu")]
    // SAFETY: a plain call into glibc's malloc, which takes its own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The line a child prints, `FIGURES source=.. key=value ...`.
struct Figures(Vec<(&'static str, usize)>);

impl Figures {
    fn new() -> Self {
        Figures(Vec::new())
    }

    fn set(&mut self, key: &'static str, value: usize) -> &mut Self {
        self.0.push((key, value));
        self
    }

    fn print(&self, source: Source) {
        let mut line = format!("FIGURES source={}", source.name());
        for (key, value) in &self.0 {
            line += &format!(" {key}={value}");
        }
        println!("{line}");
    }
}

/// A child's figures, parsed.
struct Parsed {
    line: String,
    values: HashMap<String, i64>,
}

impl Parsed {
    fn get(&self, key: &str) -> i64 {
        *self
            .values
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {}", self.line))
    }
}

/// Runs test `test` in a child process with `source`, returns its figures.
fn run_child(test: &str, source: Source) -> Parsed {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, source.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let err = thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > CHILD_DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let Some(status) = status else {
        panic!(
            "{test} ({}) ran past {CHILD_DEADLINE:?}\n{out}\n{err}",
            source.name()
        );
    };
    assert!(
        status.success(),
        "{test} ({}) failed: {status}\n{out}\n{err}",
        source.name()
    );
    // The harness's "test <name> ... " may precede the figures on their line.
    let line = out
        .lines()
        .find_map(|l| l.find("FIGURES ").map(|at| l[at..].to_string()))
        .unwrap_or_else(|| panic!("{test} ({}): no figures\n{out}\n{err}", source.name()));
    let values = line
        .split_whitespace()
        .skip(1)
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            Some((key.to_string(), value.parse().ok()?))
        })
        .collect();
    Parsed { line, values }
}

/// The scenario's figures with `OneWayAlloc::new()` and with `new_in(Global)`,
/// printed; `None` in a child (which ran `scenario` and printed its figures) and
/// in the sanitizer mode (no pages, so no page heap).
fn compare(test: &str, scenario: fn(Source) -> Figures) -> Option<(Parsed, Parsed)> {
    if SEPARATE_BLOCKS {
        return None;
    }
    if let Some(source) = child_source() {
        scenario(source).print(source);
        return None;
    }
    let new = run_child(test, Source::New);
    let global = run_child(test, Source::Global);
    println!("{test}:\n  {}\n  {}", new.line, global.line);
    Some((new, global))
}

// ----- Work --------------------------------------------------------------------------

/// Allocates `bytes` in blocks of 64 B to 4 KiB (xorshift sizes from `seed`), each
/// written (zeroed by `alloc_zeroed`).
fn fill(arena: &OneWayAlloc, bytes: usize, seed: u64) {
    let mut state = seed | 1;
    let mut done = 0;
    while done < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let size = 64 + (state % (4096 - 64 + 1)) as usize;
        arena.alloc_zeroed(size, 1)[size - 1] = 1;
        done += size;
    }
}

const THREADS: usize = 8;
const PER_THREAD: usize = 48 * MIB;

/// Eight threads fill an arena with 48 MiB each, all eight alive at once, then drop
/// them.
fn eight_threads_fill_and_drop(source: Source) {
    let barrier = Barrier::new(THREADS);
    thread::scope(|scope| {
        for t in 0..THREADS {
            let barrier = &barrier;
            scope.spawn(move || {
                let arena = source.arena();
                fill(&arena, PER_THREAD, t as u64 + 1);
                barrier.wait();
                drop(arena);
            });
        }
    });
}

fn kb(bytes: usize) -> usize {
    bytes / KIB
}

// ----- The rows ----------------------------------------------------------------------

/// Row 1: 8 threads each fill an arena with 48 MiB, all dropped, no call. What
/// `new()` holds beyond the start is the heap's free pages (bounded by the limit),
/// and at most 8 MiB besides.
#[test]
fn filled_arenas_dropped_leave_at_most_the_free_pages() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        eight_threads_fill_and_drop(source);
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_end", rss_kb())
            .set("hwm", status_kb("VmHWM"))
            .set("free", kb(free_page_bytes()))
            .set("limit", kb(free_page_limit()));
        figures
    }
    let Some((new, global)) = compare(
        "filled_arenas_dropped_leave_at_most_the_free_pages",
        scenario,
    ) else {
        return;
    };
    assert!(new.get("free") <= new.get("limit"), "{}", new.line);
    let held = new.get("rss_end") - new.get("rss_start");
    assert!(
        held <= new.get("free") + 8 * 1024,
        "held {held} kB beyond the free pages + 8 MiB\n{}\n{}",
        new.line,
        global.line
    );
    assert_eq!(global.get("free"), 0, "{}", global.line);
}

/// Row 2: the same, then `release_free_pages()`: `new()` holds no more than malloc
/// alone, within 4 MiB. Measured without and with glibc's `malloc_trim(0)`, the same
/// calls in both programs.
#[test]
fn released_free_pages_leave_what_malloc_leaves() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        eight_threads_fill_and_drop(source);
        let rss_dropped = rss_kb();
        let released = release_free_pages();
        let rss_released = rss_kb();
        malloc_trim();
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_dropped", rss_dropped)
            .set("released", kb(released))
            .set("rss_released", rss_released)
            .set("rss_trimmed", rss_kb())
            .set("free", kb(free_page_bytes()));
        figures
    }
    let Some((new, global)) = compare("released_free_pages_leave_what_malloc_leaves", scenario)
    else {
        return;
    };
    assert_eq!(new.get("free"), 0, "{}", new.line);
    for point in ["rss_released", "rss_trimmed"] {
        let over =
            (new.get(point) - new.get("rss_start")) - (global.get(point) - global.get("rss_start"));
        assert!(
            over <= 4 * 1024,
            "{point}: new() holds {over} kB more than new_in(Global)\n{}\n{}",
            new.line,
            global.line
        );
    }
}

/// Row 3: a `Pool::new()` with 8 guards of 48 MiB out at once, returned, then
/// `pool.clear()`: the process is back within 4 MiB of its start.
#[test]
fn a_cleared_pool_gives_back_what_its_arenas_held() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        let pool = Pool::new();
        let barrier = Barrier::new(THREADS);
        thread::scope(|scope| {
            for t in 0..THREADS {
                let (pool, barrier) = (&pool, &barrier);
                scope.spawn(move || {
                    let guard = source.pool_guard(pool);
                    fill(&guard, PER_THREAD, t as u64 + 1);
                    barrier.wait();
                    drop(guard);
                });
            }
        });
        let rss_returned = rss_kb();
        let idle = pool.stats().idle_bytes;
        let free_returned = free_page_bytes();
        pool.clear();
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_returned", rss_returned)
            .set("idle_returned", kb(idle))
            .set("free_returned", kb(free_returned))
            .set("rss_end", rss_kb())
            .set("free", kb(free_page_bytes()))
            .set("idle", kb(pool.stats().idle_bytes));
        figures
    }
    let Some((new, global)) = compare("a_cleared_pool_gives_back_what_its_arenas_held", scenario)
    else {
        return;
    };
    let held = new.get("rss_end") - new.get("rss_start");
    assert!(
        held <= 4 * 1024,
        "{held} kB held after clear()\n{}\n{}",
        new.line,
        global.line
    );
}

/// Row 4: 8 rounds of a 60 MiB arena dropped, then a small pool guard kept and 12
/// idle pool arenas (12 guards out at once, 8 MiB each, returned): what the
/// process holds beyond its start is what the pool and the heap say they hold, and
/// at most 8 MiB besides.
#[test]
fn idle_pool_arenas_and_free_pages_account_for_the_memory_held() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        for round in 0..8 {
            let arena = source.arena();
            fill(&arena, 60 * MIB, round + 1);
        }
        let pool = Pool::new();
        let small = source.pool_guard(&pool);
        small.alloc_bytes(1000);
        let guards: Vec<_> = (0..12).map(|_| source.pool_guard(&pool)).collect();
        for (i, guard) in guards.iter().enumerate() {
            fill(guard, 8 * MIB, i as u64 + 100);
        }
        drop(guards);
        let stats = pool.stats();
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_end", rss_kb())
            .set("idle_arenas", stats.idle_arenas)
            .set("idle", kb(stats.idle_bytes))
            .set("free", kb(free_page_bytes()));
        drop(small);
        figures
    }
    let Some((new, global)) = compare(
        "idle_pool_arenas_and_free_pages_account_for_the_memory_held",
        scenario,
    ) else {
        return;
    };
    for parsed in [&new, &global] {
        assert_eq!(parsed.get("idle_arenas"), 12, "{}", parsed.line);
    }
    let held = new.get("rss_end") - new.get("rss_start");
    let accounted = new.get("idle") + new.get("free");
    assert!(
        held <= accounted + 8 * 1024,
        "{held} kB held, {accounted} kB accounted for\n{}\n{}",
        new.line,
        global.line
    );
}

/// Row 5: 200 live arenas, each with one 1.1 MiB block, one byte of it written:
/// `new()` costs at most twice malloc's memory (+8 MiB) and 16 more mappings.
#[test]
fn many_barely_touched_arenas_cost_little_memory_and_few_mappings() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        let maps_start = mappings();
        let arenas: Vec<OneWayAlloc> = (0..200)
            .map(|_| {
                let arena = source.arena();
                arena.alloc_bytes(MIB + MIB / 10)[0].write(1);
                arena
            })
            .collect();
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_end", rss_kb())
            .set("maps_start", maps_start)
            .set("maps_end", mappings())
            .set("spans", onewayalloc::mapped_spans().0);
        drop(arenas);
        figures
    }
    let Some((new, global)) = compare(
        "many_barely_touched_arenas_cost_little_memory_and_few_mappings",
        scenario,
    ) else {
        return;
    };
    let grown = |p: &Parsed| p.get("rss_end") - p.get("rss_start");
    assert!(
        grown(&new) <= 2 * grown(&global) + 8 * 1024,
        "{} kB against {} kB\n{}\n{}",
        grown(&new),
        grown(&global),
        new.line,
        global.line
    );
    let more_maps = new.get("maps_end") - new.get("maps_start");
    assert!(more_maps <= 16, "{more_maps} more mappings\n{}", new.line);
}

/// Row 6: under `ulimit -v 1 GiB` (RLIMIT_AS, set in the child), 40 live arenas
/// touching 2 MiB each, then a 10 MiB `Vec`: every allocation succeeds.
#[test]
fn arenas_work_under_an_address_space_limit() {
    fn scenario(source: Source) -> Figures {
        let limit = libc::rlimit {
            rlim_cur: 1 << 30,
            rlim_max: 1 << 30,
        };
        // SAFETY: sets this process's own limit from a valid struct.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
        assert_eq!(rc, 0, "setrlimit: {}", std::io::Error::last_os_error());
        let vm_start = status_kb("VmSize");
        let mut arenas = Vec::new();
        let mut failed = 0;
        for _ in 0..40 {
            let arena = source.arena();
            let mut touched = 0;
            while touched < 2 * MIB {
                match arena.try_alloc_zeroed(16 * KIB, 1) {
                    Ok(block) => block[0] = 1,
                    Err(_) => failed += 1,
                }
                touched += 16 * KIB;
            }
            arenas.push(arena);
        }
        let mut vec: Vec<u8> = Vec::new();
        let vec_ok = vec.try_reserve_exact(10 * MIB).is_ok();
        if vec_ok {
            vec.resize(10 * MIB, 1);
        }
        let mut figures = Figures::new();
        figures
            .set("vm_start", vm_start)
            .set("vm_end", status_kb("VmSize"))
            .set("failed", failed)
            .set("vec_ok", usize::from(vec_ok))
            .set("spans", onewayalloc::mapped_spans().0);
        figures
    }
    let Some((new, global)) = compare("arenas_work_under_an_address_space_limit", scenario) else {
        return;
    };
    for parsed in [&new, &global] {
        assert_eq!(parsed.get("failed"), 0, "{}", parsed.line);
        assert_eq!(parsed.get("vec_ok"), 1, "{}", parsed.line);
    }
}

/// Beyond the rows: the free pages decay. An arena fills 40 MiB and is dropped; after
/// 2.5 quiet epochs, the next arena that takes a large page ends them, and at least
/// one of them saw no call at all: half of the free pages, at least, go back.
#[test]
fn free_pages_decay_after_quiet_epochs() {
    fn scenario(source: Source) -> Figures {
        let rss_start = rss_kb();
        fill(&source.arena(), 40 * MIB, 1);
        let (rss_dropped, free_dropped) = (rss_kb(), free_page_bytes());
        thread::sleep(onewayalloc::FREE_PAGE_DECAY_EPOCH * 5 / 2);
        source.arena().alloc_bytes(2 * MIB)[0].write(1);
        let mut figures = Figures::new();
        figures
            .set("rss_start", rss_start)
            .set("rss_dropped", rss_dropped)
            .set("free_dropped", kb(free_dropped))
            .set("rss_end", rss_kb())
            .set("free", kb(free_page_bytes()));
        figures
    }
    let Some((new, _)) = compare("free_pages_decay_after_quiet_epochs", scenario) else {
        return;
    };
    let half = new.get("free_dropped") / 2;
    assert!(new.get("free_dropped") >= 32 * 1024, "{}", new.line);
    assert!(new.get("free") <= half, "{}", new.line);
    let given_back = new.get("rss_dropped") - new.get("rss_end");
    assert!(given_back >= half - 4 * 1024, "{}", new.line);
}

/// The same decay driven by a quiet process's timer: no arena takes or returns a
/// page after the drop, `decay_free_pages()` (which `Pool::decay` calls) ends the
/// epochs that passed.
#[test]
fn a_quiet_process_decays_its_free_pages_by_timer() {
    fn scenario(source: Source) -> Figures {
        fill(&source.arena(), 40 * MIB, 1);
        let free_dropped = free_page_bytes();
        onewayalloc::decay_free_pages(); // within the epoch: nothing goes
        let free_early = free_page_bytes();
        thread::sleep(onewayalloc::FREE_PAGE_DECAY_EPOCH * 5 / 2);
        onewayalloc::Pool::new().decay();
        let mut figures = Figures::new();
        figures
            .set("free_dropped", kb(free_dropped))
            .set("free_early", kb(free_early))
            .set("free", kb(free_page_bytes()));
        figures
    }
    let Some((new, _)) = compare("a_quiet_process_decays_its_free_pages_by_timer", scenario) else {
        return;
    };
    assert!(new.get("free_dropped") >= 32 * 1024, "{}", new.line);
    assert_eq!(
        new.get("free_early"),
        new.get("free_dropped"),
        "{}",
        new.line
    );
    assert!(
        new.get("free") <= new.get("free_dropped") / 2,
        "{}",
        new.line
    );
}

/// MemTotal plus SwapTotal, in bytes.
fn memory_and_swap() -> usize {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib = |key: &str| -> usize {
        let line = info.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (kib("MemTotal:") + kib("SwapTotal:")) * KIB
}

/// Row 7: `try_alloc_bytes` and `try_with_size_hint` of 100 GiB (or twice memory
/// and swap, if more) return `Err`. Under `vm.overcommit_memory = 1` the kernel
/// grants any size, to malloc too, and the row does not apply.
#[test]
fn sizes_beyond_the_system_are_errors() {
    fn scenario(source: Source) -> Figures {
        let too_much = (100 << 30).max(2 * memory_and_swap());
        let arena = source.arena();
        let alloc_err = arena.try_alloc_bytes(too_much).is_err();
        let hint_err = match source {
            Source::New => OneWayAlloc::try_with_size_hint(too_much).is_err(),
            Source::Global => OneWayAlloc::try_with_size_hint_in(too_much, Global).is_err(),
        };
        // Still usable.
        let after_ok = arena.try_alloc_bytes(2 * MIB).is_ok();
        let mut figures = Figures::new();
        figures
            .set("size_gib", too_much >> 30)
            .set("alloc_err", usize::from(alloc_err))
            .set("hint_err", usize::from(hint_err))
            .set("after_ok", usize::from(after_ok));
        figures
    }
    let overcommit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").unwrap();
    if overcommit.trim() == "1" && child_source().is_none() {
        println!("vm.overcommit_memory = 1: every size is granted, skipped");
        return;
    }
    let Some((new, global)) = compare("sizes_beyond_the_system_are_errors", scenario) else {
        return;
    };
    for parsed in [&new, &global] {
        for key in ["alloc_err", "hint_err", "after_ok"] {
            assert_eq!(parsed.get(key), 1, "{key}: {}", parsed.line);
        }
    }
}

/// How long a forked child may take before the test kills it and fails.
const FORK_DEADLINE: Duration = Duration::from_secs(10);

/// Waits for `pid` to exit, at most [`FORK_DEADLINE`]; kills it past that. Returns
/// its wait status, or `None` if it was killed.
fn wait_or_kill(pid: libc::pid_t) -> Option<libc::c_int> {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child, writing its status into a local.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            return Some(status);
        }
        assert_eq!(rc, 0, "waitpid: {}", std::io::Error::last_os_error());
        if start.elapsed() > FORK_DEADLINE {
            // SAFETY: `pid` is our child, not yet reaped (so not reused).
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        thread::sleep(Duration::from_micros(100));
    }
}

/// Row 8: 2000 forks while a thread creates, fills and drops
/// arenas (3 MiB each, in 64 KiB blocks, a byte of each written): each child
/// creates an arena, allocates 4 MiB in it the same way, drops it and exits; every child finishes (none is left waiting on a
/// lock that a thread of the parent held at the fork).
#[test]
fn forks_beside_a_thread_of_arenas_all_finish() {
    fn scenario(source: Source) -> Figures {
        let forks = 2000;
        let stop = AtomicBool::new(false);
        let started = Barrier::new(2);
        let (mut ok, mut failed, mut killed, mut rounds) = (0, 0, 0, 0);
        thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let mut rounds = 0usize;
                loop {
                    let arena = source.arena();
                    for _ in 0..48 {
                        arena.alloc_bytes(64 * KIB)[0].write(1);
                    }
                    drop(arena);
                    if rounds == 0 {
                        // The heap is in use (its fork handlers registered) before
                        // the first fork.
                        started.wait();
                    }
                    rounds += 1;
                    if stop.load(Ordering::Relaxed) {
                        return rounds;
                    }
                }
            });
            started.wait();
            for _ in 0..forks {
                // SAFETY: the child calls only the allocator (malloc is fork-safe in
                // glibc, the page heap's lock is released by its fork handlers) and
                // `_exit`; it never returns into the test harness.
                let pid = unsafe { libc::fork() };
                assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
                if pid == 0 {
                    let arena = source.arena();
                    for _ in 0..64 {
                        arena.alloc_bytes(64 * KIB)[0].write(1);
                    }
                    drop(arena);
                    // SAFETY: ends the child without running the parent's exit
                    // handlers or destructors.
                    unsafe { libc::_exit(0) };
                }
                match wait_or_kill(pid) {
                    None => killed += 1,
                    Some(status) if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 => {
                        ok += 1;
                    }
                    Some(_) => failed += 1,
                }
            }
            stop.store(true, Ordering::Relaxed);
            rounds = worker.join().unwrap();
        });
        let mut figures = Figures::new();
        figures
            .set("forks", forks)
            .set("ok", ok)
            .set("failed", failed)
            .set("killed", killed)
            .set("worker_rounds", rounds);
        figures
    }
    let Some((new, global)) = compare("forks_beside_a_thread_of_arenas_all_finish", scenario)
    else {
        return;
    };
    for parsed in [&new, &global] {
        assert_eq!(parsed.get("ok"), parsed.get("forks"), "{}", parsed.line);
    }
}
