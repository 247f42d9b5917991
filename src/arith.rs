//! Page-size and alignment arithmetic.
//!
//! Everything here is plain integer math on sizes, alignments and addresses: there is
//! no `unsafe` in this module, so it can be tested (and fuzzed) on its own. Every
//! function that can overflow returns `None` instead, and the callers turn that into
//! the "overflow" error of the crate's bad-input rules.

use core::alloc::Layout;
use core::ptr::{self, NonNull};

/// Alignment of the first payload byte of every page; also the alignment that
/// [`alloc_bytes`](crate::OneWayAlloc::alloc_bytes) guarantees, like `malloc`.
pub(crate) const PAGE_ALIGN: usize = 16;

/// Every page is aligned to at least this (and to the OS page, and to the request
/// it was made for when that is larger), so a block's alignment follows from its
/// offset in its page alone, never from where the page happens to lie. That is what
/// Miri's `-Zmiri-symbolic-alignment-check` verifies. The fast path serves
/// alignments up to this; larger ones take the slow path, which places them only in
/// pages aligned at least as much.
pub(crate) const MIN_PAGE_ALIGN: usize = 4096;

/// Alignment of a page for requests of `align`, on a system with `os_page` pages.
fn page_align(align: usize, os_page: usize) -> usize {
    align.max(os_page).max(MIN_PAGE_ALIGN)
}

/// What page sizes are rounded up to: the OS page, and at least [`MIN_PAGE_ALIGN`]
/// (the same on every system whose OS page is 4 KiB or more). With pages aligned to
/// at least `MIN_PAGE_ALIGN`, every page then ends on a multiple of it, which the
/// fast path relies on (see [`ADDR_LIMIT`]).
fn page_granule(os_page: usize) -> usize {
    os_page.max(MIN_PAGE_ALIGN)
}

/// The highest multiple of [`MIN_PAGE_ALIGN`]: no page ends above it. A block start
/// rounded up to at most `MIN_PAGE_ALIGN` from a cursor below a page end stays at
/// or below that end, hence at or below this, so adding a size below
/// `MIN_PAGE_ALIGN` to it cannot overflow.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
pub(crate) const ADDR_LIMIT: usize = usize::MAX & !(MIN_PAGE_ALIGN - 1);

/// How far ahead of the cursor the fast path may bump before it takes the slow
/// path: 2^30 - 1 bytes. It bounds the bytes the fast path counts between two
/// flushes of its packed counters (see `bump::COUNT_SHIFT`). Only pages larger than
/// 1 GiB ever reach it.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
pub(crate) const FAST_WINDOW: usize = (1 << 30) - 1;

/// Size of the first page target, header included (64 KiB).
pub(crate) const MIN_PAGE_SIZE: usize = 64 * 1024;

/// Largest target for an ordinary page, header included (1 MiB).
pub(crate) const MAX_PAGE_TARGET: usize = 1024 * 1024;

/// Bytes reserved at the start of every page for its header, rounded up to
/// [`PAGE_ALIGN`] so that the payload of every page starts 16-byte aligned.
pub(crate) const HEADER_SIZE: usize = crate::page::HEADER_BYTES.next_multiple_of(PAGE_ALIGN);

/// Target size (header included) of the `nth` page the arena obtains, counting from 0
/// and counting every page, the first included: 64, 128, 256, 512, 1024 KiB, then
/// 1024 KiB forever.
pub(crate) fn page_target(nth: usize) -> usize {
    if nth >= 4 {
        MAX_PAGE_TARGET
    } else {
        MIN_PAGE_SIZE << nth
    }
}

/// Layout of the first page for a size hint: `max(64 KiB, header + hint)` rounded up
/// to a multiple of `os_page` (and of [`MIN_PAGE_ALIGN`]), so that `hint` bytes of
/// 16-byte-aligned payload fit after the header. `None` if that size overflows
/// `isize`.
pub(crate) fn first_page_layout(size_hint: usize, os_page: usize) -> Option<Layout> {
    let needed = HEADER_SIZE.checked_add(size_hint)?.max(MIN_PAGE_SIZE);
    let size = needed.checked_next_multiple_of(page_granule(os_page))?;
    Layout::from_size_align(size, page_align(PAGE_ALIGN, os_page)).ok()
}

/// Offset from a page's base to the first byte of a block aligned to `align`, on a
/// page whose base is aligned to at least `align`: the header rounded up to the
/// alignment (and to [`PAGE_ALIGN`]).
pub(crate) fn payload_offset(align: usize) -> usize {
    // `align` is a power of two no larger than `isize::MAX + 1` and HEADER_SIZE is
    // small, so when align > HEADER_SIZE the result is `align` itself: no overflow.
    HEADER_SIZE.next_multiple_of(align.max(PAGE_ALIGN))
}

/// Layout of the `nth` new page, which must serve `request` as its first block.
///
/// The page is the larger of its target ([`page_target`]) and what the request
/// needs (the header aligned to the request's alignment, plus the payload), rounded
/// up to a multiple of `os_page` (and of [`MIN_PAGE_ALIGN`]), and aligned to the request's alignment, the OS
/// page or [`MIN_PAGE_ALIGN`], whichever is largest.
/// A large request therefore gets exactly the page it needs and nothing more, and it
/// does not change the target of later pages. `None` if the size overflows `isize`.
pub(crate) fn new_page_layout(nth: usize, request: Layout, os_page: usize) -> Option<Layout> {
    let needed = payload_offset(request.align()).checked_add(request.size())?;
    let size = needed
        .max(page_target(nth))
        .checked_next_multiple_of(page_granule(os_page))?;
    Layout::from_size_align(size, page_align(request.align(), os_page)).ok()
}

/// Padding needed to bump a block of `size` bytes aligned to `align` at address
/// `cursor` in a page that ends at address `end`, or `None` if it does not fit.
///
/// Requires `cursor <= end` and that `size` and `align` come from a valid [`Layout`]
/// (`align` a power of two, `size + align - 1 <= isize::MAX`): then `pad < align`, so
/// `pad + size` cannot overflow.
#[inline(always)]
pub(crate) fn bump_padding(cursor: usize, end: usize, size: usize, align: usize) -> Option<usize> {
    debug_assert!(cursor <= end);
    debug_assert!(align.is_power_of_two());
    let pad = cursor.wrapping_neg() & (align - 1);
    if pad + size <= end - cursor {
        Some(pad)
    } else {
        None
    }
}

/// The end of a page ending at address `end` as the bump core uses it: rounded down
/// to [`MIN_PAGE_ALIGN`]. Page sizes are multiples of it and pages are aligned to it,
/// so this is `end` itself; the rounding makes "the end is a multiple of
/// `MIN_PAGE_ALIGN`" hold by construction.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
#[inline]
pub(crate) fn usable_end(end: usize) -> usize {
    end & !(MIN_PAGE_ALIGN - 1)
}

/// `addr` rounded up to `align` (a power of two). Requires `addr + align - 1` not to
/// overflow, which holds for `addr` at or below a page end and `align` at most
/// [`MIN_PAGE_ALIGN`] (see [`ADDR_LIMIT`]).
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
#[inline(always)]
pub(crate) fn align_up(addr: usize, align: usize) -> usize {
    (addr + (align - 1)) & !(align - 1)
}

/// The end of a block of `size` bytes starting at address `start`, if it is not
/// empty and ends at or before `end`: `None` for `size == 0`, for a block past
/// `end`, and for one whose end overflows the address space. One comparison each:
/// a wrapped or empty block ends at or before its start.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
#[inline(always)]
pub(crate) fn bump_end(start: usize, end: usize, size: usize) -> Option<usize> {
    let block_end = start.wrapping_add(size);
    if start < block_end && block_end <= end {
        Some(block_end)
    } else {
        None
    }
}

/// The fast-path limit for a cursor at `cursor` in a page whose usable end is
/// `page_end` (a multiple of [`MIN_PAGE_ALIGN`], at or after `cursor`): the page
/// end, or [`FAST_WINDOW`] bytes ahead rounded down to `MIN_PAGE_ALIGN` if that
/// comes first. The result is a multiple of `MIN_PAGE_ALIGN` between `cursor` and
/// `page_end`.
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
pub(crate) fn window_end(cursor: usize, page_end: usize) -> usize {
    debug_assert!(cursor <= page_end && page_end % MIN_PAGE_ALIGN == 0);
    let window = cursor.saturating_add(FAST_WINDOW) & !(MIN_PAGE_ALIGN - 1);
    window.min(page_end)
}

/// Whether `addr` is a multiple of `align` (a power of two).
#[cfg_attr(onewayalloc_separate_blocks, allow(dead_code))]
#[inline(always)]
pub(crate) fn is_aligned(addr: usize, align: usize) -> bool {
    addr & (align - 1) == 0
}

/// A well-aligned dangling pointer: the answer to every zero-sized request.
#[inline(always)]
pub(crate) fn dangling(align: usize) -> NonNull<u8> {
    // A power-of-two alignment is never zero. `without_provenance` makes a pointer
    // that is never dereferenced for more than zero bytes, as strict provenance wants.
    NonNull::new(ptr::without_provenance_mut(align)).unwrap_or(NonNull::dangling())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OS_PAGE: usize = 4096;

    #[test]
    fn targets_double_then_stay_at_one_mib() {
        let kib: Vec<usize> = (0..8).map(|n| page_target(n) / 1024).collect();
        assert_eq!(kib, [64, 128, 256, 512, 1024, 1024, 1024, 1024]);
        assert_eq!(page_target(usize::MAX), MAX_PAGE_TARGET);
    }

    #[test]
    fn first_page_is_at_least_64_kib_and_fits_the_hint() {
        assert_eq!(first_page_layout(0, OS_PAGE).unwrap().size(), 64 * 1024);
        let exact = 64 * 1024 - HEADER_SIZE;
        assert_eq!(first_page_layout(exact, OS_PAGE).unwrap().size(), 64 * 1024);
        assert_eq!(
            first_page_layout(exact + 1, OS_PAGE).unwrap().size(),
            68 * 1024
        );
        // A 16 KiB OS page rounds the same hint up to its own boundary.
        assert_eq!(
            first_page_layout(exact + 1, 16384).unwrap().size(),
            80 * 1024
        );
        assert!(first_page_layout(usize::MAX, OS_PAGE).is_none());
        assert!(first_page_layout(isize::MAX as usize, OS_PAGE).is_none());
    }

    #[test]
    fn large_request_gets_only_what_it_needs() {
        let big = Layout::from_size_align(3 * 1024 * 1024, 8).unwrap();
        let page = new_page_layout(1, big, OS_PAGE).unwrap();
        assert_eq!(
            page.size(),
            (HEADER_SIZE + big.size()).next_multiple_of(OS_PAGE)
        );
        // Alignment above the OS page: the header is padded to the alignment.
        let aligned = Layout::from_size_align(100, 2 << 20).unwrap();
        let page = new_page_layout(9, aligned, OS_PAGE).unwrap();
        assert_eq!(page.align(), 2 << 20);
        assert_eq!(page.size(), 2 << 20 | OS_PAGE);
        // A small request gets the target.
        let small = Layout::new::<u64>();
        assert_eq!(
            new_page_layout(2, small, OS_PAGE).unwrap().size(),
            256 * 1024
        );
        assert_eq!(new_page_layout(2, small, OS_PAGE).unwrap().align(), OS_PAGE);
        assert_eq!(first_page_layout(0, OS_PAGE).unwrap().align(), OS_PAGE);
    }

    #[test]
    fn page_layout_overflow_is_none() {
        let huge = Layout::from_size_align(isize::MAX as usize, 1).unwrap();
        assert!(new_page_layout(0, huge, OS_PAGE).is_none());
    }

    #[test]
    fn bump_padding_aligns_and_bounds() {
        assert_eq!(bump_padding(0x1001, 0x2000, 8, 8), Some(7));
        assert_eq!(bump_padding(0x1000, 0x2000, 0x1000, 8), Some(0));
        assert_eq!(bump_padding(0x1000, 0x2000, 0x1001, 1), None);
        assert_eq!(bump_padding(0x1ff9, 0x2000, 1, 8), None);
        assert_eq!(bump_padding(0x1ff8, 0x2000, 8, 8), Some(0));
        let max_align = 1usize << 62;
        assert_eq!(bump_padding(0x1000, 0x2000, 1, max_align), None);
    }

    #[test]
    fn page_sizes_are_multiples_of_min_page_align() {
        // An OS page below MIN_PAGE_ALIGN still gives pages that end on a multiple
        // of it (pages are aligned to at least MIN_PAGE_ALIGN).
        assert_eq!(first_page_layout(70_000, 1024).unwrap().size(), 72 * 1024);
        let big = Layout::from_size_align(100_000, 8).unwrap();
        assert_eq!(new_page_layout(0, big, 1024).unwrap().size(), 100 * 1024);
        assert_eq!(
            new_page_layout(0, big, 1024).unwrap().align(),
            MIN_PAGE_ALIGN
        );
    }

    #[test]
    fn bump_end_rejects_empty_wrapped_and_past_end_blocks() {
        assert_eq!(bump_end(0x1000, 0x2000, 8), Some(0x1008));
        assert_eq!(bump_end(0x1000, 0x2000, 0x1000), Some(0x2000));
        assert_eq!(bump_end(0x1000, 0x2000, 0x1001), None);
        assert_eq!(bump_end(0x1000, 0x2000, 0), None);
        assert_eq!(bump_end(usize::MAX - 7, usize::MAX, 16), None);
        assert_eq!(bump_end(0x2000, 0x2000, 1), None);
        assert_eq!(align_up(0x1001, 8), 0x1008);
        assert_eq!(align_up(0x1000, 4096), 0x1000);
        assert_eq!(align_up(ADDR_LIMIT - 1, 4096), ADDR_LIMIT);
    }

    #[test]
    fn window_end_is_aligned_and_within_the_page() {
        assert_eq!(window_end(0x1010, 0x20000), 0x20000);
        let page_end = 0x1000 + (1usize << 31);
        let end = window_end(0x1010, page_end);
        assert_eq!(end % MIN_PAGE_ALIGN, 0);
        assert!(end > 0x1010 && end - 0x1010 <= FAST_WINDOW);
        assert_eq!(window_end(page_end, page_end), page_end);
        assert_eq!(window_end(ADDR_LIMIT - 16, ADDR_LIMIT), ADDR_LIMIT);
        assert_eq!(usable_end(0x12345), 0x12000);
    }

    #[test]
    fn payload_offset_is_aligned_and_after_the_header() {
        for shift in 0..63 {
            let align = 1usize << shift;
            let off = payload_offset(align);
            assert!(off >= HEADER_SIZE);
            assert!(is_aligned(off, align.max(PAGE_ALIGN)));
            assert!(off < HEADER_SIZE + align.max(PAGE_ALIGN));
        }
    }
}
