//! Adapters that make every contender speak `allocator_api2` 0.2's `Allocator`, the
//! trait `hashbrown` and `allocator_api2::vec::Vec` use (the criterion benchmarks,
//! the context query and the `instructions` subcommand all go through them).
//!
//! - [`BumpScopeApi2`]: bump-scope implements that trait only behind its
//!   `allocator-api2-02` feature, which does not build together with this crate's
//!   `nightly` feature (it then needs `feature(allocator_api)`, which bump-scope
//!   does not enable). The adapter does what that feature does: every method
//!   forwards, `#[inline(always)]`, to bump-scope's own `Allocator` trait.
//! - [`Mi`]: mimalloc cannot be a per-benchmark `#[global_allocator]`; this calls
//!   its `GlobalAlloc` methods directly.

use core::alloc::Layout;
use core::ptr::NonNull;
use std::alloc::GlobalAlloc;

use onewayalloc::allocator_api2::alloc::{AllocError, Allocator};

/// The methods that resize a block (`grow`, `grow_zeroed`, `shrink`), forwarded to
/// bump-scope's trait method of the same name.
macro_rules! forward_resize {
    ($($method:ident),*) => {$(
        #[inline(always)]
        unsafe fn $method(
            &self,
            ptr: NonNull<u8>,
            old_layout: Layout,
            new_layout: Layout,
        ) -> Result<NonNull<[u8]>, AllocError> {
            // SAFETY: forwarded from the caller.
            unsafe { bump_scope::alloc::Allocator::$method(&self.0, ptr, old_layout, new_layout) }
                .map_err(|_| AllocError)
        }
    )*};
}

/// bump-scope's `Bump` through `allocator_api2` 0.2 (see the module docs).
#[derive(Clone, Copy)]
pub struct BumpScopeApi2<'a>(pub &'a bump_scope::Bump);

// SAFETY: every method forwards to bump-scope's own `Allocator` implementation for
// `&Bump`, whose contract is the same as this trait's.
unsafe impl Allocator for BumpScopeApi2<'_> {
    #[inline(always)]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        bump_scope::alloc::Allocator::allocate(&self.0, layout).map_err(|_| AllocError)
    }

    #[inline(always)]
    fn allocate_zeroed(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        bump_scope::alloc::Allocator::allocate_zeroed(&self.0, layout).map_err(|_| AllocError)
    }

    #[inline(always)]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { bump_scope::alloc::Allocator::deallocate(&self.0, ptr, layout) }
    }

    forward_resize!(grow, grow_zeroed, shrink);
}

/// mimalloc through `allocator_api2` 0.2, by its `GlobalAlloc` methods.
#[derive(Clone, Copy, Default)]
pub struct Mi;

/// A dangling, aligned pointer for zero-sized requests (which `GlobalAlloc` forbids).
fn dangling(layout: Layout) -> NonNull<[u8]> {
    let ptr = NonNull::new(core::ptr::without_provenance_mut::<u8>(layout.align()))
        .unwrap_or(NonNull::dangling());
    NonNull::slice_from_raw_parts(ptr, 0)
}

// SAFETY: blocks come from mimalloc with the layout asked for and go back to it with
// the same layout; zero-sized requests never reach it.
unsafe impl Allocator for Mi {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            return Ok(dangling(layout));
        }
        // SAFETY: the size is not zero.
        let ptr = unsafe { mimalloc::MiMalloc.alloc(layout) };
        NonNull::new(ptr)
            .map(|ptr| NonNull::slice_from_raw_parts(ptr, layout.size()))
            .ok_or(AllocError)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // SAFETY: a non-empty block of mimalloc with this layout (the caller's
            // guarantee).
            unsafe { mimalloc::MiMalloc.dealloc(ptr.as_ptr(), layout) }
        }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if old_layout.size() == 0 || old_layout.align() != new_layout.align() {
            let new = self.allocate(new_layout)?;
            // SAFETY: `new` is fresh and holds at least the old size; the old block is
            // live (the caller's guarantee).
            unsafe {
                core::ptr::copy_nonoverlapping(
                    ptr.as_ptr(),
                    new.cast::<u8>().as_ptr(),
                    old_layout.size(),
                );
                self.deallocate(ptr, old_layout);
            }
            return Ok(new);
        }
        // SAFETY: a non-empty block of mimalloc with `old_layout`, resized to a
        // non-zero size with the same alignment.
        let new =
            unsafe { mimalloc::MiMalloc.realloc(ptr.as_ptr(), old_layout, new_layout.size()) };
        NonNull::new(new)
            .map(|ptr| NonNull::slice_from_raw_parts(ptr, new_layout.size()))
            .ok_or(AllocError)
    }
}
