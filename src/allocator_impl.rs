//! `Allocator` for `&OneWayAlloc`, so `Vec`, `Box` and `hashbrown::HashMap` live in
//! the arena.
//!
//! It is implemented for the shared reference only, never for `OneWayAlloc` by
//! value: a collection holding the arena itself could outlive a `reset` through
//! `&mut`, whereas a collection holding `&OneWayAlloc` borrows the arena, so the
//! compiler rejects any `reset` (or drop) while it is alive.

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;
use crate::arith::{Known, dangling};

// SAFETY: blocks come from pages the arena owns and stay valid, unmoved, until
// `reset` or drop, both of which need the arena exclusively and so cannot happen
// while a `&OneWayAlloc` (and with it any block handed out through it) is in use.
// Copies of the reference all allocate from the same arena. `deallocate` releases
// nothing but the most recent block, `grow` and `shrink` keep the leading bytes.
unsafe impl<A: Allocator> Allocator for &OneWayAlloc<A> {
    /// Bumps. A zero-sized layout gets an aligned pointer and consumes at most its
    /// alignment padding; it never obtains a page and never fails.
    #[inline(always)]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = self.core().alloc::<AllocError>(layout, Known::NOTHING)?;
        Ok(NonNull::slice_from_raw_parts(block, layout.size()))
    }

    /// Rolls the arena back over the block if it is the most recent one; otherwise
    /// does nothing (the bytes come back at reset).
    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: the trait's contract: `ptr` is a live block of this arena with `layout`.
        unsafe { self.core().dealloc(ptr, layout) }
    }

    /// Extends the most recent block in place when the current page has room (an
    /// inline check, then the general path out of line); otherwise allocates and
    /// copies.
    #[inline(always)]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            // SAFETY: the trait's contract: `ptr` is a live block of this arena with
            // `old_layout`, and `new_layout.size() >= old_layout.size()`.
            let grown = unsafe { self.core().grow_in_place(ptr, old_layout, new_layout) };
            if let Some(block) = grown {
                return Ok(NonNull::slice_from_raw_parts(block, new_layout.size()));
            }
        }
        // SAFETY: the trait's contract: `ptr` is a live block of this arena with `old_layout`.
        unsafe { self.resize_block(ptr, old_layout, new_layout) }
    }

    /// Like `grow`, then zeroes the new tail through a raw pointer (the arena's
    /// memory is never viewed as `&mut [u8]` before it is initialized).
    #[inline]
    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the trait's contract, as for `grow`.
        let block = unsafe { self.grow(ptr, old_layout, new_layout)? };
        let old = old_layout.size();
        // SAFETY: the block holds `new_layout.size() >= old` bytes (the trait's
        // contract), so the tail `old..new` is inside it.
        unsafe {
            ptr::write_bytes(
                block.cast::<u8>().as_ptr().add(old),
                0,
                new_layout.size() - old,
            )
        };
        Ok(block)
    }

    /// Stays in place (releasing the tail if it is the most recent block), unless a
    /// larger alignment forces a move.
    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the trait's contract: `ptr` is a live block of this arena with `old_layout`.
        unsafe { self.resize_block(ptr, old_layout, new_layout) }
    }
}

impl<A: Allocator> OneWayAlloc<A> {
    /// `grow`, `grow_zeroed` and `shrink` in one: a resize to zero bytes releases the
    /// block (if it is the most recent) and returns a dangling pointer.
    ///
    /// # Safety
    /// `ptr` must be a live block of this arena allocated with `old`.
    #[inline]
    unsafe fn resize_block(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        let block = if new.size() == 0 {
            // SAFETY: forwarded from the caller.
            unsafe { self.core().dealloc(ptr, old) };
            dangling(new.align())
        } else {
            // SAFETY: forwarded from the caller; `new.size()` is not zero.
            unsafe { self.core().resize::<AllocError>(ptr, old, new)? }
        };
        Ok(NonNull::slice_from_raw_parts(block, new.size()))
    }
}
