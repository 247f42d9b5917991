//! The backing allocator of every arena the C API creates: the global allocator,
//! counted, which is what `onewayalloc_allocated_memory()` reports.
//!
//! An arena obtains nothing from its backing allocator but its small pages (SPEC
//! §1.1); its large pages come from the process's page heap (as for
//! `OneWayAlloc::new()`), and each handle adds what its arena holds from there
//! ([`Counting::heap_pages_changed`]). So the count is exactly the bytes of the
//! pages that C API arenas hold, page headers included. In the sanitizer mode the "pages" are the outstanding blocks, so the
//! count drops at `onewayalloc_freez` and `onewayalloc_reset` there. The arena
//! handle itself and the sanitizer mode's record of blocks come from the global
//! allocator directly and are not counted.

use core::alloc::Layout;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use onewayalloc::{AllocError, Allocator, Global};

/// Bytes that C API arenas hold from [`Counting`].
///
/// Relaxed is enough: the figure is a statistic, read by any thread, and no other
/// memory is published through it. It never underflows: a block is counted when it
/// is obtained, before it can be returned, and all updates of one atomic are ordered.
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

/// The bytes that C API arenas hold from their backing allocator now.
pub(crate) fn allocated() -> usize {
    ALLOCATED.load(Ordering::Relaxed)
}

/// The global allocator, with every byte it hands out counted in [`ALLOCATED`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counting;

impl Counting {
    /// Counts the change of the bytes an arena holds from the process's page heap
    /// (its large pages, which do not come through this allocator), from `before`
    /// to `now`.
    pub(crate) fn heap_pages_changed(before: usize, now: usize) {
        if now > before {
            Self::add(now - before);
        } else {
            Self::sub(before - now);
        }
    }

    fn add(bytes: usize) {
        ALLOCATED.fetch_add(bytes, Ordering::Relaxed);
    }

    fn sub(bytes: usize) {
        ALLOCATED.fetch_sub(bytes, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to `Global` with the same arguments, so the
// blocks and their validity are `Global`'s; the counter is bookkeeping on the side.
// The zeroed variants are the trait's defaults, which call these.
unsafe impl Allocator for Counting {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(layout)?;
        Self::add(layout.size());
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: the trait's contract, forwarded: `ptr` was obtained from this
        // allocator, that is from `Global`, with `layout`.
        unsafe { Global.deallocate(ptr, layout) };
        Self::sub(layout.size());
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the trait's contract, forwarded to `Global`.
        let block = unsafe { Global.grow(ptr, old_layout, new_layout)? };
        // `grow` is given `new >= old`.
        Self::add(new_layout.size() - old_layout.size());
        Ok(block)
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the trait's contract, forwarded to `Global`.
        let block = unsafe { Global.shrink(ptr, old_layout, new_layout)? };
        // `shrink` is given `new <= old`.
        Self::sub(old_layout.size() - new_layout.size());
        Ok(block)
    }
}
