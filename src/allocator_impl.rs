//! `Allocator` for `&OneWayAlloc`, so `Vec`, `Box` and `hashbrown::HashMap` live in
//! the arena: allocator-api2 0.2's trait always (std's own under the `nightly`
//! feature), and allocator-api2 0.4's with the feature `allocator-api2-04`.
//!
//! It is implemented for the shared reference only, never for `OneWayAlloc` by
//! value: a collection holding the arena itself could outlive a `reset` through
//! `&mut`, whereas a collection holding `&OneWayAlloc` borrows the arena, so the
//! compiler rejects any `reset` (or drop) while it is alive.
//!
//! Both traits have the same methods and contracts. Their bodies are written once,
//! below, generic over the trait's error type (a [`Failure`]); each impl forwards to
//! them, and everything is inlined, so both compile to the same code.

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;
use crate::engine::arith::{Known, dangling};
use crate::engine::failure::Failure;

impl<A: Allocator> OneWayAlloc<A> {
    /// `Allocator::allocate`: bumps. A zero-sized layout gets an aligned pointer and
    /// consumes at most its alignment padding; it never obtains a page and never
    /// fails.
    #[inline(always)]
    fn trait_allocate<E: Failure>(&self, layout: Layout) -> Result<NonNull<[u8]>, E> {
        let block = self.core().alloc::<E>(layout, Known::NOTHING)?;
        Ok(NonNull::slice_from_raw_parts(block, layout.size()))
    }

    /// `Allocator::deallocate`: rolls the arena back over the block if it is the most
    /// recent one; otherwise does nothing (the bytes come back at reset).
    ///
    /// # Safety
    /// The trait's contract: `ptr` is a live block of this arena with `layout`.
    #[inline]
    unsafe fn trait_deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { self.core().dealloc(ptr, layout) }
    }

    /// `Allocator::grow`: extends the most recent block in place when the current
    /// page has room, and moves any other block to a fresh block bumped from the
    /// current page (both inline); otherwise takes the general path out of line,
    /// which selects a page (for the most recent block by the growing-buffer rule).
    ///
    /// # Safety
    /// The trait's contract: `ptr` is a live block of this arena with `old_layout`,
    /// and `new_layout.size() >= old_layout.size()`.
    #[inline(always)]
    unsafe fn trait_grow<E: Failure>(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, E> {
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            // SAFETY: forwarded from the caller.
            let grown = unsafe { self.core().grow_inline(ptr, old_layout, new_layout) };
            if let Some(block) = grown {
                return Ok(NonNull::slice_from_raw_parts(block, new_layout.size()));
            }
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.resize_block(ptr, old_layout, new_layout) }
    }

    /// `Allocator::grow_zeroed`: like `grow`, then zeroes the new tail through a raw
    /// pointer (the arena's memory is never viewed as `&mut [u8]` before it is
    /// initialized).
    ///
    /// # Safety
    /// As [`trait_grow`](Self::trait_grow).
    #[inline]
    unsafe fn trait_grow_zeroed<E: Failure>(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, E> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { self.trait_grow::<E>(ptr, old_layout, new_layout)? };
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

    /// `grow`'s general path and `Allocator::shrink` (which stays in place, releasing
    /// the tail if it is the most recent block, unless a larger alignment forces a
    /// move): a resize to zero bytes releases the block (if it is the most recent)
    /// and returns a dangling pointer.
    ///
    /// # Safety
    /// `ptr` must be a live block of this arena allocated with `old`.
    #[inline]
    unsafe fn resize_block<E: Failure>(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, E> {
        let block = if new.size() == 0 {
            // SAFETY: forwarded from the caller.
            unsafe { self.core().dealloc(ptr, old) };
            dangling(new.align())
        } else {
            // SAFETY: forwarded from the caller; `new.size()` is not zero.
            unsafe { self.core().resize::<E>(ptr, old, new)? }
        };
        Ok(NonNull::slice_from_raw_parts(block, new.size()))
    }
}

/// Implements an `Allocator` trait (allocator-api2 0.2's or 0.4's, which have the
/// same methods and contracts) for `&OneWayAlloc<A>`, forwarding to the bodies above
/// with the trait's error type.
macro_rules! impl_allocator {
    ($(#[$attr:meta])* $trait:path, $error:ty) => {
        $(#[$attr])*
        // SAFETY: blocks come from pages the arena owns and stay valid, unmoved,
        // until `reset` or drop, both of which need the arena exclusively and so
        // cannot happen while a `&OneWayAlloc` (and with it any block handed out
        // through it) is in use. Copies of the reference all allocate from the same
        // arena. `deallocate` releases nothing but the most recent block, `grow` and
        // `shrink` keep the leading bytes.
        unsafe impl<A: Allocator> $trait for &OneWayAlloc<A> {
            #[inline(always)]
            fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, $error> {
                self.trait_allocate(layout)
            }

            #[inline]
            unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
                // SAFETY: the trait's contract, which `trait_deallocate` requires.
                unsafe { self.trait_deallocate(ptr, layout) }
            }

            #[inline(always)]
            unsafe fn grow(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                // SAFETY: the trait's contract, which `trait_grow` requires.
                unsafe { self.trait_grow(ptr, old_layout, new_layout) }
            }

            #[inline]
            unsafe fn grow_zeroed(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                // SAFETY: the trait's contract, which `trait_grow_zeroed` requires.
                unsafe { self.trait_grow_zeroed(ptr, old_layout, new_layout) }
            }

            #[inline]
            unsafe fn shrink(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                // SAFETY: the trait's contract: `ptr` is a live block of this arena
                // with `old_layout`.
                unsafe { self.resize_block(ptr, old_layout, new_layout) }
            }
        }
    };
}

impl_allocator!(Allocator, AllocError);

impl_allocator!(
    /// allocator-api2 0.4's `Allocator` (feature `allocator-api2-04`), for crates
    /// that speak 0.4: the same arena calls as the 0.2 impl.
    ///
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::allocator_api2_04::vec::Vec;
    ///
    /// let arena = OneWayAlloc::new();
    /// let mut v = Vec::new_in(&arena);
    /// v.extend(0..1000u32);
    /// assert_eq!(v[999], 999);
    /// ```
    #[cfg(feature = "allocator-api2-04")]
    allocator_api2_04::alloc::Allocator,
    allocator_api2_04::alloc::AllocError
);

#[cfg(feature = "allocator-api2-04")]
impl Failure for allocator_api2_04::alloc::AllocError {
    #[inline]
    fn overflow() -> Self {
        allocator_api2_04::alloc::AllocError
    }

    #[inline]
    fn refused(_layout: Layout) -> Self {
        allocator_api2_04::alloc::AllocError
    }
}
