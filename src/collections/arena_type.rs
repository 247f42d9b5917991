//! `Arena`: the arena types that the arena `String` and `DeserializeIn` live in.

// Every `&mut` these calls return points to a fresh block; see arena.rs.
#![allow(clippy::mut_from_ref)]

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;

mod sealed {
    /// Only this crate's arena types are arenas.
    pub trait Sealed {}
}

/// An arena type that collections live in: [`OneWayAlloc`] (the default everywhere)
/// or, with `std`, [`SyncOneWayAlloc`](crate::SyncOneWayAlloc). The arena
/// [`String`](crate::collections::String) and
/// `serde::DeserializeIn` (feature `serde`) take it as a type parameter, so a
/// `String<'a, SyncOneWayAlloc>` (spelled
/// [`collections::sync::String<'a>`](crate::collections::sync::String)) is `Send`
/// and `Sync`. The trait is sealed: only this crate implements it.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::{Arena, String};
///
/// // One function for both arena types.
/// fn greeting<'a, R: Arena>(arena: &'a R, name: &str) -> String<'a, R> {
///     let mut s = String::from_str_in("hello ", arena);
///     s.push_str(name);
///     s
/// }
///
/// let arena = OneWayAlloc::new();
/// assert_eq!(greeting(&arena, "cpu"), "hello cpu");
/// let shared = onewayalloc::SyncOneWayAlloc::new();
/// assert_eq!(greeting(&shared, "disk"), "hello disk");
/// ```
pub trait Arena: sealed::Sealed {
    /// The allocator collections in this arena hold: `&'a Self`.
    type Handle<'a>: Allocator + Copy
    where
        Self: 'a;

    /// The allocator of `self`, for a collection's `new_in`.
    ///
    /// ```
    /// use onewayalloc::collections::Arena;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let v = allocator_api2::vec::Vec::<u8, _>::new_in(Arena::handle(&arena));
    /// assert!(v.is_empty());
    /// ```
    fn handle(&self) -> Self::Handle<'_>;

    /// The arena behind a handle: the inverse of [`handle`](Self::handle).
    ///
    /// ```
    /// use onewayalloc::{OneWayAlloc, collections::Arena};
    /// let arena = OneWayAlloc::new();
    /// assert!(core::ptr::eq(OneWayAlloc::from_handle(arena.handle()), &arena));
    /// ```
    fn from_handle<'a>(handle: Self::Handle<'a>) -> &'a Self
    where
        Self: 'a;

    /// A copy of `s` in the arena, or an error if the arena refuses the bytes.
    ///
    /// # Errors
    /// [`AllocError`] when the arena cannot provide the bytes.
    ///
    /// ```
    /// use onewayalloc::collections::Arena;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(Arena::try_alloc_str(&arena, "cpu").unwrap(), "cpu");
    /// ```
    fn try_alloc_str(&self, s: &str) -> Result<&mut str, AllocError>;

    /// The arena's limit, if one is set (see [`OneWayAlloc::set_limit`]).
    ///
    /// ```
    /// use onewayalloc::collections::Arena;
    /// assert_eq!(Arena::limit(&onewayalloc::OneWayAlloc::new()), None);
    /// ```
    fn limit(&self) -> Option<usize>;

    /// `vec` as a vector holding [`Self::Handle`], the same type spelled through the
    /// trait (what `String::from_utf8` takes its bytes through).
    #[doc(hidden)]
    fn vec_of_handle<'a, T>(
        vec: allocator_api2::vec::Vec<T, &'a Self>,
    ) -> allocator_api2::vec::Vec<T, Self::Handle<'a>>
    where
        Self: 'a,
        &'a Self: Allocator;
}

/// Implements [`Arena`] for an arena type whose `&Self` is its allocator.
macro_rules! arena_type {
    ($($(#[$cfg:meta])* $ty:ident),*) => {$(
        $(#[$cfg])*
        impl<A: Allocator> sealed::Sealed for $ty<A> {}

        $(#[$cfg])*
        impl<A: Allocator> Arena for $ty<A> {
            type Handle<'a>
                = &'a $ty<A>
            where
                Self: 'a;

            #[inline(always)]
            fn handle(&self) -> &Self {
                self
            }

            #[inline(always)]
            fn from_handle<'a>(handle: &'a Self) -> &'a Self
            where
                Self: 'a,
            {
                handle
            }

            #[inline]
            fn try_alloc_str(&self, s: &str) -> Result<&mut str, AllocError> {
                $ty::try_alloc_str(self, s)
            }

            #[inline(always)]
            fn vec_of_handle<'a, T>(
                vec: allocator_api2::vec::Vec<T, &'a Self>,
            ) -> allocator_api2::vec::Vec<T, &'a Self>
            where
                Self: 'a,
            {
                vec
            }

            #[inline]
            fn limit(&self) -> Option<usize> {
                $ty::limit(self)
            }
        }
    )*};
}

#[cfg(feature = "std")]
use crate::SyncOneWayAlloc;

arena_type!(
    OneWayAlloc,
    #[cfg(feature = "std")]
    SyncOneWayAlloc
);
