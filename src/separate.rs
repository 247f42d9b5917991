//! The sanitizer mode: every allocation is its own block of the backing allocator.
//!
//! On when the crate is built with `-Zsanitizer=address` or with the cargo feature
//! `separate-blocks` (see `build.rs`). Out-of-bounds and use-after-free accesses then
//! hit the edges of real blocks, where AddressSanitizer, Valgrind and Miri see them,
//! instead of landing silently inside a page. Memory is released only by
//! deallocating each block (the `Allocator` trait's `deallocate`, which `Vec`, `Box`
//! and `HashMap` call when they drop); `reset` releases nothing, and dropping the
//! arena does not release blocks still outstanding, so a leak checker reports them.

use core::alloc::Layout;
use core::cell::Cell;
use core::iter;
use core::ptr::NonNull;

use allocator_api2::alloc::Allocator;

use crate::arith::{self, dangling};
use crate::failure::Failure;
use crate::stats::{PageInfo, Stats};

/// Saved counters (see [`SeparateBlocks::restore`]).
#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    requested: usize,
    allocations: usize,
}

/// The allocation state of one arena in sanitizer mode: counters only. Blocks are
/// owned by whoever holds them, as with any allocator.
pub(crate) struct SeparateBlocks<A: Allocator> {
    live_bytes: Cell<usize>,
    requested: Cell<usize>,
    allocations: Cell<usize>,
    backing: A,
}

impl<A: Allocator> SeparateBlocks<A> {
    /// Checks `size_hint` as the page policy would (so bad input fails the same way
    /// in both modes) and obtains nothing.
    pub(crate) fn new<E: Failure>(size_hint: usize, backing: A) -> Result<Self, E> {
        arith::first_page_layout(size_hint, page_size::get()).ok_or_else(E::overflow)?;
        Ok(SeparateBlocks {
            live_bytes: Cell::new(0),
            requested: Cell::new(0),
            allocations: Cell::new(0),
            backing,
        })
    }

    /// The backing allocator.
    pub(crate) fn backing(&self) -> &A {
        &self.backing
    }

    /// Obtains a block of its own for `layout`.
    pub(crate) fn alloc<E: Failure>(&self, layout: Layout) -> Result<NonNull<u8>, E> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        // A request too large for a page is an overflow in both modes.
        arith::new_page_layout(0, layout, page_size::get()).ok_or_else(E::overflow)?;
        let block = self
            .backing
            .allocate(layout)
            .map_err(|_| E::refused(layout))?;
        self.live_bytes.set(self.live_bytes.get() + layout.size());
        self.allocations.set(self.allocations.get() + 1);
        self.requested.set(self.requested.get() + layout.size());
        Ok(block.cast())
    }

    /// Returns the block to the backing allocator.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `layout` and still be live.
    pub(crate) unsafe fn dealloc(&self, block: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // SAFETY: the caller's guarantee; non-empty blocks come from `backing`
            // with exactly `layout`.
            unsafe { self.backing.deallocate(block, layout) };
            self.live_bytes.set(self.live_bytes.get() - layout.size());
        }
    }

    /// Resizes the block through the backing allocator's `grow` or `shrink`.
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
        if old.size() == 0 {
            return self.alloc(new);
        }
        arith::new_page_layout(0, new, page_size::get()).ok_or_else(E::overflow)?;
        // SAFETY: the caller's guarantee: `block` is a live block of `backing` with
        // `old`; `grow` gets a size at least `old`'s and `shrink` one at most.
        let resized = unsafe {
            if new.size() >= old.size() {
                self.backing.grow(block, old, new)
            } else {
                self.backing.shrink(block, old, new)
            }
        }
        .map_err(|_| E::refused(new))?
        .cast();
        self.live_bytes
            .set(self.live_bytes.get() - old.size() + new.size());
        let grown = new.size().saturating_sub(old.size());
        self.requested.set(self.requested.get() + grown);
        Ok(resized)
    }

    /// Releases nothing: blocks are released one by one. Only the counters of
    /// "since the last reset" start again.
    pub(crate) fn reset(&mut self) {
        self.requested.set(0);
        self.allocations.set(0);
    }

    /// The counters of "since the last reset", to restore after a scope (blocks are
    /// still released one by one).
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            requested: self.requested.get(),
            allocations: self.allocations.get(),
        }
    }

    /// Restores the counters; releases nothing.
    ///
    /// # Safety
    /// None needed in this mode; `unsafe` to match the page mode's contract.
    pub(crate) unsafe fn restore(&self, checkpoint: Checkpoint) {
        self.requested.set(checkpoint.requested);
        self.allocations.set(checkpoint.allocations);
    }

    /// Releases nothing: blocks still outstanding stay allocated, so a leak checker
    /// reports them.
    ///
    /// # Safety
    /// None needed in this mode; `unsafe` to match the page mode's contract.
    pub(crate) unsafe fn release_pages(&mut self) {}

    /// No pages to trim in this mode.
    pub(crate) fn trim(&mut self, _keep: usize) {}

    /// The counters: no pages; `capacity` and `used` are the bytes of live blocks.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            pages: 0,
            capacity: self.live_bytes.get(),
            used: self.live_bytes.get(),
            requested: self.requested.get(),
            allocations: self.allocations.get(),
            page_allocations: 0,
        }
    }

    /// No pages in this mode.
    pub(crate) fn pages(&self) -> impl Iterator<Item = PageInfo> + '_ {
        iter::empty()
    }
}
