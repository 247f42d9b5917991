//! The speed-of-light reference allocator: one pre-faulted buffer and a bump offset.

use std::alloc::{Layout, handle_alloc_error};
use std::cell::Cell;
use std::ptr::{self, NonNull};

use onewayalloc::allocator_api2::alloc::{AllocError, Allocator};

/// The speed-of-light reference: one buffer allocated and pre-faulted up front (the
/// article's `memset`), a bump offset into it, reset to zero, and no page logic at
/// all. It has to be big enough for the whole job; running out is an allocation
/// failure.
pub struct LinearBuffer {
    base: NonNull<u8>,
    layout: Layout,
    offset: Cell<usize>,
}

/// The buffer's alignment, and the largest alignment it serves.
const LINEAR_ALIGN: usize = 4096;

// Every `&mut` that `alloc` and `alloc_str` return points to a fresh block that no
// other reference can reach, which is what `&mut` requires; the lint cannot see that.
#[allow(clippy::mut_from_ref)]
impl LinearBuffer {
    /// A buffer of `capacity` bytes, every page of it written once.
    pub fn new(capacity: usize) -> Self {
        let layout = Layout::from_size_align(capacity.max(1), LINEAR_ALIGN)
            .expect("linear buffer capacity overflows");
        // SAFETY: `layout` has a non-zero size.
        let base = unsafe { std::alloc::alloc(layout) };
        let Some(base) = NonNull::new(base) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `base` holds `layout.size()` writable bytes.
        unsafe { ptr::write_bytes(base.as_ptr(), 0, layout.size()) };
        LinearBuffer {
            base,
            layout,
            offset: Cell::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.layout.size()
    }

    pub fn used(&self) -> usize {
        self.offset.get()
    }

    pub fn reset(&mut self) {
        self.offset.set(0);
    }

    /// Align, compare, bump.
    #[inline(always)]
    fn bump(&self, layout: Layout) -> Option<NonNull<u8>> {
        if layout.align() > LINEAR_ALIGN {
            return None;
        }
        let start = self.offset.get().next_multiple_of(layout.align());
        let end = start.checked_add(layout.size())?;
        if end > self.layout.size() {
            return None;
        }
        self.offset.set(end);
        // SAFETY: `start <= end <= capacity`: inside the buffer or one past its end.
        Some(unsafe { self.base.add(start) })
    }

    /// Moves `value` into the buffer.
    #[inline]
    pub fn alloc<T>(&self, value: T) -> &mut T {
        let layout = Layout::new::<T>();
        let block = self
            .bump(layout)
            .unwrap_or_else(|| handle_alloc_error(layout))
            .cast::<T>();
        // SAFETY: a fresh block, sized and aligned for `T`, used by nothing else until
        // `reset`, which needs `&mut self`.
        unsafe {
            block.write(value);
            &mut *block.as_ptr()
        }
    }

    /// Copies `s` into the buffer.
    #[inline]
    pub fn alloc_str(&self, s: &str) -> &mut str {
        let layout = Layout::for_value(s);
        let block = self
            .bump(layout)
            .unwrap_or_else(|| handle_alloc_error(layout));
        // SAFETY: a fresh block of `s.len()` bytes, used by nothing else until `reset`;
        // the bytes are a copy of a `str`, so valid UTF-8.
        unsafe {
            ptr::copy_nonoverlapping(s.as_ptr(), block.as_ptr(), s.len());
            let bytes = std::slice::from_raw_parts_mut(block.as_ptr(), s.len());
            std::str::from_utf8_unchecked_mut(bytes)
        }
    }
}

impl Drop for LinearBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with `self.layout`.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

// SAFETY: blocks are bumped from the buffer and stay valid until `reset` or drop,
// both of which need `&mut LinearBuffer`, so not while a `&LinearBuffer` is in use.
// `deallocate` does nothing; `grow` extends the most recent block in place when
// there is room, otherwise allocates and copies; `shrink` stays in place.
unsafe impl Allocator for &LinearBuffer {
    #[inline(always)]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = self.bump(layout).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(block, layout.size()))
    }

    #[inline(always)]
    unsafe fn deallocate(&self, _ptr: NonNull<u8>, _layout: Layout) {}

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        let start = ptr.addr().get().wrapping_sub(self.base.addr().get());
        let is_last = old.size() != 0 && start + old.size() == self.offset.get();
        if is_last && start.is_multiple_of(new.align()) && start + new.size() <= self.layout.size()
        {
            self.offset.set(start + new.size());
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let block = self.allocate(new)?;
        // SAFETY: `ptr` holds `old.size()` bytes (trait contract) and `block` is fresh
        // and at least as long.
        unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), block.cast().as_ptr(), old.size()) };
        Ok(block)
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        _old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if ptr.addr().get().is_multiple_of(new.align()) {
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let block = self.allocate(new)?;
        // SAFETY: `ptr` holds `old.size() >= new.size()` bytes; `block` is fresh.
        unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), block.cast().as_ptr(), new.size()) };
        Ok(block)
    }
}
