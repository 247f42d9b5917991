//! Nested scopes with constant-time rollback.
//!
//! [`OneWayAlloc::scope`] runs a closure with a [`Scope`] handle; everything
//! allocated through it lives for the scope's lifetime `'s`, and when the closure
//! returns the arena rolls back to where it was, keeping its pages. The closure is
//! generic over `'s`, so nothing allocated in the scope can escape it: that is what
//! makes the rollback sound without any run-time check.

use core::alloc::Layout;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator, Global};

use crate::owned::DropsCheckpoint;
use crate::stats::{PageInfo, Stats};
use crate::{Checkpoint, OneWayAlloc};

/// A handle to allocate from an arena for the lifetime `'s` of a scope, from
/// [`OneWayAlloc::scope`] or [`Scope::scope`].
///
/// It has the arena's allocation calls, each returning memory that lives for `'s`
/// (not just for the borrow of the handle), and [`arena`](Scope::arena) lends the
/// arena for collections (`Vec`, `HashMap`, the arena `String`, `format_in!`).
/// While an inner scope is open the outer handle is mutably borrowed, so it cannot
/// allocate; blocks it made before stay valid.
///
/// **Arena data cannot leave the scope.** Returning a reference, a `Vec` or a
/// `String` made in a scope (or in [`with_scratch`](crate::with_scratch)) out of its
/// closure is a compile error, usually a lifetime error such as "borrowed data
/// escapes outside of closure" or "lifetime may not live long enough": the scope
/// rolls its memory back when the closure returns. Return plain values (numbers,
/// `std` `String`s, copies), or allocate what must stay in an enclosing scope.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::allocator_api2::vec::Vec;
///
/// let mut arena = OneWayAlloc::new();
/// let total = arena.scope(|request| {
///     let user = request.alloc_str("ada"); // lives for the whole scope
///     let len = request.scope(|scratch| {
///         let mut parts = Vec::new_in(scratch.arena());
///         parts.extend(user.split('d'));
///         parts.len() // only plain values leave a scope
///     });
///     user.len() + len // `user` is still valid after the inner scope
/// });
/// assert_eq!(total, 5);
/// assert_eq!(arena.stats().used, 0); // everything was rolled back
/// ```
///
/// Nothing allocated in a scope can leave it:
///
/// ```compile_fail
/// let mut arena = onewayalloc::OneWayAlloc::new();
/// let escaped = arena.scope(|s| s.alloc(1u32)); // error: borrowed data escapes
/// ```
///
/// ```compile_fail,E0521
/// use onewayalloc::allocator_api2::vec::Vec;
/// let mut arena = onewayalloc::OneWayAlloc::new();
/// arena.scope(|outer| {
///     let mut kept = None;
///     outer.scope(|inner| {
///         let v: Vec<u8, _> = Vec::new_in(inner.arena());
///         kept = Some(v); // error: the inner scope's Vec cannot outlive it
///     });
/// });
/// ```
///
/// ```compile_fail
/// let mut arena = onewayalloc::OneWayAlloc::new();
/// arena.scope(|outer| {
///     outer.scope(|_inner| {
///         outer.alloc(1u8); // error: the outer scope is borrowed by the inner one
///     });
/// });
/// ```
pub struct Scope<'s, A: Allocator = Global> {
    // Never handed out for `'s`: a `&'s OneWayAlloc` would allocate for `'s` past
    // the rollback of an inner scope. `Scope::arena` lends it for a borrow of the
    // handle instead.
    arena: &'s OneWayAlloc<A>,
}

/// Runs `f` with a scope over `arena` and rolls the arena back afterwards, also
/// when `f` panics. The caller must hold exclusive access to the arena (`&mut` to
/// it or to the outer scope) for the whole call.
fn run_scope<A: Allocator, R>(
    arena: &OneWayAlloc<A>,
    f: impl for<'s> FnOnce(&mut Scope<'s, A>) -> R,
) -> R {
    struct Rollback<'a, A: Allocator> {
        arena: &'a OneWayAlloc<A>,
        checkpoint: Checkpoint,
        drops: DropsCheckpoint,
    }
    impl<A: Allocator> Drop for Rollback<'_, A> {
        fn drop(&mut self) {
            /// Restores the core also when a destructor panics.
            struct Restore<'a, A: Allocator>(&'a OneWayAlloc<A>, Checkpoint);
            impl<A: Allocator> Drop for Restore<'_, A> {
                fn drop(&mut self) {
                    // SAFETY: the checkpoint is this arena's, taken just before `f`
                    // ran. No reset or trim happened since (both need `&mut` to the
                    // arena, which the caller holds exclusively). Every block
                    // allocated since was allocated through the `Scope<'s>` given
                    // to `f`, which is generic over `'s`: no such block (nor any
                    // collection using it) can outlive `f`.
                    unsafe { self.0.core().restore(self.1) }
                }
            }
            let restore = Restore(self.arena, self.checkpoint);
            // SAFETY: the drops checkpoint was taken with the core's, with no reset
            // since (as above); the values registered since were registered through
            // the scope, so none outlives `f`. They run before their blocks are
            // rolled back.
            unsafe { self.arena.run_drops_to(self.drops) }
            drop(restore);
        }
    }
    let _rollback = Rollback {
        arena,
        checkpoint: arena.core().checkpoint(),
        drops: arena.drops_checkpoint(),
    };
    f(&mut Scope { arena })
}

impl<A: Allocator> OneWayAlloc<A> {
    /// Runs `f` with a [`Scope`] of the arena, then rolls the arena back to where it
    /// was, in constant time, keeping every page: pages taken inside the scope become
    /// unused pages, as after [`reset`](Self::reset). After the scope, `stats().used`
    /// is what it was before it, and running the same scope again takes no new page.
    /// If `f` panics, the arena is rolled back all the same.
    ///
    /// The values the scope placed with [`Scope::alloc_owned`] are dropped at its
    /// end, most recent first, before the rollback; an enclosing scope's values
    /// stay alive until that scope ends.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// for request in ["GET /a", "GET /bb"] {
    ///     let path_len = arena.scope(|s| {
    ///         let words = s.alloc_slice_copy(&request.split(' ').collect::<Vec<_>>());
    ///         words[1].len()
    ///     });
    ///     assert!(path_len >= 2);
    /// }
    /// assert_eq!(arena.stats().used, 0);
    /// ```
    ///
    /// # Keeping data across a scratch scope
    ///
    /// `scope` takes `&mut self`, so nothing allocated directly from the arena can be
    /// alive while it runs: this is rejected (E0502), because the `&mut` borrow for
    /// the scope conflicts with `id`'s shared borrow.
    /// ```compile_fail,E0502
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// let id = arena.alloc_str("chart.cpu");
    /// arena.scope(|scratch| scratch.alloc_bytes(100).len());
    /// println!("{id}");
    /// ```
    /// Open an outer scope for the request's own data, and a scratch scope inside
    /// it: the outer scope's blocks live for its whole closure, across any number of
    /// inner scopes, which roll back only what they allocated.
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.scope(|request| {
    ///     let id = request.alloc_str("chart.cpu"); // kept for the whole request
    ///     for step in 0..3 {
    ///         let n = request.scope(|scratch| scratch.alloc_bytes(1000 * step).len());
    ///         assert_eq!(id, "chart.cpu"); // still valid after each scratch scope
    ///         assert_eq!(n, 1000 * step);
    ///     }
    /// });
    /// ```
    pub fn scope<R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s, A>) -> R) -> R {
        run_scope(self, f)
    }
}

/// Generates the scope's delegating calls: each returns what the arena's call does,
/// for the scope's lifetime.
macro_rules! delegate {
    ($(
        $(#[$doc:meta])*
        fn $name:ident $([$($generic:tt)*])? ($($arg:ident: $ty:ty),*) -> $ret:ty
        $(where [$($bound:tt)*])?;
    )*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name $(<$($generic)*>)? (&self, $($arg: $ty),*) -> $ret
        $(where $($bound)*)?
        {
            self.arena.$name($($arg),*)
        }
    )*};
}

// Every `&mut` these calls return points to a fresh block; see arena.rs.
#[allow(clippy::mut_from_ref)]
impl<'s, A: Allocator> Scope<'s, A> {
    delegate! {
        /// [`OneWayAlloc::alloc`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(*s.alloc(3u8), 3));
        /// ```
        fn alloc[T](value: T) -> &'s mut T;
        /// [`OneWayAlloc::alloc_owned`] for the scope's lifetime: the value is
        /// dropped at the end of this scope (most recent first), not at the end
        /// of an enclosing one.
        ///
        /// ```
        /// use std::sync::Arc;
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// let token = Arc::new(());
        /// arena.scope(|s| {
        ///     s.alloc_owned(Arc::clone(&token));
        ///     assert_eq!(Arc::strong_count(&token), 2);
        /// });
        /// assert_eq!(Arc::strong_count(&token), 1); // dropped at the scope's end
        /// ```
        fn alloc_owned[T: Send + 'static](value: T) -> &'s mut T;
        /// [`OneWayAlloc::try_alloc_owned`] for the scope's lifetime.
        fn try_alloc_owned[T: Send + 'static](value: T) -> Result<&'s mut T, AllocError>;
        /// [`OneWayAlloc::try_alloc`] for the scope's lifetime.
        fn try_alloc[T](value: T) -> Result<&'s mut T, AllocError>;
        /// [`OneWayAlloc::alloc_with`] for the scope's lifetime.
        fn alloc_with[T](f: impl FnOnce() -> T) -> &'s mut T;
        /// [`OneWayAlloc::try_alloc_with`] for the scope's lifetime.
        fn try_alloc_with[T](f: impl FnOnce() -> T) -> Result<&'s mut T, AllocError>;
        /// [`OneWayAlloc::alloc_bytes`] for the scope's lifetime.
        fn alloc_bytes(size: usize) -> &'s mut [MaybeUninit<u8>];
        /// [`OneWayAlloc::try_alloc_bytes`] for the scope's lifetime.
        fn try_alloc_bytes(size: usize) -> Result<&'s mut [MaybeUninit<u8>], AllocError>;
        /// [`OneWayAlloc::alloc_zeroed`] for the scope's lifetime.
        fn alloc_zeroed(nmemb: usize, size: usize) -> &'s mut [u8];
        /// [`OneWayAlloc::try_alloc_zeroed`] for the scope's lifetime.
        fn try_alloc_zeroed(nmemb: usize, size: usize) -> Result<&'s mut [u8], AllocError>;
        /// [`OneWayAlloc::alloc_str`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_str("hi"), "hi"));
        /// ```
        fn alloc_str(s: &str) -> &'s mut str;
        /// [`OneWayAlloc::try_alloc_str`] for the scope's lifetime.
        fn try_alloc_str(s: &str) -> Result<&'s mut str, AllocError>;
        /// [`OneWayAlloc::alloc_slice_copy`] for the scope's lifetime.
        fn alloc_slice_copy[T: Copy](src: &[T]) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_copy`] for the scope's lifetime.
        fn try_alloc_slice_copy[T: Copy](src: &[T]) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_fill_with`] for the scope's lifetime.
        fn alloc_slice_fill_with[T](len: usize, f: impl FnMut(usize) -> T) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_fill_with`] for the scope's lifetime.
        fn try_alloc_slice_fill_with[T](
            len: usize,
            f: impl FnMut(usize) -> T
        ) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_clone`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_slice_clone(&[0..1, 2..3]), [0..1, 2..3]));
        /// ```
        fn alloc_slice_clone[T: Clone](src: &[T]) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_clone`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.try_alloc_slice_clone(&[0..1]).unwrap(), [0..1]));
        /// ```
        fn try_alloc_slice_clone[T: Clone](src: &[T]) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_fill_copy`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_slice_fill_copy(2, 9u8), [9, 9]));
        /// ```
        fn alloc_slice_fill_copy[T: Copy](len: usize, value: T) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_fill_copy`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert!(s.try_alloc_slice_fill_copy(usize::MAX, 0u32).is_err()));
        /// ```
        fn try_alloc_slice_fill_copy[T: Copy](
            len: usize,
            value: T
        ) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_fill_clone`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_slice_fill_clone(2, &(1..4)), [1..4, 1..4]));
        /// ```
        fn alloc_slice_fill_clone[T: Clone](len: usize, value: &T) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_fill_clone`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.try_alloc_slice_fill_clone(1, &(1..4)).unwrap(), [1..4]));
        /// ```
        fn try_alloc_slice_fill_clone[T: Clone](
            len: usize,
            value: &T
        ) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_fill_default`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_slice_fill_default::<u64>(3), [0, 0, 0]));
        /// ```
        fn alloc_slice_fill_default[T: Default](len: usize) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_slice_fill_default`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.try_alloc_slice_fill_default::<u8>(1).unwrap(), [0]));
        /// ```
        fn try_alloc_slice_fill_default[T: Default](
            len: usize
        ) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_slice_fill_iter`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_slice_fill_iter([1, 2].map(|i| i * 3)), [3, 6]));
        /// ```
        fn alloc_slice_fill_iter[T, I](iter: I) -> &'s mut [T]
        where [I: IntoIterator<Item = T>, I::IntoIter: ExactSizeIterator];
        /// [`OneWayAlloc::try_alloc_slice_fill_iter`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.try_alloc_slice_fill_iter(0..2).unwrap(), [0, 1]));
        /// ```
        fn try_alloc_slice_fill_iter[T, I](iter: I) -> Result<&'s mut [T], AllocError>
        where [I: IntoIterator<Item = T>, I::IntoIter: ExactSizeIterator];
        /// [`OneWayAlloc::alloc_iter`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_iter((0..9).filter(|i| i % 4 == 0)), [0, 4, 8]));
        /// ```
        fn alloc_iter[T](iter: impl IntoIterator<Item = T>) -> &'s mut [T];
        /// [`OneWayAlloc::try_alloc_iter`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.try_alloc_iter("ab".chars()).unwrap(), ['a', 'b']));
        /// ```
        fn try_alloc_iter[T](
            iter: impl IntoIterator<Item = T>
        ) -> Result<&'s mut [T], AllocError>;
        /// [`OneWayAlloc::alloc_uninit`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(*s.alloc_uninit::<u16>().write(4), 4));
        /// ```
        fn alloc_uninit[T]() -> &'s mut MaybeUninit<T>;
        /// [`OneWayAlloc::try_alloc_uninit`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(*s.try_alloc_uninit::<u16>().unwrap().write(4), 4));
        /// ```
        fn try_alloc_uninit[T]() -> Result<&'s mut MaybeUninit<T>, AllocError>;
        /// [`OneWayAlloc::alloc_uninit_slice`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert_eq!(s.alloc_uninit_slice::<u64>(5).len(), 5));
        /// ```
        fn alloc_uninit_slice[T](len: usize) -> &'s mut [MaybeUninit<T>];
        /// [`OneWayAlloc::try_alloc_uninit_slice`] for the scope's lifetime.
        ///
        /// ```
        /// let mut arena = onewayalloc::OneWayAlloc::new();
        /// arena.scope(|s| assert!(s.try_alloc_uninit_slice::<u64>(usize::MAX).is_err()));
        /// ```
        fn try_alloc_uninit_slice[T](
            len: usize
        ) -> Result<&'s mut [MaybeUninit<T>], AllocError>;
        /// [`OneWayAlloc::alloc_layout`] (the block lives for the scope's lifetime).
        fn alloc_layout(layout: Layout) -> NonNull<u8>;
        /// [`OneWayAlloc::try_alloc_layout`] (the block lives for the scope's lifetime).
        fn try_alloc_layout(layout: Layout) -> Result<NonNull<u8>, AllocError>;
        /// The arena's [`OneWayAlloc::stats`].
        fn stats() -> Stats;
    }

    /// Lends the arena for as long as this handle is borrowed, so that everything
    /// that takes a `&OneWayAlloc` works inside the scope: the
    /// [`collections`](crate::collections) aliases (`Vec`, `Box`, `HashMap`,
    /// `HashSet`), the arena [`String`](crate::collections::String),
    /// [`format_in!`](crate::format_in), and any `Allocator`-generic container.
    ///
    /// What is allocated through the loan lives only as long as the borrow of the
    /// handle, not for the scope's whole lifetime `'s`: opening an inner scope needs
    /// `&mut` on the handle, so nothing made through the loan can be alive when the
    /// inner scope rolls back, and nothing can leave the scope. That includes what
    /// `unsafe` code grows or reallocates through it (`Allocator::grow` of a raw
    /// block made before the scope): the grown block is valid for the loan only, as
    /// the `Allocator` contract says, and after the rollback its old size is all
    /// that is left.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::collections::{HashMap, String, Vec};
    /// use onewayalloc::format_in;
    ///
    /// let mut arena = OneWayAlloc::new();
    /// let total = arena.scope(|request| {
    ///     let mut seen: HashMap<String, usize> = HashMap::new_in(request.arena());
    ///     let mut order = Vec::new_in(request.arena());
    ///     for i in [3, 1, 3] {
    ///         *seen.entry(format_in!(request.arena(), "dim{i}")).or_insert(0) += 1;
    ///         order.push(i);
    ///     }
    ///     seen["dim3"] + order.len()
    /// });
    /// assert_eq!(total, 5);
    /// assert_eq!(arena.stats().used, 0); // rolled back
    /// ```
    ///
    /// A collection made through the loan cannot be kept across an inner scope,
    /// which would roll back its memory:
    /// ```compile_fail,E0502
    /// use onewayalloc::collections::Vec;
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.scope(|outer| {
    ///     let mut v = Vec::new_in(outer.arena());
    ///     v.push(1u32);
    ///     outer.scope(|inner| inner.alloc(2u8)); // error: `outer` is borrowed by `v`
    ///     v.push(3);
    /// });
    /// ```
    ///
    /// Nor can it leave the scope (arena data cannot leave the scope):
    /// ```compile_fail
    /// use onewayalloc::collections::Vec;
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// let v = arena.scope(|s| {
    ///     let mut v = Vec::new_in(s.arena());
    ///     v.push(1u32);
    ///     v // error: the loan does not outlive the scope
    /// });
    /// ```
    #[inline]
    pub fn arena(&self) -> &OneWayAlloc<A> {
        self.arena
    }

    /// The arena's [`OneWayAlloc::pages`].
    pub fn pages(&self) -> impl Iterator<Item = PageInfo> + '_ {
        self.arena.pages()
    }

    /// Opens an inner scope: runs `f` with it, then rolls the arena back to where it
    /// was before, in constant time. Blocks this scope made before stay valid inside
    /// and after; this scope cannot allocate while the inner one is open.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.scope(|outer| {
    ///     let kept = outer.alloc(1u64);
    ///     let used = outer.stats().used;
    ///     outer.scope(|inner| {
    ///         inner.alloc_bytes(100_000); // takes a second page
    ///         *kept += 1;
    ///     });
    ///     assert_eq!(outer.stats().used, used);
    ///     assert_eq!(*kept, 2);
    /// });
    /// ```
    pub fn scope<R>(&mut self, f: impl for<'i> FnOnce(&mut Scope<'i, A>) -> R) -> R {
        run_scope(self.arena, f)
    }
}
