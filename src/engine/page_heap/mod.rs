//! Where the pages of [`OneWayAlloc::new`](crate::OneWayAlloc::new) come from: the
//! small first pages from the global allocator, the pages of 1 MiB and more from
//! one page heap that every arena of the process shares; small pages that arenas
//! give back wait in the heap for the next arena's (`small_pages`).
//!
//! # The page heap
//! On 64-bit Linux (with `std`, outside Miri and the sanitizer mode) the heap maps
//! address space from the OS in spans of 64 MiB , each aligned to
//! 2 MiB, and hands it to arenas in slots of 1 MiB: a 1 MiB page takes one slot, a
//! larger page the slots it covers, a page larger than a span a mapping of its own.
//! Many arenas share a span, so a process with thousands of arenas has a mapping per
//! 64 MiB in use, not one per arena.
//!
//! **Huge pages where an arena fills them.** Spans are of two kinds: plain ones, and
//! ones with transparent huge pages asked for (`madvise(MADV_HUGEPAGE)`, which the
//! common `madvise` THP mode needs). An arena's large page comes from a huge-page
//! span once the arena has filled [`HUGE_PAGES_AFTER`] bytes (or was created with a
//! size hint of that much): a query that builds a 38 MiB working set touches it
//! through 2 MiB pages (fewer TLB misses and page faults), while an arena with one
//! large block that it barely touches costs the 4 KiB pages it touched (plain spans
//! refuse huge pages with `MADV_NOHUGEPAGE`, so this holds in the `always` THP mode
//! too).
//!
//! **What is kept, counted and bounded.** A page an arena gives back (its `trim`,
//! its drop) returns to the heap with its memory still resident, for the next arena
//! to take without a page fault: an arena per query costs no fault after the first
//! query. Those bytes are counted by [`free_page_bytes`] (in no arena's
//! [`Stats`](crate::Stats)) and never exceed [`free_page_limit`] (64 MiB unless set
//! with [`set_free_page_limit`]) but for one case: a free 1 MiB slot that shares a
//! 2 MiB huge page with a slot an arena holds is counted (the huge page makes it
//! resident) until the heap next gives pages back, at most 1 MiB per such huge
//! page. A page returned past the bound has its memory given back to the OS at once
//! (`MADV_DONTNEED`): whole free huge pages first, the free half of a huge page
//! whose other half an arena holds last (giving back half a huge page splits it:
//! its slots would fault back as 512 small pages). The rest decays: at each call
//! into the heap (an arena of `new()` taking or returning a page), every epoch of
//! [`FREE_PAGE_DECAY_EPOCH`] (1 s) that passed gives back half of the free memory that no arena
//! took during it, so memory the load no longer needs goes back within seconds of
//! activity. [`release_free_pages`] gives all of it back at once. A span whose
//! slots are all free and given back is unmapped.
//!
//! **Small pages.** The first pages of an arena (64, 128, 256 and 512 KiB) come
//! from the global allocator; those the arenas of `new()` give back wait in the
//! heap, most recent first, for the next arena's first pages (`malloc` would often
//! give them to the system and fault them in again, 4 KiB at a time). They count in
//! [`free_page_bytes`] and within [`free_page_limit`] with the free slots (at most a
//! quarter of the limit, and at most 16 MiB), decay with them, and go back to the
//! global allocator with [`release_free_pages`], past the bound, and as they decay
//! (observed, as for the slots, at the next page any arena takes or returns).
//!
//! **Address space in proportion to use.** Spans are mapped without
//! `MAP_NORESERVE`, so the kernel's overcommit policy refuses a size it could not
//! back (a `try_` call then returns `Err`, as with the global allocator), and a
//! process under `ulimit -v` holds a span per 64 MiB of pages in use.
//!
//! **Threads and `fork`.** The heap's state is behind one lock, held only for
//! bookkeeping and `madvise`/`munmap` calls, never while foreign code runs (the
//! backing allocator is called outside it). `pthread_atfork` handlers take the lock
//! before a `fork` and release it in both processes, so a child never inherits it
//! held.
//!
//! Everywhere else (other OSes, 32-bit targets, no `std`, Miri) the source is the
//! backing allocator alone. An arena made with [`new_in`](crate::OneWayAlloc::new_in)
//! (`new_in(Global)` included) always obtains every page from its backing allocator.
//!
//! The bookkeeping of a span lives in the OS page before its first slot
//! (`linux::Span`); the arena holds a count of the bytes it has from the heap.

// The arithmetic is used by the Linux heap only (and tested everywhere).
#![cfg_attr(not(onewayalloc_page_heap), allow(dead_code))]

use core::alloc::Layout;
use core::cell::Cell;
use core::ptr::NonNull;
use core::time::Duration;

use allocator_api2::alloc::{AllocError, Allocator, Global};

mod slots;

mod small_pages;

#[cfg(onewayalloc_page_heap)]
mod linux;

/// Pages of at least this size come from the page heap when the source has it on:
/// the arena's largest page target (SPEC §1.2), so the first pages (64 to 512 KiB)
/// of every arena stay with the global allocator.
pub(crate) const OS_PAGE_MIN: usize = crate::engine::arith::MAX_PAGE_TARGET;

/// Bytes an arena has filled (or asked for with a size hint) before its large pages
/// come from huge-page spans: 2 MiB.
pub const HUGE_PAGES_AFTER: usize = 2 << 20;

/// The free memory the page heap keeps resident for later arenas unless
/// [`set_free_page_limit`] says otherwise: 64 MiB.
pub const DEFAULT_FREE_PAGE_LIMIT: usize = 64 << 20;

/// The decay's epoch: every epoch gives back half of the free memory no arena took
/// during it.
pub const FREE_PAGE_DECAY_EPOCH: Duration = Duration::from_secs(1);

/// Which pages of an arena come from the process's page heap (where the platform
/// has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeapUse {
    /// None: every page from the backing allocator (`new_in`).
    Off,
    /// The large pages; the small ones from the backing allocator, which counts
    /// them (the C API's arenas).
    LargePages,
    /// Every page (`new()`, whose backing allocator is the global one): the large
    /// ones from the heap's spans, the small ones (64 to 512 KiB) from the small
    /// pages that earlier arenas gave back, else from the global allocator.
    AllPages,
}

/// The backing allocator of an arena, and beside it the page heap when the arena was
/// created by `new()`: every page the arena obtains or returns goes through this
/// value, which routes it.
pub(crate) struct PageSource<A> {
    pub(crate) backing: A,
    /// Whether large pages come from the page heap.
    heap: bool,
    /// Whether the small pages of [`small_pages`]'s classes come from the heap's
    /// small pages and the global allocator (and go back there), not from
    /// `backing`.
    small: bool,
    /// Bytes of the pages the arena holds from the heap.
    from_heap: Cell<usize>,
    /// The end of the last page the arena took from the heap: its next page is
    /// asked for at the next slot, so that the arena's pages follow one another.
    next_near: Cell<usize>,
}

impl<A: Allocator> PageSource<A> {
    /// `backing`, with the page heap beside it for the pages `heap` says (where the
    /// platform has one).
    pub(crate) fn new(backing: A, heap: HeapUse) -> Self {
        let has_heap = cfg!(onewayalloc_page_heap);
        PageSource {
            backing,
            heap: heap != HeapUse::Off && has_heap,
            small: heap == HeapUse::AllPages && has_heap,
            from_heap: Cell::new(0),
            next_near: Cell::new(0),
        }
    }

    /// Bytes of the pages the arena holds from the page heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.from_heap.get()
    }

    /// A page for `layout`, for an arena that has filled `filled` bytes: from the
    /// page heap if the source has it on and the page is large, else (or if the heap
    /// is refused memory by the OS) from the backing allocator.
    pub(crate) fn allocate_page(
        &self,
        layout: Layout,
        filled: usize,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if self.heap && layout.size() >= OS_PAGE_MIN && layout.align() <= slots::SLOT {
            let huge = filled >= HUGE_PAGES_AFTER;
            if let Some(page) = heap_take(layout.size(), huge, self.next_near.get()) {
                // Bytes held by one arena fit the address space: no overflow. The
                // page's slots end within its mapping (`slots_for` bounds the size).
                self.from_heap.set(self.from_heap.get() + layout.size());
                self.next_near.set(page.addr().get() + layout.size());
                return Ok(NonNull::slice_from_raw_parts(page, layout.size()));
            }
        }
        if let Some(class) = self.small_class(layout) {
            return match take_small(class) {
                Some(page) => Ok(NonNull::slice_from_raw_parts(page, layout.size())),
                None => Global.allocate(layout),
            };
        }
        self.backing.allocate(layout)
    }

    /// The class of `layout` in [`small_pages`] if this source routes it there.
    fn small_class(&self, layout: Layout) -> Option<usize> {
        if !self.small {
            return None;
        }
        small_pages::class_of(layout.size(), layout.align(), small_page_align())
    }

    /// Gives the memory of the whole OS pages within `len` bytes at `start` back to
    /// the OS where this is the page source of `new()` (on 64-bit Linux, whose small
    /// pages come from the global allocator and large ones from the heap): they stay
    /// mapped and the arena's, stop counting as resident, and read as zeros when next
    /// touched (`MADV_DONTNEED`). Elsewhere it does nothing.
    ///
    /// # Safety
    /// `start..start + len` lies in a page the arena obtained from this source and
    /// holds no block handed out: no one reads its bytes before writing them.
    pub(crate) unsafe fn discard(&self, start: NonNull<u8>, len: usize) {
        #[cfg(onewayalloc_page_heap)]
        if self.heap {
            // SAFETY: the caller's guarantee.
            unsafe { linux::discard(start, len) }
        }
        #[cfg(not(onewayalloc_page_heap))]
        let _ = (start, len);
    }
}

// `grow` and `shrink` are the trait's own (allocate, copy, deallocate, through
// `self`, so each block goes to and comes from its own source); the arena grows
// its pages only by obtaining new ones.
// SAFETY: every block comes from one of three sources, the backing allocator, the
// page heap's spans, or (with `small`) the global allocator directly or through the
// heap's small pages, and goes back to the one it came from: the heap tells its
// pages by their address (inside one of its spans, which no other allocator's block
// can be), and the small pages by their layout (a page of a small class of a source
// with `small` came from the global allocator, and no other page has that layout),
// so a block is never returned to another. Blocks stay valid until returned: the
// heap never hands out or purges a slot that an arena holds, and hands a small page
// it keeps to one arena at a time.
unsafe impl<A: Allocator> Allocator for PageSource<A> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        self.allocate_page(layout, 0)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let held = self.from_heap.get();
        if held >= layout.size()
            && layout.size() >= OS_PAGE_MIN
            && heap_give_back(ptr, layout.size(), false)
        {
            // The page was counted when obtained: no underflow.
            self.from_heap.set(held - layout.size());
            return;
        }
        if let Some(class) = self.small_class(layout) {
            // SAFETY: `layout` is `small_page_layout(class)` (`class_of` accepts that
            // layout only), and a page of a small class of this source came from the
            // heap's small pages or the global allocator with it (`allocate_page`);
            // the caller gives it up (the trait's contract).
            if !unsafe { keep_small(ptr, class) } {
                // SAFETY: the caller's guarantee: `ptr` came from `self` with `layout`,
                // so from the global allocator (directly, or through the small pages
                // kept).
                unsafe { Global.deallocate(ptr, layout) };
            }
            return;
        }
        // SAFETY: the caller's guarantee: `ptr` came from `self` with `layout`, and
        // not from the heap (which did not know it), so from the backing allocator.
        unsafe { self.backing.deallocate(ptr, layout) }
    }
}

/// A page of `size` bytes from the heap, of huge-page spans if `huge`, right at
/// `near` if the heap can (the end of the arena's previous page from the heap, or
/// 0); `None` where there is no heap or the OS refuses the memory.
fn heap_take(size: usize, huge: bool, near: usize) -> Option<NonNull<u8>> {
    #[cfg(onewayalloc_page_heap)]
    return linux::take(size, huge, near);
    #[cfg(not(onewayalloc_page_heap))]
    {
        let _ = (size, huge, near);
        None
    }
}

/// A small page of `class` kept by the heap, if any.
fn take_small(class: usize) -> Option<NonNull<u8>> {
    #[cfg(onewayalloc_page_heap)]
    return linux::take_small(class);
    #[cfg(not(onewayalloc_page_heap))]
    {
        let _ = class;
        None
    }
}

/// Keeps the small page at `page` of `class` in the heap if its bound allows
/// (`true`); else the caller frees it.
///
/// # Safety
/// As `linux::keep_small`: `page` is a block of the global allocator with
/// `small_page_layout(class)` that nothing uses any more.
unsafe fn keep_small(page: NonNull<u8>, class: usize) -> bool {
    #[cfg(onewayalloc_page_heap)]
    // SAFETY: the caller's guarantee, the same contract.
    return unsafe { linux::keep_small(page, class) };
    #[cfg(not(onewayalloc_page_heap))]
    {
        let _ = (page, class);
        false
    }
}

/// The alignment of every page an arena obtains for ordinary requests (those
/// aligned to at most `PAGE_ALIGN`), as `arith` computes it.
fn small_page_align() -> usize {
    use crate::engine::arith::{PAGE_ALIGN, os_page, page_align};
    page_align(PAGE_ALIGN, os_page())
}

/// The layout of every small page of `class` (see [`small_pages::class_of`]).
fn small_page_layout(class: usize) -> Layout {
    Layout::from_size_align(small_pages::class_size(class), small_page_align())
        .expect("a page target at the OS page's alignment is a valid layout")
}

/// Gives the page at `ptr` back to the heap if the heap handed it out (`true`);
/// with `purge`, its memory goes back to the OS at once.
fn heap_give_back(ptr: NonNull<u8>, size: usize, purge: bool) -> bool {
    #[cfg(onewayalloc_page_heap)]
    return linux::give_back(ptr, size, purge);
    #[cfg(not(onewayalloc_page_heap))]
    {
        let _ = (ptr, size, purge);
        false
    }
}

/// The bytes of memory the page heap holds resident for arenas created later: large
/// pages that arenas gave back (by `trim`, by being dropped) and that no arena
/// uses now, and the small pages (64 to 512 KiB) they gave back, kept to spare the
/// next arena its page faults. They are counted in no
/// arena's [`Stats`](crate::Stats), and never exceed [`free_page_limit`] but for the
/// free 1 MiB halves of 2 MiB huge pages whose other half an arena holds (resident
/// with it, counted until the heap next gives pages back). Always 0
/// where the platform has no page heap (see [`OneWayAlloc::new`](crate::OneWayAlloc::new)).
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc_bytes(3 << 20); // a large page, from the page heap on 64-bit Linux
/// drop(arena);
/// assert!(onewayalloc::free_page_bytes() <= onewayalloc::free_page_limit());
/// onewayalloc::release_free_pages();
/// ```
pub fn free_page_bytes() -> usize {
    #[cfg(onewayalloc_page_heap)]
    return linux::free_resident_bytes();
    #[cfg(not(onewayalloc_page_heap))]
    0
}

/// Gives every byte counted by [`free_page_bytes`] back to the system at once
/// (`MADV_DONTNEED`, and `munmap` of the spans left empty) and returns how many
/// bytes that was. Pages that live arenas hold, used or not, are not touched: an
/// arena's [`trim`](crate::OneWayAlloc::trim) returns its unused pages first.
/// [`Pool::clear`](crate::Pool::clear) calls it.
///
/// # Examples
/// ```
/// let mut arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc_bytes(3 << 20);
/// arena.reset();
/// arena.trim(0); // the large page goes back to the page heap
/// onewayalloc::release_free_pages(); // and from there to the system
/// assert_eq!(onewayalloc::free_page_bytes(), 0);
/// ```
pub fn release_free_pages() -> usize {
    #[cfg(onewayalloc_page_heap)]
    return linux::release_all();
    #[cfg(not(onewayalloc_page_heap))]
    0
}

/// Sets the most free memory the page heap keeps resident for later arenas (what
/// [`free_page_bytes`] reports: large pages and, within a quarter of it and at most
/// 16 MiB, small ones), process-wide; what is kept beyond the new bound is given
/// back to the system at once. 0 keeps nothing: every large page an arena
/// gives back goes back to the system. The default is [`DEFAULT_FREE_PAGE_LIMIT`].
///
/// # Examples
/// ```
/// onewayalloc::set_free_page_limit(16 << 20);
/// assert_eq!(onewayalloc::free_page_limit(), 16 << 20);
/// assert!(onewayalloc::free_page_bytes() <= 16 << 20);
/// # onewayalloc::set_free_page_limit(onewayalloc::DEFAULT_FREE_PAGE_LIMIT);
/// ```
pub fn set_free_page_limit(bytes: usize) {
    #[cfg(onewayalloc_page_heap)]
    linux::set_limit(bytes);
    #[cfg(not(onewayalloc_page_heap))]
    LIMIT_WITHOUT_HEAP.store(bytes, core::sync::atomic::Ordering::Relaxed);
}

/// The setting of [`set_free_page_limit`] where there is no page heap (it bounds
/// nothing there, and reads back as set).
#[cfg(not(onewayalloc_page_heap))]
static LIMIT_WITHOUT_HEAP: core::sync::atomic::AtomicUsize =
    core::sync::atomic::AtomicUsize::new(DEFAULT_FREE_PAGE_LIMIT);

/// Runs the page heap's decay now: every [`FREE_PAGE_DECAY_EPOCH`] that passed since
/// the last call into the heap gives back half of the free memory no arena took
/// meanwhile. Arenas taking and returning large pages drive the decay by
/// themselves; a process that goes quiet can call this from a timer (say every
/// second) so that what it keeps goes back within seconds. `Pool::decay` calls it
/// too.
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc_bytes(8 << 20);
/// drop(arena);
/// let kept = onewayalloc::free_page_bytes();
/// onewayalloc::decay_free_pages(); // within the first epoch: nothing goes yet
/// assert!(onewayalloc::free_page_bytes() <= kept);
/// ```
pub fn decay_free_pages() {
    #[cfg(onewayalloc_page_heap)]
    linux::decay_now();
}

/// The most free memory the page heap keeps resident (see [`set_free_page_limit`]).
///
/// # Examples
/// ```
/// assert_eq!(onewayalloc::free_page_limit(), onewayalloc::DEFAULT_FREE_PAGE_LIMIT);
/// ```
pub fn free_page_limit() -> usize {
    #[cfg(onewayalloc_page_heap)]
    return linux::limit();
    #[cfg(not(onewayalloc_page_heap))]
    LIMIT_WITHOUT_HEAP.load(core::sync::atomic::Ordering::Relaxed)
}

/// The spans the page heap has mapped now: their number and bytes (slots only).
/// For tests and measurements.
#[doc(hidden)]
pub fn mapped_spans() -> (usize, usize) {
    #[cfg(onewayalloc_page_heap)]
    return linux::mapped();
    #[cfg(not(onewayalloc_page_heap))]
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::arith::{first_page_layout, os_page};

    /// The layout the small pages are freed with is the one arenas obtain them
    /// with: the first page's, and the next three page targets at its alignment.
    #[test]
    fn small_pages_have_the_layout_arenas_obtain_them_with() {
        let first = first_page_layout(0, os_page()).unwrap();
        assert_eq!(small_page_layout(0), first);
        for class in 0..small_pages::CLASSES {
            let layout = small_page_layout(class);
            assert_eq!(layout.size(), 64 << (10 + class));
            assert_eq!(layout.align(), first.align());
            assert_eq!(
                small_pages::class_of(layout.size(), layout.align(), small_page_align()),
                Some(class)
            );
        }
    }
}
