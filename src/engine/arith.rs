//! Page-size and alignment arithmetic.
//!
//! Everything here is plain integer math on sizes, alignments and addresses: the
//! module forbids `unsafe`, so it can be tested (and fuzzed) on its own. Every
//! function that could overflow returns `None` instead, and the callers turn that
//! into the "overflow" error of the crate's bad-input rules.
#![forbid(unsafe_code)]

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::{self, NonNull};

/// Alignment of the first payload byte of every page; also the alignment that
/// [`alloc_bytes`](crate::OneWayAlloc::alloc_bytes) guarantees, like `malloc`.
pub(crate) const PAGE_ALIGN: usize = 16;

/// Every page is aligned to at least this (and to the OS page, and to the request
/// it was made for when that is larger). A block aligned to at most this therefore
/// has its alignment follow from its offset in its page alone, never from where the
/// page happens to lie, which is what Miri's `-Zmiri-symbolic-alignment-check`
/// verifies. Under Miri, larger alignments are placed only in pages aligned at
/// least as much (see [`Page::can_place`](crate::engine::page::Page::can_place)); a native
/// build places them wherever the address works out.
pub(crate) const MIN_PAGE_ALIGN: usize = 4096;

/// The highest multiple of [`MIN_PAGE_ALIGN`]: no page ends above it (page ends are
/// multiples of `MIN_PAGE_ALIGN`, and a block never wraps around the address space).
pub(crate) const ADDR_LIMIT: usize = usize::MAX & !(MIN_PAGE_ALIGN - 1);
const _: () = assert!(ADDR_LIMIT % MIN_PAGE_ALIGN == 0 && usize::MAX - ADDR_LIMIT < MIN_PAGE_ALIGN);

/// The page size assumed where the OS cannot be asked (`no_std` builds).
#[cfg(not(feature = "std"))]
const DEFAULT_OS_PAGE: usize = 4096;

/// The OS page size: `page_size::get()` with the `std` feature, else 4 KiB.
pub(crate) fn os_page() -> usize {
    #[cfg(feature = "std")]
    {
        page_size::get()
    }
    #[cfg(not(feature = "std"))]
    {
        DEFAULT_OS_PAGE
    }
}

/// Alignment of a page for requests of `align`, on a system with `os_page` pages.
pub(crate) fn page_align(align: usize, os_page: usize) -> usize {
    align.max(os_page).max(MIN_PAGE_ALIGN)
}

/// What page sizes are rounded up to: the OS page, and at least [`MIN_PAGE_ALIGN`]
/// (the same on every system whose OS page is 4 KiB or more).
fn page_granule(os_page: usize) -> usize {
    os_page.max(MIN_PAGE_ALIGN)
}

/// Size of the first page target, header included (64 KiB).
pub(crate) const MIN_PAGE_SIZE: usize = 64 * 1024;

/// Largest target for an ordinary page, header included (1 MiB).
pub(crate) const MAX_PAGE_TARGET: usize = 1024 * 1024;

/// Bytes reserved at the start of every page for its header, rounded up to
/// [`PAGE_ALIGN`] so that the payload of every page starts 16-byte aligned.
pub(crate) const HEADER_SIZE: usize =
    crate::engine::page::HEADER_BYTES.next_multiple_of(PAGE_ALIGN);

/// Target size (header included) of the `nth` page the arena obtains, counting from 0
/// and counting every page, the first included: 64, 128, 256, 512, 1024 KiB, then
/// 1024 KiB forever.
pub(crate) fn page_target(nth: usize) -> usize {
    if nth >= 4 {
        MAX_PAGE_TARGET
    } else {
        // nth < 4: at most 64 KiB << 3 = 512 KiB, no overflow on any target.
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
/// up to a multiple of `os_page` (and of [`MIN_PAGE_ALIGN`]), and aligned to the
/// request's alignment, the OS page or [`MIN_PAGE_ALIGN`], whichever is largest.
/// A large request therefore gets exactly the page it needs and nothing more, and it
/// does not change the target of later pages. `None` if the size overflows `isize`.
pub(crate) fn new_page_layout(nth: usize, request: Layout, os_page: usize) -> Option<Layout> {
    let needed = payload_offset(request.align()).checked_add(request.size())?;
    let size = needed
        .max(page_target(nth))
        .checked_next_multiple_of(page_granule(os_page))?;
    Layout::from_size_align(size, page_align(request.align(), os_page)).ok()
}

/// Layout of the `nth` new page for a *growing buffer* (SPEC §1.3): the most recent
/// block, grown to `request`, that must leave its page. The page has room for the
/// buffer to double once more in place: it is [`new_page_layout`] for twice the
/// request's size. `None` if that overflows; the caller then falls back to the
/// exact page.
pub(crate) fn growth_page_layout(nth: usize, request: Layout, os_page: usize) -> Option<Layout> {
    let doubled = Layout::from_size_align(request.size().checked_mul(2)?, request.align()).ok()?;
    new_page_layout(nth, doubled, os_page)
}

/// The arithmetic of the allocation fast path: the offset from the cursor `at` to
/// the start of a block for `layout` in a page that ends at `end`, or `None` if the
/// block does not fit. Requires `0 < at <= end <= ADDR_LIMIT`, which holds for a
/// cursor in a page (pages end at multiples of [`MIN_PAGE_ALIGN`]).
///
/// One computation, three forms, chosen by what is known at compile time (`known`;
/// the branches fold away), each with one comparison against the page end and none
/// needing a test of the alignment at run time:
/// - a constant alignment up to `MIN_PAGE_ALIGN` rounds `at` up directly
///   ([`align_up_in_page`]: at most `end`, no overflow); then
///   - a constant size below `MIN_PAGE_ALIGN` is added to that start and compared
///     with `end` (no overflow: `end <= ADDR_LIMIT = usize::MAX - (MIN_PAGE_ALIGN - 1)`),
///   - any other size is compared with the room `end - start`;
/// - any other layout takes [`bump_padding`], exact for every alignment a `Layout`
///   allows.
#[inline(always)]
pub(crate) fn bump_offset(at: usize, end: usize, layout: Layout, known: Known) -> Option<usize> {
    debug_assert!(0 < at && at <= end && end <= ADDR_LIMIT);
    if known.align && layout.align() <= MIN_PAGE_ALIGN {
        let start = align_up_in_page(at, layout.align());
        let fits = if known.size && layout.size() < MIN_PAGE_ALIGN {
            start + layout.size() <= end
        } else {
            layout.size() <= end - start
        };
        // Rounding up never goes below `at`.
        if fits { Some(start - at) } else { None }
    } else {
        bump_padding(at, end, layout.size(), layout.align())
    }
}

/// Padding needed to bump a block of `size` bytes aligned to `align` at address
/// `cursor` in a page that ends at address `end`, or `None` if it does not fit.
/// Exact for every alignment a [`Layout`] allows, with one comparison.
///
/// Requires `0 < cursor <= end` (a cursor is an address in a page) and that `size`
/// and `align` come from a valid [`Layout`]. It rounds `cursor - 1` *down* to
/// `align` (which cannot overflow) and checks that `align + size` bytes from there
/// end by `end`: `align + size <= isize::MAX + 1` (the `Layout` rules) and
/// `end - aligned_down > 0`, so neither side can overflow or wrap, and the block
/// then starts at `aligned_down + align`, the cursor rounded up.
#[inline(always)]
pub(crate) fn bump_padding(cursor: usize, end: usize, size: usize, align: usize) -> Option<usize> {
    debug_assert!(0 < cursor && cursor <= end);
    debug_assert!(align.is_power_of_two());
    let aligned_down = (cursor - 1) & !(align - 1);
    if align + size <= end - aligned_down {
        Some(aligned_down + align - cursor)
    } else {
        None
    }
}

/// The memory limit of an arena (`OneWayAlloc::set_limit`): the most its held bytes
/// may reach. Both cores keep one and ask it before obtaining memory.
pub(crate) struct Limit(Cell<usize>);

impl Limit {
    /// No limit (stored as `usize::MAX`, which no total of held bytes can pass).
    pub(crate) fn none() -> Limit {
        Limit(Cell::new(usize::MAX))
    }

    /// Sets the limit (`None`: no limit).
    pub(crate) fn set(&self, limit: Option<usize>) {
        self.0.set(limit.unwrap_or(usize::MAX));
    }

    /// The limit, if any.
    pub(crate) fn get(&self) -> Option<usize> {
        Some(self.0.get()).filter(|&limit| limit != usize::MAX)
    }

    /// Whether `more` bytes on top of `held` stay within the limit (an overflowing
    /// total does not).
    pub(crate) fn admits(&self, held: usize, more: usize) -> bool {
        held.checked_add(more)
            .is_some_and(|total| total <= self.0.get())
    }
}

/// What the caller knows at compile time about a request's layout: the fast path
/// uses it to pick its cheapest correct form (the branches on it fold away).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Known {
    /// The alignment is a compile-time constant (`align_of::<T>()`, 16 for bytes).
    pub(crate) align: bool,
    /// The size is a compile-time constant (`size_of::<T>()`).
    pub(crate) size: bool,
}

impl Known {
    /// A typed value: `alloc<T>`, `alloc_with<T>`.
    pub(crate) const TYPE: Known = Known {
        align: true,
        size: true,
    };
    /// A slice of a known type, or bytes: the alignment only.
    pub(crate) const ALIGN: Known = Known {
        align: true,
        size: false,
    };
    /// A layout chosen at run time: `alloc_layout`, `Allocator::allocate`.
    pub(crate) const NOTHING: Known = Known {
        align: false,
        size: false,
    };
}

/// `addr` rounded up to `align`, for `addr` at or below a page end and `align` at
/// most [`MIN_PAGE_ALIGN`]. Page ends are multiples of `MIN_PAGE_ALIGN` (pages are
/// aligned to it and sized in multiples of it), so the result is at most that page
/// end, at most `usize::MAX - (MIN_PAGE_ALIGN - 1)`: the addition cannot overflow.
#[inline(always)]
pub(crate) fn align_up_in_page(addr: usize, align: usize) -> usize {
    debug_assert!(align <= MIN_PAGE_ALIGN && align.is_power_of_two());
    (addr + (align - 1)) & !(align - 1)
}

/// Whether `addr` is a multiple of `align` (a power of two).
#[inline(always)]
pub(crate) fn is_aligned(addr: usize, align: usize) -> bool {
    addr & (align - 1) == 0
}

/// Whether a block of `size` bytes starting at `start` ends exactly at `cursor`:
/// the test for "the most recent block". An empty block qualifies when it sits at
/// the cursor (resizing it from there is just a fresh bump). The addition wraps
/// instead of overflowing: no live block wraps around the address space.
#[inline(always)]
pub(crate) fn ends_at(start: usize, size: usize, cursor: usize) -> bool {
    start.wrapping_add(size) == cursor
}

/// The whole OS pages within `len` bytes at address `addr`: `(offset, bytes)`, the
/// first page's offset from `addr` and the pages' bytes, or `None` if the range holds
/// no whole OS page. (The memory a range can give back to the OS: only the page
/// heap's platforms do.)
#[cfg_attr(not(onewayalloc_page_heap), allow(dead_code))]
pub(crate) fn whole_os_pages(addr: usize, len: usize, os_page: usize) -> Option<(usize, usize)> {
    let first = addr.checked_next_multiple_of(os_page)?;
    let end = addr.checked_add(len)? / os_page * os_page;
    (end > first).then(|| (first - addr, end - first))
}

/// A well-aligned dangling pointer: the answer to a zero-sized request that the
/// bump cannot serve (its alignment does not fit the current page).
#[inline]
pub(crate) fn dangling(align: usize) -> NonNull<u8> {
    // A power-of-two alignment is never zero. `without_provenance` makes a pointer
    // that is never dereferenced for more than zero bytes, as strict provenance wants.
    NonNull::new(ptr::without_provenance_mut(align)).unwrap_or(NonNull::dangling())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    const OS_PAGE: usize = 4096;

    #[test]
    fn whole_os_pages_are_the_aligned_pages_inside_the_range() {
        // A first page after its header: the pages past the header's.
        assert_eq!(
            whole_os_pages(0x10_0000 + 64, 64 * 1024 - 64, OS_PAGE),
            Some((OS_PAGE - 64, 15 * OS_PAGE))
        );
        // Aligned at both ends: all of it.
        assert_eq!(whole_os_pages(0x2000, 0x3000, OS_PAGE), Some((0, 0x3000)));
        // Less than a page, or a page split between two: none.
        assert_eq!(whole_os_pages(0x1001, OS_PAGE, OS_PAGE), None);
        assert_eq!(whole_os_pages(0x1000, OS_PAGE - 1, OS_PAGE), None);
        assert_eq!(whole_os_pages(0x1000, 0, OS_PAGE), None);
        // Ends at the top of the address space: no overflow.
        assert_eq!(whole_os_pages(usize::MAX - 10, 5, OS_PAGE), None);
        assert_eq!(whole_os_pages(usize::MAX - 10, 20, OS_PAGE), None);
    }

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
    fn growth_pages_leave_room_to_double() {
        let mib = 1024 * 1024;
        let buffer = Layout::from_size_align(mib, 8).unwrap();
        let page = growth_page_layout(4, buffer, OS_PAGE).unwrap();
        assert_eq!(page.size(), 2 * mib + OS_PAGE);
        assert!(page.size() - HEADER_SIZE >= 2 * buffer.size());
        // A small buffer gets the target, like any request.
        let small = Layout::from_size_align(100, 8).unwrap();
        assert_eq!(
            growth_page_layout(1, small, OS_PAGE).unwrap().size(),
            128 * 1024
        );
        // Doubling past isize::MAX is refused (the caller falls back to exact).
        let half = Layout::from_size_align(isize::MAX as usize / 2 + 1, 1).unwrap();
        assert!(growth_page_layout(4, half, OS_PAGE).is_none());
    }

    #[test]
    fn page_layout_overflow_is_none() {
        let huge = Layout::from_size_align(isize::MAX as usize, 1).unwrap();
        assert!(new_page_layout(0, huge, OS_PAGE).is_none());
        let near = Layout::from_size_align(isize::MAX as usize - HEADER_SIZE + 1, 1).unwrap();
        assert!(new_page_layout(0, near, OS_PAGE).is_none());
    }

    #[test]
    fn bump_padding_aligns_and_bounds() {
        assert_eq!(bump_padding(0x1001, 0x2000, 8, 8), Some(7));
        assert_eq!(bump_padding(0x1000, 0x2000, 0x1000, 8), Some(0));
        assert_eq!(bump_padding(0x1000, 0x2000, 0x1001, 1), None);
        assert_eq!(bump_padding(0x1ff9, 0x2000, 1, 8), None);
        assert_eq!(bump_padding(0x1ff8, 0x2000, 8, 8), Some(0));
        // Zero-sized requests fit as long as their padding does.
        assert_eq!(bump_padding(0x1ff9, 0x2000, 0, 8), Some(7)); // one past the end
        assert_eq!(bump_padding(0x1ff9, 0x1ffe, 0, 8), None);
        assert_eq!(bump_padding(0x1ff8, 0x2000, 0, 8), Some(0));
        assert_eq!(bump_padding(0x2000, 0x2000, 0, 1), Some(0));
        let max_align = 1usize << (usize::BITS - 2);
        assert_eq!(bump_padding(0x1000, 0x2000, 1, max_align), None);
        // The largest size a layout allows, at the top of the address space.
        let end = usize::MAX & !0xfff;
        let max_size = isize::MAX as usize;
        assert_eq!(bump_padding(end - 16, end, max_size, 1), None);
        assert_eq!(bump_padding(end - 16, end, 0, 1 << (usize::BITS - 2)), None);
        assert_eq!(
            bump_padding(1, end, 0, 1 << (usize::BITS - 2)),
            Some((1 << (usize::BITS - 2)) - 1)
        );
    }

    #[test]
    fn page_sizes_are_multiples_of_min_page_align() {
        assert_eq!(first_page_layout(70_000, 1024).unwrap().size(), 72 * 1024);
        let big = Layout::from_size_align(100_000, 8).unwrap();
        assert_eq!(new_page_layout(0, big, 1024).unwrap().size(), 100 * 1024);
        assert_eq!(
            new_page_layout(0, big, 1024).unwrap().align(),
            MIN_PAGE_ALIGN
        );
    }

    #[test]
    fn limits_admit_up_to_and_including_the_limit() {
        let limit = Limit::none();
        assert_eq!(limit.get(), None);
        assert!(limit.admits(usize::MAX - 1, 1));
        assert!(!limit.admits(usize::MAX, 1), "an overflowing total");
        limit.set(Some(100));
        assert_eq!(limit.get(), Some(100));
        assert!(limit.admits(60, 40));
        assert!(!limit.admits(60, 41));
        limit.set(None);
        assert!(limit.admits(60, 41));
    }

    /// The three forms of the fast path's arithmetic: a typed value below
    /// `MIN_PAGE_ALIGN` (`Known::TYPE`), an aligned size of any size
    /// (`Known::ALIGN`: bytes, slices; `Known::TYPE` of 4 KiB or more) and a
    /// run-time layout (`Known::NOTHING`, and any alignment above MIN_PAGE_ALIGN).
    pub(super) const FORMS: [Known; 3] = [Known::TYPE, Known::ALIGN, Known::NOTHING];

    /// Each form serves a request that ends exactly at the page end, at the
    /// cursor rounded up to its alignment, and refuses one that would end a byte
    /// past it.
    #[test]
    fn bump_offset_fits_exactly_to_the_page_end() {
        let end = 1 << 20;
        let requests = [
            (1, 1),
            (8, 8),
            (24, 8),
            (100, 4),
            (4095, 1),
            (4096, 16),
            (4096, 4096),
            (5000, 8),
            (0, 8),
            (0, 8192),
            (8192, 8192),
        ];
        for known in FORMS {
            for (size, align) in requests {
                let layout = Layout::from_size_align(size, align).unwrap();
                let start = end - size; // aligned: `size` is a multiple of `align`
                assert!(is_aligned(start, align));
                for back in [0, 1, align - 1] {
                    let at = start - back.min(align - 1);
                    let offset = bump_offset(at, end, layout, known);
                    let what = (known, layout, end - at);
                    assert_eq!(offset, Some(start - at), "{what:?}");
                    // One byte more, or one byte later, ends past the page end.
                    let more = Layout::from_size_align(size + 1, align).unwrap();
                    assert_eq!(bump_offset(at, end, more, known), None, "{what:?}");
                }
                if size > 0 {
                    let later = bump_offset(start + 1, end, layout, known);
                    assert_eq!(later, None, "{known:?} {layout:?}");
                }
            }
        }
    }

    /// At the top of the address space no form overflows: a request that does not
    /// fit is refused, whatever its size.
    #[test]
    fn bump_offset_at_the_top_of_the_address_space() {
        let end = ADDR_LIMIT;
        for known in FORMS {
            let word = Layout::new::<u64>();
            assert_eq!(bump_offset(end - 8, end, word, known), Some(0));
            assert_eq!(bump_offset(end - 7, end, word, known), None);
            assert_eq!(bump_offset(end, end, Layout::new::<()>(), known), Some(0));
            for size in [1, 4095, 4096, 4097, isize::MAX as usize] {
                let layout = Layout::from_size_align(size, 1).unwrap();
                assert_eq!(
                    bump_offset(end, end, layout, known),
                    None,
                    "{known:?} {size}"
                );
                let near = bump_offset(end - 16, end, layout, known);
                assert_eq!(near, (size <= 16).then_some(0), "{known:?} {size}");
            }
        }
    }

    /// Pages are rounded to the OS page the system reports (the rounding itself is
    /// tested above through the `os_page` parameter, at 1, 4 and 16 KiB).
    #[test]
    fn os_page_is_the_systems() {
        #[cfg(feature = "std")]
        assert_eq!(os_page(), page_size::get());
        #[cfg(not(feature = "std"))]
        assert_eq!(os_page(), DEFAULT_OS_PAGE);
    }

    #[test]
    fn ends_at_needs_a_block_ending_at_the_cursor() {
        assert!(ends_at(0x1000, 8, 0x1008));
        assert!(ends_at(0x1000, 0, 0x1000));
        assert!(!ends_at(0x1000, 0, 0x1008));
        assert!(!ends_at(0x1000, 8, 0x1010));
    }

    #[test]
    fn payload_offset_is_aligned_and_after_the_header() {
        for shift in 0..usize::BITS - 1 {
            let align = 1usize << shift;
            let off = payload_offset(align);
            assert!(off >= HEADER_SIZE);
            assert!(is_aligned(off, align.max(PAGE_ALIGN)));
            assert!(off < HEADER_SIZE + align.max(PAGE_ALIGN));
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn config() -> ProptestConfig {
            ProptestConfig {
                cases: if cfg!(miri) { 16 } else { 2048 },
                failure_persistence: None,
                ..ProptestConfig::default()
            }
        }

        fn layout() -> impl Strategy<Value = Layout> {
            (0u32..usize::BITS - 1, any::<usize>()).prop_filter_map("valid", |(shift, size)| {
                let align = 1usize << shift;
                // Sizes of every magnitude, up to the largest a layout allows.
                let size = size >> (size % usize::BITS as usize);
                Layout::from_size_align(size, align).ok()
            })
        }

        proptest! {
            #![proptest_config(config())]

            /// A fit found by `bump_padding` is aligned and ends inside the page; no
            /// fit means none exists.
            #[test]
            fn bump_padding_is_exact(
                cursor in 1..=usize::MAX,
                room in any::<usize>(),
                layout in layout(),
            ) {
                let end = cursor.saturating_add(room);
                let (size, align) = (layout.size(), layout.align());
                match bump_padding(cursor, end, size, align) {
                    Some(pad) => {
                        prop_assert!(pad < align);
                        prop_assert!(is_aligned(cursor + pad, align));
                        prop_assert!((cursor + pad).checked_add(size).is_some_and(|e| e <= end));
                    }
                    None => {
                        let start = cursor.checked_next_multiple_of(align);
                        let fits = start
                            .and_then(|s| s.checked_add(size))
                            .is_some_and(|e| e <= end);
                        prop_assert!(!fits);
                    }
                }
            }

            /// Every form of the fast path's arithmetic agrees with the exact
            /// rule: the block starts at the cursor rounded up to its alignment, and
            /// fits if it ends by the page end (a page end is a multiple of
            /// MIN_PAGE_ALIGN, at most ADDR_LIMIT).
            #[test]
            fn bump_offset_is_exact(
                end_pages in 1..=ADDR_LIMIT / MIN_PAGE_ALIGN,
                back in any::<usize>(),
                layout in layout(),
                form in 0..3usize,
            ) {
                let end = end_pages * MIN_PAGE_ALIGN;
                // Cursors at every distance below the end, many close to it.
                let back = back >> (back % usize::BITS as usize);
                let at = end - back.min(end - 1);
                let start = at as u128 + (at.wrapping_neg() & (layout.align() - 1)) as u128;
                let fits = start + layout.size() as u128 <= end as u128;
                let expected = fits.then(|| (start - at as u128) as usize);
                let known = super::FORMS[form];
                prop_assert_eq!(bump_offset(at, end, layout, known), expected);
            }

            /// The pages `whole_os_pages` gives are aligned, inside the range, and
            /// all of them: one more OS page on either side leaves the range.
            #[test]
            fn whole_os_pages_is_exact(
                addr in any::<usize>(),
                len in any::<usize>(),
                os_shift in 12u32..17,
            ) {
                let os_page = 1usize << os_shift;
                // Lengths of every magnitude.
                let len = len >> (len % usize::BITS as usize);
                let (start, end) = (addr as u128, addr as u128 + len as u128);
                let page = os_page as u128;
                let first = start.next_multiple_of(page);
                let last = end / page * page;
                match whole_os_pages(addr, len, os_page) {
                    Some((offset, bytes)) => {
                        let at = start + offset as u128;
                        prop_assert!(bytes > 0);
                        prop_assert_eq!(at % page, 0);
                        prop_assert_eq!(bytes as u128 % page, 0);
                        prop_assert_eq!((at, at + bytes as u128), (first, last));
                    }
                    // None: no whole page, or the range reaches past the address space.
                    None => prop_assert!(last <= first || end > usize::MAX as u128 || first > usize::MAX as u128),
                }
            }

            /// A new page serves its request at `payload_offset`, never exceeds
            /// `isize::MAX`, and is its target when the request is small.
            #[test]
            fn new_pages_fit_their_request(
                nth in 0usize..10,
                layout in layout(),
                os_shift in 10u32..17,
            ) {
                let os_page = 1usize << os_shift;
                if let Some(page) = new_page_layout(nth, layout, os_page) {
                    prop_assert!(page.align() >= layout.align().max(os_page).max(MIN_PAGE_ALIGN));
                    prop_assert!(payload_offset(layout.align()) + layout.size() <= page.size());
                    prop_assert!(page.size() >= page_target(nth));
                    prop_assert_eq!(page.size() % page_granule(os_page), 0);
                    let exact = (payload_offset(layout.align()) + layout.size())
                        .max(page_target(nth))
                        .next_multiple_of(page_granule(os_page));
                    prop_assert_eq!(page.size(), exact);
                } else {
                    let needed = (payload_offset(layout.align()) as u128 + layout.size() as u128)
                        .max(page_target(nth) as u128)
                        .next_multiple_of(page_granule(os_page) as u128);
                    let align = page_align(layout.align(), os_page) as u128;
                    prop_assert!(needed > isize::MAX as u128 + 1 - align);
                }
                if let Some(page) = growth_page_layout(nth, layout, os_page) {
                    prop_assert!(payload_offset(layout.align()) + 2 * layout.size() <= page.size());
                }
            }
        }
    }
}
