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
/// to a multiple of `os_page`, so that `hint` bytes of 16-byte-aligned payload fit
/// after the header. `None` if that size overflows `isize`.
pub(crate) fn first_page_layout(size_hint: usize, os_page: usize) -> Option<Layout> {
    let needed = HEADER_SIZE.checked_add(size_hint)?.max(MIN_PAGE_SIZE);
    let size = needed.checked_next_multiple_of(os_page)?;
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
/// up to a multiple of `os_page`, and aligned to the request's alignment, the OS
/// page or [`MIN_PAGE_ALIGN`], whichever is largest.
/// A large request therefore gets exactly the page it needs and nothing more, and it
/// does not change the target of later pages. `None` if the size overflows `isize`.
pub(crate) fn new_page_layout(nth: usize, request: Layout, os_page: usize) -> Option<Layout> {
    let needed = payload_offset(request.align()).checked_add(request.size())?;
    let size = needed
        .max(page_target(nth))
        .checked_next_multiple_of(os_page)?;
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
