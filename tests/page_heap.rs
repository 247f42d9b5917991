//! The page heap of `OneWayAlloc::new()` on 64-bit Linux (src/engine/page_heap/): large
//! pages come from spans that every arena shares, pages given back stay resident for
//! the next arena within a bound that `free_page_bytes()` reports, and
//! `release_free_pages()` gives them to the system. Checked through the block
//! addresses, the heap's figures and `mincore(2)`. (The resident memory of whole
//! programs: tests/page_heap_memory.rs.)
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]
// With the `nightly` feature `Global` is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::mem::MaybeUninit;

use onewayalloc::allocator_api2::alloc::Global;
use onewayalloc::{
    DEFAULT_FREE_PAGE_LIMIT, OneWayAlloc, PAGE_HEADER_SIZE, Pool, SEPARATE_BLOCKS, free_page_bytes,
    free_page_limit, mapped_spans, release_free_pages, set_free_page_limit,
};

const MIB: usize = 1 << 20;
const OS_PAGE: usize = 4096;
/// The small pages of an arena that grew past them: 64, 128, 256 and 512 KiB.
const SMALL: usize = (64 + 128 + 256 + 512) * 1024;

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

/// The `VmFlags` of the mapping that holds `addr`, from /proc/self/smaps (`hg`: huge
/// pages asked for, `nh`: refused).
fn vm_flags(addr: usize) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        let range = line.split_whitespace().next().unwrap_or("");
        if let Some((start, end)) = range.split_once('-') {
            if let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) {
                inside = (start..end).contains(&addr);
                continue;
            }
        }
        match line.strip_prefix("VmFlags:") {
            Some(flags) if inside => return flags.split_whitespace().map(String::from).collect(),
            _ => {}
        }
    }
    panic!("{addr:x} in no mapping of /proc/self/smaps")
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
            block.fill(MaybeUninit::new(7));
            block.as_ptr().addr()
        })
        .collect()
}

/// One test function, so that no other test of this binary takes or returns pages
/// of the process's heap meanwhile.
#[test]
fn large_pages_come_from_one_heap_that_counts_bounds_and_gives_back_what_it_keeps() {
    if SEPARATE_BLOCKS {
        return; // every block is its own allocation in the sanitizer mode
    }
    assert_eq!(free_page_limit(), DEFAULT_FREE_PAGE_LIMIT);
    large_pages_are_slots_of_a_shared_span();
    a_dropped_arena_leaves_its_pages_resident_to_the_next_arena();
    a_dropped_arenas_small_pages_go_to_the_next_arena_within_their_bound();
    trim_returns_pages_to_the_heap_and_release_gives_them_to_the_system();
    the_limit_bounds_what_the_heap_keeps();
    a_barely_touched_large_page_costs_its_touched_bytes();
    many_arenas_share_a_few_spans();
    sizes_the_system_cannot_back_are_errors();
    a_page_larger_than_a_span_has_a_mapping_of_its_own();
    a_page_of_a_whole_span_takes_a_shared_span_and_is_kept();
    the_heap_maps_the_address_space_of_its_spans_and_no_more();
    a_cleared_pool_gives_the_pages_of_its_arenas_back_to_the_system();
    a_cleared_pool_gives_back_the_pages_of_the_arenas_it_dropped();
    an_arenas_pages_follow_one_another_while_another_arena_grows();
    a_quiet_process_decays_what_the_heap_keeps();
    a_sync_pool_arena_back_from_a_large_request_keeps_its_first_page_not_its_memory();
    release_free_pages();
    assert_eq!(free_page_bytes(), 0);
    assert_eq!(mapped_spans(), (0, 0), "spans mapped with nothing in use");
}

fn large_pages_are_slots_of_a_shared_span() {
    release_free_pages();
    let arena = OneWayAlloc::new();
    let blocks = big_blocks(&arena, 6);
    assert_eq!(arena.stats().page_allocations, 10);
    assert_eq!(arena.page_heap_bytes(), 6 * MIB);
    for &block in &blocks {
        // A slot starts at a 1 MiB boundary; the block follows the page header.
        assert_eq!((block - PAGE_HEADER_SIZE) % MIB, 0, "{blocks:x?}");
    }
    // The arena's first two large pages (under 2 MiB filled) come from a plain span,
    // the later ones from a huge-page span: two spans.
    assert_eq!(mapped_spans(), (2, 128 * MIB));
    if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        // The plain span refuses huge pages (whatever the THP mode), the other asks.
        for &plain in &blocks[..2] {
            assert!(vm_flags(plain).contains(&"nh".to_string()), "{plain:x}");
        }
        for &huge in &blocks[2..] {
            assert!(vm_flags(huge).contains(&"hg".to_string()), "{huge:x}");
        }
    }
    let other = OneWayAlloc::new();
    let more = big_blocks(&other, 1);
    assert_eq!(
        mapped_spans().0,
        2,
        "a second arena mapped a span of its own"
    );
    assert!(!blocks.contains(&more[0]));
    drop((arena, other));
    // Six pages and one: the four huge-page slots make two whole huge pages. And the
    // two arenas' small pages.
    assert_eq!(free_page_bytes(), 7 * MIB + 2 * SMALL);
}

fn a_dropped_arena_leaves_its_pages_resident_to_the_next_arena() {
    release_free_pages();
    assert_eq!(mapped_spans(), (0, 0));
    let first = OneWayAlloc::new();
    let blocks = big_blocks(&first, 2);
    drop(first);
    assert_eq!(free_page_bytes(), 2 * MIB + SMALL);
    assert!(blocks.iter().all(|&b| resident(b) == Some(true)));
    // The next arena takes the same resident pages.
    let second = OneWayAlloc::new();
    let again = big_blocks(&second, 2);
    let mut sorted = again.clone();
    sorted.sort_unstable();
    let mut expected = blocks.clone();
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    assert_eq!(free_page_bytes(), 0);
    drop(second);
}

/// Fills the four small pages (64..512 KiB): the addresses of their blocks, one per
/// page, right after its header.
fn small_blocks(arena: &OneWayAlloc) -> Vec<usize> {
    [64, 128, 256, 512]
        .map(|size| {
            let block = arena.alloc_bytes(size * 1024 - PAGE_HEADER_SIZE);
            block[0] = MaybeUninit::new(1);
            block.as_ptr().addr()
        })
        .to_vec()
}

fn a_dropped_arenas_small_pages_go_to_the_next_arena_within_their_bound() {
    release_free_pages();
    let first = OneWayAlloc::new();
    let pages = small_blocks(&first);
    drop(first);
    assert_eq!(free_page_bytes(), SMALL, "counted as free pages");
    // The next arena of `new()` takes them, its first page included.
    let second = OneWayAlloc::new();
    assert_eq!(small_blocks(&second), pages);
    assert_eq!(free_page_bytes(), 0);
    drop(second);
    assert_eq!(free_page_bytes(), SMALL);
    // An arena of `new_in(Global)` neither takes nor keeps them.
    let plain = OneWayAlloc::new_in(Global);
    let its_own = small_blocks(&plain);
    assert!(its_own.iter().all(|page| !pages.contains(page)));
    drop(plain);
    assert_eq!(free_page_bytes(), SMALL);
    assert_eq!(release_free_pages(), SMALL);
    assert_eq!(free_page_bytes(), 0);
    // At most a quarter of the limit: 256 KiB of 1 MiB.
    set_free_page_limit(MIB);
    let third = OneWayAlloc::new();
    small_blocks(&third);
    drop(third);
    let kept = free_page_bytes();
    assert!((64 * 1024..=MIB / 4).contains(&kept), "{kept}");
    set_free_page_limit(DEFAULT_FREE_PAGE_LIMIT);
    // And at most 16 MiB: 256 first pages of 64 KiB, of 300.
    release_free_pages();
    let arenas: Vec<OneWayAlloc> = (0..300).map(|_| OneWayAlloc::new()).collect();
    drop(arenas);
    assert_eq!(free_page_bytes(), 16 * MIB);
    release_free_pages();
}

fn trim_returns_pages_to_the_heap_and_release_gives_them_to_the_system() {
    release_free_pages();
    let mut arena = OneWayAlloc::new();
    let blocks = big_blocks(&arena, 4);
    arena.reset();
    // Keeps the small pages and the first large page: the other three go back.
    arena.trim((128 + 256 + 512) * 1024 + MIB);
    assert_eq!(arena.stats().pages, 5);
    assert_eq!(arena.page_heap_bytes(), MIB);
    let kept = free_page_bytes();
    assert!(kept >= 3 * MIB, "{kept}");
    assert_eq!(release_free_pages(), kept);
    assert_eq!(free_page_bytes(), 0);
    assert_eq!(
        resident(blocks[0]),
        Some(true),
        "a kept page lost its memory"
    );
    for &b in &blocks[1..] {
        assert_ne!(resident(b), Some(true), "a released page kept its memory");
    }
    drop(arena);
    release_free_pages();
    for &b in &blocks {
        assert_eq!(
            resident(b),
            None,
            "a span with nothing in use is still mapped"
        );
    }
}

fn the_limit_bounds_what_the_heap_keeps() {
    release_free_pages();
    set_free_page_limit(3 * MIB);
    let arena = OneWayAlloc::new();
    let blocks = big_blocks(&arena, 10);
    drop(arena);
    // At most 3 MiB kept, the small pages (at most a quarter of the limit) and the
    // large ones together: the pages of huge-page spans go back by whole 2 MiB huge
    // pages (half of one never goes alone while the other half is free), so 2 MiB
    // of large pages here.
    let kept = free_page_bytes();
    assert!((2 * MIB..=3 * MIB).contains(&kept), "{kept}");
    assert!(kept - 2 * MIB <= 3 * MIB / 4, "{kept}");
    let still = blocks
        .iter()
        .filter(|&&b| resident(b) == Some(true))
        .count();
    assert_eq!(still, 2, "{still} pages resident, 2 kept");
    // A limit it is within gives back nothing; a lower one the excess, at once.
    set_free_page_limit(kept);
    assert_eq!(free_page_bytes(), kept);
    set_free_page_limit(2 * MIB);
    assert!(free_page_bytes() <= 2 * MIB, "{}", free_page_bytes());
    set_free_page_limit(MIB);
    assert!(free_page_bytes() <= MIB, "{}", free_page_bytes());
    set_free_page_limit(0);
    assert_eq!(free_page_bytes(), 0);
    let arena = OneWayAlloc::new();
    big_blocks(&arena, 2);
    drop(arena);
    assert_eq!(free_page_bytes(), 0, "kept memory under a limit of 0");
    set_free_page_limit(DEFAULT_FREE_PAGE_LIMIT);
}

fn a_barely_touched_large_page_costs_its_touched_bytes() {
    release_free_pages();
    // One block of 1.1 MiB in a fresh arena: a page of two slots, one byte written.
    let arena = OneWayAlloc::new();
    let block = arena.alloc_bytes(MIB + MIB / 10);
    block[0] = MaybeUninit::new(1);
    let start = block.as_ptr().addr();
    assert_eq!(resident(start), Some(true));
    // No transparent huge page behind it: the rest of the 2 MiB stays untouched.
    for offset in [64 << 10, MIB / 2, MIB] {
        assert_eq!(resident(start + offset), Some(false), "offset {offset}");
    }
    drop(arena);
}

fn many_arenas_share_a_few_spans() {
    release_free_pages();
    let arenas: Vec<OneWayAlloc> = (0..100)
        .map(|_| {
            let arena = OneWayAlloc::new();
            arena.alloc_bytes(MIB + MIB / 10)[0] = MaybeUninit::new(1);
            arena
        })
        .collect();
    // 200 slots: four spans of 64.
    assert_eq!(mapped_spans(), (4, 256 * MIB));
    drop(arenas);
    assert!(free_page_bytes() <= free_page_limit());
}

/// MemTotal plus SwapTotal, in bytes.
fn memory_and_swap() -> usize {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib = |key: &str| -> usize {
        let line = info.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (kib("MemTotal:") + kib("SwapTotal:")) * 1024
}

fn sizes_the_system_cannot_back_are_errors() {
    let too_much = 2 * memory_and_swap();
    let arena = OneWayAlloc::new();
    assert!(arena.try_alloc_bytes(too_much).is_err());
    assert!(OneWayAlloc::try_with_size_hint(too_much).is_err());
    // The arena is still usable.
    assert_eq!(arena.try_alloc_bytes(2 * MIB).map(|b| b.len()), Ok(2 * MIB));
}

fn a_page_larger_than_a_span_has_a_mapping_of_its_own() {
    release_free_pages();
    let arena = OneWayAlloc::new();
    let block = arena.alloc_bytes(80 * MIB);
    block[80 * MIB - 1] = MaybeUninit::new(1);
    let (spans, bytes) = mapped_spans();
    assert_eq!(spans, 1);
    assert!((80 * MIB..82 * MIB).contains(&bytes), "{bytes}");
    assert_eq!(arena.page_heap_bytes(), arena.stats().capacity - 64 * 1024);
    let end = block.as_ptr().addr() + 80 * MIB - 1;
    drop(arena);
    // Unmapped at once: such a page is not kept.
    assert_eq!(resident(end), None);
    assert_eq!(mapped_spans(), (0, 0));
}

fn a_cleared_pool_gives_back_the_pages_of_the_arenas_it_dropped() {
    release_free_pages();
    let pool = Pool::new().max_idle(1);
    let guards: Vec<_> = (0..3).map(|_| pool.get()).collect();
    for guard in &guards {
        big_blocks(guard, 3);
    }
    // The pool keeps the arena returned last and drops the other two: their six
    // large pages stay in the heap, free.
    drop(guards);
    assert_eq!(pool.stats().idle_arenas, 1);
    assert!(free_page_bytes() >= 6 * MIB, "{}", free_page_bytes());
    pool.clear();
    assert_eq!(free_page_bytes(), 0, "free pages left after clear()");
    assert_eq!(mapped_spans(), (0, 0));
}

/// A `SyncPool` arena back from a request that needed large pages keeps its first
/// page (only), but gives that page's memory back to the system, all of it but the
/// OS page of its header; after a request within the first page it keeps it
/// resident.
fn a_sync_pool_arena_back_from_a_large_request_keeps_its_first_page_not_its_memory() {
    let pool = Pool::new_sync();
    // Fills most of the first page of the pool's one arena, then `large` bytes
    // more; returns the block's address.
    let request = |large: usize| {
        let arena = pool.get();
        let block = arena.alloc_bytes(60 * 1024);
        block.fill(MaybeUninit::new(3));
        if large > 0 {
            arena.alloc_bytes(large).fill(MaybeUninit::new(4));
        }
        block.as_ptr().addr()
    };
    let first = request(0);
    let probes = [first + 8 * 1024, first + 32 * 1024, first + 56 * 1024];
    assert!(probes.iter().all(|&p| resident(p) == Some(true)));
    assert_eq!(
        request(900 * 1024),
        first,
        "the same arena, the same first page"
    );
    assert!(
        probes.iter().all(|&p| resident(p) == Some(true)),
        "under 1 MiB"
    );
    // Pages of 64 KiB and 960 KiB: 1 MiB exactly.
    assert_eq!(request(960 * 1024 - PAGE_HEADER_SIZE), first);
    assert!(
        probes.iter().all(|&p| resident(p) == Some(false)),
        "the first page's memory given back"
    );
    assert_eq!(resident(first), Some(true), "the header's OS page");
    assert_eq!(pool.stats().idle_arenas, 1);
    // The arena goes on: its first page serves the next request, and again after
    // a request with a page of the heap.
    assert_eq!(request(0), first);
    assert!(probes.iter().all(|&p| resident(p) == Some(true)));
    assert_eq!(request(2 * MIB), first);
    assert!(probes.iter().all(|&p| resident(p) == Some(false)));
}

fn a_page_of_a_whole_span_takes_a_shared_span_and_is_kept() {
    release_free_pages();
    let arena = OneWayAlloc::new();
    let block = arena.alloc_bytes(64 * MIB - PAGE_HEADER_SIZE);
    block[0] = MaybeUninit::new(1);
    assert_eq!(arena.page_heap_bytes(), 64 * MIB);
    assert_eq!(mapped_spans(), (1, 64 * MIB));
    drop(arena);
    // Kept, as any page of a standard span: its slots serve the next arenas. With
    // the first page (64 KiB), the bound (64 MiB) gives back one slot.
    assert_eq!(free_page_bytes(), 63 * MIB + 64 * 1024);
    assert_eq!(mapped_spans(), (1, 64 * MIB));
    let next = OneWayAlloc::new();
    big_blocks(&next, 1);
    assert_eq!(mapped_spans(), (1, 64 * MIB));
    drop(next);
    release_free_pages();
}

/// The address space of the process (VmSize), in bytes.
fn address_space() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmSize:")).unwrap();
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

fn the_heap_maps_the_address_space_of_its_spans_and_no_more() {
    release_free_pages();
    let mut arena = OneWayAlloc::new();
    let small = (64 + 128 + 256 + 512) * 1024;
    for size in [64, 128, 256, 512] {
        arena.alloc_bytes(size * 1024 - PAGE_HEADER_SIZE);
    }
    let before = address_space();
    // Two plain slots, then a huge-page one: two spans, each with its record's page
    // and nothing of the slack that aligned it.
    for _ in 0..3 {
        arena.alloc_bytes(MIB - PAGE_HEADER_SIZE)[0] = MaybeUninit::new(1);
    }
    assert_eq!(mapped_spans(), (2, 128 * MIB));
    assert_eq!(address_space() - before, 2 * (64 * MIB + 4096));
    // Their pages back and released: the spans are gone, records included.
    arena.reset();
    arena.trim(small - 64 * 1024);
    assert_eq!(arena.stats().capacity, small);
    release_free_pages();
    assert_eq!(mapped_spans(), (0, 0));
    assert_eq!(address_space(), before);
}

fn a_cleared_pool_gives_the_pages_of_its_arenas_back_to_the_system() {
    release_free_pages();
    let pool = Pool::new();
    big_blocks(&pool.get(), 3);
    assert_eq!(pool.stats().idle_arenas, 1);
    // (The pool may trim the arena as it returns: those pages are the heap's.)
    release_free_pages();
    assert!(pool.stats().idle_bytes >= 2 * MIB);
    pool.clear();
    assert_eq!(
        free_page_bytes(),
        0,
        "pages of a cleared pool kept resident"
    );
    assert_eq!(mapped_spans(), (0, 0));
}

/// One block that takes a 1 MiB page of its own, written to: its address.
fn one_page(arena: &OneWayAlloc) -> usize {
    let block = arena.alloc_bytes(MIB - PAGE_HEADER_SIZE);
    block[0] = MaybeUninit::new(1);
    block.as_ptr().addr()
}

fn an_arenas_pages_follow_one_another_while_another_arena_grows() {
    release_free_pages();
    let (a, b) = (OneWayAlloc::new(), OneWayAlloc::new());
    // Past 2 MiB filled: their next large pages come from a huge-page span.
    big_blocks(&a, 2);
    big_blocks(&b, 2);
    let mut pages = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        pages[0].push(one_page(&a));
        pages[1].push(one_page(&b));
    }
    // Each arena's pages are consecutive: the two fill huge pages of their own.
    for arena in &pages {
        assert_eq!(arena[1] - arena[0], MIB, "{pages:x?}");
        assert_eq!(arena[0] % (2 * MIB), PAGE_HEADER_SIZE, "{pages:x?}");
    }
    drop((a, b));
}

fn a_quiet_process_decays_what_the_heap_keeps() {
    release_free_pages();
    let arena = OneWayAlloc::new();
    big_blocks(&arena, 8);
    drop(arena);
    let kept = free_page_bytes();
    assert!(kept >= 8 * MIB, "{kept}");
    // Two epochs and more with no call: a timer's call gives at least half back.
    std::thread::sleep(onewayalloc::FREE_PAGE_DECAY_EPOCH * 5 / 2);
    onewayalloc::decay_free_pages();
    assert!(
        free_page_bytes() <= kept / 2,
        "{} of {kept}",
        free_page_bytes()
    );
}
