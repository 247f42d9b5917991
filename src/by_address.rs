//! Freeing and growing a block knowing only its address: what the C API
//! (`capi/`, Netdata's `onewayalloc_freez` and `onewayalloc_doublesize`) needs,
//! because C passes no size, while `Allocator::deallocate` and `grow` need the exact
//! layout a block was allocated with.
//!
//! Hidden from the documentation: Rust code knows its layouts and uses the
//! `Allocator` calls. The C API must not guess a layout, so:
//! - in the sanitizer mode these calls look the block up in the arena's record of
//!   outstanding blocks, which holds its exact layout, and refuse an address the
//!   record does not hold;
//! - in the page mode nothing is freed one by one, and growing needs only the bytes
//!   to keep: the most recent block grows in place when it ends exactly `keep`
//!   bytes after its start and its page has room, any other block is copied.

use core::alloc::Layout;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;
use crate::engine::arith::PAGE_ALIGN;

/// Why a by-address call was refused (see [`OneWayAlloc::grow_by_address`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ByAddressError {
    /// Sanitizer mode only: the arena holds no outstanding block that starts at this
    /// address (freed already, released by a reset or a scope, from another arena, or
    /// not the start of a block).
    NotHeld,
    /// The block is shorter than the bytes asked to be kept. The sanitizer mode
    /// always tells; the page mode tells when the block is in the current page.
    KeepExceedsBlock {
        /// The size the block was allocated with (sanitizer mode), or the bytes
        /// handed out from its start on, its own and those of the blocks after it
        /// (page mode; for the most recent block that is its size).
        block_size: usize,
    },
    /// The new size overflows, or the limit or the backing allocator refused the
    /// block. The old block is untouched.
    Alloc,
}

impl From<AllocError> for ByAddressError {
    fn from(_: AllocError) -> Self {
        ByAddressError::Alloc
    }
}

impl<A: Allocator> OneWayAlloc<A> {
    /// Frees the block that starts at `block`, knowing only its address: in the
    /// sanitizer mode it is returned to the backing allocator at once, with the
    /// layout recorded when it was allocated; in the page mode nothing happens (its
    /// bytes come back at reset), and any address is accepted.
    ///
    /// # Errors
    /// In the sanitizer mode, [`ByAddressError::NotHeld`] if the arena holds no
    /// outstanding block starting at `block`; nothing is freed then.
    ///
    /// # Safety
    /// In the sanitizer mode the block is gone afterwards: no pointer or reference
    /// into it may be used again.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let block = arena.alloc_bytes(32).as_mut_ptr().cast::<u8>();
    /// let block = core::ptr::NonNull::new(block).unwrap();
    /// // SAFETY: the block is not used again.
    /// assert_eq!(unsafe { arena.free_by_address(block) }, Ok(()));
    /// assert_eq!(arena.stats().used, if onewayalloc::SEPARATE_BLOCKS { 0 } else { 32 });
    /// ```
    #[doc(hidden)]
    pub unsafe fn free_by_address(&self, block: NonNull<u8>) -> Result<(), ByAddressError> {
        #[cfg(onewayalloc_separate_blocks)]
        {
            // SAFETY: forwarded from the caller: the block is not used again.
            if unsafe { self.core().release_at(block.addr().get()) } {
                Ok(())
            } else {
                Err(ByAddressError::NotHeld)
            }
        }
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            let _ = block;
            Ok(())
        }
    }

    /// Returns a 16-byte-aligned block of `new_size` bytes (a `new_size` of 0 is
    /// served as 1 byte) whose first `keep` bytes are those at `block`: Netdata's
    /// `onewayalloc_doublesize` with `new_size = 2 * keep`.
    ///
    /// In the page mode, when `block` is the most recent block, ends exactly `keep`
    /// bytes after its start and its page has room, it grows in place and `block`
    /// itself is returned; otherwise the bytes are copied to a new block (leaving the
    /// current page by the growing-buffer rule of SPEC §1.3 when `block` is the most
    /// recent block), and the old block stays valid until reset. In the sanitizer
    /// mode the block is resized through the backing allocator with the layout
    /// recorded for it, and the old address is no longer valid.
    ///
    /// # Errors
    /// [`ByAddressError::Alloc`] if the new block cannot be had;
    /// [`KeepExceedsBlock`](ByAddressError::KeepExceedsBlock) when the block is
    /// shorter than `keep` (always in the sanitizer mode, for blocks of the current
    /// page in the page mode); in the sanitizer mode also
    /// [`NotHeld`](ByAddressError::NotHeld) for an address the arena holds no block
    /// at. The old block is untouched on error.
    ///
    /// # Panics
    /// If `new_size < keep`.
    ///
    /// # Safety
    /// `block` must be the start of a block of this arena, still valid (allocated by
    /// any call since the last reset and, in the sanitizer mode, not freed), at least
    /// `keep` bytes long, with no reference to it used afterwards: when the call
    /// succeeds, only the returned pointer may be used for the block in the sanitizer
    /// mode. (In the sanitizer mode an address the arena does not hold, or a `keep`
    /// beyond its block, is reported as an error rather than being undefined
    /// behaviour; so is, in the page mode, a `keep` that runs past the most recent
    /// block.)
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let series = arena.alloc_bytes(8).as_mut_ptr().cast::<u8>();
    /// // SAFETY: 8 bytes are valid for writes.
    /// unsafe { series.copy_from_nonoverlapping(b"abcdefgh".as_ptr(), 8) };
    /// let series = core::ptr::NonNull::new(series).unwrap();
    /// // SAFETY: `series` starts a block of 8 bytes of this arena, not used again.
    /// let grown = unsafe { arena.grow_by_address(series, 8, 16) }.unwrap();
    /// // SAFETY: the first 8 of the 16 bytes were kept.
    /// assert_eq!(unsafe { core::slice::from_raw_parts(grown.as_ptr(), 8) }, b"abcdefgh");
    /// if !onewayalloc::SEPARATE_BLOCKS {
    ///     assert_eq!(grown, series); // the most recent block grew in place
    /// }
    /// ```
    #[doc(hidden)]
    pub unsafe fn grow_by_address(
        &self,
        block: NonNull<u8>,
        keep: usize,
        new_size: usize,
    ) -> Result<NonNull<u8>, ByAddressError> {
        assert!(
            new_size >= keep,
            "onewayalloc: grow_by_address to {new_size} bytes, fewer than the {keep} to keep"
        );
        let new = Layout::from_size_align(new_size.max(1), PAGE_ALIGN).map_err(|_| AllocError)?;
        #[cfg(onewayalloc_separate_blocks)]
        {
            let (start, recorded) = self
                .core()
                .recorded_block(block.addr().get())
                .ok_or(ByAddressError::NotHeld)?;
            if recorded.size() < keep {
                return Err(ByAddressError::KeepExceedsBlock {
                    block_size: recorded.size(),
                });
            }
            // SAFETY: the record holds `start` as a live block of this arena with
            // layout `recorded`; `new.size()` is at least 1. The backing allocator's
            // `grow`/`shrink` keep `min(recorded, new) >= keep` bytes.
            Ok(unsafe { self.core().resize::<AllocError>(start, recorded, new) }?)
        }
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            // A block in the current page cannot be longer than the bytes handed out
            // from its start: a larger `keep` is the caller's error, reported here
            // (the copy would otherwise overlap the new block).
            if let Some(block_size) = self.core().handed_out_from(block.addr().get()) {
                if keep > block_size {
                    return Err(ByAddressError::KeepExceedsBlock { block_size });
                }
            }
            // `keep <= new.size()`, which `Layout` accepted with the same alignment.
            let old = Layout::from_size_align(keep, PAGE_ALIGN).map_err(|_| AllocError)?;
            // SAFETY: by the caller's guarantee `block` starts a live block of this
            // arena of at least `keep` bytes; its first `keep` bytes are a live range
            // of the arena starting there, which is all `resize` relies on: it treats
            // the range as the most recent block only if it ends at the cursor (then
            // it lies in the current page, as `last_block` explains), and otherwise
            // only reads it. `new.size()` is at least 1.
            Ok(unsafe { self.core().resize::<AllocError>(block, old, new) }?)
        }
    }

    /// The free bytes of the current page, `(cursor, end)`, for a caller that bumps
    /// blocks out of them itself: the C API's inline `onewayalloc_mallocz`. Such a
    /// caller hands out what it bumped with [`claim_until`](Self::claim_until)
    /// before any other call on the arena, which knows nothing of those blocks
    /// until then. Both pointers carry the page's provenance. `None` in the
    /// sanitizer mode, where there are no pages.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// if let Some((cursor, end)) = arena.free_span() {
    ///     assert!(cursor < end);
    ///     // SAFETY: 8 of the free bytes, bumped by hand: at or before the end.
    ///     let after = unsafe { cursor.add(8) };
    ///     assert!(arena.claim_until(after.addr().get()));
    ///     assert_eq!(arena.stats().used, 8);
    /// }
    /// ```
    #[doc(hidden)]
    pub fn free_span(&self) -> Option<(NonNull<u8>, NonNull<u8>)> {
        #[cfg(onewayalloc_separate_blocks)]
        {
            None
        }
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            Some(self.core().free_span())
        }
    }

    /// Hands out the free bytes of the current page up to `addr`, which a caller
    /// bumped blocks out of after [`free_span`](Self::free_span): the cursor moves
    /// to `addr`. Returns `false`, and changes nothing, if `addr` is not between
    /// the cursor and the current page's end (always in the sanitizer mode).
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert!(!arena.claim_until(0));
    /// if let Some((cursor, end)) = arena.free_span() {
    ///     let (cursor, end) = (cursor.addr().get(), end.addr().get());
    ///     assert!(arena.claim_until(cursor));
    ///     assert_eq!(arena.stats().used, 0);
    ///     assert!(!arena.claim_until(end + 1), "past the page end");
    ///     assert!(arena.claim_until(cursor + 100));
    ///     assert!(!arena.claim_until(cursor + 99), "behind the cursor");
    ///     assert_eq!(arena.stats().used, 100);
    ///     assert!(arena.claim_until(end));
    ///     assert_eq!(arena.free_span().map(|(c, e)| e.addr().get() - c.addr().get()), Some(0));
    /// }
    /// ```
    #[doc(hidden)]
    pub fn claim_until(&self, addr: usize) -> bool {
        #[cfg(onewayalloc_separate_blocks)]
        {
            let _ = addr;
            false
        }
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            self.core().claim_until(addr)
        }
    }
}
