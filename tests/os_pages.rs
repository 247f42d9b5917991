//! The OS page source of `OneWayAlloc::new()` on 64-bit Linux (src/os_pages.rs):
//! pages of 1 MiB and more are carved one after the other from a run of address
//! space the arena maps itself, `trim` gives their memory back to the OS at once, and
//! dropping the arena unmaps the run. Checked through the block addresses and
//! `mincore(2)`.
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]

use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE, SEPARATE_BLOCKS};

const MIB: usize = 1 << 20;
const OS_PAGE: usize = 4096;

/// Residency of the OS page holding `addr`: `Some(resident)`, or `None` if the
/// address is not mapped at all (`mincore` fails with ENOMEM).
fn resident(addr: usize) -> Option<bool> {
    let page = addr & !(OS_PAGE - 1);
    let mut vec = 0u8;
    // SAFETY: mincore only reads the page tables for the range and writes one byte
    // into `vec`; an unmapped range is reported as ENOMEM, not a fault.
    let rc = unsafe { libc::mincore(page as *mut libc::c_void, OS_PAGE, &mut vec) };
    if rc == 0 {
        Some(vec & 1 == 1)
    } else {
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOMEM)
        );
        None
    }
}

/// Fills the four small pages (64..512 KiB), then `n` blocks that each take a 1 MiB
/// page of their own, written to; returns the big blocks' addresses.
fn big_blocks(arena: &OneWayAlloc, n: usize) -> Vec<usize> {
    for size in [64, 128, 256, 512] {
        arena.alloc_bytes(size * 1024 - PAGE_HEADER_SIZE);
    }
    (0..n)
        .map(|_| {
            let block = arena.alloc_bytes(MIB - PAGE_HEADER_SIZE);
            block.fill(std::mem::MaybeUninit::new(7));
            block.as_ptr().addr()
        })
        .collect()
}

/// One test function, so that no other test of this binary takes or fills the
/// process's cache of runs meanwhile.
#[test]
fn large_pages_come_from_runs_that_trim_returns_and_later_arenas_reuse() {
    if SEPARATE_BLOCKS {
        return; // every block is its own allocation in the sanitizer mode
    }
    the_large_pages_of_new_are_carved_one_after_the_other();
    trim_gives_the_memory_of_large_pages_back_at_once();
    a_dropped_arena_leaves_its_run_to_the_next_arena_and_the_cache_is_bounded();
}

fn the_large_pages_of_new_are_carved_one_after_the_other() {
    let arena = OneWayAlloc::new();
    let blocks = big_blocks(&arena, 6);
    assert_eq!(arena.stats().page_allocations, 10);
    for pair in blocks.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            MIB,
            "1 MiB pages not consecutive: {blocks:x?}"
        );
    }
    // The first large page follows the run's 4 KiB record, in a run aligned to 2 MiB.
    assert_eq!((blocks[0] - PAGE_HEADER_SIZE) % (2 * MIB), OS_PAGE);
}

fn trim_gives_the_memory_of_large_pages_back_at_once() {
    let mut arena = OneWayAlloc::new();
    let blocks = big_blocks(&arena, 4);
    assert!(blocks.iter().all(|&b| resident(b) == Some(true)));
    arena.reset();
    // Keeps the small pages and the first large page: the other three go back.
    arena.trim((128 + 256 + 512) * 1024 + MIB);
    assert_eq!(arena.stats().pages, 5);
    assert_eq!(
        resident(blocks[0]),
        Some(true),
        "a kept page lost its memory"
    );
    for &b in &blocks[1..] {
        assert_eq!(resident(b), Some(false), "a trimmed page kept its memory");
    }
    // The kept page is reused; three pages are obtained again (the last one
    // freed is carved again in place, the space of the others is skipped).
    let again = big_blocks(&arena, 4);
    assert_eq!(again[0], blocks[0]);
    assert_eq!(again[1], blocks[3]);
    assert_eq!(arena.stats().page_allocations, 8 + 3);
    // Every large page trimmed: the run goes back to the OS, not to the cache.
    arena.reset();
    arena.trim(0);
    for &b in blocks.iter().chain(&again) {
        assert_eq!(resident(b), None, "the run is still mapped after trim(0)");
    }
}

fn a_dropped_arena_leaves_its_run_to_the_next_arena_and_the_cache_is_bounded() {
    let first = OneWayAlloc::new();
    let blocks = big_blocks(&first, 2);
    drop(first);
    // Kept mapped and resident for the next arena, which carves the same pages.
    assert_eq!(resident(blocks[0]), Some(true));
    let second = OneWayAlloc::new();
    assert_eq!(big_blocks(&second, 2), blocks);
    drop(second);
    // Six arenas alive at once hold six runs; dropped, at most four stay mapped.
    let arenas: Vec<OneWayAlloc> = (0..6).map(|_| OneWayAlloc::new()).collect();
    let firsts: Vec<usize> = arenas.iter().map(|a| big_blocks(a, 1)[0]).collect();
    drop(arenas);
    let mapped = firsts.iter().filter(|&&b| resident(b).is_some()).count();
    assert!((1..=4).contains(&mapped), "{mapped} of 6 runs still mapped");
}
