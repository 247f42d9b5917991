//! The bump core: the current page's cursor, the `#[inline]` fast path, the `#[cold]`
//! slow path that selects or obtains a page, rollback and in-place resizing of the
//! most recent block, reset, and release of every page on drop.
//!
//! Every block pointer is derived from the current page's base pointer (through the
//! cursor, which is the page's payload start moved forward), never from an integer,
//! so the crate runs under Miri's `-Zmiri-strict-provenance`.

use core::alloc::Layout;
use core::cell::Cell;
use core::hint;
use core::iter;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::Allocator;

use crate::arith::{self, dangling};
use crate::failure::Failure;
use crate::page::Page;
use crate::stats::{PageInfo, Stats};

/// The fast paths count with one `add` to [`BumpCore::counts`]: a call adds
/// `ONE_CALL + size`. Bits below `COUNT_SHIFT` hold bytes, the bits above hold calls.
const COUNT_SHIFT: u32 = 30;
/// One call in the packed counters.
const ONE_CALL: u64 = 1 << COUNT_SHIFT;
/// The bytes field of the packed counters.
const BYTES_MASK: u64 = ONE_CALL - 1;

// The window keeps the bytes field from carrying into the calls field.
const _: () = assert!(arith::FAST_WINDOW as u64 <= BYTES_MASK);

/// The allocation state of one arena. Its owner, the arena, releases the pages
/// when it is dropped ([`BumpCore::release_pages`]).
///
/// Invariants:
/// - the page list starting at `first` holds every page the arena owns, each obtained
///   from `backing`, in the order described in [`crate::page`];
/// - `current` is in that list; `cursor` points into it, at or after its payload
///   start, and carries its provenance; `limit` is the current page's end as
///   [`arith::usable_end`] gives it (a multiple of `MIN_PAGE_ALIGN`, and in practice
///   its end address); `end`, the fast-path limit, is a multiple of `MIN_PAGE_ALIGN`
///   with `cursor <= end <= limit`;
/// - bytes between the current page's payload start and `cursor` hold the blocks
///   handed out from it since it became current; bytes in `cursor..limit` are free;
/// - `used_before_current` is the sum of the recorded `used` of the used pages;
/// - `counts` holds what the fast paths counted since the counters were last
///   flushed into `requested` and `allocations` (see [`Self::open_window`]): bytes
///   in its low `COUNT_SHIFT` bits, calls above them, and its bytes plus
///   `end - cursor` never exceed [`arith::FAST_WINDOW`]. A fast path adds at most
///   the bytes by which it advances the cursor, and every other move of the cursor
///   flushes and re-opens the window, so neither field can overflow (each call
///   counts at least one byte).
pub(crate) struct BumpCore<A: Allocator> {
    cursor: Cell<NonNull<u8>>,
    end: Cell<usize>,
    counts: Cell<u64>,
    limit: Cell<usize>,
    current: Cell<Page>,
    first: Page,
    /// `limit` and `end` of the first page rewound, for `reset`.
    first_limit: usize,
    first_end: usize,
    used_before_current: Cell<usize>,
    requested: Cell<usize>,
    allocations: Cell<usize>,
    pages: Cell<usize>,
    capacity: Cell<usize>,
    page_allocations: Cell<usize>,
    backing: A,
}

/// The usable end of `page` (see [`arith::usable_end`]).
fn page_end(page: Page) -> usize {
    arith::usable_end(page.end_addr())
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
        let cursor = first.payload_start();
        let limit = page_end(first);
        let end = arith::window_end(cursor.addr().get(), limit);
        Ok(BumpCore {
            cursor: Cell::new(cursor),
            end: Cell::new(end),
            counts: Cell::new(0),
            limit: Cell::new(limit),
            current: Cell::new(first),
            first,
            first_limit: limit,
            first_end: end,
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

    /// Allocates a block for `layout`: the path behind every allocating call whose
    /// layout is not a compile-time constant (see [`Self::alloc_fixed`]).
    ///
    /// The packed counters are read before the fit test and also handed to the slow
    /// path: with two uses, the read stays a plain load instead of being folded into
    /// an `add` to memory. That `add` chains every allocation to the previous one
    /// through store forwarding: measured on x86-64, loops allocating run-time sizes
    /// ran at half the speed with it (1.7 vs 0.9 ns per allocation).
    #[inline(always)]
    pub(crate) fn alloc<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        let counts = self.counts.get();
        match self.bump(layout, || counts) {
            Some(block) => Ok(block),
            None => self.alloc_slow(layout, counts),
        }
    }

    /// [`Self::alloc`] for layouts known at compile time (`alloc<T>`): the counters
    /// take one `add` of a constant to memory, which keeps pace with the bump.
    #[inline(always)]
    pub(crate) fn alloc_fixed<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        match self.bump(layout, || self.counts.get()) {
            Some(block) => Ok(block),
            None => self.alloc_fixed_slow(layout),
        }
    }

    /// The slow path of [`Self::alloc_fixed`], which reads the counters itself so
    /// that the fast path's read has one use and becomes part of the `add`.
    #[cold]
    #[inline(never)]
    fn alloc_fixed_slow<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        self.alloc_slow(layout, self.counts.get())
    }

    /// The fast path: align, compare, bump, count, return. `None` for a zero-sized
    /// or over-aligned `layout` and when it does not fit below `end`; the slow path
    /// then handles it. `counts` gives the current value of the packed counters
    /// (read before the fit test, or only once the block fits: see the callers).
    #[inline(always)]
    fn bump(&self, layout: Layout, counts: impl FnOnce() -> u64) -> Option<NonNull<u8>> {
        // Alignments up to MIN_PAGE_ALIGN fit any page by offset; the comparison
        // disappears for layouts known at compile time.
        if layout.align() > arith::MIN_PAGE_ALIGN {
            return None;
        }
        let cursor = self.cursor.get();
        let at = cursor.addr().get();
        let start = arith::align_up(at, layout.align());
        // SAFETY: `at <= end` and `end` is a multiple of MIN_PAGE_ALIGN (the core's
        // invariants), and `layout.align() <= MIN_PAGE_ALIGN`, so `start <= end <=
        // ADDR_LIMIT`. The hint lets the compiler drop the overflow test of
        // `start + size` for a constant size below MIN_PAGE_ALIGN.
        unsafe { hint::assert_unchecked(start <= arith::ADDR_LIMIT) };
        let block_end = arith::bump_end(start, self.end.get(), layout.size())?;
        // SAFETY: `at <= start < block_end <= end <= limit`: both pointers stay within
        // the current page, whose provenance the cursor carries.
        let (block, next) = unsafe { (cursor.add(start - at), cursor.add(block_end - at)) };
        self.cursor.set(next);
        // `layout.size() <= end - at <= FAST_WINDOW < ONE_CALL`: the cast is exact,
        // and the counters' invariant holds since the cursor advanced by at least the
        // size.
        self.counts
            .set(counts() + (ONE_CALL + layout.size() as u64));
        Some(block)
    }

    /// The slow path: flushes the packed counters (`counts`, their current value);
    /// answers zero-sized requests; then tries the current page if it takes the
    /// request after all (see [`Self::bump_in_page`]); else makes current the first
    /// unused page that fits `layout` (moved right after the current page), or else a
    /// new page placed there, and bumps.
    #[cold]
    #[inline(never)]
    fn alloc_slow<E: Failure>(&self, layout: Layout, counts: u64) -> Result<NonNull<u8>, E> {
        self.flush(counts);
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        if let Some(block) = self.bump_in_page(layout) {
            return Ok(block);
        }
        let current = self.current.get();
        let page = match current.take_first_fit_after(layout) {
            Some(page) => page,
            None => {
                let page = self.obtain_page(layout)?;
                current.insert_after(page);
                page
            }
        };
        self.make_current(page);
        match self.bump_in_page(layout) {
            Some(block) => Ok(block),
            None => unreachable!("onewayalloc: a page selected because it fits must fit"),
        }
    }

    /// Bumps `layout` (of non-zero size) in the current page up to its usable end,
    /// past the fast-path window, and counts it in the totals; then re-opens the
    /// window. This serves over-aligned requests in a page aligned enough for them,
    /// requests that meet the window's end in a page larger than the window, and the
    /// first request in a newly current page. `None` if the page is not aligned
    /// enough or has no room.
    fn bump_in_page(&self, layout: Layout) -> Option<NonNull<u8>> {
        if !self.current.get().guarantees_align(layout.align()) {
            return None;
        }
        let cursor = self.cursor.get();
        let pad = arith::bump_padding(
            cursor.addr().get(),
            self.limit.get(),
            layout.size(),
            layout.align(),
        )?;
        // SAFETY: `bump_padding` checked `pad + size <= limit - cursor`, so both
        // pointers stay within the current page (or one past its end), whose
        // provenance the cursor carries.
        unsafe {
            let block = cursor.add(pad);
            self.cursor.set(block.add(layout.size()));
            self.allocations.set(self.allocations.get() + 1);
            self.requested.set(self.requested.get() + layout.size());
            self.open_window();
            Some(block)
        }
    }

    /// Flushes the fast-path counters into the totals and sets the fast-path limit
    /// `end` for the cursor as it is now ([`arith::window_end`]): restores the
    /// counters' invariant after any move of the cursor other than a fast path.
    #[inline(never)]
    fn open_window(&self) {
        self.flush(self.counts.get());
        let at = self.cursor.get().addr().get();
        self.end.set(arith::window_end(at, self.limit.get()));
    }

    /// Moves the packed counters, whose current value is `counts`, into the totals.
    /// The counters' invariant holds after it whatever the cursor and `end`.
    fn flush(&self, counts: u64) {
        debug_assert_eq!(counts, self.counts.get());
        self.counts.set(0);
        // Both fields are below 2^30 (the counters' invariant): the casts are exact.
        self.requested
            .set(self.requested.get() + (counts & BYTES_MASK) as usize);
        self.allocations
            .set(self.allocations.get() + (counts >> COUNT_SHIFT) as usize);
    }

    /// Bytes requested and allocation calls since the last reset, the fast paths'
    /// counts included.
    fn totals(&self) -> (usize, usize) {
        let counts = self.counts.get();
        (
            self.requested.get() + (counts & BYTES_MASK) as usize,
            self.allocations.get() + (counts >> COUNT_SHIFT) as usize,
        )
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
        self.limit.set(page_end(page));
        self.open_window();
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
            self.open_window();
        }
    }

    /// Grows the most recent block in place within the fast-path window: the inline
    /// part of `grow`. `None` when `block` is not the most recent block, when `new`
    /// asks a larger alignment than `old`, or when the window has no room; the caller
    /// then takes [`Self::resize`].
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `old` and still be live,
    /// and `new.size() >= old.size()` (the contract of `Allocator::grow`).
    #[inline(always)]
    pub(crate) unsafe fn grow_in_place(
        &self,
        block: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Option<NonNull<u8>> {
        debug_assert!(new.size() >= old.size());
        let cursor = self.cursor.get();
        let at = cursor.addr().get();
        let start = block.addr().get();
        if old.size() == 0 || start.wrapping_add(old.size()) != at || new.align() > old.align() {
            return None;
        }
        // `start <= at <= end`: no overflow.
        if new.size() > self.end.get() - start {
            return None;
        }
        let growth = new.size() - old.size();
        // SAFETY: the block is not empty and ends at the cursor, so it is the most
        // recent block and starts `old.size()` bytes before the cursor in the current
        // page (see `last_block`); it keeps its start, aligned for `old` hence for
        // `new`, and now ends `new.size() <= end - start` bytes after it, inside the
        // page. Both pointers derive from the cursor, which carries the page's
        // provenance (the first offset is `-old.size()`).
        let (start, next) = unsafe {
            (
                cursor.byte_offset(start.wrapping_sub(at) as isize),
                cursor.add(growth),
            )
        };
        self.cursor.set(next);
        // The cursor advanced by exactly the growth, which is counted as requested
        // bytes: the counters' invariant holds.
        self.counts.set(self.counts.get() + growth as u64);
        Some(start)
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
    #[inline(never)]
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
                arith::bump_padding(start_addr, self.limit.get(), new.size(), new.align())
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
                    self.open_window();
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
        let (requested, allocations) = self.totals();
        Checkpoint {
            page: self.current.get(),
            cursor: self.cursor.get(),
            used_before_current: self.used_before_current.get(),
            requested,
            allocations,
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
        self.limit.set(page_end(checkpoint.page));
        self.used_before_current.set(checkpoint.used_before_current);
        self.counts.set(0);
        self.requested.set(checkpoint.requested);
        self.allocations.set(checkpoint.allocations);
        self.open_window();
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
        self.limit.set(self.first_limit);
        self.end.set(self.first_end);
        self.counts.set(0);
        self.used_before_current.set(0);
        self.requested.set(0);
        self.allocations.set(0);
    }

    /// The arena's counters.
    pub(crate) fn stats(&self) -> Stats {
        let (requested, allocations) = self.totals();
        Stats {
            pages: self.pages.get(),
            capacity: self.capacity.get(),
            used: self.used_before_current.get() + self.current_used(),
            requested,
            allocations,
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

#[cfg(test)]
mod tests {
    use core::alloc::Layout;

    use allocator_api2::alloc::Allocator;

    use crate::OneWayAlloc;

    /// Rollbacks flush the fast-path counters: the totals stay exact however often
    /// the same bytes are handed out again.
    #[test]
    fn counters_stay_exact_across_rollbacks_and_in_place_growth() {
        let arena = OneWayAlloc::new();
        let a = &arena;
        let small = Layout::from_size_align(24, 8).unwrap();
        for round in 1..=1000 {
            let p = a.allocate(small).unwrap().cast::<u8>();
            let bigger = Layout::from_size_align(40, 8).unwrap();
            // SAFETY: `p` is the live block just allocated with `small`.
            let q = unsafe { a.grow(p, small, bigger) }.unwrap().cast::<u8>();
            assert_eq!(q, p, "grown in place");
            // SAFETY: `q` is live with `bigger`.
            unsafe { a.deallocate(q, bigger) };
            let stats = arena.stats();
            assert_eq!(stats.allocations, round);
            assert_eq!(stats.requested, 40 * round);
            assert_eq!(stats.used, 0, "rolled back");
        }
    }

    /// A page larger than the fast-path window (1 GiB): requests past the window are
    /// served from the same page by the slow path, and the counters stay exact.
    #[test]
    #[cfg_attr(miri, ignore = "allocates a 1.5 GiB page")]
    fn pages_larger_than_the_window_are_used_to_their_end() {
        let mut arena = OneWayAlloc::with_size_hint(3 << 29);
        for _ in 0..2 {
            let mib = 1 << 20;
            for _ in 0..1500 {
                arena.alloc_layout(Layout::from_size_align(mib, 16).unwrap());
                arena.alloc(7u8);
            }
            let stats = arena.stats();
            assert_eq!(stats.pages, 1);
            assert_eq!(stats.allocations, 3000);
            assert_eq!(stats.requested, 1500 * (mib + 1));
            assert_eq!(stats.used, 1500 * mib + 1499 * 16 + 1);
            arena.reset();
        }
    }
}
