//! Issue 30: the calls the header allows a cleanup to make on its own arena, while
//! `onewayalloc_reset` or `onewayalloc_destroy` runs it, made through the exported
//! functions from Rust, so that Miri checks them (Stacked Borrows and Tree Borrows):
//! no call a cleanup makes may take the handle exclusively while the reset or
//! destroy that runs the cleanup holds it. A cleanup's `onewayalloc_trim` is carried
//! out when the reset completes; `onewayalloc_reset` and `onewayalloc_destroy` of
//! its own arena are fatal (the C program `tests/c/cleanup.c` checks the lines).
//!
//! ```text
//! MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-symbolic-alignment-check" \
//!     cargo +nightly miri test -p onewayalloc-capi --test cleanup_calls
//! ```
//!
//! `onewayalloc_allocated_memory` counts every arena of the process, so the tests of
//! this file run one at a time ([`one_at_a_time`]) and create no other arena.

use core::ffi::{CStr, c_void};
use std::sync::{Mutex, MutexGuard};

use onewayalloc_capi::*;

/// Serializes the tests of this binary: each measures `onewayalloc_allocated_memory`.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// More than the first page of `onewayalloc_create(0)` holds: a second page.
const BIG: usize = 100 * 1024;

/// What a trimming cleanup gets: its arena, the `keep_bytes` it passes, and what it
/// saw.
struct Trim {
    owa: *mut ONEWAYALLOC,
    keep: usize,
    runs: usize,
    /// `onewayalloc_allocated_memory` right after its trim returned.
    memory_after_trim: usize,
}

impl Trim {
    fn new(owa: *mut ONEWAYALLOC, keep: usize) -> Trim {
        Trim {
            owa,
            keep,
            runs: 0,
            memory_after_trim: 0,
        }
    }
}

/// A cleanup that trims its own arena, then allocates from it and writes the block
/// (still valid until the reset or destroy completes).
unsafe extern "C" fn trim_own_arena(arg: *mut c_void) {
    let trim = arg.cast::<Trim>();
    // SAFETY: `arg` is the `Trim` registered with this cleanup, alive until the
    // reset or destroy that runs it has returned, and used by nobody else meanwhile;
    // its arena is the one running this cleanup.
    unsafe {
        onewayalloc_trim((*trim).owa, (*trim).keep);
        (*trim).memory_after_trim = onewayalloc_allocated_memory();
        let block = onewayalloc_mallocz((*trim).owa, 64).cast::<u8>();
        block.write_bytes(0x5a, 64);
        assert_eq!(*block.add(63), 0x5a);
        (*trim).runs += 1;
    }
}

/// Registers [`trim_own_arena`] for `trim` on its arena.
///
/// # Safety
/// `trim` must stay alive and unused by the caller until the arena's next reset or
/// destroy has returned.
unsafe fn add_trim(trim: *mut Trim) {
    // SAFETY: the caller's guarantee for `trim`; its arena is live.
    unsafe { onewayalloc_add_cleanup((*trim).owa, Some(trim_own_arena), trim.cast()) };
}

#[test]
fn a_cleanup_trims_its_own_arena_at_reset() {
    let _serial = one_at_a_time();
    let base = onewayalloc_allocated_memory();
    let owa = onewayalloc_create(0);
    let first = onewayalloc_allocated_memory() - base;
    // SAFETY: `owa` is live and used by this thread only; `trim` outlives the reset
    // and is read only after it; the block is not used after the reset.
    unsafe {
        onewayalloc_mallocz(owa, BIG);
        let two_pages = onewayalloc_allocated_memory() - base;
        assert!(SEPARATE_BLOCKS || two_pages > first);
        let mut trim = Trim::new(owa, 0);
        add_trim(&raw mut trim);
        let before_reset = onewayalloc_allocated_memory();
        onewayalloc_reset(owa);
        assert_eq!(trim.runs, 1);
        // While the cleanup ran, nothing was given back: every page was in use.
        assert_eq!(trim.memory_after_trim, before_reset);
        // The trim was carried out when the reset had made the pages available: only
        // the first page is left (the sanitizer mode has no pages, and the reset
        // released every block).
        let after = onewayalloc_allocated_memory() - base;
        assert_eq!(after, if SEPARATE_BLOCKS { 0 } else { first });
        // The arena serves requests after it; a trim later on is a plain trim.
        let name = onewayalloc_strdupz(owa, c"after the trim".as_ptr());
        assert_eq!(CStr::from_ptr(name), c"after the trim");
        onewayalloc_reset(owa);
        onewayalloc_trim(owa, 0);
        assert_eq!(onewayalloc_allocated_memory() - base, after);
        onewayalloc_destroy(owa);
    }
    assert_eq!(onewayalloc_allocated_memory(), base);
}

#[test]
fn a_cleanup_trims_its_own_arena_at_destroy() {
    let _serial = one_at_a_time();
    let base = onewayalloc_allocated_memory();
    let owa = onewayalloc_create(0);
    let mut trim = Trim::new(owa, 0);
    // SAFETY: `owa` is live and used by this thread only, destroyed once; `trim`
    // outlives the destroy and is read only after it.
    unsafe {
        onewayalloc_mallocz(owa, BIG);
        add_trim(&raw mut trim);
        let before = onewayalloc_allocated_memory();
        onewayalloc_destroy(owa);
        assert_eq!(trim.memory_after_trim, before);
    }
    assert_eq!(trim.runs, 1);
    // The destroy gave every page back, the trim had nothing left to do.
    assert_eq!(onewayalloc_allocated_memory(), base);
}

#[test]
fn of_several_trims_in_cleanups_the_smallest_keep_bytes_is_carried_out() {
    let _serial = one_at_a_time();
    let base = onewayalloc_allocated_memory();
    let owa = onewayalloc_create(0);
    let first = onewayalloc_allocated_memory() - base;
    // SAFETY: `owa` is live and used by this thread only, destroyed once; the
    // `Trim`s outlive the reset and are read only after it; no block is used after
    // the reset.
    unsafe {
        // Three pages: the first, the second (the 100 KiB), a third (200 KiB).
        onewayalloc_mallocz(owa, BIG);
        let second = onewayalloc_allocated_memory() - base - first;
        onewayalloc_mallocz(owa, 2 * BIG);
        let third = onewayalloc_allocated_memory() - base - first - second;
        assert!(SEPARATE_BLOCKS || (second > 0 && third > second));
        // Cleanups run most recent first: `keep_second` runs before `keep_all`, so
        // the last trim asked for keeps everything, the smallest only the second
        // page beside the first.
        let mut keep_all = Trim::new(owa, usize::MAX);
        let mut keep_second = Trim::new(owa, second);
        add_trim(&raw mut keep_all);
        add_trim(&raw mut keep_second);
        onewayalloc_reset(owa);
        assert_eq!((keep_all.runs, keep_second.runs), (1, 1));
        let expected = if SEPARATE_BLOCKS { 0 } else { first + second };
        assert_eq!(onewayalloc_allocated_memory() - base, expected);
        // The trim was carried out once: the next reset trims nothing.
        onewayalloc_reset(owa);
        assert_eq!(onewayalloc_allocated_memory() - base, expected);
        onewayalloc_destroy(owa);
    }
    assert_eq!(onewayalloc_allocated_memory(), base);
}

/// What [`call_everything`] gets: its arena, and what it saw.
struct Everything {
    owa: *mut ONEWAYALLOC,
    /// Runs of [`count`], registered by `call_everything` while it runs.
    added_runs: u32,
    runs: u32,
}

unsafe extern "C" fn count(arg: *mut c_void) {
    // SAFETY: `arg` is the counter of an `Everything`, alive until the reset or
    // destroy that runs this cleanup has returned.
    unsafe { *arg.cast::<u32>() += 1 };
}

/// A cleanup that makes every call the header allows a cleanup on its own arena,
/// and checks what each gives, then uses another arena from inside it.
unsafe extern "C" fn call_everything(arg: *mut c_void) {
    let everything = arg.cast::<Everything>();
    // SAFETY: `arg` is the `Everything` registered with this cleanup, alive and not
    // used by anyone else until the reset or destroy running it has returned; its
    // arena is the one running this cleanup; every block is used within its size
    // and before that reset or destroy completes.
    unsafe {
        let owa = (*everything).owa;
        let kept = onewayalloc_mallocz(owa, 16).cast::<u8>();
        kept.write_bytes(3, 16);
        let block = onewayalloc_mallocz(owa, 40).cast::<u8>();
        block.write_bytes(1, 40);
        let zeros = onewayalloc_callocz(owa, 5, 8).cast::<u64>();
        assert_eq!(*zeros.add(4), 0);
        let name = onewayalloc_strdupz(owa, c"cleanup".as_ptr());
        assert_eq!(CStr::from_ptr(name), c"cleanup");
        let bytes = [7u8; 24];
        let copy = onewayalloc_memdupz(owa, bytes.as_ptr().cast(), 24).cast::<u8>();
        assert_eq!(*copy.add(23), 7);
        // The most recent block grows (in place in the page mode); an older one is
        // copied; both keep their bytes (`src` is invalid after it in the sanitizer
        // mode).
        let grown = onewayalloc_doublesize(owa, copy.cast(), 24).cast::<u8>();
        assert_eq!(*grown.add(23), 7);
        grown.add(47).write(9);
        let moved = onewayalloc_doublesize(owa, block.cast(), 40).cast::<u8>();
        assert_eq!(*moved.add(39), 1);
        onewayalloc_freez(owa, moved.cast());
        // A cleanup added now runs in the same reset or destroy.
        onewayalloc_add_cleanup(owa, Some(count), (&raw mut (*everything).added_runs).cast());
        onewayalloc_trim(owa, 0);
        assert!(onewayalloc_allocated_memory() > 0);
        assert_eq!(onewayalloc_mul_or_fatal(3, 5, c"cleanup".as_ptr()), 15);
        assert_eq!(onewayalloc_mul3_or_fatal(2, 3, 5, core::ptr::null()), 30);
        // Another arena, created, trimmed, reset and destroyed from the cleanup.
        let other = onewayalloc_create(0);
        onewayalloc_mallocz(other, BIG);
        onewayalloc_reset(other);
        onewayalloc_trim(other, 0);
        onewayalloc_destroy(other);
        // The cleanup's first block is still valid, and so is the grown one.
        assert_eq!(*kept.add(15), 3);
        assert_eq!(*grown.add(47), 9);
        (*everything).runs += 1;
    }
}

#[test]
fn a_cleanup_makes_every_call_the_header_allows_at_reset_and_destroy() {
    let _serial = one_at_a_time();
    let base = onewayalloc_allocated_memory();
    let owa = onewayalloc_create(0);
    let first = onewayalloc_allocated_memory() - base;
    let mut everything = Everything {
        owa,
        added_runs: 0,
        runs: 0,
    };
    let arg = (&raw mut everything).cast::<c_void>();
    // SAFETY: `owa` is live and used by this thread only, destroyed once;
    // `everything` outlives the arena and is read only between its calls; no block
    // is used after the reset.
    unsafe {
        onewayalloc_mallocz(owa, BIG);
        onewayalloc_add_cleanup(owa, Some(call_everything), arg);
        onewayalloc_reset(owa);
        assert_eq!((everything.runs, everything.added_runs), (1, 1));
        // Its `trim(owa, 0)` was carried out after the reset.
        let expected = if SEPARATE_BLOCKS { 0 } else { first };
        assert_eq!(onewayalloc_allocated_memory() - base, expected);
        // Nothing runs twice.
        onewayalloc_reset(owa);
        assert_eq!((everything.runs, everything.added_runs), (1, 1));
        // And at destroy.
        onewayalloc_add_cleanup(owa, Some(call_everything), arg);
        onewayalloc_destroy(owa);
    }
    assert_eq!((everything.runs, everything.added_runs), (2, 2));
    assert_eq!(onewayalloc_allocated_memory(), base);
}
