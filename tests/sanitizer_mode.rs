//! The sanitizer mode catches misuse that the page mode cannot see.
//!
//! Each misuse runs in a child process: this test binary again, with
//! `ONEWAYALLOC_MISUSE` naming the case and only the child test selected. Built
//! with `-Zsanitizer=address` (which turns the sanitizer mode on by itself), the
//! child must be reported by AddressSanitizer; in the page mode the same program
//! runs silently, because every access stays inside a page, which is why the mode
//! exists. Run the ASan half with:
//!
//! ```text
//! RUSTFLAGS=-Zsanitizer=address ASAN_OPTIONS=detect_leaks=0 \
//!     cargo +nightly test --target x86_64-unknown-linux-gnu --features separate-blocks --tests
//! ```
//!
//! (`detect_leaks=0` for the suite: in this mode the reference-returning calls such
//! as `alloc_str` never free their blocks, by design; the leak case below turns
//! leak detection back on for its own child.)
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::process::{Command, Output};

use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use onewayalloc::OneWayAlloc;

const CASE_ENV: &str = "ONEWAYALLOC_MISUSE";

/// The misuse named by `ONEWAYALLOC_MISUSE`. Does nothing when run normally.
#[test]
fn child_misuse() {
    let Ok(case) = std::env::var(CASE_ENV) else {
        return;
    };
    let arena = OneWayAlloc::new();
    match case.as_str() {
        "write_past_vec_end" => {
            let mut v: Vec<u8, _> = Vec::with_capacity_in(16, &arena);
            v.extend_from_slice(&[1; 16]);
            // Something after the vector, as in any real arena.
            let _next = arena.alloc([0u8; 16]);
            let end = v.as_mut_ptr().wrapping_add(v.capacity());
            // SAFETY: none: this is the bug the sanitizer must catch.
            unsafe { end.write_volatile(7) };
        }
        "read_after_box_drop" => {
            let b = Box::new_in(0x1234_5678_u64, &arena);
            let p: *const u64 = &*b;
            drop(b);
            // SAFETY: none: this is the bug the sanitizer must catch.
            let value = unsafe { p.read_volatile() };
            std::hint::black_box(value);
        }
        "leak_a_block" => {
            let b = Box::new_in([3u8; 64], &arena);
            core::mem::forget(b);
        }
        "no_misuse" => {
            let mut v: Vec<u8, _> = Vec::with_capacity_in(16, &arena);
            v.extend_from_slice(&[1; 16]);
            drop(v);
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

#[test]
#[cfg_attr(
    miri,
    ignore = "Miri cannot spawn processes (and would rightly flag the misuse)"
)]
fn asan_reports_misuse_only_in_sanitizer_mode() {
    let asan = built_with_asan();
    if asan {
        assert!(
            std::hint::black_box(onewayalloc::SEPARATE_BLOCKS),
            "-Zsanitizer=address must turn the sanitizer mode on by itself"
        );
    } else if onewayalloc::SEPARATE_BLOCKS {
        // Without ASan the misuse would corrupt the real heap: nothing to check here.
        eprintln!("separate-blocks without AddressSanitizer: misuse cases not run");
        return;
    }
    let cases = [
        (
            "write_past_vec_end",
            "detect_leaks=0",
            "ERROR: AddressSanitizer: heap-buffer-overflow",
        ),
        (
            "read_after_box_drop",
            "detect_leaks=0",
            "ERROR: AddressSanitizer: heap-use-after-free",
        ),
        (
            "leak_a_block",
            "detect_leaks=1",
            "ERROR: LeakSanitizer: detected memory leaks",
        ),
    ];
    for (case, options, report) in cases {
        let out = run_child(case, options);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if asan {
            assert!(
                !out.status.success(),
                "{case}: the child must fail\n{stderr}"
            );
            assert!(
                stderr.contains(report),
                "{case}: expected `{report}`\n{stderr}"
            );
        } else {
            assert!(out.status.success(), "{case}: page mode must run\n{stderr}");
            assert!(!stderr.contains("Sanitizer"), "{case}\n{stderr}");
        }
    }
    // A correct program is never reported, in either mode.
    let out = run_child("no_misuse", "detect_leaks=1");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    arena.reset();
    assert_eq!(arena.stats().used, 0);
}
