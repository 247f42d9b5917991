//! The process's global allocator: `System` (glibc's malloc), as without a
//! `#[global_allocator]`, plus a count of its calls that only the `reuse`
//! subcommand switches on. Until then each call pays one relaxed load and a branch
//! that is never taken, against the tens of nanoseconds of a malloc.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

static COUNTING: AtomicBool = AtomicBool::new(false);
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Counts every later call: allocations, frees and reallocations.
pub fn start() {
    COUNTING.store(true, Relaxed);
}

/// The calls counted so far.
pub fn calls() -> usize {
    CALLS.load(Relaxed)
}

#[inline(always)]
fn count() {
    if COUNTING.load(Relaxed) {
        CALLS.fetch_add(1, Relaxed);
    }
}

/// `System`, counting every call once [`start`] is called.
pub struct CountingSystem;

// SAFETY: forwards every call to `System` unchanged.
unsafe impl GlobalAlloc for CountingSystem {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count();
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
