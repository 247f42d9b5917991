//! Pages and the page list.
//!
//! A *page* is one block obtained from the backing allocator. Its first
//! [`HEADER_SIZE`] bytes hold a [`PageHeader`]; the rest is payload. Pages form a
//! singly linked list through their headers, in *list order*, which the arena keeps
//! in three runs:
//!
//! ```text
//! first ─▶ [used] ─▶ … ─▶ [used] ─▶ [current] ─▶ [unused] ─▶ … ─▶ [unused] ─▶ None
//! ```
//!
//! *Used* pages hold allocations made since the last reset and are not revisited
//! until the next one; the *current* page serves the next request; *unused* pages
//! are retained, their contents stale, and are rewound only when selected. Reset
//! just makes the first page current again, which turns every other page unused
//! without touching it.
//!
//! All bookkeeping lives in these headers and in the arena value: the arena obtains
//! nothing from the backing allocator except its pages.

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::NonNull;

use allocator_api2::alloc::Allocator;

use crate::engine::arith::{self, HEADER_SIZE};

/// Bookkeeping at the start of every page.
///
/// Invariants, established by [`Page::init`] and kept until [`Page::free`]:
/// - `size` and `align` are the exact layout the page was obtained with, so that it
///   goes back to the backing allocator with that layout;
/// - `size >= HEADER_SIZE` and the page base is aligned to `align >= PAGE_ALIGN`;
/// - `used` is meaningful only for a *used* page: the bytes consumed in it (padding
///   included, header not), recorded when it stopped being current.
#[repr(C)]
pub(crate) struct PageHeader {
    next: Cell<Option<Page>>,
    used: Cell<usize>,
    size: usize,
    align: usize,
}

/// Bytes the header occupies before rounding to the payload alignment.
pub(crate) const HEADER_BYTES: usize = size_of::<PageHeader>();

/// A handle to a live page of an arena.
///
/// Invariant: the pointer is the base of a block obtained from the arena's backing
/// allocator, with an initialized [`PageHeader`] at its start, and the block has not
/// been freed. Only [`Page::init`] creates a `Page` and only [`Page::free`] ends one;
/// the arena never uses a handle after freeing its page, so the safe accessors below
/// may read the header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Page(NonNull<PageHeader>);

impl Page {
    /// Writes a header at the start of `block` and returns the page.
    ///
    /// # Safety
    /// `block` must be a block just obtained from a backing allocator with `layout`,
    /// not used by anything else; `layout.size() >= HEADER_SIZE` and
    /// `layout.align() >= align_of::<PageHeader>()`.
    pub(crate) unsafe fn init(block: NonNull<u8>, layout: Layout) -> Page {
        debug_assert!(layout.size() >= HEADER_SIZE);
        debug_assert!(layout.align() >= align_of::<PageHeader>());
        let header = block.cast::<PageHeader>();
        // SAFETY: the caller guarantees `block` is a fresh block of at least
        // HEADER_SIZE bytes, aligned for `PageHeader`, that nothing else uses.
        unsafe {
            header.write(PageHeader {
                next: Cell::new(None),
                used: Cell::new(0),
                size: layout.size(),
                align: layout.align(),
            })
        };
        Page(header)
    }

    /// Returns the page to `backing` with exactly the layout it was obtained with.
    ///
    /// # Safety
    /// The page must have been obtained from `backing`, and neither this handle nor any
    /// copy of it, nor any pointer into the page, may be used afterwards.
    pub(crate) unsafe fn free<A: Allocator>(self, backing: &A) {
        let layout = self.layout();
        // SAFETY: by the caller's guarantee the block came from `backing`, and the
        // header invariant says `layout` is the layout it was obtained with.
        unsafe { backing.deallocate(self.0.cast(), layout) };
    }

    fn header(&self) -> &PageHeader {
        // SAFETY: the `Page` invariant: the header is initialized and the page is live.
        // Only `Cell` fields are ever mutated, so shared references never alias a write.
        unsafe { self.0.as_ref() }
    }

    /// The layout the page was obtained with.
    pub(crate) fn layout(self) -> Layout {
        let header = self.header();
        // The header stores a layout that `Layout` already validated once.
        Layout::from_size_align(header.size, header.align).unwrap_or_else(|_| unreachable!())
    }

    /// Bytes of the page, header included.
    pub(crate) fn size(self) -> usize {
        self.header().size
    }

    /// The next page in list order.
    pub(crate) fn next(self) -> Option<Page> {
        self.header().next.get()
    }

    fn set_next(self, next: Option<Page>) {
        self.header().next.set(next);
    }

    /// Bytes consumed when the page stopped being current (meaningful for used pages).
    pub(crate) fn recorded_used(self) -> usize {
        self.header().used.get()
    }

    /// Records how many bytes the page holds as it stops being current.
    pub(crate) fn record_used(self, used: usize) {
        self.header().used.set(used);
    }

    /// First payload byte: where a rewound page's cursor starts. It carries the
    /// provenance of the whole page, so every block is derived from the page base.
    pub(crate) fn payload_start(self) -> NonNull<u8> {
        // SAFETY: HEADER_SIZE <= size (header invariant), so the result is inside the
        // page or one past its end.
        unsafe { self.0.cast::<u8>().add(HEADER_SIZE) }
    }

    /// Address one past the last byte of the page. No overflow: a block from an
    /// allocator never wraps around the address space.
    pub(crate) fn end_addr(self) -> usize {
        self.0.addr().get() + self.size()
    }

    /// Whether blocks aligned to `align` may be placed in the page. Natively, any
    /// page may hold a block wherever its address is aligned. Under Miri, whose
    /// symbolic alignment check knows a block's alignment only from its offset in a
    /// page, a block aligned above [`arith::MIN_PAGE_ALIGN`] (which every page
    /// guarantees) goes only into a page aligned at least as much; the fast path
    /// leaves such requests to the slow path there. The test is compiled out of
    /// native builds.
    #[inline]
    pub(crate) fn can_place(self, align: usize) -> bool {
        !cfg!(miri) || self.miri_can_place(align)
    }

    /// [`Page::can_place`] under Miri: an alignment every page guarantees, or one
    /// this page was aligned to. Called only under Miri (`cfg!(miri)`).
    fn miri_can_place(self, align: usize) -> bool {
        align <= arith::MIN_PAGE_ALIGN || self.header().align >= align
    }

    /// Whether a request for `layout` fits in the page once it is rewound.
    pub(crate) fn fits_when_rewound(self, layout: Layout) -> bool {
        let start = self.payload_start().addr().get();
        self.can_place(layout.align())
            && arith::bump_padding(start, self.end_addr(), layout.size(), layout.align()).is_some()
    }

    /// Links `new` immediately after `self` in list order.
    pub(crate) fn insert_after(self, new: Page) {
        new.set_next(self.next());
        self.set_next(Some(new));
    }

    /// Unlinks the page after `self` from the list and returns it.
    pub(crate) fn unlink_next(self) -> Option<Page> {
        let next = self.next()?;
        self.set_next(next.next());
        Some(next)
    }

    /// Searches the pages after `self` (the unused pages when `self` is current) for
    /// one that fits `layout` once rewound, chosen by `choice`, moves it to
    /// immediately after `self`, and returns it. Skipped pages keep their order.
    pub(crate) fn take_fit_after(self, layout: Layout, choice: Choice) -> Option<Page> {
        // `best` is the chosen page and the page before it in list order.
        let mut best: Option<(Page, Page)> = None;
        let mut before = self;
        while let Some(page) = before.next() {
            if page.fits_when_rewound(layout) {
                let better = match best {
                    None => true,
                    // Strictly larger: on a tie the first in list order stays.
                    Some((_, chosen)) => page.size() > chosen.size(),
                };
                if better {
                    best = Some((before, page));
                }
                if choice == Choice::FirstFit {
                    break;
                }
            }
            before = page;
        }
        let (before, page) = best?;
        if before != self {
            let unlinked = before.unlink_next();
            debug_assert_eq!(unlinked, Some(page));
            self.insert_after(page);
        }
        Some(page)
    }
}

/// How a request that needs another page chooses it (SPEC §1.3).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Choice {
    /// Every ordinary request: the first unused page in list order that fits, else
    /// a new page of the growth schedule (or exactly the request's size if larger).
    FirstFit,
    /// The most recent block, grown, leaving its page ("growing buffers"): the
    /// largest unused page that fits (the first of those on a tie), so that it has
    /// the most room to keep growing in place; else a new page with room for it to
    /// double once more (see `BumpCore::obtain_page`).
    GrowingBuffer,
}
