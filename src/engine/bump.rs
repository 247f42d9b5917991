//! The bump core: the current page's cursor, the `#[inline]` fast path (align,
//! compare, bump, return), the `#[cold]` slow path that selects or obtains a page,
//! rollback and in-place resizing of the most recent block, reset, and release of
//! every page on drop.
//!
//! Every block pointer is derived from the current page's base pointer (through the
//! cursor, which is the page's payload start moved forward), never from an integer,
//! so the crate runs under Miri's `-Zmiri-strict-provenance`.
//!
//! The backing allocator is foreign code: it may allocate from this very arena. The
//! core therefore reads its state (the current page, the cursor, the counters) only
//! after each call into it returns, never before.

use core::alloc::Layout;
use core::cell::Cell;
use core::iter;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::Allocator;

use crate::engine::arith::{self, Known, Limit, dangling};
use crate::engine::failure::Failure;
use crate::engine::page::{Choice, Page};
use crate::engine::page_heap::{HeapUse, PageSource};
use crate::stats::{PageInfo, Stats};

/// The allocation state of one arena. Its owner, the arena, releases the pages
/// when it is dropped ([`BumpCore::release_pages`]).
///
/// Invariants:
/// - the page list starting at `first` holds every page the arena owns, each obtained
///   from `backing`, in the order described in [`crate::engine::page`];
/// - `current` is in that list; `cursor` points into it, at or after its payload
///   start and at or before its end, and carries its provenance; `end` is the
///   current page's end address;
/// - bytes between the current page's payload start and `cursor` hold the blocks
///   handed out from it since it became current; bytes in `cursor..end` are free;
/// - `used_before_current` is the sum of the recorded `used` of the used pages;
/// - `pages` and `capacity` are the number and total size of the pages in the list,
///   `page_allocations` how many pages were ever obtained (saturating).
///
/// The fast path touches `cursor` and `end` only: it keeps no counter.
pub(crate) struct BumpCore<A: Allocator> {
    cursor: Cell<NonNull<u8>>,
    end: Cell<usize>,
    current: Cell<Page>,
    first: Page,
    used_before_current: Cell<usize>,
    pages: Cell<usize>,
    capacity: Cell<usize>,
    page_allocations: Cell<usize>,
    /// The most `capacity` may reach.
    limit: Limit,
    /// The backing allocator, and the page heap beside it for the arenas of
    /// `OneWayAlloc::new()` (see [`crate::engine::page_heap`]).
    backing: PageSource<A>,
}

/// A saved position of the arena (see [`BumpCore::restore`]).
#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    page: Page,
    cursor: NonNull<u8>,
    used_before_current: usize,
}

impl<A: Allocator> BumpCore<A> {
    /// Obtains the first page (sized for `size_hint` bytes of payload) from `backing`,
    /// or, as `heap` says, from the page source of [`crate::engine::page_heap`] (the
    /// process's page heap for the large pages and, with [`HeapUse::AllPages`], its
    /// cache of small pages, where the platform has them).
    pub(crate) fn new<E: Failure>(size_hint: usize, backing: A, heap: HeapUse) -> Result<Self, E> {
        let layout =
            arith::first_page_layout(size_hint, arith::os_page()).ok_or_else(E::overflow)?;
        let backing = PageSource::new(backing, heap);
        // A size hint says how much the arena will fill.
        let block = backing
            .allocate_page(layout, size_hint)
            .map_err(|_| E::refused(layout))?;
        // SAFETY: `block` was just obtained from `backing` with `layout`, which is at
        // least 64 KiB and aligned to the OS page (>= the header's alignment).
        let first = unsafe { Page::init(block.cast(), layout) };
        Ok(BumpCore {
            cursor: Cell::new(first.payload_start()),
            end: Cell::new(first.end_addr()),
            current: Cell::new(first),
            first,
            used_before_current: Cell::new(0),
            pages: Cell::new(1),
            capacity: Cell::new(layout.size()),
            page_allocations: Cell::new(1),
            limit: Limit::none(),
            backing,
        })
    }

    /// The backing allocator.
    pub(crate) fn backing(&self) -> &A {
        &self.backing.backing
    }

    /// The page source: the backing allocator and, for `OneWayAlloc::new()`, the
    /// page heap.
    pub(crate) fn page_source(&self) -> &PageSource<A> {
        &self.backing
    }

    /// Allocates a block for `layout`: the path behind every allocating call.
    /// `known` says what of the layout is a compile-time constant (see
    /// [`Self::bump`]).
    #[inline(always)]
    pub(crate) fn alloc<E: Failure>(&self, layout: Layout, known: Known) -> Result<NonNull<u8>, E> {
        // Under Miri only, alignments above MIN_PAGE_ALIGN go to the slow path, which
        // places them in a page aligned enough (see `Page::can_place`); the test is
        // compiled out of native builds.
        if !(cfg!(miri) && miri_over_aligned(layout)) {
            if let Some(block) = self.bump(layout, known) {
                return Ok(block);
            }
        }
        self.alloc_slow(layout)
    }

    /// The fast path: align, compare, bump, return. `None` when `layout` does not fit
    /// in the current page. A zero-sized request is bumped like any other: it
    /// consumes its padding and nothing more. Callers place only alignments the
    /// current page can place ([`Page::can_place`]).
    ///
    /// The arithmetic is [`arith::bump_offset`]: one comparison against the page
    /// end, in the cheapest form that what `known` says about the layout allows
    /// (the choice folds away at compile time).
    #[inline(always)]
    fn bump(&self, layout: Layout, known: Known) -> Option<NonNull<u8>> {
        let cursor = self.cursor.get();
        let Some(offset) = arith::bump_offset(cursor.addr().get(), self.end.get(), layout, known)
        else {
            cold();
            return None;
        };
        // SAFETY: `bump_offset` checked `cursor + offset + size <= end`: both pointers stay
        // within the current page (or one past its end), whose provenance the
        // cursor carries.
        let (block, next) = unsafe {
            let block = cursor.add(offset);
            (block, block.add(layout.size()))
        };
        self.cursor.set(next);
        Some(block)
    }

    /// The slow path: answers a zero-sized request that the current page cannot
    /// align; serves an over-aligned request from the current page when it can (under
    /// Miri); else makes current the first unused page that fits `layout` (moved
    /// right after the current page), or else a new page placed there, and bumps.
    #[cold]
    #[inline(never)]
    fn alloc_slow<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        if let Some(block) = self.bump_in_current(layout) {
            return Ok(block);
        }
        self.alloc_in_next_page(layout, Choice::FirstFit)
    }

    /// Bumps `layout` in the current page if the page can place its alignment
    /// ([`Page::can_place`]) and has room.
    fn bump_in_current(&self, layout: Layout) -> Option<NonNull<u8>> {
        if self.current.get().can_place(layout.align()) {
            self.bump(layout, Known::NOTHING)
        } else {
            None
        }
    }

    /// Makes another page current (chosen by `choice`) and serves `layout` (of
    /// non-zero size) as its first block.
    fn alloc_in_next_page<E: Failure>(
        &self,
        layout: Layout,
        choice: Choice,
    ) -> Result<NonNull<u8>, E> {
        let page = match self.current.get().take_fit_after(layout, choice) {
            Some(page) => page,
            None => {
                let page = self.obtain_page(layout, choice)?;
                // Read `current` only now: the backing allocator may have allocated
                // from this arena and made another page current meanwhile.
                self.current.get().insert_after(page);
                page
            }
        };
        self.make_current(page);
        match self.bump_in_current(layout) {
            Some(block) => Ok(block),
            None => unreachable!("onewayalloc: a page selected because it fits must fit"),
        }
    }

    /// Obtains a new page that fits `layout`: sized by the growth schedule, or with
    /// room to double for a growing buffer (falling back to the schedule's size if
    /// that page would pass the limit or is refused). Not linked into the list.
    fn obtain_page<E: Failure>(&self, layout: Layout, choice: Choice) -> Result<Page, E> {
        let os_page = arith::os_page();
        let nth = self.page_allocations.get();
        let exact = arith::new_page_layout(nth, layout, os_page).ok_or_else(E::overflow)?;
        if choice == Choice::GrowingBuffer {
            let roomy = arith::growth_page_layout(nth, layout, os_page);
            if let Some(roomy) = roomy.filter(|roomy| roomy.size() > exact.size()) {
                if let Some(page) = self.try_obtain(roomy) {
                    return Ok(page);
                }
            }
        }
        self.try_obtain(exact).ok_or_else(|| E::refused(exact))
    }

    /// Obtains a page of `layout` from the backing allocator, within the limit.
    fn try_obtain(&self, layout: Layout) -> Option<Page> {
        if !self.within_limit(layout.size()) {
            return None;
        }
        let filled = self.used_before_current.get() + self.current_used();
        let block = self
            .backing
            .allocate_page(layout, filled)
            .ok()?
            .cast::<u8>();
        // The backing allocator may have obtained pages for this arena meanwhile:
        // check the limit again against what the arena holds now.
        if !self.within_limit(layout.size()) {
            // SAFETY: `block` was just obtained from `backing` with `layout` and is
            // not used by anything.
            unsafe { self.backing.deallocate(block, layout) };
            return None;
        }
        // Counters read after the call. `capacity + size` cannot overflow: it is at
        // most the limit (checked just above). `pages <= capacity / 64 KiB`.
        self.pages.set(self.pages.get() + 1);
        self.capacity.set(self.capacity.get() + layout.size());
        self.page_allocations
            .set(self.page_allocations.get().saturating_add(1));
        // SAFETY: `block` was just obtained from `backing` with `layout`, at least
        // 64 KiB and aligned to at least the OS page (>= the header's alignment).
        Some(unsafe { Page::init(block, layout) })
    }

    /// Whether a page of `size` more bytes keeps `capacity` within the limit.
    fn within_limit(&self, size: usize) -> bool {
        self.limit.admits(self.capacity.get(), size)
    }

    /// Retires the current page as used and makes `page` (the page right after it)
    /// current, rewound.
    fn make_current(&self, page: Page) {
        let used = self.current_used();
        self.current.get().record_used(used);
        // The used bytes of distinct pages add up to at most `capacity`: no overflow.
        self.used_before_current
            .set(self.used_before_current.get() + used);
        self.current.set(page);
        self.cursor.set(page.payload_start());
        self.end.set(page.end_addr());
    }

    /// Bytes consumed in the current page (the cursor is at or after its payload
    /// start: no underflow).
    fn current_used(&self) -> usize {
        self.cursor.get().addr().get() - self.current.get().payload_start().addr().get()
    }

    /// If `block` (of `size` bytes) is the most recent block, returns a pointer to
    /// its start derived from the cursor, which carries the page's provenance. An
    /// empty block at the cursor counts: it starts at the cursor itself.
    #[inline(always)]
    fn last_block(&self, block: NonNull<u8>, size: usize) -> Option<NonNull<u8>> {
        let cursor = self.cursor.get();
        if arith::ends_at(block.addr().get(), size, cursor.addr().get()) {
            // SAFETY: for `size == 0` this is the cursor itself. A non-empty block
            // that ends at the cursor, being a live block of this arena (the caller's
            // guarantee), lies in the current page before it: a block of another
            // page cannot end at the cursor, because the cursor is at least
            // HEADER_SIZE past the current page's base and every page's blocks start
            // HEADER_SIZE past its own base, with pages disjoint.
            Some(unsafe { cursor.sub(size) })
        } else {
            None
        }
    }

    /// The bytes from `addr` to the cursor, if `addr` lies in the current page's
    /// blocks (at or after its payload start, at or before the cursor). A block of
    /// the current page that starts at `addr` is at most that long: what the
    /// by-address calls check a caller's size against (see `crate::by_address`).
    pub(crate) fn handed_out_from(&self, addr: usize) -> Option<usize> {
        let start = self.current.get().payload_start().addr().get();
        let cursor = self.cursor.get().addr().get();
        // `addr <= cursor` here: no underflow.
        (start..=cursor).contains(&addr).then(|| cursor - addr)
    }

    /// Releases `block` if it is the most recent one (the cursor moves back to its
    /// start); otherwise does nothing: its bytes come back at reset.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `layout` and still be live.
    #[inline]
    pub(crate) unsafe fn dealloc(&self, block: NonNull<u8>, layout: Layout) {
        if let Some(start) = self.last_block(block, layout.size()) {
            self.cursor.set(start);
        }
    }

    /// The inline part of `grow`: the most recent block (an empty block at the
    /// cursor is) grows in place, keeping its start; any other block moves to a
    /// fresh block bumped from the current page ([`Self::move_older`]). `None` when
    /// `new` asks a larger alignment than `old`, when an older block keeps its size,
    /// or when the current page has no room; the caller then takes [`Self::resize`], which moves the most recent
    /// block by the growing-buffer rule and any other like a new request.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `old` and still be live,
    /// and `new.size() >= old.size()` (the contract of `Allocator::grow`).
    #[inline(always)]
    pub(crate) unsafe fn grow_inline(
        &self,
        block: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Option<NonNull<u8>> {
        debug_assert!(new.size() >= old.size());
        // A larger alignment than `old`'s (rare) takes `resize`: the start is
        // aligned for `new` when `new` asks no more than `old`.
        if new.align() > old.align() {
            return None;
        }
        let Some(start) = self.last_block(block, old.size()) else {
            // SAFETY: forwarded from the caller; `block` is not the most recent block.
            return unsafe { self.move_older(block, old, new) };
        };
        // `start <= cursor <= end`: no underflow.
        if new.size() > self.end.get() - start.addr().get() {
            return None;
        }
        // SAFETY: the block keeps its start, aligned for `old` hence for `new`, and
        // now ends `new.size() <= end - start` bytes after it, inside the current
        // page; `start` derives from the cursor, which carries the page's provenance.
        self.cursor.set(unsafe { start.add(new.size()) });
        Some(start)
    }

    /// Grows a block that is *not* the most recent one (the other half of
    /// [`grow_inline`](Self::grow_inline)). Such a block cannot grow where it is,
    /// so it moves like a new request (SPEC §1.3): a fresh block bumped from the
    /// current page by the fast path, and a copy of its `old.size()` bytes. `None`
    /// for a "growth" to the same size (`resize` keeps the block) and
    /// when the current page has no room; the caller then takes [`Self::resize`],
    /// whose slow path selects a page, as for any request.
    ///
    /// Many small vectors growing side by side (a map of vectors) take this path at
    /// almost every growth: inline, it costs a bump and a `memcpy` call, without the
    /// call into `resize` and its second test of the block.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `old`, still be live and
    /// not be the most recent block; `new.size() >= old.size()` and `new.align() <=
    /// old.align()`.
    #[inline(always)]
    unsafe fn move_older(
        &self,
        block: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Option<NonNull<u8>> {
        // Under Miri, alignments above MIN_PAGE_ALIGN take the slow path (see
        // `alloc`); the test is compiled out of native builds.
        if cfg!(miri) && miri_over_aligned(new) {
            return None;
        }
        // Grown to the same size: `resize` keeps it where it is (or, at size zero,
        // hands out a dangling pointer).
        if new.size() == old.size() {
            return None;
        }
        let moved = self.bump(new, Known::NOTHING)?;
        // SAFETY: `moved` is a fresh block of `new.size() >= old.size()` bytes, and
        // `block` is live with `old.size()` bytes (caller's guarantee); a fresh block
        // never overlaps a live one.
        unsafe { ptr::copy_nonoverlapping(block.as_ptr(), moved.as_ptr(), old.size()) };
        Some(moved)
    }

    /// The bytes the most recent block, `block` of `size` bytes, can grow by in
    /// place: the free room after it in the current page (what
    /// [`grow_inline`](Self::grow_inline) accepts for it). `None` when `block` is not
    /// the most recent block (an empty block at the cursor is).
    #[inline]
    pub(crate) fn room_after_last(&self, block: NonNull<u8>, size: usize) -> Option<usize> {
        self.last_block(block, size)?;
        // The cursor is at or before the page end: no underflow.
        Some(self.end.get() - self.cursor.get().addr().get())
    }

    /// Resizes `block` from `old` to `new`, keeping its first `min(old, new)` bytes.
    ///
    /// The most recent block is resized in place when the current page has room (and
    /// can place `new`'s alignment), moved forward (overlap-safe) if it must be
    /// realigned, and otherwise moved to another page by the growing-buffer rule
    /// when it grows. Any other block shrinks in place when its alignment allows, or
    /// is moved like a new request.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `old` and still be live;
    /// `new.size()` must not be zero.
    #[inline(never)]
    pub(crate) unsafe fn resize<E: Failure>(
        &self,
        block: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<u8>, E> {
        debug_assert!(new.size() != 0, "the caller handles a resize to zero bytes");
        let keep = old.size().min(new.size());
        let moved = if let Some(start) = self.last_block(block, old.size()) {
            if let Some(moved) = self.resize_last_in_place(start, keep, new) {
                return Ok(moved);
            }
            if new.size() > old.size() {
                self.alloc_in_next_page(new, Choice::GrowingBuffer)?
            } else {
                self.alloc(new, Known::NOTHING)?
            }
        } else if new.size() <= old.size() && keeps_alignment(block, old, new) {
            return Ok(block);
        } else {
            self.alloc(new, Known::NOTHING)?
        };
        // SAFETY: `moved` is a fresh block of `new.size() >= keep` bytes, and `block`
        // is live with `old.size() >= keep` bytes (caller's guarantee); a fresh block
        // never overlaps a live one.
        unsafe { ptr::copy_nonoverlapping(block.as_ptr(), moved.as_ptr(), keep) };
        Ok(moved)
    }

    /// Resizes the most recent block, which starts at `start` (derived from the
    /// cursor), in the current page: it stays or moves forward to realign, keeping
    /// its first `keep` bytes. `None` if the current page cannot hold it.
    fn resize_last_in_place(
        &self,
        start: NonNull<u8>,
        keep: usize,
        new: Layout,
    ) -> Option<NonNull<u8>> {
        if !self.current.get().can_place(new.align()) {
            return None;
        }
        let pad = arith::bump_padding(start.addr().get(), self.end.get(), new.size(), new.align())?;
        // SAFETY: `bump_padding` checked that `pad + new.size()` bytes from the block
        // start stay inside the current page; `start` carries the page's provenance.
        // The block's old bytes are live, and `ptr::copy` allows the old and new
        // ranges to overlap.
        unsafe {
            let moved = start.add(pad);
            if pad != 0 {
                ptr::copy(start.as_ptr(), moved.as_ptr(), keep);
            }
            self.cursor.set(moved.add(new.size()));
            Some(moved)
        }
    }

    /// The position of the arena now, to [`restore`](Self::restore) later.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            page: self.current.get(),
            cursor: self.cursor.get(),
            used_before_current: self.used_before_current.get(),
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
    }

    /// Returns unused pages to the backing allocator: walking them in list order, it
    /// keeps each page that still fits in the `keep` budget (the sizes of the pages
    /// kept so far plus its own at most `keep`) and frees each page that does not,
    /// then goes on with the next.
    pub(crate) fn trim(&mut self, keep: usize) {
        let mut before = self.current.get();
        let mut kept: usize = 0;
        while let Some(page) = before.next() {
            if let Some(total) = kept.checked_add(page.size()).filter(|&t| t <= keep) {
                kept = total;
                before = page;
                continue;
            }
            let unlinked = before.unlink_next();
            debug_assert_eq!(unlinked, Some(page));
            // The page was counted in both when it was obtained: no underflow.
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

    /// Invalidates every block and makes every page available again, in constant
    /// time: the first page becomes current, rewound; the others become unused.
    pub(crate) fn reset(&mut self) {
        let first = self.first;
        self.current.set(first);
        self.cursor.set(first.payload_start());
        self.end.set(first.end_addr());
        self.used_before_current.set(0);
    }

    /// Gives the memory of the current page's free room back to the OS where the
    /// page source can ([`PageSource::discard`]): after a reset, the first page's
    /// payload but for the OS page that holds its header. The page stays the arena's
    /// and its bytes past the cursor are free, so no block is affected.
    // For the pools, which need `std`.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn discard_free_room(&mut self) {
        let (cursor, end) = self.free_span();
        // The cursor is at or before the page end: no underflow.
        let room = end.addr().get() - cursor.addr().get();
        // SAFETY: `cursor..end` is the current page's free room (the invariant): no
        // block handed out lies in it, and a block allocated later is written
        // before it is read, as any fresh block.
        unsafe { self.backing.discard(cursor, room) }
    }

    /// The limit on `capacity`.
    pub(crate) fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The arena's figures, derived from the page counters and the cursor.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            pages: self.pages.get(),
            capacity: self.capacity.get(),
            // Used bytes of distinct pages add up to at most `capacity`.
            used: self.used_before_current.get() + self.current_used(),
            page_allocations: self.page_allocations.get(),
            pending_drops: 0,
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

/// The free span of the current page, for the C API's inline allocation path
/// (`capi/`, see `OneWayAlloc::free_span`): kept apart from the fast path above.
impl<A: Allocator> BumpCore<A> {
    /// The cursor and the current page's end: the bytes in between are free. Both
    /// carry the page's provenance.
    pub(crate) fn free_span(&self) -> (NonNull<u8>, NonNull<u8>) {
        let cursor = self.cursor.get();
        // The cursor is at or before the page end: no underflow.
        let room = self.end.get() - cursor.addr().get();
        // SAFETY: `cursor + room` is the current page's end, one past its last byte,
        // within the page whose provenance the cursor carries.
        (cursor, unsafe { cursor.add(room) })
    }

    /// Moves the cursor forward to `addr`, handing out the bytes before it, if `addr`
    /// lies between the cursor and the current page's end; returns whether it did.
    pub(crate) fn claim_until(&self, addr: usize) -> bool {
        let cursor = self.cursor.get();
        let Some(by) = addr.checked_sub(cursor.addr().get()) else {
            return false;
        };
        if addr > self.end.get() {
            return false;
        }
        // SAFETY: `cursor <= addr <= end`: the new cursor stays inside the current
        // page (or one past its end), whose provenance the cursor carries.
        self.cursor.set(unsafe { cursor.add(by) });
        true
    }
}

/// Marks the branch that calls it as unlikely, so that the compiler lays out the
/// fast path straight, without a taken jump (measured: `alloc_str` in a loop took
/// 1.2x the time with the fast path behind a jump).
#[cold]
#[inline(always)]
fn cold() {}

/// Whether a `block` allocated with `old` may keep its start when resized to `new`:
/// it is aligned for `new` by address. Under Miri, whose symbolic alignment check
/// knows a block's alignment only from its page's, `new`'s alignment must also be
/// one its page guaranteed when the block was placed: at most `old`'s or
/// [`arith::MIN_PAGE_ALIGN`] (the test is compiled out of native builds).
#[inline(always)]
fn keeps_alignment(block: NonNull<u8>, old: Layout, new: Layout) -> bool {
    arith::is_aligned(block.addr().get(), new.align()) & (!cfg!(miri) || miri_guaranteed(old, new))
}

/// Under Miri, whether `new`'s alignment is one the page of a block placed for
/// `old` guarantees (see [`keeps_alignment`]). Called only under Miri.
#[inline(always)]
fn miri_guaranteed(old: Layout, new: Layout) -> bool {
    new.align() <= arith::MIN_PAGE_ALIGN.max(old.align())
}

/// Under Miri, whether the fast path leaves `layout` to the slow path: alignments
/// above what every page guarantees (see [`BumpCore::alloc`]). Called only under
/// Miri.
#[inline(always)]
fn miri_over_aligned(layout: Layout) -> bool {
    layout.align() > arith::MIN_PAGE_ALIGN
}

#[cfg(test)]
mod tests {
    use super::*;
    use allocator_api2::alloc::{AllocError, Global};

    /// Moves the cursor of `core`'s current page so that `room` bytes are left.
    fn leave_room(core: &BumpCore<Global>, room: usize) {
        let left = core.end.get() - core.cursor.get().addr().get();
        let filler = Layout::from_size_align(left - room, 1).unwrap();
        assert!(core.bump(filler, Known::NOTHING).is_some());
    }

    /// Every form of the fast path's arithmetic ([`arith::bump_offset`]): a request
    /// that ends exactly at the page end is served there, from the cursor rounded
    /// up to its alignment, and moves the cursor to the end; one that would end a
    /// byte past it is refused and leaves the cursor where it was. (A refusal sends
    /// the request to the slow path, which is correct but slow: only this test sees
    /// a fast path that refuses too much.)
    #[test]
    fn bump_serves_up_to_the_page_end_in_every_form() {
        let mut core = BumpCore::new::<AllocError>(0, Global, HeapUse::Off).unwrap();
        let requests = [
            (1, 1),
            (8, 8),
            (24, 8),
            (4095, 1),
            (4096, 16),
            (5000, 8),
            (0, 16),
        ];
        for known in [Known::TYPE, Known::ALIGN, Known::NOTHING] {
            for (size, align) in requests {
                let layout = Layout::from_size_align(size, align).unwrap();
                let end = core.end.get();
                // Page ends are multiples of MIN_PAGE_ALIGN and `size` of `align`:
                // the block ends exactly at the end, after `pad` bytes of padding.
                for pad in [0, align - 1] {
                    core.reset();
                    leave_room(&core, size + pad);
                    let block = core.bump(layout, known);
                    let at = block.map(|block| block.addr().get());
                    assert_eq!(at, Some(end - size), "{known:?} {layout:?} pad {pad}");
                    assert_eq!(core.cursor.get().addr().get(), end);
                }
                if size > 0 {
                    core.reset();
                    leave_room(&core, size - 1);
                    let cursor = core.cursor.get();
                    assert_eq!(core.bump(layout, known), None, "{known:?} {layout:?}");
                    assert_eq!(
                        core.cursor.get(),
                        cursor,
                        "a refused request moved the cursor"
                    );
                }
            }
        }
        // SAFETY: the core is not used again, and no block of it is.
        unsafe { core.release_pages() };
    }

    fn addr_of(core: &BumpCore<Global>) -> usize {
        core.cursor.get().addr().get()
    }

    /// Only the most recent block (an empty one at the cursor included) rolls back
    /// or grows in place; growth keeps the block's start, needs no larger alignment
    /// than the block's, and ends by the page end. (An older block moves: see the
    /// next test.)
    #[test]
    fn only_the_most_recent_block_rolls_back_or_grows_in_place() {
        let core = BumpCore::new::<AllocError>(0, Global, HeapUse::Off).unwrap();
        // Alignments spelled out: a u64 is 4-aligned on some 32-bit targets.
        let word = Layout::from_size_align(8, 8).unwrap();
        let older = core.bump(word, Known::TYPE).unwrap();
        let recent = core.bump(word, Known::TYPE).unwrap();
        let after = addr_of(&core);
        // SAFETY: every block below is a live block of `core` with the layout
        // given, grown to sizes no smaller; the core is released last, unused after.
        unsafe {
            core.dealloc(older, word);
            assert_eq!(addr_of(&core), after, "an older block rolled back");
            let twice = Layout::from_size_align(16, 8).unwrap();
            // A larger alignment than the block's moves it, even at the cursor.
            let wider = Layout::from_size_align(16, 16).unwrap();
            assert_eq!(core.grow_inline(recent, word, wider), None);
            assert_eq!(addr_of(&core), after);
            // The most recent block grows in place, up to the page end exactly.
            assert_eq!(core.grow_inline(recent, word, twice), Some(recent));
            assert_eq!(addr_of(&core), recent.addr().get() + 16);
            let room = core.end.get() - recent.addr().get();
            let full = Layout::from_size_align(room, 8).unwrap();
            assert_eq!(core.grow_inline(recent, twice, full), Some(recent));
            assert_eq!(addr_of(&core), core.end.get());
            let past = Layout::from_size_align(room + 1, 8).unwrap();
            assert_eq!(
                core.grow_inline(recent, full, past),
                None,
                "grew past the page end"
            );
            assert_eq!(addr_of(&core), core.end.get());
            // Rolling it back returns the cursor to its start.
            core.dealloc(recent, full);
            assert_eq!(addr_of(&core), recent.addr().get());
            // An empty block at the cursor is the most recent block.
            let nothing = Layout::from_size_align(0, 8).unwrap();
            let empty = core.bump(nothing, Known::TYPE).unwrap();
            assert_eq!(core.grow_inline(empty, nothing, word), Some(empty));
            assert_eq!(addr_of(&core), empty.addr().get() + 8);
            core.dealloc(empty, word);
            assert_eq!(addr_of(&core), empty.addr().get());
            let mut core = core;
            core.release_pages();
        }
    }
    /// An older block grows by moving: to a fresh block bumped at the cursor (rounded
    /// up to the new alignment), with its bytes copied and the old block left where it
    /// is; when the current page has no room, the new alignment is larger than the
    /// old one or the size stays the same, the inline path declines and leaves the
    /// cursor alone (`resize` then selects a page, realigns, or keeps the block).
    #[test]
    fn an_older_block_grows_by_moving_in_the_current_page() {
        let core = BumpCore::new::<AllocError>(0, Global, HeapUse::Off).unwrap();
        let word = Layout::from_size_align(8, 8).unwrap();
        let twice = Layout::from_size_align(16, 8).unwrap();
        let older = core.bump(word, Known::TYPE).unwrap();
        let _recent = core.bump(Layout::from_size_align(1, 1).unwrap(), Known::TYPE);
        // SAFETY: `older` is a live block of `core` with `word`; the blocks written
        // and read are live; the core is released last, unused after.
        unsafe {
            older.cast::<u64>().write(0x0123_4567_89ab_cdef);
            let cursor = addr_of(&core);
            let moved = core
                .grow_inline(older, word, twice)
                .expect("room in the page");
            assert_eq!(moved.addr().get(), cursor.next_multiple_of(8));
            assert_eq!(addr_of(&core), moved.addr().get() + 16);
            assert_eq!(moved.cast::<u64>().read(), 0x0123_4567_89ab_cdef);
            assert_eq!(older.cast::<u64>().read(), 0x0123_4567_89ab_cdef);
            // Grown to its own size: declined (`resize` keeps it).
            let at = addr_of(&core);
            assert_eq!(core.grow_inline(older, word, word), None);
            assert_eq!(addr_of(&core), at);
            // A larger alignment than the block's: declined.
            let wider = Layout::from_size_align(16, 16).unwrap();
            let at = addr_of(&core);
            assert_eq!(core.grow_inline(older, word, wider), None);
            assert_eq!(addr_of(&core), at);
            // No room for the moved block in the current page: declined.
            leave_room(&core, 15);
            let at = addr_of(&core);
            assert_eq!(core.grow_inline(older, word, twice), None);
            assert_eq!(addr_of(&core), at);
            let mut core = core;
            core.release_pages();
        }
    }
}
