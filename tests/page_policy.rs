//! The page policy of SPEC §1 (create, growth, allocate, reset) and the counters of
//! `stats()`, observed through `pages()` and `stats()`.
//!
//! The sanitizer mode (feature `separate-blocks`) has no pages, so this file is
//! empty there.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![cfg(not(feature = "separate-blocks"))]

mod common;

use core::alloc::Layout;
use core::mem::MaybeUninit;

use common::*;
use onewayalloc::{Allocator, OneWayAlloc, Stats};

/// The target of the `nth` page the arena obtains, rounded to the OS page.
fn target(nth: usize) -> usize {
    round_os(((64 * KIB) << nth.min(4)).min(MIB))
}

/// Requests one byte more than the current (ordinary) page has left, which must
/// obtain a new page or select an unused one. Returns the request size.
fn overflow_current(arena: &OneWayAlloc) -> usize {
    let n = room(arena) + 1;
    bytes(arena, n);
    n
}

/// Builds an arena whose pages follow the schedule up to `count` pages, each new page
/// forced by a request that just exceeds the room left in the current page.
fn arena_with_schedule(count: usize) -> OneWayAlloc {
    let arena = OneWayAlloc::new();
    for _ in 1..count {
        overflow_current(&arena);
    }
    assert_eq!(sizes(&arena), (0..count).map(target).collect::<Vec<_>>());
    arena
}

#[test]
fn header_is_small_and_first_page_is_64_kib() {
    let arena = OneWayAlloc::new();
    assert_eq!(sizes(&arena), [round_os(64 * KIB)]);
    let h = header_size();
    assert_eq!(h, onewayalloc::PAGE_HEADER_SIZE);
    // The whole payload of the first page is usable with alignment 1 ...
    bytes(&arena, round_os(64 * KIB) - h);
    assert_eq!(arena.stats().page_allocations, 1);
    assert_eq!(room(&arena), 0);
    // ... and not one byte more.
    bytes(&arena, 1);
    assert_eq!(arena.stats().page_allocations, 2);
    check_consistent(&arena);
}

#[test]
fn growth_schedule_page_by_page() {
    let arena = OneWayAlloc::new();
    let mut requested = 0;
    let mut expected = vec![target(0)];
    assert_eq!(sizes(&arena), expected);
    for nth in 1..8 {
        let before = arena.stats();
        let prev_used: Vec<usize> = arena.pages().map(|p| p.used).collect();
        let n = overflow_current(&arena);
        requested += n;
        expected.push(target(nth));
        let after = arena.stats();
        assert_eq!(sizes(&arena), expected, "page sizes after page {nth}");
        assert_eq!(after.page_allocations, before.page_allocations + 1);
        assert_eq!(after.pages, nth + 1);
        assert_eq!(after.capacity, expected.iter().sum::<usize>());
        assert_eq!(after.used, requested, "align 1 requests add no padding");
        // The new page is placed last (after the current one), is current, and
        // holds exactly the request; earlier pages keep what they held.
        let pages: Vec<_> = arena.pages().collect();
        assert_eq!(current_index(&arena), nth);
        assert_eq!(pages[nth].used, n);
        for (i, used) in prev_used.iter().enumerate() {
            assert_eq!(pages[i].used, *used, "page {i} was not revisited");
            assert!(!pages[i].current);
        }
        check_consistent(&arena);
    }
    let kib: Vec<usize> = (0..8).map(|n| target(n).div_ceil(KIB)).collect();
    if os_page() <= 64 * KIB {
        assert_eq!(kib, [64, 128, 256, 512, 1024, 1024, 1024, 1024]);
    }
}

#[test]
fn exact_fill_does_not_add_a_page() {
    let arena = OneWayAlloc::new();
    for nth in 1..6 {
        let r = room(&arena);
        bytes(&arena, r);
        assert_eq!(room(&arena), 0);
        assert_eq!(arena.stats().page_allocations, nth, "an exact fit stays");
        // One more byte now needs the next page of the schedule.
        bytes(&arena, 1);
        assert_eq!(arena.stats().page_allocations, nth + 1);
        assert_eq!(*sizes(&arena).last().unwrap(), target(nth));
        assert_eq!(arena.pages().last().unwrap().used, 1);
    }
    check_consistent(&arena);
}

#[test]
fn size_hint_sizes_the_first_page_and_fits_the_hint() {
    let h = header_size();
    let hints = [
        0,
        1,
        100,
        64 * KIB - h - 1,
        64 * KIB - h,
        64 * KIB - h + 1,
        64 * KIB,
        100_000,
        MIB,
        MIB + 3,
        3 * MIB + 5,
    ];
    for hint in hints {
        let expected = round_os((h + hint).max(64 * KIB));
        let arena = OneWayAlloc::with_size_hint(hint);
        assert_eq!(sizes(&arena), [expected], "first page for hint {hint}");
        assert_eq!(arena.stats().capacity, expected);
        assert_eq!(arena.stats().page_allocations, 1);
        let block = arena.alloc_bytes(hint);
        assert_eq!(block.len(), hint);
        if hint > 0 {
            assert_eq!(addr(block.as_ptr()) % 16, 0);
        }
        let stats = arena.stats();
        assert_eq!(
            stats.page_allocations, 1,
            "hint {hint} fits in the first page"
        );
        assert_eq!(stats.pages, 1);
        assert_eq!(stats.used, hint);

        // The other constructors agree.
        let same = OneWayAlloc::try_with_size_hint(hint).expect("a first page");
        assert_eq!(sizes(&same), [expected]);
        let same = OneWayAlloc::with_size_hint_in(hint, onewayalloc::Global);
        assert_eq!(sizes(&same), [expected]);
    }
    assert_eq!(sizes(&OneWayAlloc::new()), [round_os(64 * KIB)]);
    assert_eq!(sizes(&OneWayAlloc::default()), [round_os(64 * KIB)]);
    assert!(OneWayAlloc::try_with_size_hint(usize::MAX).is_err());
    assert!(OneWayAlloc::try_with_size_hint(isize::MAX as usize).is_err());
}

#[test]
fn size_hint_then_schedule_continues_at_128_kib() {
    // The first page counts as page 0 of the schedule, whatever its size.
    let arena = OneWayAlloc::with_size_hint(MIB);
    bytes(&arena, room(&arena));
    assert_eq!(arena.stats().page_allocations, 1);
    bytes(&arena, 1);
    assert_eq!(sizes(&arena), [round_os(header_size() + MIB), target(1)]);
}

#[test]
fn large_request_gets_exactly_the_page_it_needs() {
    let h = header_size();
    let arena = OneWayAlloc::new();
    let big = 3 * MIB;
    bytes(&arena, big);
    let s = sizes(&arena);
    assert_eq!(s.len(), 2);
    let needed = h + big;
    assert!(
        s[1] >= needed && s[1] < needed + os_page(),
        "{} for {needed}",
        s[1]
    );
    assert_eq!(s[1] % os_page(), 0);
    assert_eq!(arena.stats().page_allocations, 2);
    assert_eq!(current_index(&arena), 1);

    // The next ordinary page is the schedule's third target, not above it.
    overflow_current(&arena);
    assert_eq!(sizes(&arena), [target(0), s[1], target(2)]);
    assert_eq!(arena.stats().page_allocations, 3);
    check_consistent(&arena);
}

#[test]
fn large_aligned_request_gets_exactly_the_page_it_needs() {
    let arena = OneWayAlloc::new();
    let align = 2 * MIB;
    // Too big for the 64 KiB first page wherever 2 MiB boundaries fall.
    let size = 64 * KIB + 100;
    let ptr = arena.alloc_layout(layout(size, align));
    assert_eq!(addr(ptr.as_ptr()) % align, 0);
    let s = sizes(&arena);
    assert_eq!(s.len(), 2);
    // The header padded to the alignment, then the payload.
    let needed = align + size;
    assert!(
        s[1] >= needed && s[1] < needed + os_page(),
        "{} for {needed}",
        s[1]
    );
    assert_eq!(s[1] % os_page(), 0);
    assert_eq!(arena.stats().page_allocations, 2);
    // The padding between the header and the aligned block counts as used.
    assert_eq!(arena.stats().used, needed - header_size());

    // Less than an OS page is left; a request of an OS page moves on to the
    // schedule's next target.
    bytes(&arena, os_page());
    assert_eq!(sizes(&arena), [target(0), s[1], target(2)]);
    check_consistent(&arena);
}

#[test]
fn large_requests_do_not_raise_later_targets_above_one_mib() {
    let arena = arena_with_schedule(5); // 64 .. 1024 KiB
    let h = header_size();
    bytes(&arena, 3 * MIB);
    let big = *sizes(&arena).last().unwrap();
    assert!(big >= h + 3 * MIB && big < h + 3 * MIB + os_page());
    overflow_current(&arena);
    assert_eq!(*sizes(&arena).last().unwrap(), MIB.max(os_page()));

    let ptr = arena.alloc_layout(layout(5 * MIB, 2 * MIB));
    assert_eq!(addr(ptr.as_ptr()) % (2 * MIB), 0);
    let aligned = *sizes(&arena).last().unwrap();
    let needed = 2 * MIB + 5 * MIB;
    assert!(aligned >= needed && aligned < needed + os_page());
    bytes(&arena, os_page());
    assert_eq!(*sizes(&arena).last().unwrap(), MIB.max(os_page()));
    assert_eq!(arena.stats().page_allocations, 9);
    check_consistent(&arena);
}

/// A deterministic workload that spans several pages, including a large and a
/// 2 MiB-aligned one.
fn workload(arena: &OneWayAlloc, seed: u64) {
    let mut rng = XorShift::new(seed);
    let count = if cfg!(miri) { 300 } else { 3_000 };
    for i in 0..count {
        let size = match rng.below(100) {
            0 => 40 * KIB + rng.below(40 * KIB),
            1..=10 => 1 + rng.below(4 * KIB),
            _ => 1 + rng.below(256),
        };
        let align = 1 << rng.below(7);
        arena.alloc_layout(layout(size, align));
        if i == count / 3 {
            bytes(arena, 3 * MIB);
        }
        if i == count / 2 {
            arena.alloc_layout(layout(64, 2 * MIB));
        }
    }
}

#[test]
fn reset_reuses_every_page_in_the_same_order() {
    let mut arena = OneWayAlloc::new();
    workload(&arena, 7);
    let first_pages: Vec<_> = arena.pages().collect();
    let first_stats = arena.stats();
    assert!(
        first_stats.pages >= 4,
        "the workload spans pages: {first_stats:?}"
    );
    check_consistent(&arena);

    arena.reset();
    let after_reset: Vec<_> = arena.pages().collect();
    assert_eq!(
        sizes(&arena),
        first_pages.iter().map(|p| p.size).collect::<Vec<_>>()
    );
    assert!(after_reset[0].current);
    for (i, page) in after_reset.iter().enumerate() {
        assert_eq!(page.used, 0, "page {i} after reset");
        assert_eq!(page.current, i == 0, "page {i} after reset");
    }
    let stats = arena.stats();
    assert_eq!(stats.pages, first_stats.pages);
    assert_eq!(stats.capacity, first_stats.capacity);
    assert_eq!(stats.page_allocations, first_stats.page_allocations);
    assert_eq!(stats.used, 0);

    // The same work again lands in the same pages, page for page.
    workload(&arena, 7);
    assert_eq!(arena.pages().collect::<Vec<_>>(), first_pages);
    assert_eq!(arena.stats(), first_stats);

    // And a third time after another reset.
    arena.reset();
    workload(&arena, 7);
    assert_eq!(arena.pages().collect::<Vec<_>>(), first_pages);
    assert_eq!(arena.stats(), first_stats);
    check_consistent(&arena);
}

#[test]
fn first_fit_moves_the_fitting_page_and_keeps_the_skipped_ones() {
    let h = header_size();
    let mut arena = arena_with_schedule(4); // 64, 128, 256, 512 KiB
    let (p0, p1, p2, p3) = (target(0), target(1), target(2), target(3));
    arena.reset();
    assert_eq!(sizes(&arena), [p0, p1, p2, p3]);

    // Too big for the 64 KiB current page and the 128 and 256 KiB unused pages:
    // the 512 KiB page moves right after the current one and becomes current,
    // with 12 KiB left.
    let big = p3 - h - 12 * KIB;
    assert!(big > p2);
    bytes(&arena, big);
    assert_eq!(sizes(&arena), [p0, p3, p1, p2]);
    assert_eq!(current_index(&arena), 1);
    assert_eq!(arena.stats().page_allocations, 4, "no new page");
    let pages: Vec<_> = arena.pages().collect();
    assert_eq!(pages[0].used, 0, "the first page was skipped, not filled");
    assert_eq!(pages[1].used, big);
    assert_eq!((pages[2].used, pages[3].used), (0, 0));
    assert!(!pages[2].current && !pages[3].current);
    check_consistent(&arena);

    // A small request overflowing the current page takes the first skipped page
    // (128 KiB), which is already right after the current one.
    let n = overflow_current(&arena);
    assert!(n < p1 - h);
    assert_eq!(sizes(&arena), [p0, p3, p1, p2]);
    assert_eq!(current_index(&arena), 2);
    assert_eq!(
        arena.stats().page_allocations,
        4,
        "the skipped page was reused"
    );
    assert_eq!(arena.pages().nth(2).unwrap().used, n);

    // The next overflow (about 116 KiB) takes the other skipped page (256 KiB).
    overflow_current(&arena);
    assert_eq!(sizes(&arena), [p0, p3, p1, p2]);
    assert_eq!(current_index(&arena), 3);
    assert_eq!(arena.stats().page_allocations, 4);

    // Only now is a new page obtained, placed after the current (last) page.
    overflow_current(&arena);
    assert_eq!(sizes(&arena), [p0, p3, p1, p2, target(4)]);
    assert_eq!(current_index(&arena), 4);
    assert_eq!(arena.stats().page_allocations, 5);
    check_consistent(&arena);
}

#[test]
fn first_fit_skips_small_pages_in_the_middle_of_the_list() {
    let mut arena = arena_with_schedule(4); // 64, 128, 256, 512 KiB
    let (p0, p1, p2, p3) = (target(0), target(1), target(2), target(3));
    arena.reset();
    // Move on to the 128 KiB page: it is already next, the list stays in order.
    bytes(&arena, p0); // does not fit the 64 KiB page
    assert_eq!(sizes(&arena), [p0, p1, p2, p3]);
    assert_eq!(current_index(&arena), 1);
    // Skip the 256 KiB page for the 512 KiB one, which moves before it.
    bytes(&arena, 400 * KIB);
    assert_eq!(sizes(&arena), [p0, p1, p3, p2]);
    assert_eq!(current_index(&arena), 2);
    // The skipped 256 KiB page serves the next overflow (about 112 KiB).
    overflow_current(&arena);
    assert_eq!(sizes(&arena), [p0, p1, p3, p2]);
    assert_eq!(current_index(&arena), 3);
    assert_eq!(arena.stats().page_allocations, 4);
    check_consistent(&arena);
}

#[test]
fn new_page_only_when_no_unused_page_fits() {
    let mut arena = arena_with_schedule(4); // 64, 128, 256, 512 KiB
    let (p0, p1, p2, p3) = (target(0), target(1), target(2), target(3));
    arena.reset();

    // Bigger than every page: a new page right after the current (first) page,
    // sized by the schedule (page 4 targets 1 MiB).
    bytes(&arena, p3);
    assert_eq!(arena.stats().page_allocations, 5);
    assert_eq!(sizes(&arena), [p0, target(4), p1, p2, p3]);
    assert_eq!(current_index(&arena), 1);

    // Every unused page is still available: each of these fits one of them, in
    // list order, so nothing moves and nothing new is obtained.
    bytes(&arena, room(&arena)); // fills the 1 MiB page exactly
    bytes(&arena, 100 * KIB); // 128 KiB page
    assert_eq!(current_index(&arena), 2);
    bytes(&arena, 200 * KIB); // 256 KiB page
    assert_eq!(current_index(&arena), 3);
    bytes(&arena, 400 * KIB); // 512 KiB page
    assert_eq!(current_index(&arena), 4);
    assert_eq!(arena.stats().page_allocations, 5);
    assert_eq!(sizes(&arena), [p0, target(4), p1, p2, p3]);
    // Now nothing is left.
    overflow_current(&arena);
    assert_eq!(arena.stats().page_allocations, 6);
    assert_eq!(sizes(&arena), [p0, target(4), p1, p2, p3, target(5)]);
    check_consistent(&arena);
}

#[test]
fn reset_marks_pages_unused_without_reordering() {
    let mut arena = arena_with_schedule(6);
    let order = sizes(&arena);
    let pages = arena.stats().pages;
    arena.reset();
    assert_eq!(sizes(&arena), order);
    assert_eq!(current_index(&arena), 0);
    assert!(arena.pages().all(|p| p.used == 0));
    // Touching only the first page after reset leaves the rest reported unused.
    bytes(&arena, 10);
    let now: Vec<_> = arena.pages().collect();
    assert_eq!(now[0].used, 10);
    assert!(now[1..].iter().all(|p| p.used == 0 && !p.current));
    // Resetting repeatedly keeps the pages and the capacity.
    for _ in 0..10 {
        arena.reset();
    }
    assert_eq!(arena.stats().pages, pages);
    assert_eq!(sizes(&arena), order);
    check_consistent(&arena);
}

#[test]
fn reset_rewinds_the_first_page_and_does_not_zero() {
    let mut arena = OneWayAlloc::new();
    let first = arena.alloc_bytes(64);
    let first_addr = addr(first.as_ptr());
    for b in first.iter_mut() {
        b.write(0xAB);
    }
    arena.reset();
    let again = arena.alloc_bytes(64);
    assert_eq!(
        addr(again.as_ptr()),
        first_addr,
        "the first page is rewound"
    );
    // SAFETY: these bytes were written before the reset, which does not touch them.
    let again: &[u8] = unsafe { &*(again as *const [MaybeUninit<u8>] as *const [u8]) };
    assert!(
        again.iter().all(|&b| b == 0xAB),
        "reset does not zero memory"
    );
    // The zeroed calls do zero.
    arena.reset();
    let zeroed = arena.alloc_zeroed(8, 8);
    assert_eq!(addr(zeroed.as_ptr()), first_addr);
    assert!(zeroed.iter().all(|&b| b == 0));
}

#[test]
fn stats_count_padding_and_reset_to_zero() {
    let mut arena = OneWayAlloc::new();
    let s0 = arena.stats();
    assert_eq!((s0.pages, s0.used, s0.page_allocations), (1, 0, 1));
    assert_eq!(s0.capacity, round_os(64 * KIB));

    /// 8 bytes aligned to 8 on every target (a `u64` is 4-aligned on i686).
    #[repr(align(8))]
    struct Eight(#[allow(dead_code)] u64);
    arena.alloc(1u8);
    arena.alloc(Eight(2));
    let s = arena.stats();
    assert_eq!(s.used, 16, "7 bytes of padding before the 8-aligned value");

    arena.alloc_str("abc"); // align 1, no padding
    arena.alloc(3u32); // 1 byte of padding
    let s = arena.stats();
    assert_eq!(s.used, 16 + 3 + 1 + 4);

    arena.alloc_bytes(1); // 16-aligned: 8 bytes of padding
    let s = arena.stats();
    assert_eq!(s.used, 32 + 1);

    // Counting spans pages.
    bytes(&arena, 100 * KIB);
    let s = arena.stats();
    assert_eq!(s.used, 33 + 100 * KIB);
    assert_eq!(s.page_allocations, 2);
    check_consistent(&arena);

    arena.reset();
    let s = arena.stats();
    assert_eq!(s.used, 0);
    assert_eq!((s.pages, s.page_allocations), (2, 2));
    assert_eq!(s.capacity, round_os(64 * KIB) + target(1));
}

/// SPEC §1.8: zero-sized requests, any call, any alignment, return a well-aligned
/// pointer, never obtain a page, never fail, and consume at most the padding up to
/// their alignment.
#[test]
fn zero_sized_requests_obtain_no_page_and_consume_only_padding() {
    let arena = OneWayAlloc::new();
    arena.alloc(1u8); // leave the cursor misaligned
    let before: Stats = arena.stats();
    let page_count = arena.pages().count();

    let unit: &mut () = arena.alloc(());
    assert_eq!(addr(unit as *const ()) % align_of::<()>(), 0);
    let b = arena.alloc_bytes(0);
    assert!(b.is_empty());
    assert_eq!(addr(b.as_ptr()) % 16, 0);
    for shift in 0..=21 {
        let align = 1usize << shift;
        let used = arena.stats().used;
        let p = arena.alloc_layout(layout(0, align));
        assert!(
            arena.stats().used - used < align,
            "only padding, align {align}"
        );
        assert_eq!(addr(p.as_ptr()) % align, 0, "alloc_layout align {align}");
        let p = (&arena).allocate(layout(0, align)).expect("zero-sized");
        assert_eq!(p.len(), 0);
        assert_eq!(
            addr(p.as_ptr().cast::<u8>()) % align,
            0,
            "allocate align {align}"
        );
        let p = arena
            .try_alloc_layout(layout(0, align))
            .expect("zero-sized");
        assert_eq!(addr(p.as_ptr()) % align, 0);
    }
    let empty: &mut [u64] = arena.alloc_slice_copy(&[]);
    assert!(empty.is_empty());
    assert_eq!(addr(empty.as_ptr()) % align_of::<u64>(), 0);
    let empty: &mut [u128] = arena.alloc_slice_fill_with(0, |_| 0u128);
    assert_eq!(addr(empty.as_ptr()) % align_of::<u128>(), 0);
    assert_eq!(arena.alloc_str(""), "");
    assert!(arena.alloc_zeroed(0, 8).is_empty());
    assert!(arena.alloc_zeroed(8, 0).is_empty());
    #[repr(align(4096))]
    struct Empty4k;
    let e: &mut Empty4k = arena.alloc(Empty4k);
    assert_eq!(addr(e as *const Empty4k) % 4096, 0);
    let zst_array: &mut [u64; 0] = arena.alloc([]);
    assert_eq!(addr(zst_array.as_ptr()) % 8, 0);

    let after = arena.stats();
    assert_eq!(after.pages, before.pages);
    assert_eq!(after.page_allocations, before.page_allocations);
    assert_eq!(arena.pages().count(), page_count);
    // Whatever padding was consumed stayed in the first page.
    assert!(after.used < after.capacity, "{before:?} -> {after:?}");

    // A zero-sized request consumes nothing but its padding: right after an
    // aligned cursor, nothing at all.
    let cursor_aligned = arena.stats().used;
    arena.alloc_layout(layout(0, 1));
    (&arena).allocate(layout(0, 1)).expect("zero-sized");
    assert_eq!(arena.stats().used, cursor_aligned);

    // The arena still serves ordinary requests right where it left off.
    let used = arena.stats().used;
    arena.alloc(2u8);
    assert_eq!(arena.stats().used, used + 1);

    // Even a full page: zero-sized requests never obtain one, whatever their alignment.
    let full = OneWayAlloc::new();
    bytes(&full, 64 * KIB - header_size());
    for shift in [0, 3, 12, 16, 21] {
        let p = full.alloc_layout(layout(0, 1 << shift));
        assert_eq!(addr(p.as_ptr()) % (1 << shift), 0);
        full.try_alloc_layout(layout(0, 1 << shift))
            .expect("never fails");
    }
    assert_eq!(full.stats().page_allocations, 1);
    assert_eq!(full.stats().used, 64 * KIB - header_size());
}

#[test]
fn aligned_request_uses_first_fit_too() {
    // 130 KiB never fits the 64 or 128 KiB pages; with alignment 4 KiB (the OS page
    // here, the alignment of every page) it always fits the 256 KiB page.
    let mut arena = arena_with_schedule(3); // 64, 128, 256 KiB
    arena.reset();
    let align = 4096;
    let ptr = arena.alloc_layout(layout(130 * KIB, align));
    assert_eq!(addr(ptr.as_ptr()) % align, 0);
    assert_eq!(
        arena.stats().page_allocations,
        3,
        "the 256 KiB page holds it"
    );
    assert_eq!(sizes(&arena), [target(0), target(2), target(1)]);
    assert_eq!(current_index(&arena), 1);
    check_consistent(&arena);
}

#[test]
fn layout_with_page_alignment_in_the_first_page() {
    let arena = OneWayAlloc::new();
    // 4096-aligned blocks fit in the 64 KiB first page after padding.
    let a = arena.alloc_layout(Layout::from_size_align(64, 4096).unwrap());
    let b = arena.alloc_layout(Layout::from_size_align(64, 4096).unwrap());
    assert_eq!(addr(a.as_ptr()) % 4096, 0);
    assert_eq!(addr(b.as_ptr()) % 4096, 0);
    assert_eq!(addr(b.as_ptr()) - addr(a.as_ptr()), 4096);
    assert_eq!(arena.stats().page_allocations, 1);
    // used counts the padding between them.
    let s = arena.stats();
    assert!(s.used >= 4096 + 64 && s.used < 2 * 4096 + 64, "{s:?}");
}
