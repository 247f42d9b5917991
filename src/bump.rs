//! The bump core: the current page's cursor, the `#[inline]` fast path, the `#[cold]`
//! slow path that selects or obtains a page, rollback and in-place resizing of the
//! most recent block, reset, and release of every page on drop.
//!
//! Every block pointer is derived from the current page's base pointer (through the
//! cursor, which is the page's payload start moved forward), never from an integer,
//! so the crate runs under Miri's `-Zmiri-strict-provenance`.

use core::alloc::Layout;
use core::cell::Cell;
use core::iter;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::Allocator;

use crate::arith::{self, dangling};
use crate::failure::Failure;
use crate::page::Page;
use crate::stats::{PageInfo, Stats};

/// The allocation state of one arena. Its owner, the arena, releases the pages
/// when it is dropped ([`BumpCore::release_pages`]).
///
/// Invariants:
/// - the page list starting at `first` holds every page the arena owns, each obtained
///   from `backing`, in the order described in [`crate::page`];
/// - `current` is in that list; `cursor` points into it, at or after its payload
///   start, and carries its provenance; `end` is the address one past its end, so
///   `cursor <= end`;
/// - bytes between the current page's payload start and `cursor` hold the blocks
///   handed out from it since it became current; bytes in `cursor..end` are free;
/// - `used_before_current` is the sum of the recorded `used` of the used pages.
pub(crate) struct BumpCore<A: Allocator> {
    cursor: Cell<NonNull<u8>>,
    end: Cell<usize>,
    current: Cell<Page>,
    first: Page,
    used_before_current: Cell<usize>,
    requested: Cell<usize>,
    allocations: Cell<usize>,
    pages: Cell<usize>,
    capacity: Cell<usize>,
    page_allocations: Cell<usize>,
    backing: A,
}

/// A saved position of the arena (see [`BumpCore::restore`]).
#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    page: Page,
    cursor: NonNull<u8>,
    used_before_current: usize,
    requested: usize,
    allocations: usize,
}

impl<A: Allocator> BumpCore<A> {
    /// Obtains the first page (sized for `size_hint` bytes of payload) from `backing`.
    pub(crate) fn new<E: Failure>(size_hint: usize, backing: A) -> Result<Self, E> {
        let layout =
            arith::first_page_layout(size_hint, page_size::get()).ok_or_else(E::overflow)?;
        let block = backing.allocate(layout).map_err(|_| E::refused(layout))?;
        // SAFETY: `block` was just obtained from `backing` with `layout`, which is at
        // least 64 KiB and aligned to the OS page (>= the header's alignment).
        let first = unsafe { Page::init(block.cast(), layout) };
        Ok(BumpCore {
            cursor: Cell::new(first.payload_start()),
            end: Cell::new(first.end_addr()),
            current: Cell::new(first),
            first,
            used_before_current: Cell::new(0),
            requested: Cell::new(0),
            allocations: Cell::new(0),
            pages: Cell::new(1),
            capacity: Cell::new(layout.size()),
            page_allocations: Cell::new(1),
            backing,
        })
    }

    /// The backing allocator.
    pub(crate) fn backing(&self) -> &A {
        &self.backing
    }

    /// Allocates a block for `layout`: the one path behind every allocating call.
    #[inline(always)]
    pub(crate) fn alloc<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        // Alignments up to MIN_PAGE_ALIGN fit any page by offset; the comparison
        // disappears for layouts known at compile time.
        let fast = if layout.align() <= arith::MIN_PAGE_ALIGN {
            self.bump(layout)
        } else {
            None
        };
        let block = match fast {
            Some(block) => block,
            None => self.alloc_slow(layout)?,
        };
        self.allocations.set(self.allocations.get() + 1);
        self.requested.set(self.requested.get() + layout.size());
        Ok(block)
    }

    /// The fast path: align, compare, bump, return. `None` when the current page
    /// cannot fit `layout`. `layout.size()` must be non-zero.
    #[inline(always)]
    fn bump(&self, layout: Layout) -> Option<NonNull<u8>> {
        let cursor = self.cursor.get();
        let pad = arith::bump_padding(
            cursor.addr().get(),
            self.end.get(),
            layout.size(),
            layout.align(),
        )?;
        // SAFETY: `bump_padding` checked `pad + size <= end - cursor`, so both pointers
        // stay within the current page (or one past its end), whose provenance the
        // cursor carries.
        unsafe {
            let block = cursor.add(pad);
            self.cursor.set(block.add(layout.size()));
            Some(block)
        }
    }

    /// The slow path: makes current the first unused page that fits `layout` (moved
    /// right after the current page), or else a new page placed there, then bumps.
    #[cold]
    #[inline(never)]
    fn alloc_slow<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        let current = self.current.get();
        if layout.align() > arith::MIN_PAGE_ALIGN && current.guarantees_align(layout.align()) {
            // The fast path skipped this over-aligned request; the current page is
            // aligned enough to take it by offset.
            if let Some(block) = self.bump(layout) {
                return Ok(block);
            }
        }
        let page = match current.take_first_fit_after(layout) {
            Some(page) => page,
            None => {
                let page = self.obtain_page(layout)?;
                current.insert_after(page);
                page
            }
        };
        self.make_current(page);
        match self.bump(layout) {
            Some(block) => Ok(block),
            None => unreachable!("onewayalloc: a page selected because it fits must fit"),
        }
    }

    /// Obtains a new page that fits `layout`, sized by the growth schedule.
    fn obtain_page<E: Failure>(&self, layout: Layout) -> Result<Page, E> {
        let nth = self.page_allocations.get();
        let page_layout =
            arith::new_page_layout(nth, layout, page_size::get()).ok_or_else(E::overflow)?;
        let block = self
            .backing
            .allocate(page_layout)
            .map_err(|_| E::refused(page_layout))?;
        self.page_allocations.set(nth + 1);
        self.pages.set(self.pages.get() + 1);
        self.capacity.set(self.capacity.get() + page_layout.size());
        // SAFETY: `block` was just obtained from `backing` with `page_layout`, at least
        // 64 KiB and aligned to at least the OS page (>= the header's alignment).
        Ok(unsafe { Page::init(block.cast(), page_layout) })
    }

    /// Retires the current page as used and makes `page` (the page right after it)
    /// current, rewound.
    fn make_current(&self, page: Page) {
        let used = self.current_used();
        self.current.get().record_used(used);
        self.used_before_current
            .set(self.used_before_current.get() + used);
        self.current.set(page);
        self.cursor.set(page.payload_start());
        self.end.set(page.end_addr());
    }

    /// Bytes consumed in the current page.
    fn current_used(&self) -> usize {
        self.cursor.get().addr().get() - self.current.get().payload_start().addr().get()
    }

    /// If `block` (of `size > 0` bytes) is the most recent block, returns a pointer to
    /// its start derived from the cursor, which carries the page's provenance.
    #[inline]
    fn last_block(&self, block: NonNull<u8>, size: usize) -> Option<NonNull<u8>> {
        let cursor = self.cursor.get();
        if size != 0 && block.addr().get().wrapping_add(size) == cursor.addr().get() {
            // SAFETY: the block ends at the cursor and, being a live non-empty block of
            // this arena (the caller's guarantee), lies in the current page before it:
            // a block of another page cannot end at the cursor, because the cursor is
            // at least HEADER_SIZE past the current page's base and every page's
            // blocks start HEADER_SIZE past its own base, with pages disjoint.
            Some(unsafe { cursor.sub(size) })
        } else {
            None
        }
    }

    /// Releases `block` if it is the most recent one (the cursor moves back to its
    /// start, which is aligned for anything since every bump aligns); otherwise does
    /// nothing: its bytes come back at reset.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `layout` and still be live.
    #[inline]
    pub(crate) unsafe fn dealloc(&self, block: NonNull<u8>, layout: Layout) {
        if let Some(start) = self.last_block(block, layout.size()) {
            self.cursor.set(start);
        }
    }

    /// Resizes `block` from `old` to `new`, keeping its first `min(old, new)` bytes.
    ///
    /// The most recent block is resized in place when the current page has room (and
    /// is aligned enough for `new`), and moved forward (overlap-safe) if it must be
    /// realigned; any other block shrinks
    /// in place when its alignment allows; otherwise a new block is allocated and the
    /// bytes copied. Growth is counted in `requested`; a moved copy is a new
    /// allocation.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `old` and still be live;
    /// `new.size()` must not be zero.
    pub(crate) unsafe fn resize<E: Failure>(
        &self,
        block: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<u8>, E> {
        debug_assert!(new.size() != 0, "the caller handles a resize to zero bytes");
        let keep = old.size().min(new.size());
        let in_place = self
            .last_block(block, old.size())
            .filter(|_| self.current.get().guarantees_align(new.align()));
        if let Some(start) = in_place {
            let start_addr = start.addr().get();
            if let Some(pad) =
                arith::bump_padding(start_addr, self.end.get(), new.size(), new.align())
            {
                // SAFETY: `bump_padding` checked that `pad + new.size()` bytes from the
                // block start stay inside the current page; `start` carries the page's
                // provenance. `ptr::copy` allows the old and new ranges to overlap.
                unsafe {
                    let moved = start.add(pad);
                    if pad != 0 {
                        ptr::copy(start.as_ptr(), moved.as_ptr(), keep);
                    }
                    self.cursor.set(moved.add(new.size()));
                    let grown = new.size().saturating_sub(old.size());
                    self.requested.set(self.requested.get() + grown);
                    return Ok(moved);
                }
            }
        } else if new.size() <= old.size() && self.keeps_alignment(block, old, new) {
            return Ok(block);
        }
        let moved = self.alloc::<E>(new)?;
        // SAFETY: `moved` is a fresh block of `new.size() >= keep` bytes, and `block`
        // is live with `old.size() >= keep` bytes (caller's guarantee); a fresh block
        // never overlaps a live one.
        unsafe { ptr::copy_nonoverlapping(block.as_ptr(), moved.as_ptr(), keep) };
        Ok(moved)
    }

    /// The position of the arena now, to [`restore`](Self::restore) later.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            page: self.current.get(),
            cursor: self.cursor.get(),
            used_before_current: self.used_before_current.get(),
            requested: self.requested.get(),
            allocations: self.allocations.get(),
        }
    }

    /// Rolls the arena back to `checkpoint` in constant time: the checkpoint's page
    /// becomes current again at its cursor; every page after it in list order (all
    /// the pages made current since, which were placed after it) becomes unused, as
    /// after a reset. Pages before it are untouched, and so are their blocks.
    ///
    /// # Safety
    /// `checkpoint` must come from this core, with no `reset` or `trim` since, and no
    /// block allocated after it may be used again.
    pub(crate) unsafe fn restore(&self, checkpoint: Checkpoint) {
        self.current.set(checkpoint.page);
        self.cursor.set(checkpoint.cursor);
        self.end.set(checkpoint.page.end_addr());
        self.used_before_current.set(checkpoint.used_before_current);
        self.requested.set(checkpoint.requested);
        self.allocations.set(checkpoint.allocations);
    }

    /// Returns unused pages to the backing allocator, keeping the first ones in list
    /// order while their sizes add up to at most `keep` bytes.
    pub(crate) fn trim(&mut self, keep: usize) {
        let mut before = self.current.get();
        let mut kept = 0;
        while let Some(page) = before.next() {
            if kept + page.size() <= keep {
                kept += page.size();
                before = page;
                continue;
            }
            let unlinked = before.unlink_next();
            debug_assert_eq!(unlinked, Some(page));
            self.pages.set(self.pages.get() - 1);
            self.capacity.set(self.capacity.get() - page.size());
            // SAFETY: the page came from `self.backing` and is unused (after the
            // current page), so no block in it is live; it was unlinked above, so the
            // list no longer reaches it.
            unsafe { page.free(&self.backing) };
        }
    }

    /// Returns every page to the backing allocator, the unused ones included.
    ///
    /// # Safety
    /// Called once, as the arena is dropped: neither the core nor any block of it
    /// may be used afterwards.
    pub(crate) unsafe fn release_pages(&mut self) {
        let mut next = Some(self.first);
        while let Some(page) = next {
            next = page.next();
            // SAFETY: every page in the list came from `self.backing`; the next link
            // was read before the page is freed, and by the caller's guarantee no
            // handle or block pointer is used again.
            unsafe { page.free(&self.backing) };
        }
    }

    /// Whether an older `block` allocated with `old` is aligned for `new` by its page
    /// offset, so that it may stay where it is: it is aligned by address, and its
    /// page guarantees `new.align()`. Every page guarantees MIN_PAGE_ALIGN and the
    /// block's page guaranteed `old.align()` when the block was placed; beyond that
    /// (rare: an alignment raised past both) the block's page is looked up.
    fn keeps_alignment(&self, block: NonNull<u8>, old: Layout, new: Layout) -> bool {
        let addr = block.addr().get();
        if !arith::is_aligned(addr, new.align()) {
            return false;
        }
        if new.align() <= arith::MIN_PAGE_ALIGN.max(old.align()) {
            return true;
        }
        let current = self.current.get();
        let mut page = Some(self.first);
        while let Some(candidate) = page {
            if candidate.holds(addr) {
                return candidate.guarantees_align(new.align());
            }
            page = (candidate != current).then(|| candidate.next()).flatten();
        }
        false
    }

    /// Invalidates every block and makes every page available again, in constant
    /// time: the first page becomes current, rewound; the others become unused.
    pub(crate) fn reset(&mut self) {
        let first = self.first;
        self.current.set(first);
        self.cursor.set(first.payload_start());
        self.end.set(first.end_addr());
        self.used_before_current.set(0);
        self.requested.set(0);
        self.allocations.set(0);
    }

    /// The arena's counters.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            pages: self.pages.get(),
            capacity: self.capacity.get(),
            used: self.used_before_current.get() + self.current_used(),
            requested: self.requested.get(),
            allocations: self.allocations.get(),
            page_allocations: self.page_allocations.get(),
        }
    }

    /// The pages in list order: used pages report their recorded use, the current
    /// page its cursor, unused pages nothing (they are rewound when selected).
    pub(crate) fn pages(&self) -> impl Iterator<Item = PageInfo> + '_ {
        let current = self.current.get();
        let mut past_current = false;
        iter::successors(Some(self.first), |page| page.next()).map(move |page| {
            let is_current = page == current;
            let used = if is_current {
                self.current_used()
            } else if past_current {
                0
            } else {
                page.recorded_used()
            };
            past_current |= is_current;
            PageInfo {
                size: page.size(),
                used,
                current: is_current,
            }
        })
    }
}
