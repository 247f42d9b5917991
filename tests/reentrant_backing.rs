//! A backing allocator is foreign code: it may allocate from the very arena it
//! backs. The arena must then read its state (current page, cursor, counters) only
//! after the call into the backing allocator returns.
//!
//! `Reentrant` below, while armed, answers each page request by first allocating a
//! large block from the arena itself, which obtains (re-entrantly) a page of its own
//! and makes it current. The outer request must then link its page after that one:
//! an arena that linked it after the page it saw as current before the call would
//! leave the re-entrant page, with its live block, in the unused run, to be rewound
//! and handed out a second time.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;
use core::cell::{Cell, RefCell};
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::vec::Vec as AVec;
use common::{KIB, PAGE_MODE, addr, check_consistent};
use onewayalloc::OneWayAlloc;

/// Forwards to the global allocator; while armed (and not already inside a call),
/// allocates `reentrant_size` bytes from the arena it backs before each request,
/// fills them and records them in `blocks`.
#[derive(Default)]
struct Reentrant {
    /// The arena this allocator backs, set once the arena is in place (a raw
    /// pointer: the arena owns this allocator).
    arena: Cell<Option<NonNull<OneWayAlloc<Reentrant>>>>,
    armed: Cell<bool>,
    inside: Cell<bool>,
    reentrant_size: Cell<usize>,
    /// Blocks allocated re-entrantly: (address, size, fill byte).
    blocks: RefCell<Vec<(NonNull<u8>, usize, u8)>>,
    /// Blocks this allocator handed out and still holds: (address, layout).
    outstanding: RefCell<Vec<(usize, Layout)>>,
}

impl Reentrant {
    fn outstanding_bytes(&self) -> usize {
        self.outstanding
            .borrow()
            .iter()
            .map(|(_, l)| l.size())
            .sum()
    }
}

unsafe impl Allocator for Reentrant {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if self.armed.get() && !self.inside.get() {
            self.inside.set(true);
            let arena = self.arena.get().expect("armed only once the arena is set");
            // SAFETY: the test sets the pointer to the arena in place and arms this
            // allocator only while the arena is not moved, dropped or mutably
            // borrowed; the arena calls `allocate` through a shared borrow, and the
            // arena's allocation calls take `&self` too.
            let arena = unsafe { arena.as_ref() };
            let size = self.reentrant_size.get();
            let fill = self.blocks.borrow().len() as u8 ^ 0xA5;
            // A refusal (the arena's limit) is the arena's to report; this
            // allocator carries on either way.
            if let Ok(block) = arena.try_alloc_bytes(size) {
                let ptr = fill_block(block, fill);
                self.blocks.borrow_mut().push((ptr, size, fill));
            }
            self.inside.set(false);
        }
        let block = Global.allocate(layout)?;
        self.outstanding
            .borrow_mut()
            .push((addr(block.cast::<u8>().as_ptr()), layout));
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let mut outstanding = self.outstanding.borrow_mut();
        let at = outstanding
            .iter()
            .position(|&(a, l)| a == addr(ptr.as_ptr()) && l == layout)
            .expect("a block returned with the layout it was obtained with");
        outstanding.swap_remove(at);
        // SAFETY: the block came from `Global` with this layout (checked above).
        unsafe { Global.deallocate(ptr, layout) };
    }
}

/// Fills a fresh block with `fill` (one `write_bytes`, cheap under Miri too).
fn fill_block(block: &mut [core::mem::MaybeUninit<u8>], fill: u8) -> NonNull<u8> {
    let ptr = NonNull::new(block.as_mut_ptr().cast::<u8>()).expect("non-null");
    // SAFETY: `ptr` is valid for `block.len()` bytes of writes.
    unsafe { ptr.as_ptr().write_bytes(fill, block.len()) };
    ptr
}

/// Checks that every recorded block (the re-entrant ones and `own`) still holds its
/// fill byte and that no two of them overlap. Under Miri, a sample of each block's
/// bytes (its ends and every 4 KiB) is checked; natively, every byte.
fn check_blocks(backing: &Reentrant, own: &[(NonNull<u8>, usize, u8)]) {
    let blocks = backing.blocks.borrow();
    let all: Vec<_> = blocks.iter().chain(own).copied().collect();
    for &(ptr, size, fill) in &all {
        // SAFETY: every block is a live arena block of `size` bytes that the test
        // filled with `fill`; no reset happened since.
        let bytes = unsafe { core::slice::from_raw_parts(ptr.as_ptr(), size) };
        let step = if cfg!(miri) { 4096 } else { 1 };
        let sample = bytes.iter().step_by(step).chain(bytes.last());
        assert!(
            sample.copied().all(|b| b == fill),
            "a block was overwritten"
        );
    }
    let mut ranges: Vec<(usize, usize)> = all
        .iter()
        .map(|&(ptr, size, _)| (addr(ptr.as_ptr()), addr(ptr.as_ptr()) + size))
        .collect();
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "blocks overlap: {pair:?}");
    }
}

fn alloc_filled(arena: &OneWayAlloc<Reentrant>, size: usize, fill: u8) -> (NonNull<u8>, usize, u8) {
    (fill_block(arena.alloc_bytes(size), fill), size, fill)
}

#[test]
fn a_backing_allocator_that_allocates_from_its_own_arena() {
    let scale = if cfg!(miri) { 1 } else { 4 };
    let arena = OneWayAlloc::new_in(Reentrant::default());
    arena.backing().arena.set(Some(NonNull::from(&arena)));
    arena.backing().reentrant_size.set(300 * KIB);
    let mut own = Vec::new();
    own.push(alloc_filled(&arena, 60 * KIB, 1)); // nearly fills the first page

    // Every page request now first allocates 300 KiB from the arena, which needs a
    // page of its own (obtained re-entrantly) and makes it current.
    arena.backing().armed.set(true);
    own.push(alloc_filled(&arena, 100 * KIB, 2));
    arena.backing().armed.set(false);
    assert_eq!(arena.backing().blocks.borrow().len(), 1);
    check_blocks(arena.backing(), &own);
    if PAGE_MODE {
        check_consistent(&arena);
        let stats = arena.stats();
        assert_eq!(stats.pages, 3);
        assert_eq!(stats.page_allocations, 3, "counted after each call");
        assert_eq!(stats.capacity, arena.backing().outstanding_bytes());
        // The outer page came last and is current; the re-entrant page, with its
        // live block, is a used page before it.
        let pages: Vec<_> = arena.pages().collect();
        assert!(pages[2].current);
        assert!(pages[1].used >= 300 * KIB);
    }

    // More requests that need pages, re-entrant ones among them, then many more:
    // nothing handed out is handed out again.
    for round in 0..3 * scale {
        arena.backing().armed.set(round % 2 == 0);
        own.push(alloc_filled(&arena, 200 * KIB, 3 + round as u8));
        arena.backing().armed.set(false);
        own.push(alloc_filled(&arena, 10 * KIB, 100 + round as u8));
        check_blocks(arena.backing(), &own);
        if PAGE_MODE {
            check_consistent(&arena);
            assert_eq!(arena.stats().capacity, arena.backing().outstanding_bytes());
        }
    }
}

#[test]
fn a_growing_vector_whose_move_reenters() {
    let arena = OneWayAlloc::new_in(Reentrant::default());
    arena.backing().arena.set(Some(NonNull::from(&arena)));
    arena.backing().reentrant_size.set(200 * KIB);
    let n: u64 = if cfg!(miri) { 12_000 } else { 100_000 };
    let mut v: AVec<u64, &OneWayAlloc<Reentrant>> = AVec::new_in(&arena);
    // Moves out of the first page (64 KiB) re-enter: the vector's new page must go
    // after the re-entrant one.
    arena.backing().armed.set(true);
    for i in 0..n {
        v.push(i);
    }
    arena.backing().armed.set(false);
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    assert!(!arena.backing().blocks.borrow().is_empty());
    check_blocks(arena.backing(), &[]);
    if PAGE_MODE {
        check_consistent(&arena);
        assert_eq!(arena.stats().capacity, arena.backing().outstanding_bytes());
    }
    // A later page request (not re-entrant) keeps every block intact.
    let more = alloc_filled(&arena, 2000 * KIB, 0x42);
    check_blocks(arena.backing(), &[more]);
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
}

#[test]
fn reset_after_reentrant_pages_serves_them_again() {
    let mut arena = OneWayAlloc::new_in(Reentrant::default());
    arena.backing().arena.set(Some(NonNull::from(&arena)));
    arena.backing().reentrant_size.set(300 * KIB);
    arena.backing().armed.set(true);
    alloc_filled(&arena, 100 * KIB, 7);
    arena.backing().armed.set(false);
    let capacity = arena.stats().capacity;
    arena.backing().blocks.borrow_mut().clear();
    arena.reset();
    // The same work, not re-entrant now, fits in the pages kept.
    let a = alloc_filled(&arena, 300 * KIB, 8);
    let b = alloc_filled(&arena, 100 * KIB, 9);
    check_blocks(arena.backing(), &[a, b]);
    assert_eq!(arena.stats().capacity, capacity);
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

/// The limit holds when the backing allocator takes bytes from the arena during the
/// call that grows a block: the arena checks it again after the call (both modes;
/// the sanitizer mode grows a block through the backing allocator too).
#[test]
fn a_grow_whose_backing_call_reenters_is_checked_against_the_limit_again() {
    let arena = OneWayAlloc::new_in(Reentrant::default());
    arena.backing().arena.set(Some(NonNull::from(&arena)));
    arena.backing().reentrant_size.set(100 * KIB);
    let mut v: AVec<u8, &OneWayAlloc<Reentrant>> = AVec::new_in(&arena);
    v.resize(16 * KIB, 0x5A);
    // Room for the growth alone (a page of 216 KiB and its header, or 200 KiB more
    // of blocks), not for the growth and the re-entrant 100 KiB block together.
    let limit = arena.stats().capacity + 224 * KIB;
    arena.set_limit(Some(limit));
    arena.backing().armed.set(true);
    let grown = v.try_reserve_exact(200 * KIB);
    arena.backing().armed.set(false);
    assert_eq!(
        arena.backing().blocks.borrow().len(),
        1,
        "the call re-entered"
    );
    assert!(
        grown.is_err(),
        "a grow past the limit once the backing call returned"
    );
    assert!(
        arena.stats().capacity <= limit,
        "{} bytes held over a limit of {limit}",
        arena.stats().capacity
    );
    assert_eq!(v.len(), 16 * KIB);
    assert!(v.iter().all(|&b| b == 0x5A));
    check_blocks(arena.backing(), &[]);
    if PAGE_MODE {
        check_consistent(&arena);
    }
}
