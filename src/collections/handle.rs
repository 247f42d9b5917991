//! `ArenaHandle`: what `collect_in`, `vec![in ...]` and `format_in!` accept.

use allocator_api2::alloc::Allocator;

use crate::{OneWayAlloc, Scope};

/// Every handle a user holds on an arena, as `collect_in`, [`vec![in
/// ...]`](crate::vec), [`format_in!`](crate::format_in) and
/// [`try_format_in!`](crate::try_format_in) take it: a reference to the handle
/// gives the allocator the collection is built in.
///
/// | you hold | you pass | the collection is built in |
/// |---|---|---|
/// | `arena: OneWayAlloc` | `&arena` | `&OneWayAlloc` |
/// | `arena: &OneWayAlloc` (also `s.arena()` in a scope) | `arena` | `&OneWayAlloc` |
/// | `arena: &mut OneWayAlloc` (as [`with_scratch`](crate::with_scratch) gives it) | `arena` (reborrowed, not moved) | `&OneWayAlloc` |
/// | `guard: PooledArena` (from [`Pool::get`](crate::Pool::get)) | `&guard` | `&OneWayAlloc` |
/// | `s: &mut Scope` (in [`scope`](OneWayAlloc::scope)) | `s` | `&OneWayAlloc`, as `s.arena()` |
/// | `arena: SyncOneWayAlloc` (with `std`) | `&arena` | `&SyncOneWayAlloc` ([`collections::sync`](crate::collections::sync)) |
/// | any other allocator `alloc: B` where `B: Clone` | `&alloc` | `B`, a clone |
///
/// The handle is taken by reference (`&H`) so that a `&mut OneWayAlloc` is
/// reborrowed rather than moved: `collect_in(arena)` twice in a row works.
///
/// # Examples
/// ```
/// use onewayalloc::collections::{self as arena, CollectIn};
/// use onewayalloc::{OneWayAlloc, Pool, format_in, with_scratch};
///
/// static POOL: Pool = Pool::new();
///
/// let guard = POOL.get();
/// let evens: arena::Vec<u32> = (0..10).filter(|n| n % 2 == 0).collect_in(&guard);
/// let listed = onewayalloc::vec![in &guard; 1, 2, 3];
/// let line = format_in!(&guard, "{} evens", evens.len());
/// assert_eq!((listed.len(), line.as_str()), (3, "5 evens"));
///
/// let total = with_scratch(|arena| {
///     let squares: arena::Vec<u64> = (1..=3).map(|n| n * n).collect_in(arena);
///     let more = onewayalloc::vec![in arena; 16u64, 25];
///     squares.iter().chain(&more).sum::<u64>()
/// });
/// assert_eq!(total, 55);
///
/// let mut arena = OneWayAlloc::new();
/// let n = arena.scope(|s| (0..4).collect_in::<arena::Vec<u8>>(s).len());
/// assert_eq!(n, 4);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handle on an arena (or a `Clone` allocator)",
    label = "`collect_in`, `vec![in ...]` and `format_in!` take a handle on an arena here",
    note = "pass `&arena` for a `OneWayAlloc` or a `SyncOneWayAlloc`, `&guard` for a pool's `PooledArena` (from `Pool::get`), `arena` as `with_scratch` gives it, or `s`/`s.arena()` in a scope",
    note = "a `Pool` is not an arena: take one with `let guard = pool.get();` and pass `&guard`"
)]
pub trait ArenaHandle {
    /// The allocator a collection is built in: `&'h OneWayAlloc` for every arena
    /// handle.
    type Alloc<'h>
    where
        Self: 'h;

    /// The allocator behind the handle, for as long as the handle is borrowed.
    ///
    /// ```
    /// use onewayalloc::collections::ArenaHandle;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let same: &onewayalloc::OneWayAlloc = arena.alloc_handle();
    /// assert!(core::ptr::eq(same, &arena));
    /// ```
    fn alloc_handle(&self) -> Self::Alloc<'_>;
}

impl<A: Allocator> ArenaHandle for OneWayAlloc<A> {
    type Alloc<'h>
        = &'h OneWayAlloc<A>
    where
        Self: 'h;

    #[inline]
    fn alloc_handle(&self) -> &OneWayAlloc<A> {
        self
    }
}

#[cfg(feature = "std")]
impl ArenaHandle for crate::PooledArena<'_> {
    type Alloc<'h>
        = &'h OneWayAlloc
    where
        Self: 'h;

    #[inline]
    fn alloc_handle(&self) -> &OneWayAlloc {
        self
    }
}

impl<A: Allocator> ArenaHandle for Scope<'_, A> {
    type Alloc<'h>
        = &'h OneWayAlloc<A>
    where
        Self: 'h;

    #[inline]
    fn alloc_handle(&self) -> &OneWayAlloc<A> {
        self.arena()
    }
}

/// The thread-safe arena: collections built in `&SyncOneWayAlloc` may move and grow
/// on any thread.
#[cfg(feature = "std")]
impl<A: Allocator> ArenaHandle for crate::SyncOneWayAlloc<A> {
    type Alloc<'h>
        = &'h crate::SyncOneWayAlloc<A>
    where
        Self: 'h;

    #[inline]
    fn alloc_handle(&self) -> &crate::SyncOneWayAlloc<A> {
        self
    }
}

/// Any other allocator (and a `&OneWayAlloc` behind a further reference), cloned.
impl<B: Clone> ArenaHandle for B {
    type Alloc<'h>
        = B
    where
        B: 'h;

    #[inline]
    fn alloc_handle(&self) -> B {
        self.clone()
    }
}

/// The allocator behind `handle`: what the macros call.
#[doc(hidden)]
#[inline]
pub fn __alloc_of<H: ArenaHandle + ?Sized>(handle: &H) -> H::Alloc<'_> {
    handle.alloc_handle()
}
