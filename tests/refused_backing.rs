//! A backing allocator that refuses: every allocating call, with the refusal at every
//! position, fails cleanly (`Err` from `try_`, `handle_alloc_error` from the plain
//! call), leaves the arena serving what fits in the pages it has, keeps `stats()`
//! consistent, and leaks nothing once the arena is dropped.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![cfg(not(feature = "separate-blocks"))]

use core::alloc::Layout;
use core::cell::{Cell, RefCell};
use core::ptr::NonNull;
use std::process::Command;

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;
use onewayalloc::OneWayAlloc;

/// Wraps the global allocator; refuses its `refuse_at`-th `allocate` call (counting
/// from 0) and every later one while `refuse_forever` is set; tracks outstanding
/// blocks and checks each is returned with the layout it was given with.
#[derive(Default)]
struct Refusing {
    calls: Cell<usize>,
    refuse_at: Cell<Option<usize>>,
    refuse_forever: Cell<bool>,
    outstanding: RefCell<std::vec::Vec<(usize, Layout)>>,
}

impl Refusing {
    fn refusing_at(n: usize) -> Self {
        let backing = Refusing::default();
        backing.refuse_at.set(Some(n));
        backing
    }

    fn outstanding_blocks(&self) -> usize {
        self.outstanding.borrow().len()
    }

    fn outstanding_bytes(&self) -> usize {
        self.outstanding
            .borrow()
            .iter()
            .map(|(_, l)| l.size())
            .sum()
    }
}

unsafe impl Allocator for Refusing {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let call = self.calls.get();
        self.calls.set(call + 1);
        let refuse = match self.refuse_at.get() {
            Some(n) if self.refuse_forever.get() => call >= n,
            Some(n) => call == n,
            None => false,
        };
        if refuse {
            return Err(AllocError);
        }
        let block = Global.allocate(layout)?;
        self.outstanding
            .borrow_mut()
            .push((block.cast::<u8>().as_ptr() as usize, layout));
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let mut outstanding = self.outstanding.borrow_mut();
        let at = outstanding
            .iter()
            .position(|&(addr, l)| addr == ptr.as_ptr() as usize && l == layout)
            .expect("a block returned with a layout it was not obtained with");
        outstanding.swap_remove(at);
        unsafe { Global.deallocate(ptr, layout) };
    }
}

/// Every allocating call, in its `try_` form, sized to need a new page.
type TryCall = fn(&OneWayAlloc<&Refusing>) -> Result<(), AllocError>;

/// Bytes (padding included) a call may consume before the step that can be refused.
fn bytes_before_refusable_step(name: &str) -> usize {
    if name == "Allocator::grow (Vec)" {
        16
    } else {
        0
    }
}

const BIG: usize = 100 * 1024;

fn try_calls() -> std::vec::Vec<(&'static str, TryCall)> {
    vec![
        ("try_alloc_bytes", |a| a.try_alloc_bytes(BIG).map(drop)),
        ("try_alloc_zeroed", |a| {
            a.try_alloc_zeroed(BIG / 4, 4).map(drop)
        }),
        ("try_alloc_str", |a| {
            a.try_alloc_str(&"x".repeat(BIG)).map(drop)
        }),
        ("try_alloc_slice_copy", |a| {
            a.try_alloc_slice_copy(&[7u64; BIG / 8]).map(drop)
        }),
        ("try_alloc", |a| a.try_alloc([1u8; BIG]).map(drop)),
        ("try_alloc_with", |a| {
            a.try_alloc_with(|| [2u8; BIG]).map(drop)
        }),
        ("try_alloc_slice_fill_with", |a| {
            a.try_alloc_slice_fill_with(BIG, |i| i as u8).map(drop)
        }),
        ("try_alloc_layout", |a| {
            a.try_alloc_layout(Layout::from_size_align(BIG, 64).unwrap())
                .map(drop)
        }),
        ("Allocator::allocate", |a| {
            a.allocate(Layout::from_size_align(BIG, 8).unwrap())
                .map(drop)
        }),
        ("Allocator::grow (Vec)", |a| {
            let mut v = Vec::new_in(a);
            v.try_reserve_exact(16).map_err(|_| AllocError)?;
            v.extend_from_slice(&[1u8; 16]);
            v.try_reserve_exact(BIG).map_err(|_| AllocError)?;
            // Keep the block (dropping it would roll the page back).
            core::mem::forget(v);
            Ok(())
        }),
        ("Box::try_new_in", |a| {
            Box::try_new_in([3u8; BIG], a).map(Box::leak).map(drop)
        }),
    ]
}

/// Checks the arena against what the backing allocator holds for it.
fn assert_consistent(arena: &OneWayAlloc<&Refusing>, backing: &Refusing, what: &str) {
    let stats = arena.stats();
    assert_eq!(stats.pages, backing.outstanding_blocks(), "{what}: pages");
    assert_eq!(
        stats.capacity,
        backing.outstanding_bytes(),
        "{what}: capacity"
    );
    assert_eq!(stats.pages, arena.pages().count(), "{what}: page list");
    let page_bytes: usize = arena.pages().map(|p| p.size).sum();
    assert_eq!(stats.capacity, page_bytes, "{what}: page sizes");
    let used: usize = arena.pages().map(|p| p.used).sum();
    assert_eq!(stats.used, used, "{what}: used");
    assert_eq!(
        arena.pages().filter(|p| p.current).count(),
        1,
        "{what}: exactly one current page"
    );
}

#[test]
fn refusal_at_every_position_of_every_call() {
    // Positions: 0 refuses the first page; 1.. refuse the pages that the workload
    // (three rounds of every call, which needs several pages) asks for.
    let positions = if cfg!(miri) { 0..2 } else { 0..6 };
    for (name, call) in try_calls() {
        for refuse_at in positions.clone() {
            let backing = Refusing::refusing_at(refuse_at);
            {
                let Ok(arena) = OneWayAlloc::try_with_size_hint_in(0, &backing) else {
                    assert_eq!(refuse_at, 0, "{name}: only call 0 makes the first page");
                    assert_eq!(backing.outstanding_blocks(), 0);
                    continue;
                };
                // Repeat the call until the backing allocator has been asked past the
                // refusal position (each round needs about one new page).
                let mut failures = 0;
                let mut round = 0u64;
                while backing.calls.get() <= refuse_at {
                    assert!(
                        round < 20,
                        "{name}: the workload never reached call {refuse_at}"
                    );
                    let calls_before = backing.calls.get();
                    let stats_before = arena.stats();
                    match call(&arena) {
                        Ok(()) => {}
                        Err(AllocError) => {
                            failures += 1;
                            let refused_call =
                                calls_before <= refuse_at && refuse_at < backing.calls.get();
                            assert!(refused_call, "{name}: Err without a refusal");
                            // The refused step took no page and consumed nothing.
                            let bytes = bytes_before_refusable_step(name);
                            let after = arena.stats();
                            assert_eq!(after.pages, stats_before.pages, "{name}");
                            assert_eq!(after.capacity, stats_before.capacity, "{name}");
                            let grew = after.used - stats_before.used;
                            assert!(grew <= bytes, "{name}: {grew} > {bytes}");
                        }
                    }
                    assert_consistent(&arena, &backing, name);
                    // The arena still serves a request that fits the current page,
                    // without asking the backing allocator for anything.
                    let calls_before = backing.calls.get();
                    let small = arena.try_alloc(round).expect("fits the current page");
                    assert_eq!(*small, round);
                    assert_eq!(backing.calls.get(), calls_before, "{name}");
                    round += 1;
                }
                // Past the refusal the same call succeeds again.
                call(&arena).expect("the backing allocator accepts again");
                assert_consistent(&arena, &backing, name);
                if name == "Allocator::grow (Vec)" {
                    // A growing buffer asks first for a page with room to double; when
                    // that one is refused it falls back to the exact page, so the call
                    // fails only if the refusal hits the fallback (see
                    // tests/growing_buffers.rs).
                    assert!(failures <= 1, "{name}: {failures} failures");
                } else {
                    assert_eq!(failures, 1, "{name}: exactly the refused call fails");
                }
            }
            assert_eq!(
                backing.outstanding_blocks(),
                0,
                "{name}, refusal at {refuse_at}: pages leaked after drop"
            );
        }
    }
}

#[test]
fn refused_pages_leave_existing_pages_serving() {
    let backing = Refusing::default();
    let mut arena = OneWayAlloc::new_in(&backing);
    // Make three pages, reset, then refuse everything: the kept pages still serve.
    for _ in 0..3 {
        arena.alloc_bytes(60 * 1024);
    }
    let pages = arena.stats().pages;
    arena.reset();
    backing.refuse_at.set(Some(backing.calls.get()));
    backing.refuse_forever.set(true);
    for _ in 0..3 {
        assert!(arena.try_alloc_bytes(60 * 1024).is_ok());
    }
    assert!(arena.try_alloc_bytes(60 * 1024).is_err());
    assert!(arena.try_alloc_bytes(1024 * 1024).is_err());
    assert_eq!(arena.stats().pages, pages);
    assert_consistent(&arena, &backing, "after refusals");
    arena.reset();
    assert!(arena.try_alloc_bytes(100).is_ok());
    drop(arena);
    assert_eq!(backing.outstanding_blocks(), 0);
}

#[test]
fn refused_first_page_fails_creation_cleanly() {
    let backing = Refusing::refusing_at(0);
    assert!(OneWayAlloc::try_with_size_hint_in(0, &backing).is_err());
    assert!(OneWayAlloc::try_with_size_hint_in(1 << 20, &backing).is_ok());
    assert_eq!(backing.outstanding_blocks(), 0);
}

// ----- The plain calls end in handle_alloc_error ------------------------------------
//
// `handle_alloc_error` aborts the process, so each case runs in a child process: this
// test binary again, with `ONEWAYALLOC_CHILD` naming the case and only that test
// selected. The child must die of SIGABRT with the allocation-failure message and
// print nothing else of its own.

const CHILD_ENV: &str = "ONEWAYALLOC_CHILD";

/// The plain call of the case named by `ONEWAYALLOC_CHILD`, with the backing
/// allocator refusing its next page. Does nothing when run normally.
#[test]
fn child_plain_call_with_refusal() {
    let Ok(case) = std::env::var(CHILD_ENV) else {
        return;
    };
    let backing = Refusing::default();
    let arena = match case.as_str() {
        "with_size_hint_in" => {
            backing.refuse_at.set(Some(0));
            OneWayAlloc::with_size_hint_in(0, &backing)
        }
        _ => OneWayAlloc::new_in(&backing),
    };
    backing.refuse_at.set(Some(backing.calls.get()));
    match case.as_str() {
        "alloc_bytes" => drop(arena.alloc_bytes(BIG)),
        "alloc_zeroed" => drop(arena.alloc_zeroed(BIG, 1)),
        "alloc_str" => drop(arena.alloc_str(&"y".repeat(BIG))),
        "alloc_slice_copy" => drop(arena.alloc_slice_copy(&[1u16; BIG])),
        "alloc" => drop(arena.alloc([0u8; BIG])),
        "alloc_with" => drop(arena.alloc_with(|| [0u8; BIG])),
        "alloc_slice_fill_with" => drop(arena.alloc_slice_fill_with(BIG, |i| i)),
        "alloc_layout" => drop(arena.alloc_layout(Layout::from_size_align(BIG, 1).unwrap())),
        "vec_push" => {
            let mut v = Vec::new_in(&arena);
            v.extend_from_slice(&[0u8; BIG]);
        }
        other => panic!("unknown child case {other}"),
    }
    // Reaching this line means the call did not end the process.
    println!("CHILD-SURVIVED");
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn plain_calls_end_in_handle_alloc_error() {
    use std::os::unix::process::ExitStatusExt;
    let cases = [
        "with_size_hint_in",
        "alloc_bytes",
        "alloc_zeroed",
        "alloc_str",
        "alloc_slice_copy",
        "alloc",
        "alloc_with",
        "alloc_slice_fill_with",
        "alloc_layout",
        "vec_push",
    ];
    let exe = std::env::current_exe().unwrap();
    for case in cases {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "child_plain_call_with_refusal",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, case)
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(6),
            "{case}: SIGABRT expected\n{stderr}"
        );
        assert!(!stdout.contains("CHILD-SURVIVED"), "{case}");
        // std's own hint about RUST_BACKTRACE may follow the message.
        let message: std::vec::Vec<&str> = stderr
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE=1`"))
            .collect();
        assert_eq!(
            message.len(),
            1,
            "{case}: only the failure message\n{stderr}"
        );
        assert!(
            message[0].starts_with("memory allocation of ")
                && message[0].ends_with(" bytes failed"),
            "{case}: {stderr}"
        );
    }
}
