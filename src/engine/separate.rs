//! The sanitizer mode: every allocation is its own block of the backing allocator.
//!
//! On when the crate is built with `-Zsanitizer=address` or with the cargo feature
//! `separate-blocks` (see `build.rs`). Out-of-bounds and use-after-free accesses then
//! hit the edges of real blocks, where AddressSanitizer, Valgrind and Miri see them,
//! instead of landing silently inside a page.
//!
//! The arena keeps a record of the blocks still outstanding (SPEC §1.7: in this mode,
//! and only here, bookkeeping outside page headers is allowed; it lives in the
//! global allocator). `deallocate` releases its block at once; `reset`, the rollback
//! at the end of a scope, and drop release every block outstanding at that point.
//! A pointer kept past any of them is then reported as a use-after-free, memory
//! stays bounded however long the program runs, and nothing is left for a leak
//! checker to report.
//!
//! Blocks are numbered in allocation order, from 0 after each reset; a scope's
//! checkpoint is the next number, and its rollback releases every block numbered
//! from there on.

use alloc::collections::BTreeMap;
use core::alloc::Layout;
use core::cell::{Cell, RefCell};
use core::iter;
use core::ptr::NonNull;

use allocator_api2::alloc::Allocator;
use hashbrown::HashMap;

use crate::engine::arith::{self, Known, Limit, dangling};
use crate::engine::failure::Failure;
use crate::engine::page_heap::HeapUse;
use crate::stats::{PageInfo, Stats};

/// The first block number a rollback releases (see [`SeparateBlocks::restore`]).
#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    next: u64,
}

/// One outstanding block: where it is and the layout it was obtained with.
#[derive(Clone, Copy)]
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

/// The blocks outstanding, by number and by address.
///
/// Invariant: `by_number` and `by_addr` hold the same blocks, each a live block
/// obtained from the arena's backing allocator with its recorded layout, and every
/// number is below `next`.
#[derive(Default)]
struct Record {
    by_number: BTreeMap<u64, Block>,
    by_addr: HashMap<usize, u64>,
    next: u64,
}

impl Record {
    /// Records a block just obtained, under the next number.
    fn insert(&mut self, block: Block) {
        let number = self.next;
        // A u64 numbers every allocation since the last reset: at one per
        // nanosecond it would take 584 years to wrap, so saturating never binds.
        self.next = self.next.saturating_add(1);
        self.by_number.insert(number, block);
        self.by_addr.insert(block.ptr.addr().get(), number);
    }

    /// Forgets the block at `addr` and returns it.
    fn remove(&mut self, addr: usize) -> Option<Block> {
        let number = self.by_addr.remove(&addr)?;
        self.by_number.remove(&number)
    }

    /// Forgets the most recent block numbered `from` or above and returns it.
    fn pop_from(&mut self, from: u64) -> Option<Block> {
        let (&number, _) = self.by_number.range(from..).next_back()?;
        let block = self.by_number.remove(&number)?;
        self.by_addr.remove(&block.ptr.addr().get());
        Some(block)
    }

    /// Moves the record of the block at `old_addr` to `block`, keeping its number.
    fn replace(&mut self, old_addr: usize, block: Block) {
        if let Some(number) = self.by_addr.remove(&old_addr) {
            self.by_addr.insert(block.ptr.addr().get(), number);
            self.by_number.insert(number, block);
        }
    }
}

/// The allocation state of one arena in sanitizer mode.
///
/// Invariant: `live_bytes` is the total size of the blocks in `record`.
pub(crate) struct SeparateBlocks<A: Allocator> {
    record: RefCell<Record>,
    live_bytes: Cell<usize>,
    /// The most `live_bytes` may reach.
    limit: Limit,
    backing: A,
}

impl<A: Allocator> SeparateBlocks<A> {
    /// Checks `size_hint` as the page policy would (so bad input fails the same way
    /// in both modes) and obtains nothing.
    /// Every block comes from `backing` in this mode: `_heap` is ignored.
    pub(crate) fn new<E: Failure>(size_hint: usize, backing: A, _heap: HeapUse) -> Result<Self, E> {
        arith::first_page_layout(size_hint, arith::os_page()).ok_or_else(E::overflow)?;
        Ok(SeparateBlocks {
            record: RefCell::new(Record::default()),
            live_bytes: Cell::new(0),
            limit: Limit::none(),
            backing,
        })
    }

    /// The backing allocator.
    pub(crate) fn backing(&self) -> &A {
        &self.backing
    }

    /// Whether `more` bytes of blocks keep the outstanding total within the limit.
    fn within_limit(&self, more: usize) -> bool {
        self.limit.admits(self.live_bytes.get(), more)
    }

    /// Obtains a block of its own for `layout` and records it (what is known about
    /// the layout at compile time does not matter here).
    pub(crate) fn alloc<E: Failure>(
        &self,
        layout: Layout,
        _known: Known,
    ) -> Result<NonNull<u8>, E> {
        if layout.size() == 0 {
            return Ok(dangling(layout.align()));
        }
        // A request too large for a page is an overflow in both modes.
        arith::new_page_layout(0, layout, arith::os_page()).ok_or_else(E::overflow)?;
        if !self.within_limit(layout.size()) {
            return Err(E::refused(layout));
        }
        let ptr = self
            .backing
            .allocate(layout)
            .map_err(|_| E::refused(layout))?
            .cast::<u8>();
        // Read after the call: the backing allocator may have used this arena.
        if !self.within_limit(layout.size()) {
            // SAFETY: just obtained from `backing` with `layout`, used by nothing.
            unsafe { self.backing.deallocate(ptr, layout) };
            return Err(E::refused(layout));
        }
        self.record.borrow_mut().insert(Block { ptr, layout });
        // Within the limit, checked above: no overflow.
        self.live_bytes.set(self.live_bytes.get() + layout.size());
        Ok(ptr)
    }

    /// Returns the block to the backing allocator at once.
    ///
    /// # Safety
    /// `block` must have been allocated by this arena with `layout` and still be live.
    ///
    /// # Panics
    /// If the arena holds no such block (it was freed already, by `deallocate`,
    /// `reset` or a scope's rollback, or comes from another arena): a double free
    /// that this mode exists to report.
    pub(crate) unsafe fn dealloc(&self, block: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        let addr = block.addr().get();
        debug_assert!(
            self.recorded_block(addr)
                .is_none_or(|(_, recorded)| recorded == layout)
        );
        // SAFETY: the caller's guarantee: the block is not used after `deallocate`.
        if !unsafe { self.release_at(addr) } {
            panic!(
                "onewayalloc: deallocate of a block this arena does not hold (freed twice, \
                 released by reset or a scope, or from another arena)"
            );
        }
    }

    /// The outstanding block that starts at `addr`, if the arena holds one: its
    /// pointer (with the provenance the backing allocator gave it) and the layout it
    /// was obtained with. What the C API's by-address calls need, since C passes no
    /// size (see `crate::by_address`).
    pub(crate) fn recorded_block(&self, addr: usize) -> Option<(NonNull<u8>, Layout)> {
        let record = self.record.borrow();
        let number = record.by_addr.get(&addr)?;
        record
            .by_number
            .get(number)
            .map(|block| (block.ptr, block.layout))
    }

    /// Releases the outstanding block that starts at `addr`, at once; `false` (and
    /// nothing happens) if the arena holds no block there.
    ///
    /// # Safety
    /// No pointer into that block may be used afterwards.
    pub(crate) unsafe fn release_at(&self, addr: usize) -> bool {
        let recorded = self.record.borrow_mut().remove(addr);
        match recorded {
            Some(block) => {
                self.release(block);
                true
            }
            None => false,
        }
    }

    /// Returns a block, no longer recorded, to the backing allocator.
    fn release(&self, block: Block) {
        // The block was counted when recorded: no underflow.
        self.live_bytes
            .set(self.live_bytes.get() - block.layout.size());
        // SAFETY: the record held the block, so it is a live block obtained from
        // `backing` with this layout; it was just removed from the record, so it is
        // released once.
        unsafe { self.backing.deallocate(block.ptr, block.layout) };
    }

    /// Grows the block into a new block of the backing allocator (the limit checked
    /// before and after the call), or shrinks it through the backing allocator's
    /// `shrink`.
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
            return self.alloc(new, Known::NOTHING);
        }
        arith::new_page_layout(0, new, arith::os_page()).ok_or_else(E::overflow)?;
        let growth = new.size().saturating_sub(old.size());
        if !self.within_limit(growth) {
            return Err(E::refused(new));
        }
        let resized = if new.size() >= old.size() {
            // Not the backing allocator's `grow`: the backing allocator may use
            // this arena during the call, so the limit is checked again once it
            // returns, and a refusal then must leave `block` as it was. A new
            // block, a copy and a release do that (and a grown block always
            // moves, so a stale pointer to the old one is a use after free).
            let grown = self
                .backing
                .allocate(new)
                .map_err(|_| E::refused(new))?
                .cast::<u8>();
            if !self.within_limit(growth) {
                // SAFETY: just obtained from `backing` with `new`, used by nothing.
                unsafe { self.backing.deallocate(grown, new) };
                return Err(E::refused(new));
            }
            // SAFETY: the caller's guarantee: `block` is live for `old.size()`
            // bytes; `grown` is a new block of `new.size() >= old.size()` bytes,
            // so the two do not overlap. `block` is then returned once, with the
            // layout it was obtained with, and not used again.
            unsafe {
                core::ptr::copy_nonoverlapping(block.as_ptr(), grown.as_ptr(), old.size());
                self.backing.deallocate(block, old);
            }
            grown
        } else {
            // SAFETY: the caller's guarantee: `block` is a live block of `backing`
            // with `old`; `shrink` gets a size at most `old`'s.
            unsafe { self.backing.shrink(block, old, new) }
                .map_err(|_| E::refused(new))?
                .cast::<u8>()
        };
        let old_addr = block.addr().get();
        self.record.borrow_mut().replace(
            old_addr,
            Block {
                ptr: resized,
                layout: new,
            },
        );
        // `old` was counted in `live_bytes`, and the new total is the size of live
        // blocks: neither step can wrap.
        self.live_bytes
            .set(self.live_bytes.get() - old.size() + new.size());
        Ok(resized)
    }

    /// Releases every block numbered `from` or above, most recent first. The
    /// record is not borrowed while the backing allocator runs.
    fn release_from(&self, from: u64) {
        loop {
            let block = {
                let mut record = self.record.borrow_mut();
                match record.pop_from(from) {
                    Some(block) => block,
                    None => {
                        record.next = from;
                        if from == 0 {
                            // Empty now: dropping the hash table's deleted slots keeps
                            // it from building up across resets.
                            record.by_addr.clear();
                        }
                        return;
                    }
                }
            };
            self.release(block);
        }
    }

    /// Releases every outstanding block.
    pub(crate) fn reset(&mut self) {
        self.release_from(0);
    }

    /// The number of the next block, to release from at the end of a scope.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            next: self.record.borrow().next,
        }
    }

    /// Releases every block allocated since `checkpoint`.
    ///
    /// # Safety
    /// No block allocated after `checkpoint` may be used again.
    pub(crate) unsafe fn restore(&self, checkpoint: Checkpoint) {
        self.release_from(checkpoint.next);
    }

    /// Releases every outstanding block.
    ///
    /// # Safety
    /// Called once, as the arena is dropped: no block may be used afterwards.
    pub(crate) unsafe fn release_pages(&mut self) {
        self.release_from(0);
    }

    /// No pages to trim in this mode.
    pub(crate) fn trim(&mut self, _keep: usize) {}

    /// Nothing to give back: no page has free room.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn discard_free_room(&mut self) {}

    /// The limit on the bytes of outstanding blocks.
    pub(crate) fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The figures: no pages; `capacity` and `used` are the bytes of outstanding
    /// blocks.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            pages: 0,
            capacity: self.live_bytes.get(),
            used: self.live_bytes.get(),
            page_allocations: 0,
            pending_drops: 0,
        }
    }

    /// No pages in this mode.
    pub(crate) fn pages(&self) -> impl Iterator<Item = PageInfo> + '_ {
        iter::empty()
    }
}
