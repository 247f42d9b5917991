//! The public arena type and its allocation calls.
//!
//! Each call is written once, generic over [`Failure`], and exposed twice: the plain
//! call (which panics on overflow and calls `handle_alloc_error` when the backing
//! allocator refuses) and its `try_` twin (which returns [`AllocError`]).

// Every `&mut` these calls return points to a fresh block that no other reference
// can reach, which is what `&mut` requires; the lint cannot see that.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator, Global};

use crate::Core;
use crate::engine::arith::{Known, PAGE_ALIGN};
use crate::engine::failure::{Failure, infallible};
use crate::engine::page_heap::HeapUse;
use crate::owned::DropList;

/// A single-threaded arena: Netdata's One Way Allocator.
///
/// Allocations bump a cursor through pages obtained from the backing allocator `A`
/// (the global allocator by default). Pages grow from 64 KiB to 1 MiB; nothing is
/// freed one by one; [`reset`](Self::reset) makes every page available again in
/// constant time, and dropping the arena returns every page. `&OneWayAlloc`
/// implements [`Allocator`], so `Vec`, `Box` and `hashbrown::HashMap` live in it.
///
/// Values placed with [`alloc`](Self::alloc) and the other calls are never dropped
/// by it: their memory is reclaimed wholesale at `reset` or drop, without running
/// their destructors. Values placed with [`alloc_owned`](Self::alloc_owned) are
/// dropped by the arena, most recent first, at `reset`, at the end of their scope
/// and at drop.
///
/// # Examples
///
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::Vec;
///
/// let mut arena = OneWayAlloc::new();
/// for query in 0..3 {
///     let name = arena.alloc_str("cpu.user");
///     let mut points = Vec::new_in(&arena);
///     points.extend([1.0, 2.0, query as f64]);
///     assert_eq!(name, "cpu.user");
///     assert_eq!(points.len(), 3);
///     drop(points);
///     arena.reset(); // every page is kept for the next query
/// }
/// assert_eq!(arena.stats().page_allocations, 1);
/// ```
///
/// `reset` takes `&mut self`, so the compiler rejects a reset while anything
/// allocated in the arena is still alive:
///
/// ```compile_fail,E0502
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::Vec;
///
/// let mut arena = OneWayAlloc::new();
/// let mut v = Vec::new_in(&arena);
/// v.push(1u32);
/// arena.reset(); // error: `arena` is borrowed by `v`
/// v.push(2);
/// ```
///
/// ```compile_fail,E0502
/// use onewayalloc::OneWayAlloc;
///
/// let mut arena = OneWayAlloc::new();
/// let x = arena.alloc(5u64);
/// arena.reset(); // error: `x` still borrows the arena
/// *x += 1;
/// ```
///
/// The arena is `Send` (when `A` is) but not `Sync`: it may move to another thread,
/// but it is never shared by concurrent workers. Use one arena per worker.
///
/// ```compile_fail,E0277
/// use onewayalloc::OneWayAlloc;
///
/// let arena = OneWayAlloc::new();
/// std::thread::scope(|s| {
///     s.spawn(|| arena.alloc(1u8)); // error: `OneWayAlloc` is not `Sync`
/// });
/// ```
pub struct OneWayAlloc<A: Allocator = Global> {
    core: Core<A>,
    /// The destructors of the values [`alloc_owned`](Self::alloc_owned) placed.
    pub(crate) owned: DropList,
}

// SAFETY: the arena owns its pages outright (no other arena or handle refers to
// them) and keeps no thread-local state, so moving it to another thread moves that
// ownership with it; the backing allocator moves along, hence `A: Send`. The values
// whose destructors it runs (`alloc_owned`) are `Send` too, so they may be dropped
// on the thread the arena moved to. It stays
// `!Sync` (its `Cell`s make it so): `&OneWayAlloc` allocates through shared state.
unsafe impl<A: Allocator + Send> Send for OneWayAlloc<A> {}

impl OneWayAlloc {
    /// Creates an arena whose first page is 64 KiB (rounded up to the OS page size),
    /// obtained from the global allocator.
    ///
    /// **Where the pages come from.** On 64-bit Linux the pages of 1 MiB and more
    /// (the fifth page on, and pages for large blocks) come from the process's page
    /// heap, shared by every arena `new()` creates: spans of 64 MiB mapped from the
    /// OS and handed out in 1 MiB slots, with transparent huge pages for an arena
    /// that has filled 2 MiB, so a grown arena touches its memory through 2 MiB pages
    /// (fewer TLB misses and page faults: Netdata's context query runs faster, see
    /// `docs/PERFORMANCE.md`). A page the arena gives back ([`trim`](Self::trim),
    /// drop) stays resident in the heap for the next arena, counted by
    /// [`free_page_bytes`](crate::free_page_bytes) and bounded by
    /// [`free_page_limit`](crate::free_page_limit) (64 MiB by default); it decays
    /// when no arena takes it, and [`release_free_pages`](crate::release_free_pages)
    /// gives it all back at once. The first pages (64 to 512 KiB) come from the
    /// global allocator, so a small arena costs no system call; those an arena gives
    /// back wait, counted and bounded the same way (at most a quarter of the limit,
    /// 16 MiB), for the next arena's first pages, where `malloc` would often give
    /// them to the system and fault them in again.
    /// [`new_in(Global)`](Self::new_in) obtains every page from the global allocator
    /// instead; other platforms, Miri and the sanitizer mode always do. The same
    /// holds for [`with_size_hint`](Self::with_size_hint) and
    /// [`try_with_size_hint`](Self::try_with_size_hint).
    ///
    /// # Panics
    /// Calls [`handle_alloc_error`](allocator_api2::alloc::handle_alloc_error) if the
    /// first page cannot be obtained, like the standard collections.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.stats().capacity, 64 * 1024);
    /// ```
    pub fn new() -> Self {
        Self::with_size_hint(0)
    }

    /// Creates an arena whose first page fits `size_hint` bytes of 16-byte-aligned
    /// payload after its header: `max(64 KiB, header + size_hint)` rounded up to the
    /// OS page size. This is Netdata's `onewayalloc_create(size_hint)`.
    ///
    /// # Panics
    /// Panics with a message containing "overflow" if the page size overflows
    /// `isize::MAX`; calls `handle_alloc_error` if the page cannot be obtained.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::with_size_hint(1 << 20);
    /// arena.alloc_bytes(1 << 20); // fits in the first page
    /// assert_eq!(arena.stats().pages, 1);
    /// ```
    pub fn with_size_hint(size_hint: usize) -> Self {
        infallible(Self::create_in(size_hint, Global, HeapUse::AllPages))
    }

    /// Like [`with_size_hint`](Self::with_size_hint), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the page size overflows or the first page cannot be obtained.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// assert!(OneWayAlloc::try_with_size_hint(4096).is_ok());
    /// assert!(OneWayAlloc::try_with_size_hint(usize::MAX).is_err());
    /// ```
    pub fn try_with_size_hint(size_hint: usize) -> Result<Self, AllocError> {
        Self::create_in(size_hint, Global, HeapUse::AllPages)
    }
}

impl Default for OneWayAlloc {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Allocator> OneWayAlloc<A> {
    /// Creates an arena that obtains its pages from `backing`; the first page is 64 KiB.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if `backing` refuses the first page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::Global;
    ///
    /// let arena = OneWayAlloc::new_in(Global);
    /// assert_eq!(*arena.alloc(7u8), 7);
    /// ```
    pub fn new_in(backing: A) -> Self {
        Self::with_size_hint_in(0, backing)
    }

    /// Creates an arena whose first page, obtained from `backing`, fits `size_hint`
    /// bytes of payload (see [`OneWayAlloc::with_size_hint`]).
    ///
    /// # Panics
    /// Panics with "overflow" if the page size overflows `isize::MAX`; calls
    /// `handle_alloc_error` if `backing` refuses the page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::Global;
    ///
    /// let arena = OneWayAlloc::with_size_hint_in(200_000, Global);
    /// assert!(arena.stats().capacity >= 200_000);
    /// ```
    pub fn with_size_hint_in(size_hint: usize, backing: A) -> Self {
        infallible(Self::create_in(size_hint, backing, HeapUse::Off))
    }

    /// Like [`with_size_hint_in`](Self::with_size_hint_in), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the page size overflows or `backing` refuses the page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::Global;
    ///
    /// let arena = OneWayAlloc::try_with_size_hint_in(0, Global)?;
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    pub fn try_with_size_hint_in(size_hint: usize, backing: A) -> Result<Self, AllocError> {
        Self::create_in(size_hint, backing, HeapUse::Off)
    }

    /// Like [`try_with_size_hint_in`](Self::try_with_size_hint_in), with the large
    /// pages from the process's page heap as for [`OneWayAlloc::new`] and the small
    /// ones from `backing`: the C API's arenas, which count the heap's pages with
    /// [`page_heap_bytes`](Self::page_heap_bytes).
    #[doc(hidden)]
    pub fn try_with_size_hint_and_page_heap_in(
        size_hint: usize,
        backing: A,
    ) -> Result<Self, AllocError> {
        Self::create_in(size_hint, backing, HeapUse::LargePages)
    }

    /// An arena on `backing`, with the pages `heap` says from the process's page
    /// heap where the platform has one (see [`OneWayAlloc::new`]).
    pub(crate) fn create_in<E: Failure>(
        size_hint: usize,
        backing: A,
        heap: HeapUse,
    ) -> Result<Self, E> {
        Core::new(size_hint, backing, heap).map(|core| OneWayAlloc {
            core,
            owned: DropList::new(),
        })
    }

    /// The backing allocator the arena obtains its pages from.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let _: &onewayalloc::Global = arena.backing();
    /// ```
    pub fn backing(&self) -> &A {
        self.core.backing()
    }

    /// The bytes of the pages this arena holds from the process's page heap (see
    /// [`OneWayAlloc::new`]), which its backing allocator does not see: for the C
    /// API's count of the memory its arenas hold.
    #[doc(hidden)]
    pub fn page_heap_bytes(&self) -> usize {
        #[cfg(not(onewayalloc_separate_blocks))]
        return self.core.page_source().heap_bytes();
        #[cfg(onewayalloc_separate_blocks)]
        0
    }

    pub(crate) fn core(&self) -> &Core<A> {
        &self.core
    }

    pub(crate) fn core_mut(&mut self) -> &mut Core<A> {
        &mut self.core
    }

    // ----- The Netdata calls -------------------------------------------------------

    /// Allocates `size` uninitialized bytes, 16-byte aligned like `malloc`: Netdata's
    /// `onewayalloc_mallocz`.
    ///
    /// # Panics
    /// Panics with "overflow" if `size` (with the page header) overflows `isize::MAX`;
    /// calls `handle_alloc_error` if the backing allocator refuses a page.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let buf = arena.alloc_bytes(100);
    /// assert_eq!(buf.len(), 100);
    /// assert_eq!(buf.as_ptr() as usize % 16, 0);
    /// buf[0].write(42);
    /// ```
    #[inline]
    pub fn alloc_bytes(&self, size: usize) -> &mut [MaybeUninit<u8>] {
        infallible(self.alloc_bytes_in(size))
    }

    /// Like [`alloc_bytes`](Self::alloc_bytes), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] on overflow or when the backing allocator refuses a page.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_bytes(10).unwrap().len(), 10);
    /// assert!(arena.try_alloc_bytes(usize::MAX).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_bytes(&self, size: usize) -> Result<&mut [MaybeUninit<u8>], AllocError> {
        self.alloc_bytes_in(size)
    }

    #[inline(always)]
    fn alloc_bytes_in<E: Failure>(&self, size: usize) -> Result<&mut [MaybeUninit<u8>], E> {
        let layout = Layout::from_size_align(size, PAGE_ALIGN).map_err(|_| E::overflow())?;
        let block = self.core.alloc::<E>(layout, Known::ALIGN)?;
        // SAFETY: `block` is a fresh block of `size` bytes that nothing else refers to;
        // `MaybeUninit<u8>` needs no initialization.
        Ok(unsafe { &mut *ptr::slice_from_raw_parts_mut(block.as_ptr().cast(), size) })
    }

    /// Allocates `nmemb * size` zeroed bytes, 16-byte aligned: Netdata's
    /// `onewayalloc_callocz`. Pages are not zeroed on reset; this call zeroes.
    ///
    /// # Panics
    /// Panics with "overflow" if `nmemb * size` overflows (or exceeds `isize::MAX`
    /// with the page header); calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let zeros = arena.alloc_zeroed(4, 8);
    /// assert_eq!(zeros, &[0u8; 32][..]);
    /// ```
    #[inline]
    pub fn alloc_zeroed(&self, nmemb: usize, size: usize) -> &mut [u8] {
        infallible(self.alloc_zeroed_in(nmemb, size))
    }

    /// Like [`alloc_zeroed`](Self::alloc_zeroed), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if `nmemb * size` overflows or a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert!(arena.try_alloc_zeroed(usize::MAX, 2).is_err());
    /// assert_eq!(arena.try_alloc_zeroed(2, 2).unwrap(), &[0; 4]);
    /// ```
    #[inline]
    pub fn try_alloc_zeroed(&self, nmemb: usize, size: usize) -> Result<&mut [u8], AllocError> {
        self.alloc_zeroed_in(nmemb, size)
    }

    fn alloc_zeroed_in<E: Failure>(&self, nmemb: usize, size: usize) -> Result<&mut [u8], E> {
        let total = nmemb.checked_mul(size).ok_or_else(E::overflow)?;
        let bytes = self.alloc_bytes_in::<E>(total)?;
        let ptr = bytes.as_mut_ptr().cast::<u8>();
        // SAFETY: `ptr` is valid for `total` bytes of writes; once written with zeros
        // they are initialized `u8`s.
        unsafe {
            ptr::write_bytes(ptr, 0, total);
            Ok(&mut *ptr::slice_from_raw_parts_mut(ptr, total))
        }
    }

    /// Copies `s` into the arena: Netdata's `onewayalloc_strdupz`. No terminating
    /// NUL is added and no alignment padding is used.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let name = arena.alloc_str("system.cpu");
    /// name.make_ascii_uppercase();
    /// assert_eq!(name, "SYSTEM.CPU");
    /// ```
    #[inline]
    pub fn alloc_str(&self, s: &str) -> &mut str {
        infallible(self.alloc_str_in(s))
    }

    /// Like [`alloc_str`](Self::alloc_str), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_str("x").unwrap(), "x");
    /// ```
    #[inline]
    pub fn try_alloc_str(&self, s: &str) -> Result<&mut str, AllocError> {
        self.alloc_str_in(s)
    }

    #[inline(always)]
    fn alloc_str_in<E: Failure>(&self, s: &str) -> Result<&mut str, E> {
        let bytes = self.alloc_slice_copy_in::<E, u8>(s.as_bytes())?;
        // SAFETY: the bytes are a copy of a `str`, hence valid UTF-8.
        Ok(unsafe { core::str::from_utf8_unchecked_mut(bytes) })
    }

    /// Copies `src` into the arena: Netdata's `onewayalloc_memdupz`, typed.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let copy = arena.alloc_slice_copy(&[1u32, 2, 3]);
    /// copy[0] = 10;
    /// assert_eq!(copy, &[10, 2, 3]);
    /// ```
    #[inline]
    pub fn alloc_slice_copy<T: Copy>(&self, src: &[T]) -> &mut [T] {
        infallible(self.alloc_slice_copy_in(src))
    }

    /// Like [`alloc_slice_copy`](Self::alloc_slice_copy), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_slice_copy(b"abc").unwrap(), b"abc");
    /// ```
    #[inline]
    pub fn try_alloc_slice_copy<T: Copy>(&self, src: &[T]) -> Result<&mut [T], AllocError> {
        self.alloc_slice_copy_in(src)
    }

    #[inline(always)]
    fn alloc_slice_copy_in<E: Failure, T: Copy>(&self, src: &[T]) -> Result<&mut [T], E> {
        let block = self
            .core
            .alloc::<E>(Layout::for_value(src), Known::ALIGN)?
            .cast::<T>();
        // SAFETY: `block` is a fresh block aligned for `T` with room for `src.len()`
        // elements (or dangling and aligned when they take no bytes); it cannot
        // overlap `src`, which is borrowed elsewhere. `T: Copy`, so a bitwise copy is
        // a valid value.
        unsafe {
            ptr::copy_nonoverlapping(src.as_ptr(), block.as_ptr(), src.len());
            Ok(&mut *ptr::slice_from_raw_parts_mut(
                block.as_ptr(),
                src.len(),
            ))
        }
    }

    // ----- Typed and raw -----------------------------------------------------------

    /// Moves `value` into the arena and returns a reference to it. Its destructor
    /// never runs.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let point = arena.alloc((1.5f64, 2.5f64));
    /// point.0 += 1.0;
    /// assert_eq!(*point, (2.5, 2.5));
    /// ```
    #[inline(always)]
    pub fn alloc<T>(&self, value: T) -> &mut T {
        infallible(self.alloc_with_in(|| value))
    }

    /// Like [`alloc`](Self::alloc), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused; `value` is dropped.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(*arena.try_alloc(3u16).unwrap(), 3);
    /// ```
    #[inline(always)]
    pub fn try_alloc<T>(&self, value: T) -> Result<&mut T, AllocError> {
        self.alloc_with_in(|| value)
    }

    /// Allocates room for a `T`, then writes `f()` into it, which lets the compiler
    /// build large values in place instead of on the stack.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused. If `f` panics, the arena
    /// stays usable; the reserved bytes come back at reset.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let table = arena.alloc_with(|| [0u64; 512]);
    /// assert_eq!(table.len(), 512);
    /// ```
    #[inline(always)]
    pub fn alloc_with<T>(&self, f: impl FnOnce() -> T) -> &mut T {
        infallible(self.alloc_with_in(f))
    }

    /// Like [`alloc_with`](Self::alloc_with), returning an error instead (and not
    /// calling `f`).
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_with(|| "hi").unwrap().len(), 2);
    /// ```
    #[inline(always)]
    pub fn try_alloc_with<T>(&self, f: impl FnOnce() -> T) -> Result<&mut T, AllocError> {
        self.alloc_with_in(f)
    }

    #[inline(always)]
    fn alloc_with_in<E: Failure, T>(&self, f: impl FnOnce() -> T) -> Result<&mut T, E> {
        let block = self
            .core
            .alloc::<E>(Layout::new::<T>(), Known::TYPE)?
            .cast::<T>();
        // SAFETY: `block` is a fresh block, aligned and sized for a `T` (for a
        // zero-sized `T`, an aligned pointer valid for zero bytes), that nothing else
        // refers to.
        unsafe {
            block.write(f());
            Ok(&mut *block.as_ptr())
        }
    }

    /// Allocates a slice of `len` elements, the `i`-th being `f(i)`.
    ///
    /// # Panics
    /// Panics with "overflow" if `len * size_of::<T>()` overflows `isize::MAX`; calls
    /// `handle_alloc_error` if a page is refused. If `f` panics, the elements already
    /// made are dropped (once), the block goes back to the arena, and the arena
    /// stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let squares = arena.alloc_slice_fill_with(5, |i| i * i);
    /// assert_eq!(squares, &[0, 1, 4, 9, 16]);
    /// ```
    #[inline]
    pub fn alloc_slice_fill_with<T>(&self, len: usize, f: impl FnMut(usize) -> T) -> &mut [T] {
        infallible(self.alloc_slice_fill_with_in(len, f))
    }

    /// Like [`alloc_slice_fill_with`](Self::alloc_slice_fill_with), returning an
    /// error instead (and not calling `f`).
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert!(arena.try_alloc_slice_fill_with(usize::MAX / 2, |_| 0u64).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_with<T>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> Result<&mut [T], AllocError> {
        self.alloc_slice_fill_with_in(len, f)
    }

    #[inline(always)]
    fn alloc_slice_fill_with_in<E: Failure, T>(
        &self,
        len: usize,
        f: impl FnMut(usize) -> T,
    ) -> Result<&mut [T], E> {
        self.fill_slice_in(len, (0..len).map(f))
    }

    /// Allocates a block for `layout` and returns its start, uninitialized. Any
    /// alignment `Layout` allows works, including alignments above the OS page.
    /// A zero-sized layout gets an aligned pointer and consumes at most its
    /// alignment padding; it never obtains a page and never fails.
    ///
    /// # Panics
    /// Panics with "overflow" if the layout plus the page header overflows
    /// `isize::MAX`; calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// use std::alloc::Layout;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let ptr = arena.alloc_layout(Layout::from_size_align(64, 4096).unwrap());
    /// assert_eq!(ptr.as_ptr() as usize % 4096, 0);
    /// ```
    #[inline(always)]
    pub fn alloc_layout(&self, layout: Layout) -> NonNull<u8> {
        infallible(self.core.alloc(layout, Known::NOTHING))
    }

    /// Like [`alloc_layout`](Self::alloc_layout), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// use std::alloc::Layout;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let huge = Layout::from_size_align(isize::MAX as usize, 1).unwrap();
    /// assert!(arena.try_alloc_layout(huge).is_err());
    /// assert!(arena.try_alloc_layout(Layout::new::<u64>()).is_ok());
    /// ```
    #[inline(always)]
    pub fn try_alloc_layout(&self, layout: Layout) -> Result<NonNull<u8>, AllocError> {
        self.core.alloc(layout, Known::NOTHING)
    }

    // ----- Reset --------------------------------------------------------------------

    /// Invalidates every allocation and makes every page available again, in
    /// constant time: Netdata's `onewayalloc_reset`.
    ///
    /// The first page becomes current, rewound; every other page becomes unused
    /// without being touched or reordered, and is rewound only when it is selected
    /// for a request. No page is freed and no memory is zeroed. Because `reset`
    /// takes `&mut self`, nothing allocated in the arena can be alive across it.
    ///
    /// First it runs the destructors of the values placed with
    /// [`alloc_owned`](Self::alloc_owned), most recent first (linear in their
    /// number; one branch when there are none). If one panics, the others still
    /// run, the arena is reset all the same, and the panic goes on afterwards.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.alloc_bytes(200_000);
    /// let held = arena.stats().capacity;
    /// arena.reset();
    /// assert_eq!(arena.stats().used, 0);
    /// assert_eq!(arena.stats().capacity, held); // pages are kept
    /// arena.alloc_bytes(200_000); // served by a kept page
    /// assert_eq!(arena.stats().page_allocations, 2);
    /// ```
    #[inline]
    pub fn reset(&mut self) {
        if self.owned.is_empty() {
            self.core.reset();
        } else {
            self.reset_with_drops();
        }
    }

    /// `reset` with destructors to run first; the reset happens also when one of
    /// them panics.
    #[cold]
    #[inline(never)]
    fn reset_with_drops(&mut self) {
        struct ResetAfter<'a, A: Allocator>(&'a mut OneWayAlloc<A>);
        impl<A: Allocator> Drop for ResetAfter<'_, A> {
            fn drop(&mut self) {
                self.0.core.reset();
            }
        }
        let after = ResetAfter(self);
        // SAFETY: `reset` holds `&mut self`: no value of the arena is alive, and
        // none is used again (their blocks are reset right after).
        unsafe { after.0.run_all_drops() }
    }

    // ----- Trim ---------------------------------------------------------------------

    /// Returns unused pages to the backing allocator, keeping at most `keep` bytes of
    /// them. It walks the unused pages in list order: a page that still fits the
    /// budget (the pages kept so far plus itself at most `keep` bytes) is kept, a page
    /// that does not is freed, and the walk goes on with the next page, so a smaller
    /// page after a large freed one may still be kept. Used pages and the current
    /// page stay. After a [`reset`](Self::reset), `trim(0)` leaves only the first page.
    ///
    /// The pages of an arena made by [`new`](OneWayAlloc::new) that came from the
    /// page heap go back to it, resident, for the next arena (counted by
    /// [`free_page_bytes`](crate::free_page_bytes), within its bound);
    /// [`release_free_pages`](crate::release_free_pages) then gives them to the
    /// system.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.alloc_bytes(5 << 20); // one large request: a 5 MiB page
    /// arena.reset();
    /// arena.trim(256 * 1024);
    /// assert_eq!(arena.stats().capacity, 64 * 1024);
    /// ```
    pub fn trim(&mut self, keep: usize) {
        self.core_mut().trim(keep);
    }

    // ----- Memory limit -------------------------------------------------------------

    /// Caps the memory the arena holds: `stats().capacity`, the bytes of every page
    /// held from the backing allocator, headers included (`None` removes the cap).
    ///
    /// The limit is checked whenever the arena would obtain a page, before asking
    /// the backing allocator: a page that would take `capacity` past the limit is
    /// not obtained. The request that needed it fails as if the backing allocator
    /// had refused: `try_` calls return [`AllocError`], `Allocator::allocate` and
    /// `grow` return `Err` (so `Vec::try_reserve` and `HashMap::try_reserve` report
    /// it), and the plain calls call `handle_alloc_error`. Requests that fit in the
    /// pages already held keep being served, including retained pages after a
    /// [`reset`](Self::reset), and the arena stays usable.
    ///
    /// Under a limit, use the calls that report failure: the `try_` calls,
    /// `try_reserve` of the collections and [`try_format_in!`](crate::try_format_in).
    /// The plain calls, `Vec::push` and `format_in!` end the process when they hit
    /// the limit, as they would when memory runs out. The limit counts every page the
    /// arena holds, retained pages included: on an arena reused across requests it
    /// caps the memory held, which is also the most one request can use.
    ///
    /// A limit below the current capacity frees nothing (see [`trim`](Self::trim));
    /// it only stops the arena from obtaining more. A growing buffer that would get a
    /// page with room to double (SPEC §1.3) gets the exact page it needs instead when
    /// the larger one would pass the limit.
    ///
    /// In the sanitizer mode, where every allocation is a block of its own, the limit
    /// caps the bytes of the blocks outstanding.
    ///
    /// # Examples
    ///
    /// A query cancelled cleanly when it exceeds its budget:
    /// ```
    /// use onewayalloc::{OneWayAlloc, AllocError};
    /// use onewayalloc::collections::Vec;
    ///
    /// fn run_query(arena: &OneWayAlloc, points: usize) -> Result<f64, AllocError> {
    ///     let mut values = Vec::new_in(arena);
    ///     values.try_reserve(points).map_err(|_| AllocError)?;
    ///     values.extend((0..points).map(|i| i as f64));
    ///     Ok(values.iter().sum())
    /// }
    ///
    /// let mut arena = OneWayAlloc::new();
    /// arena.set_limit(Some(1 << 20)); // 1 MiB per query
    /// assert_eq!(run_query(&arena, 1000), Ok(499500.0));
    /// arena.reset();
    /// assert!(run_query(&arena, 10_000_000).is_err()); // 80 MB: cancelled
    /// arena.reset();
    /// assert!(run_query(&arena, 1000).is_ok()); // the arena goes on serving
    /// assert!(arena.stats().capacity <= 1 << 20);
    /// ```
    pub fn set_limit(&self, limit: Option<usize>) {
        self.core.limit().set(limit);
    }

    /// The limit set by [`set_limit`](Self::set_limit), if any.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.limit(), None);
    /// arena.set_limit(Some(4 << 20));
    /// assert_eq!(arena.limit(), Some(4 << 20));
    /// ```
    pub fn limit(&self) -> Option<usize> {
        self.core.limit().get()
    }
}

/// Dropping the arena is Netdata's `onewayalloc_destroy`: the destructors of the
/// values placed with [`alloc_owned`](OneWayAlloc::alloc_owned) run, most recent
/// first, then every page goes back to the backing allocator, the unused ones
/// included. In the sanitizer mode, every
/// block still outstanding goes back (SPEC §1.7), so a leak checker finds nothing
/// to report and a pointer kept past the drop is reported as a use-after-free.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc_bytes(1 << 20);
/// drop(arena); // both pages are freed (in the sanitizer mode, the one block)
/// ```
impl<A: Allocator> Drop for OneWayAlloc<A> {
    fn drop(&mut self) {
        /// Releases the pages also when a destructor panics.
        struct ReleaseAfter<'a, A: Allocator>(&'a mut OneWayAlloc<A>);
        impl<A: Allocator> Drop for ReleaseAfter<'_, A> {
            fn drop(&mut self) {
                // SAFETY: the arena is being dropped: nothing can use it, or any
                // block of it (they all borrow it), afterwards.
                unsafe { self.0.core.release_pages() }
            }
        }
        let after = ReleaseAfter(self);
        // SAFETY: the arena is being dropped: no value of it is alive or used
        // again; the pages are released right after.
        unsafe { after.0.run_all_drops() }
    }
}

impl<A: Allocator> fmt::Debug for OneWayAlloc<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OneWayAlloc")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
