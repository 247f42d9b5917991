//! Growing buffers (SPEC §1.3): when `grow` must move the most recent block out of
//! the current page, the arena takes the *largest* unused page that fits it (the
//! first of those on a tie), or else obtains a page with room for the buffer to
//! double once more in place; every other request keeps first fit. A vector that
//! keeps doubling is then copied at most every other doubling in a fresh arena, and
//! at most once after a reset.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![cfg(not(feature = "separate-blocks"))]

mod common;

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::vec::Vec as AVec;
use common::{
    KIB, MIB, addr, bytes, check_consistent, current_index, header_size, round_os, sizes,
};
use onewayalloc::OneWayAlloc;

/// Pushes `n` values into a fresh arena vector and returns how many times its
/// buffer moved.
fn push_and_count_moves<A: Allocator>(arena: &OneWayAlloc<A>, n: u64) -> usize {
    let mut v: AVec<u64, &OneWayAlloc<A>> = AVec::new_in(arena);
    let mut moves = 0;
    let mut at = addr(v.as_ptr());
    for i in 0..n {
        v.push(i);
        if addr(v.as_ptr()) != at {
            moves += 1;
            at = addr(v.as_ptr());
        }
    }
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    moves
}

#[test]
fn a_doubling_vector_is_copied_at_most_every_other_doubling_then_once_after_reset() {
    let n: u64 = if cfg!(miri) { 20_000 } else { 1 << 20 };
    let mut arena = OneWayAlloc::new();
    let cold_moves = push_and_count_moves(&arena, n);
    // The buffer doubles from 32 KiB (the most the 64 KiB first page holds) to its
    // final size; each new page has room for one more doubling in place, so at most
    // every other doubling moves it (the first count is its first allocation).
    let final_buffer = (n as usize).next_power_of_two() * 8;
    let doublings = (final_buffer / (32 * KIB)).ilog2() as usize;
    assert!(
        cold_moves - 1 <= doublings.div_ceil(2),
        "{cold_moves} moves for {doublings} doublings"
    );
    check_consistent(&arena);
    let cold = arena.stats();

    arena.reset();
    let warm_moves = push_and_count_moves(&arena, n);
    assert_eq!(
        warm_moves, 2,
        "first allocation, then one move to the largest page"
    );
    let warm = arena.stats();
    assert_eq!(warm.page_allocations, cold.page_allocations, "no new page");
    assert_eq!(warm.capacity, cold.capacity);
    // Memory: at most 2.5x the vector's final buffer (8 MiB natively), plus, for the
    // small buffers a Miri run can afford, the first pages of the schedule, which
    // weigh on them (64 KiB and a page of about 132 KiB).
    let fixed = if final_buffer >= 8 << 20 {
        0
    } else {
        256 * KIB
    };
    assert!(
        warm.capacity as f64 <= 2.5 * final_buffer as f64 + fixed as f64,
        "{} > 2.5 x {final_buffer} + {fixed}",
        warm.capacity
    );
}

#[test]
fn the_largest_unused_page_that_fits_takes_the_growing_buffer() {
    let mut arena = OneWayAlloc::new();
    // Pages: 64 KiB, then 200 KiB, 900 KiB and 700 KiB (each larger than its
    // target of 128, 256 and 512 KiB, so each is exactly its request's size).
    for kib in [200, 900, 700] {
        bytes(&arena, kib * KIB - header_size());
    }
    let before = sizes(&arena);
    assert_eq!(before[1..], [200 * KIB, 900 * KIB, 700 * KIB].map(round_os));
    arena.reset();

    // A buffer at the top of the first page grows past it: it skips the first page
    // that fits (200 KiB) for the largest, 900 KiB.
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(40 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    let new = Layout::from_size_align(150 * KIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    let moved = unsafe { a.grow(block, old, new) }.unwrap().cast::<u8>();
    assert_ne!(moved, block);
    assert_eq!(
        sizes(&arena),
        [before[0], before[2], before[1], before[3]],
        "the 900 KiB page moved right after the current one; the others kept their order"
    );
    assert_eq!(current_index(&arena), 1);
    assert_eq!(arena.stats().page_allocations, 4, "no new page");

    // An ordinary request that needs another page keeps first fit: the 200 KiB page.
    bytes(&arena, 900 * KIB - header_size() - 150 * KIB); // fills the 900 KiB page
    bytes(&arena, 100 * KIB);
    assert_eq!(current_index(&arena), 2);
    assert_eq!(sizes(&arena)[2], before[1]);
    check_consistent(&arena);
}

/// Only a block that grows is a growing buffer: the most recent block moved to
/// another page by a `grow` to its own size (a larger alignment, with no room in
/// its page to realign) is placed by first fit, like any request.
#[test]
fn a_block_that_only_realigns_is_an_ordinary_request() {
    let mut arena = OneWayAlloc::new();
    for kib in [200, 900, 700] {
        bytes(&arena, kib * KIB - header_size());
    }
    let before = sizes(&arena);
    arena.reset();
    // A block of 40 KiB + 8 bytes that ends exactly at the end of the first page:
    // it starts 8 bytes past a multiple of 16.
    let size = 40 * KIB + 8;
    let room = before[0] - header_size();
    bytes(&arena, room - size);
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(size, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    assert_eq!(addr(block.as_ptr()) % 16, 8);
    // SAFETY: `block` is the live block just allocated with `old`.
    unsafe { block.as_ptr().write_bytes(0x5a, size) };
    let new = Layout::from_size_align(size, 16).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    let moved = unsafe { a.grow(block, old, new) }.unwrap().cast::<u8>();
    assert_eq!(addr(moved.as_ptr()) % 16, 0);
    // First fit: the 200 KiB page, not the largest (900 KiB); nothing reordered.
    assert_eq!(current_index(&arena), 1);
    assert_eq!(sizes(&arena), before);
    // SAFETY: `moved` is the live block of `size` bytes, its contents copied.
    let copied = unsafe { core::slice::from_raw_parts(moved.as_ptr(), size) };
    assert!(copied.iter().all(|&b| b == 0x5a));
}

#[test]
fn ties_go_to_the_first_in_list_order() {
    let mut arena = OneWayAlloc::new();
    for _ in 0..3 {
        bytes(&arena, 600 * KIB - header_size()); // above the targets: 600 KiB each
    }
    let base: Vec<usize> = arena.pages().map(|p| p.size).collect();
    arena.reset();
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(60 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    let new = Layout::from_size_align(120 * KIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    let moved = unsafe { a.grow(block, old, new) }.unwrap().cast::<u8>();
    // The first 600 KiB page in list order holds it: it is the second page.
    assert_eq!(current_index(&arena), 1);
    assert_eq!(sizes(&arena), base);
    let second = arena.pages().nth(1).unwrap();
    assert_eq!(second.used, 120 * KIB);
    assert_eq!(addr(moved.as_ptr()) % 8, 0);
}

#[test]
fn a_new_page_for_a_growing_buffer_has_room_to_double() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(40 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    let new = Layout::from_size_align(3 * MIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    let moved = unsafe { a.grow(block, old, new) }.unwrap().cast::<u8>();
    let page = arena.pages().nth(1).unwrap().size;
    assert_eq!(page, round_os(header_size() + 6 * MIB));
    // It doubles in place.
    let doubled = Layout::from_size_align(6 * MIB, 8).unwrap();
    // SAFETY: `moved` is the live block with `new`.
    let again = unsafe { a.grow(moved, new, doubled) }.unwrap().cast::<u8>();
    assert_eq!(again, moved);
    assert_eq!(arena.stats().page_allocations, 2);

    // An ordinary request of the same size gets exactly the page it needs.
    let plain = OneWayAlloc::new();
    bytes(&plain, 3 * MIB);
    assert_eq!(
        plain.pages().nth(1).unwrap().size,
        round_os(header_size() + 3 * MIB)
    );
}

#[test]
fn a_growing_buffer_takes_the_exact_page_when_the_roomy_one_passes_the_limit() {
    let arena = OneWayAlloc::new();
    let first = arena.stats().capacity;
    let exact = round_os(header_size() + 3 * MIB);
    arena.set_limit(Some(first + exact));
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(40 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    let new = Layout::from_size_align(3 * MIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    unsafe { a.grow(block, old, new) }.expect("the exact page fits the limit");
    assert_eq!(arena.pages().nth(1).unwrap().size, exact);
    assert_eq!(arena.stats().capacity, first + exact);
}

/// Refuses the `refuse_at`-th page request (counting from 0), accepts the others.
struct RefuseOnce {
    calls: Cell<usize>,
    refuse_at: usize,
}

unsafe impl Allocator for RefuseOnce {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let call = self.calls.get();
        self.calls.set(call + 1);
        if call == self.refuse_at {
            return Err(AllocError);
        }
        Global.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded: the block came from `Global` with this layout.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

#[test]
fn a_refused_roomy_page_falls_back_to_the_exact_page() {
    let backing = RefuseOnce {
        calls: Cell::new(0),
        refuse_at: 1,
    };
    let arena = OneWayAlloc::new_in(&backing);
    let a = &arena;
    let old = Layout::from_size_align(40 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    let new = Layout::from_size_align(3 * MIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    unsafe { a.grow(block, old, new) }.expect("the exact page is accepted");
    assert_eq!(
        backing.calls.get(),
        3,
        "first page, refused roomy page, exact page"
    );
    assert_eq!(
        arena.pages().nth(1).unwrap().size,
        round_os(header_size() + 3 * MIB)
    );
    assert_eq!(arena.stats().page_allocations, 2);
}

/// When the page with room to double would be no larger than the exact page (the
/// growth schedule's target holds both), there is one page to ask for: once
/// refused, the growth fails without asking the backing allocator again.
#[test]
fn a_growing_buffer_asks_once_when_the_roomy_page_is_the_exact_page() {
    let backing = RefuseOnce {
        calls: Cell::new(0),
        refuse_at: 1,
    };
    let arena = OneWayAlloc::new_in(&backing);
    let a = &arena;
    bytes_in(a, 60 * KIB); // little room left in the first page
    let old = Layout::from_size_align(KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    // 8 KiB does not fit the first page; 16 KiB fits the 128 KiB target too.
    let new = Layout::from_size_align(8 * KIB, 8).unwrap();
    // SAFETY: `block` is the live block just allocated with `old`.
    let grown = unsafe { a.grow(block, old, new) };
    assert!(grown.is_err(), "the one page it needs was refused");
    assert_eq!(backing.calls.get(), 2, "first page, the refused page");
    assert_eq!(arena.stats().page_allocations, 1);
    // The backing allocator accepts again: the buffer gets the 128 KiB page.
    // SAFETY: the refused `grow` left `block` live with `old`.
    unsafe { a.grow(block, old, new) }.expect("accepted");
    assert_eq!(arena.pages().nth(1).unwrap().size, 128 * KIB);
}

fn bytes_in<A: Allocator>(arena: &OneWayAlloc<A>, n: usize) {
    arena.alloc_layout(Layout::from_size_align(n, 1).unwrap());
}

#[test]
fn an_older_block_that_grows_is_an_ordinary_request() {
    let mut arena = OneWayAlloc::new();
    for kib in [200, 600] {
        bytes(&arena, kib * KIB - header_size());
    }
    let before = sizes(&arena);
    arena.reset();
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(40 * KIB, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    bytes(&arena, 20 * KIB); // the block is no longer the most recent
    let new = Layout::from_size_align(150 * KIB, 8).unwrap();
    // SAFETY: `block` is live with `old`.
    unsafe { a.grow(block, old, new) }.unwrap();
    // First fit: the 200 KiB page, in place.
    assert_eq!(sizes(&arena), before);
    assert_eq!(current_index(&arena), 1);
}

#[test]
fn an_older_block_that_grows_moves_within_the_current_page_when_it_fits() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let old = Layout::from_size_align(24, 8).unwrap();
    let block = a.allocate(old).unwrap().cast::<u8>();
    // SAFETY: `block` holds 24 writable bytes.
    unsafe {
        block
            .as_ptr()
            .copy_from_nonoverlapping([7u8; 24].as_ptr(), 24)
    };
    bytes_in(&arena, 3); // the block is no longer the most recent
    let used = arena.stats().used;
    let pages = sizes(&arena);
    let new = Layout::from_size_align(48, 8).unwrap();
    // SAFETY: `block` is live with `old`.
    let moved = unsafe { a.grow(block, old, new) }.unwrap().cast::<u8>();
    assert_ne!(moved, block, "an older block cannot grow where it is");
    // Bumped at the cursor (rounded up to 8): 5 bytes of padding, then 48.
    assert_eq!(arena.stats().used, used + 5 + 48);
    assert_eq!(sizes(&arena), pages, "no page obtained");
    assert_eq!(current_index(&arena), 0);
    // SAFETY: `moved` holds 48 bytes, the first 24 copied from `block`.
    let copied = unsafe { std::slice::from_raw_parts(moved.as_ptr(), 24) };
    assert_eq!(copied, [7u8; 24]);
    // A growth to the same size keeps an older block where it is.
    bytes_in(&arena, 1);
    // SAFETY: `moved` is live with `new`.
    let kept = unsafe { a.grow(moved, new, new) }.unwrap().cast::<u8>();
    assert_eq!(kept, moved);
}
