//! Helpers shared by the integration tests.
//!
//! Each test binary uses a different subset, hence the `dead_code` allowance.
#![allow(dead_code)]

use core::alloc::Layout;
use core::ptr::NonNull;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;
use std::sync::OnceLock;

use onewayalloc::OneWayAlloc;

/// Whether the arena runs its page policy (not the sanitizer mode, where every
/// allocation is a block of its own and there are no pages).
pub const PAGE_MODE: bool = !onewayalloc::SEPARATE_BLOCKS;

pub const KIB: usize = 1024;
pub const MIB: usize = 1024 * 1024;

/// The OS page size, as the crate sees it.
pub fn os_page() -> usize {
    page_size::get()
}

/// `n` rounded up to a multiple of the OS page.
pub fn round_os(n: usize) -> usize {
    n.next_multiple_of(os_page())
}

/// A layout that must be valid.
pub fn layout(size: usize, align: usize) -> Layout {
    Layout::from_size_align(size, align).expect("valid layout")
}

/// Allocates `n` bytes with alignment 1 (no padding can be added).
pub fn bytes(arena: &OneWayAlloc, n: usize) -> NonNull<u8> {
    arena.alloc_layout(layout(n, 1))
}

/// How many payload bytes a fresh 64 KiB first page holds, found by probing fresh
/// arenas: the largest `n` such that one `alloc_layout(n, align 1)` does not obtain a
/// second page. The page header is the first page's size minus that.
pub fn header_size() -> usize {
    static HEADER: OnceLock<usize> = OnceLock::new();
    *HEADER.get_or_init(|| {
        let page = OneWayAlloc::new()
            .pages()
            .next()
            .expect("a first page")
            .size;
        let fits = |n: usize| {
            let arena = OneWayAlloc::new();
            bytes(&arena, n);
            arena.stats().page_allocations == 1
        };
        // Invariant: fits(lo), !fits(hi).
        let (mut lo, mut hi) = (0, page + 1);
        assert!(!fits(hi));
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let header = page - lo;
        assert!(header > 0, "a page must have a header");
        assert!(header <= 256, "header of {header} bytes is implausibly big");
        assert_eq!(header % 16, 0, "payload must start 16-byte aligned");
        header
    })
}

/// Page sizes in list order.
pub fn sizes<A: onewayalloc::Allocator>(arena: &OneWayAlloc<A>) -> Vec<usize> {
    arena.pages().map(|p| p.size).collect()
}

/// Index of the current page in list order; asserts there is exactly one.
pub fn current_index<A: onewayalloc::Allocator>(arena: &OneWayAlloc<A>) -> usize {
    let current: Vec<usize> = arena
        .pages()
        .enumerate()
        .filter(|(_, p)| p.current)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(current.len(), 1, "exactly one page must be current");
    current[0]
}

/// Free bytes left in the current page, for an ordinary page (whose payload starts
/// right after the header).
pub fn room(arena: &OneWayAlloc) -> usize {
    let page = arena.pages().find(|p| p.current).expect("a current page");
    page.size - header_size() - page.used
}

/// Checks the invariants that tie `stats()` to `pages()`.
pub fn check_consistent<A: onewayalloc::Allocator>(arena: &OneWayAlloc<A>) {
    let stats = arena.stats();
    let pages: Vec<_> = arena.pages().collect();
    assert_eq!(stats.pages, pages.len());
    assert_eq!(stats.capacity, pages.iter().map(|p| p.size).sum::<usize>());
    assert_eq!(stats.used, pages.iter().map(|p| p.used).sum::<usize>());
    assert!(stats.page_allocations >= stats.pages);
    let cur = current_index(arena);
    for page in &pages[cur + 1..] {
        assert_eq!(page.used, 0, "a page after the current one is unused");
    }
    for page in &pages {
        assert!(page.used <= page.size);
        assert_eq!(page.size % os_page(), 0, "pages are whole OS pages");
    }
}

/// A tiny deterministic generator (xorshift64*), so the tests need no dependency.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Address of a pointer, without exposing provenance.
pub fn addr<T>(ptr: *const T) -> usize {
    ptr.addr()
}

/// Runs `f`, which must panic, and returns its panic message.
pub fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the call must panic");
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        panic!("a panic without a message")
    }
}

/// The arena still works: it serves a mix of requests with the right contents and
/// its counters add up.
pub fn assert_usable(arena: &OneWayAlloc) {
    let before = arena.stats();
    let n = arena.alloc(0x5a5a_u64);
    let s = arena.alloc_str("still fine");
    let v = arena.alloc_slice_fill_with(100, |i| i as u32);
    assert_eq!(*n, 0x5a5a);
    assert_eq!(s, "still fine");
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
    let after = arena.stats();
    // 418 bytes asked; the page mode may add padding (7 before the u64, 3 before
    // the u32s) unless a new page was taken; the sanitizer mode counts live bytes.
    let grew = after.used - before.used;
    if onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(grew, 8 + 10 + 400);
    } else if after.pages == before.pages {
        assert!((418..=418 + 7 + 3).contains(&grew), "{grew}");
    }
    let used: usize = arena.pages().map(|p| p.used).sum();
    if !onewayalloc::SEPARATE_BLOCKS {
        assert_eq!(after.used, used);
    }
}

/// An overflowing request: `try_` gives `Err`, the plain call panics with
/// "overflow", nothing is counted, and the arena still works.
pub fn check_overflow<T: std::fmt::Debug, R>(
    what: &str,
    try_call: impl Fn(&OneWayAlloc) -> Result<T, onewayalloc::AllocError>,
    plain_call: impl Fn(&OneWayAlloc) -> R,
) {
    let arena = OneWayAlloc::new();
    arena.alloc_str("before");
    let before = arena.stats();
    assert!(try_call(&arena).is_err(), "{what}: try_ must fail");
    assert_eq!(
        arena.stats(),
        before,
        "{what}: a failed try_ changes nothing"
    );
    let message = panic_message(|| {
        plain_call(&arena);
    });
    assert!(message.contains("overflow"), "{what}: {message}");
    assert_eq!(
        arena.stats(),
        before,
        "{what}: a failed call changes nothing"
    );
    assert_usable(&arena);
}

/// Runs the test `child_test` of this test binary in a child process, with the
/// environment variable `env` set to `case`, and asserts that the child ended in
/// `handle_alloc_error`: SIGABRT, std's "memory allocation of N bytes failed", and
/// never the child's `CHILD-SURVIVED` line after the call.
pub fn assert_child_ends_in_handle_alloc_error(child_test: &str, env: &str, case: &str) {
    use std::os::unix::process::ExitStatusExt;
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe)
        .args(["--exact", child_test, "--nocapture", "--test-threads=1"])
        .env(env, case)
        .env("RUST_BACKTRACE", "0")
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(6), "{case}: SIGABRT\n{stderr}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("CHILD-SURVIVED"),
        "{case}"
    );
    assert!(
        stderr.contains("memory allocation of ") && stderr.contains(" bytes failed"),
        "{case}: {stderr}"
    );
}
