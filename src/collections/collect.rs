//! `collect_in`: bumpalo's `CollectIn` and `FromIteratorIn`, for the arena
//! collections (and any other allocator-api2 `Allocator`).

use core::hash::{BuildHasher, Hash};

use allocator_api2::alloc::Allocator;
use allocator_api2::boxed::Box;
use allocator_api2::vec::Vec;

use super::{Arena, ArenaHandle, String};

/// A collection that can be built from an iterator in a given allocator: the
/// allocator-aware `FromIterator`, with bumpalo's name and shape.
///
/// Usually called through [`CollectIn::collect_in`]. Implemented for:
///
/// | collection | items | `Alloc` |
/// |---|---|---|
/// | [`Vec<T, B>`](crate::collections::Vec) | `T` | `B`, e.g. `&'a OneWayAlloc` |
/// | [`Box<[T], B>`](crate::collections::Box) | `T` | `B` |
/// | [`HashMap<K, V, S, B>`](crate::collections::HashMap) | `(K, V)` | `B` |
/// | [`HashSet<T, S, B>`](crate::collections::HashSet) | `T` | `B` |
/// | [`String<'a, R>`](crate::collections::String) | `char`, `&char`, `&str` | `&'a R`, the arena: `&'a OneWayAlloc` or `&'a SyncOneWayAlloc` |
/// | `Option<C>` | `Option<T>` where `C` collects `T` | `C`'s |
/// | `Result<C, E>` | `Result<T, E>` where `C` collects `T` | `C`'s |
///
/// # Cost
///
/// Each collection first reserves the iterator's lower size bound (a `Vec` writes
/// that many items without a capacity check per item), then grows as its `extend`
/// does.
/// - `Vec`, `Box<[T]>` and `String` grow in place while they are the most recent
///   block of the arena, so an iterator with a wrong hint (`filter`, `flat_map`)
///   costs no copy unless the iterator itself allocates from the arena; `Box<[T]>`
///   then shrinks in place to its length.
/// - `HashMap` and `HashSet` rehash when they outgrow their table: each rehash
///   moves every entry into a new table and abandons the old one in the arena
///   until the next reset. Starting from a hint of 0, the abandoned tables add up to
///   about the size of the final table (they double). When the count is known
///   but the iterator does not say so, collect into a map made with
///   `HashMap::with_capacity_in(n, &arena)` and `extend` it instead.
/// - `Option` and `Result` stop at the first `None` or `Err`, so their lower bound is
///   0: they start from an empty collection, as `std`'s `collect` does.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::{FromIteratorIn, Vec};
///
/// let arena = OneWayAlloc::new();
/// let fives = Vec::from_iter_in(std::iter::repeat(5).take(5), &arena);
/// assert_eq!(fives, [5, 5, 5, 5, 5]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be built in an arena from items of `{T}`",
    label = "not an arena collection of `{T}`",
    note = "collect into an arena collection: `onewayalloc::collections::Vec`, `Box<[T]>`, `HashMap`, `HashSet` or `String` (import the module, `use onewayalloc::collections as arena;`, and name `arena::Vec`: a plain `Vec` is std's)"
)]
pub trait FromIteratorIn<T> {
    /// The allocator the collection is built in: `&OneWayAlloc` for the arena
    /// collections.
    type Alloc;

    /// Builds the collection from `iter` in `alloc`, like
    /// [`FromIterator::from_iter`].
    ///
    /// # Panics
    /// Like the collection's `extend`: if its capacity overflows, and through
    /// `handle_alloc_error` if the allocator cannot provide the memory. If the
    /// iterator panics, the items taken so far are dropped and the arena stays
    /// usable.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::collections::{FromIteratorIn, HashSet};
    ///
    /// let arena = OneWayAlloc::new();
    /// let set = HashSet::from_iter_in([3, 1, 3], &arena);
    /// assert_eq!(set.len(), 2);
    /// ```
    fn from_iter_in<I>(iter: I, alloc: Self::Alloc) -> Self
    where
        I: IntoIterator<Item = T>;
}

/// `collect_in`, the allocator-aware [`Iterator::collect`], for every iterator
/// (bumpalo's `CollectIn`).
///
/// The argument is a reference to any [`ArenaHandle`]: `&arena`, a pool guard
/// `&guard`, the `arena` that [`with_scratch`](crate::with_scratch) gives
/// (reborrowed, not moved), a scope `s` or `s.arena()`; or `&alloc` for another
/// allocator that is `Clone` (it is cloned).
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::{CollectIn, String, Vec};
///
/// let arena = OneWayAlloc::new();
/// let nums = (0..=3).collect_in::<Vec<_>>(&arena);
/// assert_eq!(nums, [0, 1, 2, 3]);
/// let shout: String = "owa".chars().map(|c| c.to_ascii_uppercase()).collect_in(&arena);
/// assert_eq!(shout, "OWA");
/// ```
pub trait CollectIn: Iterator + Sized {
    /// Collects the items into a collection built in `alloc`; see
    /// [`FromIteratorIn`] for the collections and what they cost.
    ///
    /// # Panics
    /// As [`FromIteratorIn::from_iter_in`].
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::collections::{CollectIn, Vec};
    ///
    /// let arena = OneWayAlloc::new();
    /// let parsed: Result<Vec<u8>, _> = ["1", "2", "x"].iter().map(|s| s.parse::<u8>()).collect_in(&arena);
    /// assert!(parsed.is_err());
    /// let parsed: Option<Vec<u8>> = ["1", "2"].iter().map(|s| s.parse().ok()).collect_in(&arena);
    /// assert_eq!(parsed.unwrap(), [1, 2]);
    /// ```
    #[inline]
    fn collect_in<'h, C: FromIteratorIn<Self::Item>>(
        self,
        alloc: &'h (impl ArenaHandle<Alloc<'h> = C::Alloc> + 'h),
    ) -> C {
        C::from_iter_in(self, alloc.alloc_handle())
    }
}

impl<I: Iterator> CollectIn for I {}

/// A collection made by `with_capacity(hint)` for the iterator's lower size bound,
/// then extended with the iterator.
#[inline]
fn reserved_then_extended<T, C: Extend<T>>(
    iter: impl IntoIterator<Item = T>,
    with_capacity: impl FnOnce(usize) -> C,
) -> C {
    let iter = iter.into_iter();
    let mut collection = with_capacity(iter.size_hint().0);
    collection.extend(iter);
    collection
}

impl<T, B: Allocator> FromIteratorIn<T> for Vec<T, B> {
    type Alloc = B;

    #[inline]
    fn from_iter_in<I>(iter: I, alloc: B) -> Self
    where
        I: IntoIterator<Item = T>,
    {
        let mut iter = iter.into_iter();
        let mut vec = Vec::with_capacity_in(iter.size_hint().0, alloc);
        fill_reserved(&mut vec, &mut iter);
        vec.extend(iter);
        vec
    }
}

/// Writes items of `iter` into the room `vec` has reserved, until it is full or the
/// iterator ends: one write per item, where `extend` checks the capacity and
/// stores the length at each (allocator-api2's `extend` has no `TrustedLen` path;
/// measured: about 30 instructions per `u32` item through it, 3 here).
#[inline]
fn fill_reserved<T, B: Allocator>(vec: &mut Vec<T, B>, iter: &mut impl Iterator<Item = T>) {
    /// The vector's length, stored when the filling ends, also when the iterator
    /// panics: the items written are then the vector's and drop with it.
    struct Written<'v, T, B: Allocator> {
        vec: &'v mut Vec<T, B>,
        len: usize,
    }
    impl<T, B: Allocator> Drop for Written<'_, T, B> {
        #[inline]
        fn drop(&mut self) {
            // SAFETY: `len` is at most the capacity (the loop below stops at it),
            // and the elements before it are initialized: those before the length
            // the vector had, and each one the loop wrote before counting it.
            unsafe { self.vec.set_len(self.len) }
        }
    }
    let capacity = vec.capacity();
    let base = vec.as_mut_ptr();
    let mut written = Written {
        len: vec.len(),
        vec,
    };
    while written.len < capacity {
        let Some(item) = iter.next() else { break };
        // SAFETY: `written.len < capacity`, so the slot is within the vector's
        // allocation (`base` is its buffer's start, and the buffer is neither
        // moved nor freed while the vector is borrowed here); it is past the
        // length, so uninitialized: writing does not drop anything.
        unsafe { base.add(written.len).write(item) };
        written.len += 1;
    }
}

impl<T, B: Allocator> FromIteratorIn<T> for Box<[T], B> {
    type Alloc = B;

    #[inline]
    fn from_iter_in<I>(iter: I, alloc: B) -> Self
    where
        I: IntoIterator<Item = T>,
    {
        Vec::from_iter_in(iter, alloc).into_boxed_slice()
    }
}

impl<K, V, S, B> FromIteratorIn<(K, V)> for hashbrown::HashMap<K, V, S, B>
where
    K: Eq + Hash,
    S: BuildHasher + Default,
    B: Allocator,
{
    type Alloc = B;

    fn from_iter_in<I>(iter: I, alloc: B) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
    {
        reserved_then_extended(iter, |hint| {
            hashbrown::HashMap::with_capacity_and_hasher_in(hint, S::default(), alloc)
        })
    }
}

impl<T, S, B> FromIteratorIn<T> for hashbrown::HashSet<T, S, B>
where
    T: Eq + Hash,
    S: BuildHasher + Default,
    B: Allocator,
{
    type Alloc = B;

    fn from_iter_in<I>(iter: I, alloc: B) -> Self
    where
        I: IntoIterator<Item = T>,
    {
        reserved_then_extended(iter, |hint| {
            hashbrown::HashSet::with_capacity_and_hasher_in(hint, S::default(), alloc)
        })
    }
}

/// Builds an arena `String` from any items it can `extend` with.
macro_rules! string_from_iter_in {
    ($($item:ty),*) => {$(
        impl<'a, 'i, R: Arena> FromIteratorIn<$item> for String<'a, R> {
            type Alloc = &'a R;

            #[inline]
            fn from_iter_in<I>(iter: I, alloc: Self::Alloc) -> Self
            where
                I: IntoIterator<Item = $item>,
            {
                let mut string = String::new_in(alloc);
                string.extend(iter);
                string
            }
        }
    )*};
}
string_from_iter_in!(char, &'i char, &'i str);

impl<T, E, C: FromIteratorIn<T>> FromIteratorIn<Result<T, E>> for Result<C, E> {
    type Alloc = C::Alloc;

    /// Takes items until the first `Err`, which is returned; without one, the
    /// collection of the `Ok` values.
    fn from_iter_in<I>(iter: I, alloc: Self::Alloc) -> Self
    where
        I: IntoIterator<Item = Result<T, E>>,
    {
        let mut error = None;
        let collection = C::from_iter_in(
            UntilErr {
                iter: iter.into_iter(),
                error: &mut error,
            },
            alloc,
        );
        match error {
            Some(error) => Err(error),
            None => Ok(collection),
        }
    }
}

impl<T, C: FromIteratorIn<T>> FromIteratorIn<Option<T>> for Option<C> {
    type Alloc = C::Alloc;

    /// Takes items until the first `None`, which is returned; without one, the
    /// collection of the values.
    fn from_iter_in<I>(iter: I, alloc: Self::Alloc) -> Self
    where
        I: IntoIterator<Item = Option<T>>,
    {
        let items = iter.into_iter().map(|item| item.ok_or(()));
        Result::<C, ()>::from_iter_in(items, alloc).ok()
    }
}

/// The `Ok` values of `iter` up to its first `Err`, which it keeps in `error`.
struct UntilErr<'e, I, E> {
    iter: I,
    error: &'e mut Option<E>,
}

impl<T, E, I: Iterator<Item = Result<T, E>>> Iterator for UntilErr<'_, I, E> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.error.is_some() {
            return None;
        }
        match self.iter.next()? {
            Ok(item) => Some(item),
            Err(error) => {
                *self.error = Some(error);
                None
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.error.is_some() {
            (0, Some(0))
        } else {
            (0, self.iter.size_hint().1)
        }
    }
}
