//! Slices filled element by element, slices from iterators, and uninitialized
//! values: bumpalo's `alloc_slice_clone`, `alloc_slice_fill_copy`,
//! `alloc_slice_fill_clone`, `alloc_slice_fill_default` and `alloc_slice_fill_iter`,
//! and `alloc_iter` (any iterator), `alloc_uninit` and `alloc_uninit_slice`, each
//! with its `try_` twin. Each is written once, generic over [`Failure`].
//!
//! Every slice filled element by element (these and `alloc_slice_fill_with`) is
//! written by one loop, [`OneWayAlloc::fill_slice_in`], through a [`Filling`] guard:
//! if the user's code panics (a closure, `Clone`, `Default`, an iterator), the guard
//! drops the elements written so far, once, and gives the block back to the arena.
//! `alloc_iter` writes through the same guard into a block that it grows at the top
//! of the arena, in place while the page has room.

// Every `&mut` these calls return points to a fresh block that no other reference
// can reach, which is what `&mut` requires; the lint cannot see that.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::iter;
use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;
use crate::engine::arith::Known;
use crate::engine::failure::{Failure, infallible};

impl<A: Allocator> OneWayAlloc<A> {
    // ----- Slices filled element by element ----------------------------------------

    /// Clones every element of `src` into a new slice in the arena: bumpalo's
    /// `alloc_slice_clone`. (For `T: Copy`, [`alloc_slice_copy`](Self::alloc_slice_copy)
    /// copies the elements in one go.) The arena never drops the clones: clone
    /// values that own no heap memory, or drop them yourself.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused. If a `clone` panics, the
    /// clones already made are dropped (once), the block goes back to the arena, and
    /// the arena stays usable.
    ///
    /// # Examples
    /// ```
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Dim {
    ///     name: &'static str,
    ///     points: u32,
    /// }
    ///
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let dims = [Dim { name: "user", points: 60 }, Dim { name: "system", points: 60 }];
    /// let copy = arena.alloc_slice_clone(&dims);
    /// copy[1].points = 0;
    /// assert_eq!(copy[0], dims[0]);
    /// assert_eq!(copy[1], Dim { name: "system", points: 0 });
    /// ```
    #[inline]
    pub fn alloc_slice_clone<T: Clone>(&self, src: &[T]) -> &mut [T] {
        infallible(self.alloc_slice_clone_in(src))
    }

    /// Like [`alloc_slice_clone`](Self::alloc_slice_clone), returning an error
    /// instead (and cloning nothing).
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let ranges = arena.try_alloc_slice_clone(&[0..2, 5..9]).unwrap();
    /// assert_eq!(ranges, [0..2, 5..9]);
    /// ```
    #[inline]
    pub fn try_alloc_slice_clone<T: Clone>(&self, src: &[T]) -> Result<&mut [T], AllocError> {
        self.alloc_slice_clone_in(src)
    }

    #[inline(always)]
    fn alloc_slice_clone_in<E: Failure, T: Clone>(&self, src: &[T]) -> Result<&mut [T], E> {
        self.fill_slice_in(src.len(), src.iter().cloned())
    }

    /// Allocates a slice of `len` copies of `value`: bumpalo's `alloc_slice_fill_copy`.
    ///
    /// # Panics
    /// Panics with "overflow" if `len * size_of::<T>()` overflows `isize::MAX`; calls
    /// `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let row = arena.alloc_slice_fill_copy(4, f64::NAN);
    /// row[0] = 1.5;
    /// assert_eq!(row.len(), 4);
    /// assert!(row[1..].iter().all(|v| v.is_nan()));
    /// ```
    #[inline]
    pub fn alloc_slice_fill_copy<T: Copy>(&self, len: usize, value: T) -> &mut [T] {
        infallible(self.alloc_slice_fill_copy_in(len, value))
    }

    /// Like [`alloc_slice_fill_copy`](Self::alloc_slice_fill_copy), returning an
    /// error instead.
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_slice_fill_copy(3, 7u8).unwrap(), [7, 7, 7]);
    /// assert!(arena.try_alloc_slice_fill_copy(usize::MAX, 0u16).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_copy<T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&mut [T], AllocError> {
        self.alloc_slice_fill_copy_in(len, value)
    }

    #[inline(always)]
    fn alloc_slice_fill_copy_in<E: Failure, T: Copy>(
        &self,
        len: usize,
        value: T,
    ) -> Result<&mut [T], E> {
        self.fill_slice_in(len, iter::repeat_n(value, len))
    }

    /// Allocates a slice of `len` clones of `value`: bumpalo's
    /// `alloc_slice_fill_clone`. `value` is cloned `len` times. The arena never drops
    /// the clones.
    ///
    /// # Panics
    /// Panics with "overflow" if `len * size_of::<T>()` overflows `isize::MAX`; calls
    /// `handle_alloc_error` if a page is refused. If a `clone` panics, the clones
    /// already made are dropped (once), the block goes back to the arena, and the
    /// arena stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let windows = arena.alloc_slice_fill_clone(3, &(0..60));
    /// windows[2].end = 30;
    /// assert_eq!(windows, [0..60, 0..60, 0..30]);
    /// ```
    #[inline]
    pub fn alloc_slice_fill_clone<T: Clone>(&self, len: usize, value: &T) -> &mut [T] {
        infallible(self.alloc_slice_fill_clone_in(len, value))
    }

    /// Like [`alloc_slice_fill_clone`](Self::alloc_slice_fill_clone), returning an
    /// error instead (and cloning nothing).
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_slice_fill_clone(2, &(1..3)).unwrap(), [1..3, 1..3]);
    /// assert!(arena.try_alloc_slice_fill_clone(usize::MAX, &(1..3)).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_clone<T: Clone>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&mut [T], AllocError> {
        self.alloc_slice_fill_clone_in(len, value)
    }

    #[inline(always)]
    fn alloc_slice_fill_clone_in<E: Failure, T: Clone>(
        &self,
        len: usize,
        value: &T,
    ) -> Result<&mut [T], E> {
        self.fill_slice_in(len, (0..len).map(|_| value.clone()))
    }

    /// Allocates a slice of `len` elements, each `T::default()`: bumpalo's
    /// `alloc_slice_fill_default`.
    ///
    /// # Panics
    /// Panics with "overflow" if `len * size_of::<T>()` overflows `isize::MAX`; calls
    /// `handle_alloc_error` if a page is refused. If a `default` panics, the
    /// elements already made are dropped (once), the block goes back to the arena,
    /// and the arena stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let counters = arena.alloc_slice_fill_default::<u64>(8);
    /// counters[3] += 1;
    /// assert_eq!(counters.iter().sum::<u64>(), 1);
    /// ```
    #[inline]
    pub fn alloc_slice_fill_default<T: Default>(&self, len: usize) -> &mut [T] {
        infallible(self.alloc_slice_fill_default_in(len))
    }

    /// Like [`alloc_slice_fill_default`](Self::alloc_slice_fill_default), returning
    /// an error instead (and calling no `default`).
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_slice_fill_default::<i32>(2).unwrap(), [0, 0]);
    /// assert!(arena.try_alloc_slice_fill_default::<u64>(usize::MAX / 4).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_default<T: Default>(
        &self,
        len: usize,
    ) -> Result<&mut [T], AllocError> {
        self.alloc_slice_fill_default_in(len)
    }

    #[inline(always)]
    fn alloc_slice_fill_default_in<E: Failure, T: Default>(
        &self,
        len: usize,
    ) -> Result<&mut [T], E> {
        self.fill_slice_in(len, (0..len).map(|_| T::default()))
    }

    /// Allocates a slice of the items of an iterator whose length is known up front
    /// (an [`ExactSizeIterator`]): bumpalo's `alloc_slice_fill_iter`. It allocates
    /// once, for `len()` items, and takes exactly that many; any further items are
    /// left in the iterator. For an iterator of unknown length (`filter`,
    /// `flat_map`, ...) use [`alloc_iter`](Self::alloc_iter).
    ///
    /// The iterator may allocate from this arena while it runs.
    ///
    /// # Panics
    /// Panics with "overflow" if `len() * size_of::<T>()` overflows `isize::MAX`;
    /// calls `handle_alloc_error` if a page is refused. Panics if the iterator yields
    /// fewer items than its `len()` said. On that panic, or if the iterator panics,
    /// the items already taken are dropped (once), the block goes back to the arena,
    /// and the arena stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let squares = arena.alloc_slice_fill_iter((1..5u32).map(|i| i * i));
    /// assert_eq!(squares, [1, 4, 9, 16]);
    /// ```
    #[inline]
    pub fn alloc_slice_fill_iter<T, I>(&self, iter: I) -> &mut [T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        infallible(self.alloc_slice_fill_iter_in(iter))
    }

    /// Like [`alloc_slice_fill_iter`](Self::alloc_slice_fill_iter), returning an
    /// error instead (and taking no item) when the allocation fails.
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Panics
    /// Panics, as `alloc_slice_fill_iter` does, if the iterator yields fewer items
    /// than its `len()` said (a bug in the iterator, not an allocation failure).
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let names = ["cpu", "mem"].iter().map(|s| s.len());
    /// assert_eq!(arena.try_alloc_slice_fill_iter(names).unwrap(), [3, 3]);
    /// ```
    #[inline]
    pub fn try_alloc_slice_fill_iter<T, I>(&self, iter: I) -> Result<&mut [T], AllocError>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.alloc_slice_fill_iter_in(iter)
    }

    #[inline(always)]
    fn alloc_slice_fill_iter_in<E: Failure, T, I>(&self, iter: I) -> Result<&mut [T], E>
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let iter = iter.into_iter();
        self.fill_slice_in(iter.len(), iter)
    }

    /// Every slice filled element by element: allocates `len` elements, then
    /// writes the first `len` items of `items` into them. Only the iterator of
    /// `alloc_slice_fill_iter` can run dry before that, which panics. On any panic
    /// the [`Filling`] guard drops the elements written and gives the block back.
    #[inline(always)]
    pub(crate) fn fill_slice_in<E: Failure, T>(
        &self,
        len: usize,
        items: impl Iterator<Item = T>,
    ) -> Result<&mut [T], E> {
        let layout = Layout::array::<T>(len).map_err(|_| E::overflow())?;
        let block = self.core().alloc::<E>(layout, Known::ALIGN)?.cast::<T>();
        let mut filling = Filling::new(self, block, layout, len);
        filling.write_from(items, len);
        if filling.written < len {
            iterator_ran_dry(filling.written, len);
        }
        Ok(filling.finish())
    }

    // ----- Slices from any iterator ------------------------------------------------

    /// Allocates a slice of the items of any iterator, of known length or not
    /// (`filter`, `flat_map`, `chars`, ...). This is bump-scope's `alloc_iter`;
    /// bumpalo has no such call. For an [`ExactSizeIterator`],
    /// [`alloc_slice_fill_iter`](Self::alloc_slice_fill_iter) does the same without
    /// growing.
    ///
    /// It works like an arena `Vec` that collects the items and is then leaked: it
    /// reserves the lower bound of the iterator's `size_hint` up front, grows the
    /// block when it is full, and at the end shrinks it to the items taken. While the
    /// block is the most recent one, it grows in place as far as its page has room
    /// (doubling, or up to the end of the page) and shrinks in place, so when the
    /// iterator allocates nothing from this arena and the page has room, no copy is
    /// left behind, even when the size hint is wrong. A block that leaves its page
    /// moves to a page with room to keep growing (as `Vec`s do, see the crate docs),
    /// leaving the old copy behind until reset. (In sanitizer mode the block grows
    /// into a new block of the backing allocator and shrinks through its `shrink`.) The
    /// iterator is not asked again after it returns `None`.
    ///
    /// The iterator may allocate from this arena while it runs: every item is
    /// written inside a block the arena has handed out, never past the cursor. **An
    /// allocation by the iterator makes the block's next growth a move**: the
    /// allocation lies after the block, so the items so far are copied into a new
    /// block and the old one is left behind until reset; and a final shrink after it
    /// leaves the block's unused tail where it is.
    ///
    /// # Panics
    /// Panics with "overflow" if the size hint's lower bound, or the items, overflow
    /// `isize::MAX` bytes; calls `handle_alloc_error` if a page is refused. If the
    /// iterator panics, the items already taken are dropped (once), the block goes
    /// back to the arena, and the arena stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let even = arena.alloc_iter((1..=10u32).filter(|i| i % 2 == 0));
    /// assert_eq!(even, [2, 4, 6, 8, 10]);
    ///
    /// let words = ["a b", "c"];
    /// let letters = arena.alloc_iter(words.iter().flat_map(|w| w.split(' ')));
    /// assert_eq!(letters, ["a", "b", "c"]);
    ///
    /// // The iterator may allocate from the same arena.
    /// let names = arena.alloc_iter((0..3).map(|i| &*arena.alloc_str(&format!("dim{i}"))));
    /// assert_eq!(names, ["dim0", "dim1", "dim2"]);
    /// ```
    #[inline]
    pub fn alloc_iter<T>(&self, iter: impl IntoIterator<Item = T>) -> &mut [T] {
        infallible(self.alloc_iter_in(iter))
    }

    /// Like [`alloc_iter`](Self::alloc_iter), returning an error instead when an
    /// allocation fails (the reservation for the size hint, or a growth).
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused; the items taken so far
    /// are then dropped, and the arena stays usable.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let digits = arena.try_alloc_iter("a1b22c".chars().filter(char::is_ascii_digit));
    /// assert_eq!(digits.unwrap(), ['1', '2', '2']);
    ///
    /// arena.set_limit(Some(arena.stats().capacity + 1024)); // no page more
    /// assert!(arena.try_alloc_iter((0..1_000_000u64).filter(|_| true)).is_err());
    /// assert_eq!(arena.alloc_iter([1, 2]), [1, 2]); // still serving
    /// ```
    #[inline]
    pub fn try_alloc_iter<T>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&mut [T], AllocError> {
        self.alloc_iter_in(iter)
    }

    #[inline(always)]
    fn alloc_iter_in<E: Failure, T>(
        &self,
        iter: impl IntoIterator<Item = T>,
    ) -> Result<&mut [T], E> {
        let mut iter = iter.into_iter();
        let (lower, _) = iter.size_hint();
        let layout = Layout::array::<T>(lower).map_err(|_| E::overflow())?;
        let block = self.core().alloc::<E>(layout, Known::ALIGN)?.cast::<T>();
        // Zero-sized items take no room: the block never grows for them.
        let capacity = if mem::size_of::<T>() == 0 {
            usize::MAX
        } else {
            lower
        };
        let mut filling = Filling::new(self, block, layout, capacity);
        // The items the size hint promised first, in the writer loop (which the
        // compiler vectorizes when the hint is exact), ...
        filling.write_from(iter.by_ref(), lower);
        if filling.written < lower {
            // The iterator ran dry (it is not asked again).
            return Ok(filling.finish_shrunk());
        }
        // ... then whatever else the iterator yields, growing the block.
        iter.try_for_each(|value| {
            if filling.written == filling.capacity {
                // On an error, `value` and then the guard drop.
                filling.grow::<E>()?;
            }
            // SAFETY: `written < capacity`: checked, or just grown.
            unsafe { filling.push_unchecked(value) };
            Ok(())
        })?;
        Ok(filling.finish_shrunk())
    }

    // ----- Uninitialized values ----------------------------------------------------

    /// Allocates room for a `T` and returns it uninitialized, to be written in
    /// place ([`MaybeUninit::write`] gives back `&mut T`).
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let slot = arena.alloc_uninit::<[u64; 4]>();
    /// let table: &mut [u64; 4] = slot.write([1, 2, 3, 4]);
    /// table[0] = 10;
    /// assert_eq!(table, &[10, 2, 3, 4]);
    /// ```
    #[inline(always)]
    pub fn alloc_uninit<T>(&self) -> &mut MaybeUninit<T> {
        infallible(self.alloc_uninit_in())
    }

    /// Like [`alloc_uninit`](Self::alloc_uninit), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(*arena.try_alloc_uninit::<u32>().unwrap().write(5), 5);
    /// ```
    #[inline(always)]
    pub fn try_alloc_uninit<T>(&self) -> Result<&mut MaybeUninit<T>, AllocError> {
        self.alloc_uninit_in()
    }

    #[inline(always)]
    fn alloc_uninit_in<E: Failure, T>(&self) -> Result<&mut MaybeUninit<T>, E> {
        let block = self.core().alloc::<E>(Layout::new::<T>(), Known::TYPE)?;
        // SAFETY: `block` is a fresh block, aligned and sized for a `T` (for a
        // zero-sized `T`, an aligned pointer valid for zero bytes), that nothing else
        // refers to; `MaybeUninit` needs no initialization.
        Ok(unsafe { &mut *block.cast::<MaybeUninit<T>>().as_ptr() })
    }

    /// Allocates room for `len` elements of `T` and returns them uninitialized.
    ///
    /// # Panics
    /// Panics with "overflow" if `len * size_of::<T>()` overflows `isize::MAX`; calls
    /// `handle_alloc_error` if a page is refused.
    ///
    /// # Examples
    /// ```
    /// use std::mem::MaybeUninit;
    ///
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let buf = arena.alloc_uninit_slice::<u32>(3);
    /// for (i, slot) in buf.iter_mut().enumerate() {
    ///     slot.write(i as u32 * 10);
    /// }
    /// // SAFETY: every element was written just above.
    /// let values = unsafe { &mut *(buf as *mut [MaybeUninit<u32>] as *mut [u32]) };
    /// assert_eq!(values, [0, 10, 20]);
    /// ```
    #[inline]
    pub fn alloc_uninit_slice<T>(&self, len: usize) -> &mut [MaybeUninit<T>] {
        infallible(self.alloc_uninit_slice_in(len))
    }

    /// Like [`alloc_uninit_slice`](Self::alloc_uninit_slice), returning an error
    /// instead.
    ///
    /// # Errors
    /// [`AllocError`] on overflow or if a page is refused.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(arena.try_alloc_uninit_slice::<u8>(16).unwrap().len(), 16);
    /// assert!(arena.try_alloc_uninit_slice::<u32>(usize::MAX).is_err());
    /// ```
    #[inline]
    pub fn try_alloc_uninit_slice<T>(
        &self,
        len: usize,
    ) -> Result<&mut [MaybeUninit<T>], AllocError> {
        self.alloc_uninit_slice_in(len)
    }

    #[inline(always)]
    fn alloc_uninit_slice_in<E: Failure, T>(&self, len: usize) -> Result<&mut [MaybeUninit<T>], E> {
        let layout = Layout::array::<T>(len).map_err(|_| E::overflow())?;
        let block = self.core().alloc::<E>(layout, Known::ALIGN)?;
        // SAFETY: `block` is a fresh block aligned for `T` with room for `len`
        // elements (or an aligned pointer when they take no bytes), that nothing else
        // refers to; `MaybeUninit` needs no initialization.
        Ok(unsafe {
            &mut *ptr::slice_from_raw_parts_mut(block.cast::<MaybeUninit<T>>().as_ptr(), len)
        })
    }
}

/// A block being filled with elements: the first `written` are initialized. If it
/// is dropped before [`finish`](Self::finish) (on a panic in the user's code, or an
/// allocation error while growing), it drops those elements, once, and gives the
/// block back to the arena: rolled back if it is still the most recent block (in
/// sanitizer mode, freed at once).
///
/// Invariant: `block` is a live block of `arena` allocated (or last resized) with
/// `layout`, with room for `capacity` elements (any number for a zero-sized `T`),
/// and `written <= capacity`. Nothing else refers to it.
struct Filling<'a, T, A: Allocator> {
    arena: &'a OneWayAlloc<A>,
    block: NonNull<T>,
    layout: Layout,
    capacity: usize,
    written: usize,
}

impl<'a, T, A: Allocator> Filling<'a, T, A> {
    /// Takes charge of `block`, just allocated with `layout`, which holds
    /// `capacity` elements: `layout` is `Layout::array::<T>(capacity)`, or for a
    /// zero-sized `T` any layout of `T`'s alignment.
    #[inline(always)]
    fn new(arena: &'a OneWayAlloc<A>, block: NonNull<T>, layout: Layout, capacity: usize) -> Self {
        Filling {
            arena,
            block,
            layout,
            capacity,
            written: 0,
        }
    }

    /// Writes `value` as the next element.
    ///
    /// # Safety
    /// `written < capacity`.
    #[inline(always)]
    unsafe fn push_unchecked(&mut self, value: T) {
        debug_assert!(self.written < self.capacity);
        // SAFETY: the block has room for `capacity > written` elements (the caller's
        // guarantee), so element `written` is inside it (for a zero-sized `T`, an
        // aligned pointer valid for zero bytes).
        unsafe { self.block.add(self.written).write(value) };
        self.written += 1;
    }

    /// The writer loop: writes at most `max` items of `items` into the room left in
    /// the block, stopping early if it is full or `items` runs dry. Internal
    /// iteration (`take` and `for_each`), so the compiler can vectorize it and
    /// adapters such as `chain` need no test per item.
    #[inline(always)]
    fn write_from(&mut self, items: impl Iterator<Item = T>, max: usize) {
        // `written <= capacity`: no underflow.
        let room = (self.capacity - self.written).min(max);
        items.take(room).for_each(|value| {
            // SAFETY: `take` yields at most `room` items: each finds
            // `written < capacity`.
            unsafe { self.push_unchecked(value) }
        });
    }

    /// Makes room for at least one more element when the block is full. The most
    /// recent block grows in place, doubling, or up to the end of its page when that
    /// is less; otherwise it moves, doubling (to a page with room for it to keep
    /// growing when it leaves its page, SPEC §1.3). On an error the block is as it
    /// was.
    #[cold]
    #[inline(never)]
    fn grow<E: Failure>(&mut self) -> Result<(), E> {
        let size = mem::size_of::<T>();
        if size == 0 {
            // `usize::MAX` zero-sized items were taken.
            return Err(E::overflow());
        }
        let old = self.layout;
        // Like `Vec`: at least 8 bytes' worth (4 elements for small ones).
        let min = if size == 1 {
            8
        } else if size <= 1024 {
            4
        } else {
            1
        };
        let wanted = self.capacity.saturating_mul(2).max(min);
        let new = Layout::array::<T>(wanted).map_err(|_| E::overflow())?;
        #[cfg(not(onewayalloc_separate_blocks))]
        {
            let room = self
                .arena
                .core()
                .room_after_last(self.block.cast(), old.size());
            // The room takes whole elements; growing by at least one.
            let extra = room
                .map_or(0, |room| room / size)
                .min(wanted - self.capacity);
            if extra > 0 {
                // At most `wanted` elements, whose layout exists.
                let in_place =
                    Layout::array::<T>(self.capacity + extra).map_err(|_| E::overflow())?;
                // SAFETY: the invariant: `block` is a live block of the arena with
                // `old`; `in_place` is larger, with the same alignment.
                let grown = unsafe {
                    self.arena
                        .core()
                        .grow_inline(self.block.cast(), old, in_place)
                };
                if let Some(grown) = grown {
                    self.block = grown.cast();
                    self.layout = in_place;
                    self.capacity += extra;
                    return Ok(());
                }
            }
        }
        // SAFETY: the invariant: `block` is a live block of the arena with `old`;
        // `new` is not zero-sized (`wanted >= 1`, `size > 0`).
        let moved = unsafe { self.arena.core().resize::<E>(self.block.cast(), old, new)? };
        self.block = moved.cast();
        self.layout = new;
        self.capacity = wanted;
        Ok(())
    }

    /// Hands out the elements written, for the arena's lifetime.
    #[inline(always)]
    fn finish(self) -> &'a mut [T] {
        let this = ManuallyDrop::new(self);
        // SAFETY: the first `written` elements are initialized and nothing else
        // refers to the block; the guard is forgotten, so they are not dropped.
        unsafe { &mut *ptr::slice_from_raw_parts_mut(this.block.as_ptr(), this.written) }
    }

    /// Shrinks the block to the elements written (in place; in sanitizer mode
    /// through the backing allocator's `shrink`, kept as it is if that fails), then
    /// hands them out.
    #[inline]
    fn finish_shrunk(mut self) -> &'a mut [T] {
        if self.written < self.capacity && mem::size_of::<T>() != 0 {
            self.shrink();
        }
        self.finish()
    }

    #[cold]
    fn shrink(&mut self) {
        let old = self.layout;
        let Ok(new) = Layout::array::<T>(self.written) else {
            return; // unreachable: `written < capacity`, whose layout exists
        };
        if new.size() == 0 {
            // SAFETY: the invariant: `block` is a live block of the arena with `old`.
            unsafe { self.arena.core().dealloc(self.block.cast(), old) };
            self.block = NonNull::dangling();
            self.layout = new;
        } else {
            // SAFETY: the invariant: `block` is a live block of the arena with `old`;
            // `new` is not zero-sized.
            let shrunk = unsafe {
                self.arena
                    .core()
                    .resize::<AllocError>(self.block.cast(), old, new)
            };
            if let Ok(shrunk) = shrunk {
                self.block = shrunk.cast();
                self.layout = new;
            }
        }
        self.capacity = self.written;
    }
}

impl<T, A: Allocator> Drop for Filling<'_, T, A> {
    fn drop(&mut self) {
        // Deallocated even if an element's `drop` panics.
        struct GiveBack<'g, 'a, T, A: Allocator>(&'g Filling<'a, T, A>);
        impl<T, A: Allocator> Drop for GiveBack<'_, '_, T, A> {
            fn drop(&mut self) {
                let filling = self.0;
                // SAFETY: the invariant: `block` is a live block of the arena with
                // `layout`; nothing refers to it once the guard is gone.
                unsafe {
                    filling
                        .arena
                        .core()
                        .dealloc(filling.block.cast(), filling.layout)
                }
            }
        }
        let give_back = GiveBack(self);
        // SAFETY: the first `written` elements are initialized and owned by the guard
        // alone (never handed out); they are dropped here, once.
        unsafe {
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(
                give_back.0.block.as_ptr(),
                give_back.0.written,
            ))
        };
    }
}

/// The panic of `alloc_slice_fill_iter` when the iterator yields fewer items than
/// its `ExactSizeIterator::len` said.
#[cold]
#[inline(never)]
fn iterator_ran_dry(yielded: usize, len: usize) -> ! {
    panic!(
        "onewayalloc: alloc_slice_fill_iter: the iterator yielded {yielded} items, \
         fewer than the {len} its ExactSizeIterator::len reported"
    )
}
