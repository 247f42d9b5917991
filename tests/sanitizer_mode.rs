//! The sanitizer mode catches misuse that the page mode cannot see.
//!
//! Each misuse runs in a child process: this test binary again, with
//! `ONEWAYALLOC_MISUSE` naming the case and only the child test selected. Built
//! with `-Zsanitizer=address` (which turns the sanitizer mode on by itself), the
//! child must be reported, by AddressSanitizer, by LeakSanitizer or by the arena's
//! own record of outstanding blocks; in the page mode the same program runs
//! silently, because every access stays inside a page the arena still holds, which
//! is why the mode exists. Correct programs are never reported, in either mode,
//! with leak detection on: since SPEC v2 §1.7 `reset`, the end of a `scope`, the
//! end of a `with_scratch` call and drop release every block outstanding, so the
//! suite needs no `detect_leaks=0`. Run the ASan half with:
//!
//! ```text
//! RUSTFLAGS=-Zsanitizer=address \
//!     cargo +nightly test --target x86_64-unknown-linux-gnu --features separate-blocks --tests
//! ```
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::NonNull;
use std::process::{Command, Output};

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use onewayalloc::{OneWayAlloc, with_scratch};

const CASE_ENV: &str = "ONEWAYALLOC_MISUSE";

/// The value the read-after cases store, then read back through a stale pointer.
const STORED: u64 = 0x1234_5678;

/// Reads through a pointer that may be stale and prints what it found (the page
/// mode reads the old value back, silently).
///
/// # Safety
/// None: the callers pass stale pointers on purpose, the bug the sanitizer must catch.
unsafe fn read_stale(p: *const u64) {
    // SAFETY: none, see above.
    let value = unsafe { p.read_volatile() };
    println!("read {value:#x} through a stale pointer");
}

/// The misuse (or correct program) named by `ONEWAYALLOC_MISUSE`. Does nothing
/// when run normally.
#[test]
fn child_misuse() {
    let Ok(case) = std::env::var(CASE_ENV) else {
        return;
    };
    match case.as_str() {
        "write_past_vec_end" => {
            let arena = OneWayAlloc::new();
            let mut v: Vec<u8, _> = Vec::with_capacity_in(16, &arena);
            v.extend_from_slice(&[1; 16]);
            // Something after the vector, as in any real arena.
            let _next = arena.alloc([0u8; 16]);
            let end = v.as_mut_ptr().wrapping_add(v.capacity());
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { end.write_volatile(7) };
        }
        "read_after_box_drop" => {
            let arena = OneWayAlloc::new();
            let b = Box::new_in(STORED, &arena);
            let p: *const u64 = &*b;
            drop(b);
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { read_stale(p) };
        }
        "read_after_reset" => {
            let mut arena = OneWayAlloc::new();
            let p: *const u64 = arena.alloc(STORED);
            arena.reset();
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { read_stale(p) };
        }
        "read_after_scope" => {
            let mut arena = OneWayAlloc::new();
            // A raw pointer has no lifetime: the borrow checker lets it out.
            let p = arena.scope(|s| -> *const u64 { s.alloc(STORED) });
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { read_stale(p) };
        }
        "read_after_inner_scope" => {
            let mut arena = OneWayAlloc::new();
            arena.scope(|outer| {
                let kept = outer.alloc(1u64);
                let p = outer.scope(|inner| -> *const u64 { inner.alloc(STORED) });
                // The outer scope's block is still valid: reading it is fine.
                assert_eq!(*kept, 1);
                // SAFETY: none: this is the bug the sanitizer must catch.
                unsafe { read_stale(p) };
            });
        }
        "read_after_with_scratch" => {
            let p = with_scratch(|arena| -> *const u64 { arena.alloc(STORED) });
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { read_stale(p) };
        }
        "read_after_arena_drop" => {
            let arena = OneWayAlloc::new();
            let p: *const u64 = arena.alloc(STORED);
            drop(arena);
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { read_stale(p) };
        }
        "double_free" => {
            let arena = OneWayAlloc::new();
            let layout = Layout::new::<u64>();
            let p = (&arena).allocate(layout).unwrap().cast::<u8>();
            // SAFETY: the first call is right; the second is the bug to catch.
            unsafe {
                (&arena).deallocate(p, layout);
                (&arena).deallocate(p, layout);
            }
        }
        "free_after_reset" => {
            let mut arena = OneWayAlloc::new();
            let layout = Layout::new::<u64>();
            let p = (&arena).allocate(layout).unwrap().cast::<u8>();
            arena.reset();
            // SAFETY: none: the block went with the reset; this is the bug to catch.
            unsafe { (&arena).deallocate(p, layout) };
        }
        "leak_the_arena" => {
            let arena = OneWayAlloc::new();
            arena.alloc_str("never released");
            core::mem::forget(Vec::<u64, _>::with_capacity_in(8, &arena));
            core::mem::forget(arena);
        }
        "no_misuse" => {
            let arena = OneWayAlloc::new();
            let mut v: Vec<u8, _> = Vec::with_capacity_in(16, &arena);
            v.extend_from_slice(&[1; 16]);
            drop(v);
        }
        "blocks_released_by_reset_scope_scratch_and_drop" => {
            // Nothing here is freed one by one: reset, the scopes, `with_scratch`
            // and drop must release it all, or LeakSanitizer reports it.
            let mut arena = OneWayAlloc::new();
            for round in 0..100 {
                for i in 0..50 {
                    let s = arena.alloc_str(&format!("dimension {round}.{i}"));
                    assert!(s.starts_with("dimension"));
                }
                let mut v: Vec<u64, _> = Vec::new_in(&arena);
                v.extend(0..100);
                core::mem::forget(v); // safe, and released at the reset below
                core::mem::forget(Box::new_in([round; 8], &arena));
                arena.scope(|outer| {
                    let kept = outer.alloc_str("outer");
                    outer.scope(|inner| {
                        inner.alloc_slice_copy(&[round; 32]);
                        core::mem::forget(Box::new_in(1u8, inner.arena()));
                    });
                    assert_eq!(kept, "outer");
                });
                let n = with_scratch(|scratch| scratch.alloc_str("request").len());
                assert_eq!(n, 7);
                arena.reset();
            }
            arena.alloc_str("released at drop");
            core::mem::forget(Box::new_in(0u64, &arena));
        }
        other => panic!("unknown case {other}"),
    }
}

fn run_child(case: &str, asan_options: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_misuse", "--nocapture", "--test-threads=1"])
        .env(CASE_ENV, case)
        .env("ASAN_OPTIONS", asan_options)
        .output()
        .unwrap()
}

/// Whether this binary is built with AddressSanitizer: its runtime answers
/// `ASAN_OPTIONS=help=1` with its list of flags.
fn built_with_asan() -> bool {
    let out = run_child("no_misuse", "help=1");
    String::from_utf8_lossy(&out.stderr).contains("AddressSanitizer")
}

/// How a misuse behaves in each build.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A bad access to arena memory. In sanitizer mode it touches a block that is
    /// not live (out of bounds, or released), which AddressSanitizer reports; in
    /// the page mode it stays inside a page the arena still holds, silently. Not
    /// run in sanitizer mode without ASan, where it would touch the real heap.
    BadAccess,
    /// A read of memory returned to the global allocator in both modes (the page
    /// itself is freed in the page mode): only run under ASan.
    FreedInBothModes,
    /// A bad `deallocate`: the arena's record of outstanding blocks catches it in
    /// sanitizer mode (a panic, with or without ASan); the page mode ignores it.
    CaughtByRecord,
    /// Memory never released: LeakSanitizer reports it; nothing else checks.
    Leak,
}

/// The misuse cases: name, kind, and what the sanitizer mode reports.
const MISUSE: &[(&str, Kind, &str)] = &[
    (
        "write_past_vec_end",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-buffer-overflow",
    ),
    (
        "read_after_box_drop",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "read_after_reset",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "read_after_scope",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "read_after_inner_scope",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "read_after_with_scratch",
        Kind::BadAccess,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "read_after_arena_drop",
        Kind::FreedInBothModes,
        "ERROR: AddressSanitizer: heap-use-after-free",
    ),
    (
        "double_free",
        Kind::CaughtByRecord,
        "deallocate of a block this arena does not hold",
    ),
    (
        "free_after_reset",
        Kind::CaughtByRecord,
        "deallocate of a block this arena does not hold",
    ),
    (
        "leak_the_arena",
        Kind::Leak,
        "ERROR: LeakSanitizer: detected memory leaks",
    ),
];

/// Correct programs: never reported, in any mode, with leak detection on.
const CORRECT: &[&str] = &[
    "no_misuse",
    "blocks_released_by_reset_scope_scratch_and_drop",
];

fn assert_reported(case: &str, out: &Output, report: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{case}: the child must fail\n{stderr}"
    );
    assert!(
        stderr.contains(report),
        "{case}: expected `{report}`\n{stderr}"
    );
}

fn assert_silent(case: &str, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{case}: the child must run to the end\n{stderr}"
    );
    assert!(
        !stderr.contains("Sanitizer") && !stderr.contains("panicked"),
        "{case}: nothing may be reported\n{stderr}"
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri cannot spawn processes (and would rightly flag the misuse)"
)]
fn misuse_is_reported_only_in_sanitizer_mode() {
    let asan = built_with_asan();
    if asan {
        assert!(
            std::hint::black_box(onewayalloc::SEPARATE_BLOCKS),
            "-Zsanitizer=address must turn the sanitizer mode on by itself"
        );
    }
    let separate_without_asan = onewayalloc::SEPARATE_BLOCKS && !asan;
    let mut run = 0;
    for &(case, kind, report) in MISUSE {
        let skip = match kind {
            // Without ASan these would corrupt the real heap.
            Kind::BadAccess => separate_without_asan,
            Kind::FreedInBothModes => !asan,
            Kind::CaughtByRecord | Kind::Leak => false,
        };
        if skip {
            eprintln!("{case}: not run in this build (it would touch the real heap)");
            continue;
        }
        run += 1;
        // Leak detection stays on for every child (it is on by default with ASan on
        // Linux; set here so an outer `detect_leaks=0` cannot hide a leak).
        let out = run_child(case, "detect_leaks=1");
        // Under ASan everything is reported; without it only what the record sees.
        let reported = asan || (onewayalloc::SEPARATE_BLOCKS && kind == Kind::CaughtByRecord);
        if reported {
            assert_reported(case, &out, report);
        } else {
            assert_silent(case, &out);
            if case.starts_with("read_after") {
                // The page mode read the stale value back without a word.
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    stdout.contains("through a stale pointer"),
                    "{case}\n{stdout}"
                );
            }
        }
    }
    let expected = if asan {
        MISUSE.len()
    } else if separate_without_asan {
        MISUSE
            .iter()
            .filter(|&&(_, kind, _)| matches!(kind, Kind::CaughtByRecord | Kind::Leak))
            .count()
    } else {
        MISUSE.len() - 1
    };
    assert_eq!(run, expected);
    for case in CORRECT {
        assert_silent(case, &run_child(case, "detect_leaks=1"));
    }
}

/// A backing allocator that counts the bytes it has out.
struct Counting<'a>(&'a Cell<usize>);

// SAFETY: every call is forwarded to `Global`, which upholds the contract; the
// count is bookkeeping only.
unsafe impl Allocator for Counting<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(layout)?;
        self.0.set(self.0.get() + layout.size());
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        self.0.set(self.0.get() - layout.size());
        // SAFETY: the caller's guarantee, and `allocate` got the block from `Global`.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

/// SPEC §1.7: in sanitizer mode `reset`, the rollback at the end of a scope and
/// drop release every block outstanding, including blocks of collections that
/// were `mem::forget`-ten; in the page mode the pages stay until drop. Either way
/// the backing allocator's live bytes stay flat over any number of rounds.
#[test]
fn reset_scope_and_drop_release_every_block() {
    let live = Cell::new(0);
    let mut arena = OneWayAlloc::new_in(Counting(&live));
    let at_start = live.get();
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(at_start, 0, "the sanitizer mode obtains nothing up front");
    }
    let rounds = if cfg!(miri) { 3 } else { 50 };
    let mut after_first_round = None;
    for round in 0..rounds {
        for i in 0..20 {
            arena.alloc_str(&format!("chart {round}.{i}"));
        }
        let mut v: Vec<u32, _> = Vec::new_in(&arena);
        v.extend(0..500);
        core::mem::forget(v);
        core::mem::forget(Box::new_in([7u8; 100], &arena));
        let before_reset = live.get();
        if onewayalloc::SEPARATE_BLOCKS {
            // 20 strings, the vector's buffer, the box.
            assert!(before_reset >= 20 * 9 + 500 * 4 + 100, "{before_reset}");
        }
        arena.reset();
        if onewayalloc::SEPARATE_BLOCKS {
            assert_eq!(live.get(), 0, "round {round}: reset releases every block");
        } else {
            assert_eq!(
                live.get(),
                before_reset,
                "round {round}: reset keeps the pages"
            );
        }
        let after = *after_first_round.get_or_insert(live.get());
        assert_eq!(live.get(), after, "round {round}: flat");
    }

    // Scopes: the rollback releases what the scope allocated, nothing before it.
    let kept = arena.alloc(1u64) as *const u64;
    let before_scope = live.get();
    arena.scope(|outer| {
        let outer_block = outer.alloc_str("outer");
        let before_inner = live.get();
        outer.scope(|inner| {
            inner.alloc_slice_copy(&[0u64; 64]);
            core::mem::forget(Box::new_in(3u32, inner.arena()));
            if onewayalloc::SEPARATE_BLOCKS {
                assert!(live.get() >= before_inner + 64 * 8 + 4);
            }
        });
        if onewayalloc::SEPARATE_BLOCKS {
            assert_eq!(live.get(), before_inner, "the inner rollback");
        }
        assert_eq!(outer_block, "outer", "the outer scope's block survives");
    });
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(live.get(), before_scope, "the outer rollback");
    }
    // SAFETY: allocated before the scopes and not reset since: still live (under
    // ASan a wrong rollback would be reported here).
    assert_eq!(unsafe { kept.read() }, 1);

    core::mem::forget(Box::new_in([1u8; 256], &arena));
    drop(arena);
    assert_eq!(live.get(), 0, "drop releases everything");
}

#[test]
fn sanitizer_mode_keeps_stats_meaningful() {
    let mut arena = OneWayAlloc::new();
    let mut v: Vec<u32, _> = Vec::new_in(&arena);
    v.extend(0..100);
    let b = Box::new_in(7u64, &arena);
    let stats = arena.stats();
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(stats.pages, 0);
        assert_eq!(arena.pages().count(), 0);
        assert_eq!(stats.page_allocations, 0);
        // Live bytes: the vector's buffer and the box.
        assert_eq!(stats.used, v.capacity() * 4 + 8);
        assert_eq!(stats.capacity, stats.used);
    } else {
        assert_eq!(stats.pages, 1);
        assert_eq!(arena.pages().count(), 1);
    }
    drop((v, b));
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(arena.stats().used, 0, "every block was returned");
    }
    arena.alloc_str("released by the reset");
    arena.reset();
    assert_eq!(arena.stats().used, 0);
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(arena.stats().capacity, 0, "the reset released the block");
    }
}
