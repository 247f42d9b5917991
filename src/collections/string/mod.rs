//! The arena `String`: a UTF-8 string on the arena `Vec<u8>`.

use core::borrow::{Borrow, BorrowMut};
use core::fmt;
use core::hash::{Hash, Hasher};
use core::mem::ManuallyDrop;
use core::ops::{Add, AddAssign, Deref, DerefMut};

use alloc::borrow::Cow;

use allocator_api2::alloc::AllocError;

use super::Arena;
use crate::OneWayAlloc;

mod edit;
mod utf8;

pub use edit::Drain;
pub use utf8::{FromUtf8Error, FromUtf16Error};

/// The bytes of a [`String`] in the arena `R`: an allocator-api2 `Vec<u8>` holding
/// `&'a R` (for a `OneWayAlloc`, the arena [`Vec<'a, u8>`](super::Vec)).
type Bytes<'a, R> = allocator_api2::vec::Vec<u8, <R as Arena>::Handle<'a>>;

/// A UTF-8 string in an arena, growing in place at the top of the arena.
///
/// `R` is the arena type ([`Arena`]): [`OneWayAlloc`] by default, or
/// [`SyncOneWayAlloc`](crate::SyncOneWayAlloc), whose string
/// ([`collections::sync::String`](crate::collections::sync::String)) is `Send` and
/// `Sync`.
///
/// It derefs to `str`, formats with [`fmt::Write`] (see [`format_in!`](crate::format_in)),
/// hashes and compares like `str` (so it keys a `HashMap` looked up by `&str`), and
/// [`into_str`](Self::into_str) turns it into a plain `&'a mut str` without copying.
///
/// It has `std`'s `String` methods under `std`'s names, with `std`'s panics and
/// messages for bad character boundaries and ranges: [`push`](Self::push),
/// [`pop`](Self::pop), [`insert`](Self::insert), [`insert_str`](Self::insert_str),
/// [`remove`](Self::remove), [`retain`](Self::retain), [`drain`](Self::drain),
/// [`truncate`](Self::truncate), [`split_off`](Self::split_off),
/// [`replace_range`](Self::replace_range), [`from_utf8`](Self::from_utf8),
/// [`from_utf8_lossy_in`](Self::from_utf8_lossy_in), `Extend`, `+=`, and more; each
/// one that allocates has a `try_` twin that returns [`AllocError`] instead.
///
/// # Examples
/// ```
/// use onewayalloc::{OneWayAlloc, collections::String};
///
/// let arena = OneWayAlloc::new();
/// let mut s = String::new_in(&arena);
/// s.push_str("netdata");
/// s.push('!');
/// assert_eq!(s, "netdata!");
/// let kept: &str = s.into_str(); // no copy; lives as long as the arena borrow
/// assert_eq!(kept.len(), 8);
/// ```
pub struct String<'a, R: Arena + 'a = OneWayAlloc> {
    bytes: Bytes<'a, R>,
}

impl<'a, R: Arena> String<'a, R> {
    /// An empty string; allocates nothing until something is pushed.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::new_in(&arena);
    /// assert!(s.is_empty());
    /// ```
    pub fn new_in(arena: &'a R) -> Self {
        String {
            bytes: allocator_api2::vec::Vec::new_in(arena.handle()),
        }
    }

    /// An empty string with room for `capacity` bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::with_capacity_in(64, &arena);
    /// assert!(s.capacity() >= 64);
    /// ```
    pub fn with_capacity_in(capacity: usize, arena: &'a R) -> Self {
        String {
            bytes: allocator_api2::vec::Vec::with_capacity_in(capacity, arena.handle()),
        }
    }

    /// A copy of `s` in the arena.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_str_in("abc", &arena);
    /// assert_eq!(s, "abc");
    /// ```
    pub fn from_str_in(s: &str, arena: &'a R) -> Self {
        let mut string = Self::with_capacity_in(s.len(), arena);
        string.push_str(s);
        string
    }

    /// Like [`with_capacity_in`](Self::with_capacity_in), returning an error
    /// instead of calling `handle_alloc_error` (or panicking on overflow).
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide `capacity` bytes (its backing
    /// allocator refuses, its [limit](OneWayAlloc::set_limit) is reached, or the
    /// size overflows).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// assert!(String::try_with_capacity_in(64, &arena).unwrap().capacity() >= 64);
    /// assert!(String::try_with_capacity_in(usize::MAX, &arena).is_err());
    /// ```
    pub fn try_with_capacity_in(capacity: usize, arena: &'a R) -> Result<Self, AllocError> {
        let mut string = Self::new_in(arena);
        string.try_reserve(capacity)?;
        Ok(string)
    }

    /// Like [`from_str_in`](Self::from_str_in), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::try_from_str_in("abc", &arena).unwrap();
    /// assert_eq!(s, "abc");
    /// ```
    pub fn try_from_str_in(s: &str, arena: &'a R) -> Result<Self, AllocError> {
        let mut string = Self::try_with_capacity_in(s.len(), arena)?;
        string.append(s);
        Ok(string)
    }

    /// Formats `args` into a new string, returning an error instead of calling
    /// `handle_alloc_error`: what [`try_format_in!`](crate::try_format_in) calls.
    ///
    /// # Errors
    /// [`AllocError`] if the arena refused any of the bytes during the call, even
    /// when a `Display` implementation ignored the refusal and carried on.
    ///
    /// # Panics
    /// If a `Display` implementation returns an error (as `format!` does).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// let s = String::try_from_fmt_in(format_args!("{}-{}", 1, 2), &arena).unwrap();
    /// assert_eq!(s, "1-2");
    /// ```
    pub fn try_from_fmt_in(args: fmt::Arguments<'_>, arena: &'a R) -> Result<Self, AllocError> {
        /// Writes with `try_push_str` and remembers a refused allocation.
        struct TryWriter<'s, 'a, R: Arena> {
            string: &'s mut String<'a, R>,
            refused: bool,
        }
        impl<R: Arena> fmt::Write for TryWriter<'_, '_, R> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.string.try_push_str(s).map_err(|AllocError| {
                    self.refused = true;
                    fmt::Error
                })
            }
        }
        let mut string = Self::new_in(arena);
        let mut writer = TryWriter {
            string: &mut string,
            refused: false,
        };
        let result = fmt::Write::write_fmt(&mut writer, args);
        // A refused write is an error even when a `Display` implementation ignored
        // the `fmt::Error` it got and carried on: the text would be missing a part.
        if writer.refused {
            return Err(AllocError);
        }
        match result {
            Ok(()) => Ok(string),
            Err(fmt::Error) => panic!("a formatting trait implementation returned an error"),
        }
    }

    /// Makes room for at least `additional` more bytes.
    ///
    /// # Panics
    /// Panics if the capacity overflows; calls `handle_alloc_error` if the arena
    /// cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// s.reserve(100);
    /// assert!(s.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.bytes.reserve(additional);
    }

    /// Like [`reserve`](Self::reserve), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the capacity overflows or the arena cannot provide the
    /// bytes (its backing allocator refuses, or its limit is reached).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// assert!(s.try_reserve(100).is_ok());
    /// assert!(s.try_reserve(usize::MAX).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), AllocError> {
        self.bytes.try_reserve(additional).map_err(|_| AllocError)
    }

    /// Appends a character.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// s.push('é');
    /// assert_eq!(s.len(), 2);
    /// ```
    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Like [`push`](Self::push), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes; the string is unchanged.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// s.try_push('x').unwrap();
    /// assert_eq!(s, "x");
    /// ```
    pub fn try_push(&mut self, c: char) -> Result<(), AllocError> {
        self.try_push_str(c.encode_utf8(&mut [0; 4]))
    }

    /// Appends a string slice.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// s.push_str("cpu");
    /// s.push_str(".user");
    /// assert_eq!(s, "cpu.user");
    /// ```
    #[inline]
    pub fn push_str(&mut self, s: &str) {
        self.bytes.reserve(s.len());
        self.append(s);
    }

    /// Like [`push_str`](Self::push_str), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes; the string is unchanged.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// arena.set_limit(Some(arena.stats().capacity)); // no page beyond the first
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// assert!(s.try_push_str("fits").is_ok());
    /// assert!(s.try_push_str(&"x".repeat(1 << 20)).is_err());
    /// assert_eq!(s, "fits");
    /// ```
    #[inline]
    pub fn try_push_str(&mut self, s: &str) -> Result<(), AllocError> {
        self.try_reserve(s.len())?;
        self.append(s);
        Ok(())
    }

    /// Appends `s` into capacity already reserved, in one memcpy (allocator-api2's
    /// `extend_from_slice` goes element by element). Callers reserve `s.len()`
    /// bytes first (`reserve` or a successful `try_reserve`).
    #[inline]
    fn append(&mut self, s: &str) {
        let len = self.bytes.len();
        debug_assert!(self.bytes.capacity() - len >= s.len());
        // SAFETY: every caller reserved room for `s.len()` more bytes after `len`
        // just before (`Vec::reserve` and `try_reserve` guarantee capacity >= len +
        // additional, so `len + s.len()` cannot overflow); the source is a `str`
        // elsewhere (it cannot overlap the vector's spare capacity), and once
        // copied those bytes are initialized, so the length may cover them.
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), self.bytes.as_mut_ptr().add(len), s.len());
            self.bytes.set_len(len + s.len());
        }
    }

    /// The contents as a `str`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_str_in("x", &arena);
    /// assert_eq!(s.as_str(), "x");
    /// ```
    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes only ever come from `str`s, whole.
        unsafe { core::str::from_utf8_unchecked(&self.bytes) }
    }

    /// The contents as a mutable `str`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// s.as_mut_str().make_ascii_uppercase();
    /// assert_eq!(s, "AB");
    /// ```
    pub fn as_mut_str(&mut self) -> &mut str {
        // SAFETY: the bytes only ever come from `str`s, whole; a `&mut str` can only
        // be changed in ways that keep it UTF-8.
        unsafe { core::str::from_utf8_unchecked_mut(&mut self.bytes) }
    }

    /// Bytes the string can hold without growing.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert_eq!(onewayalloc::collections::String::new_in(&arena).capacity(), 0);
    /// ```
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Empties the string, keeping its capacity.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("abc", &arena);
    /// s.clear();
    /// assert!(s.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Gives up ownership and returns the contents as a `&'a mut str` that lives as
    /// long as the arena borrow, without copying (bumpalo's `into_bump_str`). Unused
    /// capacity stays in the arena until reset.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut names = Vec::new();
    /// for i in 0..3 {
    ///     names.push(onewayalloc::format_in!(&arena, "n{i}").into_str());
    /// }
    /// assert_eq!(names, ["n0", "n1", "n2"]);
    /// ```
    pub fn into_str(self) -> &'a mut str {
        let mut bytes = ManuallyDrop::new(self.bytes);
        let (ptr, len) = (bytes.as_mut_ptr(), bytes.len());
        // SAFETY: the buffer belongs to the arena, which stays borrowed (and so
        // neither reset nor dropped) for `'a`; the vector is never dropped, so the
        // buffer is never deallocated or reused while the reference lives. Its `len`
        // bytes are initialized UTF-8 (they only ever come from `str`s).
        unsafe { core::str::from_utf8_unchecked_mut(core::slice::from_raw_parts_mut(ptr, len)) }
    }

    /// The underlying byte vector.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// assert_eq!(s.into_bytes(), [b'a', b'b']);
    /// ```
    pub fn into_bytes(self) -> Bytes<'a, R> {
        self.bytes
    }

    /// The underlying byte vector, to change in place.
    ///
    /// # Safety
    /// The bytes must be valid UTF-8 again whenever the string is used as a string
    /// (before the borrow ends, or the string is read through any other method).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// // SAFETY: an ASCII byte keeps the string UTF-8.
    /// unsafe { s.as_mut_vec().push(b'c') };
    /// assert_eq!(s, "abc");
    /// ```
    pub unsafe fn as_mut_vec(&mut self) -> &mut Bytes<'a, R> {
        &mut self.bytes
    }

    /// The arena the string lives in (bumpalo's `String::bump`).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_str_in("cpu", &arena);
    /// let copy = onewayalloc::format_in!(s.arena(), "{s}.user");
    /// assert_eq!(copy, "cpu.user");
    /// ```
    pub fn arena(&self) -> &'a R {
        R::from_handle(*self.bytes.allocator())
    }

    /// A string of the `char`s of `iter` (bumpalo's inherent
    /// `String::from_iter_in`; [`CollectIn::collect_in`](super::CollectIn::collect_in)
    /// also takes `&str` items).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_iter_in(['o', 'w', 'a'], &arena);
    /// assert_eq!(s, "owa");
    /// ```
    pub fn from_iter_in<I: IntoIterator<Item = char>>(iter: I, arena: &'a R) -> Self {
        let mut string = Self::new_in(arena);
        string.extend(iter);
        string
    }

    /// Like [`from_iter_in`](Self::from_iter_in), returning an error instead of
    /// calling `handle_alloc_error`.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes (its backing allocator
    /// refuses, or its [limit](OneWayAlloc::set_limit) is reached); the iterator is
    /// not taken further.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// let s = String::try_from_iter_in("owa".chars().rev(), &arena)?;
    /// assert_eq!(s, "awo");
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    pub fn try_from_iter_in<I: IntoIterator<Item = char>>(
        iter: I,
        arena: &'a R,
    ) -> Result<Self, AllocError> {
        let iter = iter.into_iter();
        let mut string = Self::try_with_capacity_in(iter.size_hint().0, arena)?;
        for ch in iter {
            string.try_push(ch)?;
        }
        Ok(string)
    }

    /// Makes room for exactly `additional` more bytes (the arena may still give
    /// more when the string grows in place).
    ///
    /// # Panics
    /// As [`reserve`](Self::reserve).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// s.reserve_exact(10);
    /// assert!(s.capacity() >= 10);
    /// ```
    pub fn reserve_exact(&mut self, additional: usize) {
        self.bytes.reserve_exact(additional);
    }

    /// Like [`reserve_exact`](Self::reserve_exact), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the capacity overflows or the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::new_in(&arena);
    /// assert!(s.try_reserve_exact(10).is_ok());
    /// assert!(s.try_reserve_exact(usize::MAX).is_err());
    /// ```
    pub fn try_reserve_exact(&mut self, additional: usize) -> Result<(), AllocError> {
        self.bytes
            .try_reserve_exact(additional)
            .map_err(|_| AllocError)
    }

    /// Shrinks the capacity to the length. When the string is the most recent
    /// block of the arena, the bytes given back are reused by the next allocation.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::with_capacity_in(100, &arena);
    /// s.push_str("cpu");
    /// s.shrink_to_fit();
    /// assert_eq!(s.capacity(), 3);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }
}

impl<R: Arena> Deref for String<'_, R> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<R: Arena> DerefMut for String<'_, R> {
    fn deref_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl<R: Arena> fmt::Write for String<'_, R> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }

    fn write_char(&mut self, c: char) -> fmt::Result {
        self.push(c);
        Ok(())
    }
}

impl<R: Arena> fmt::Display for String<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl<R: Arena> fmt::Debug for String<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<R: Arena> Clone for String<'_, R> {
    fn clone(&self) -> Self {
        String {
            bytes: self.bytes.clone(),
        }
    }
}

/// Copies the text out of the arena into `std`'s `String` (what `to_string` does).
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let scratch = onewayalloc::format_in!(&arena, "{}.{}", "cpu", "user");
/// let owned: String = scratch.into();
/// drop(arena); // the copy outlives the arena
/// assert_eq!(owned, "cpu.user");
/// ```
impl<R: Arena> From<String<'_, R>> for alloc::string::String {
    fn from(string: String<'_, R>) -> Self {
        string.as_str().into()
    }
}

/// Copies the text out of the arena into `std`'s `String`.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let scratch = onewayalloc::collections::String::from_str_in("net", &arena);
/// assert_eq!(String::from(&scratch), "net");
/// ```
impl<R: Arena> From<&String<'_, R>> for alloc::string::String {
    fn from(string: &String<'_, R>) -> Self {
        string.as_str().into()
    }
}

/// Copies the text out of the arena into `std`'s `Box<str>`.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let scratch = onewayalloc::collections::String::from_str_in("disk", &arena);
/// let owned: Box<str> = scratch.into();
/// assert_eq!(&*owned, "disk");
/// ```
impl<R: Arena> From<String<'_, R>> for alloc::boxed::Box<str> {
    fn from(string: String<'_, R>) -> Self {
        string.as_str().into()
    }
}

impl<R: Arena> PartialEq for String<'_, R> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<R: Arena> Eq for String<'_, R> {}

impl<R: Arena> PartialOrd for String<'_, R> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<R: Arena> Ord for String<'_, R> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Hashes like `str`, as `Borrow<str>` requires.
impl<R: Arena> Hash for String<'_, R> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl<R: Arena> Borrow<str> for String<'_, R> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl<R: Arena> AsRef<str> for String<'_, R> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl<R: Arena> AsRef<[u8]> for String<'_, R> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl<R: Arena> BorrowMut<str> for String<'_, R> {
    fn borrow_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl<R: Arena> AsMut<str> for String<'_, R> {
    fn as_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

/// Compares the contents on both sides, in both orders.
macro_rules! string_eq {
    ($($other:ty),*) => {$(
        impl<'o, R: Arena> PartialEq<$other> for String<'_, R> {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == &other[..]
            }
        }

        impl<'o, R: Arena> PartialEq<String<'_, R>> for $other {
            fn eq(&self, other: &String<'_, R>) -> bool {
                &self[..] == other.as_str()
            }
        }
    )*};
}
string_eq!(str, &'o str, alloc::string::String, Cow<'o, str>);

/// Appends every `char`, reserving the iterator's lower size bound first. `&char`,
/// `&str`, arena and `std` `String`s and `Cow<str>` extend it too.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut s = onewayalloc::collections::String::new_in(&arena);
/// s.extend(['c', 'p', 'u']);
/// s.extend([".", "user"]);
/// assert_eq!(s, "cpu.user");
/// ```
impl<R: Arena> Extend<char> for String<'_, R> {
    fn extend<I: IntoIterator<Item = char>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        iter.for_each(|c| self.push(c));
    }
}

impl<'c, R: Arena> Extend<&'c char> for String<'_, R> {
    fn extend<I: IntoIterator<Item = &'c char>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

/// Appends every string; the same for the items of the impls below.
impl<'s, R: Arena> Extend<&'s str> for String<'_, R> {
    fn extend<I: IntoIterator<Item = &'s str>>(&mut self, iter: I) {
        iter.into_iter().for_each(|s| self.push_str(s));
    }
}

impl<'b, R: Arena, B: Arena> Extend<String<'b, B>> for String<'_, R> {
    fn extend<I: IntoIterator<Item = String<'b, B>>>(&mut self, iter: I) {
        iter.into_iter().for_each(|s| self.push_str(&s));
    }
}

impl<R: Arena> Extend<alloc::string::String> for String<'_, R> {
    fn extend<I: IntoIterator<Item = alloc::string::String>>(&mut self, iter: I) {
        iter.into_iter().for_each(|s| self.push_str(&s));
    }
}

impl<'s, R: Arena> Extend<Cow<'s, str>> for String<'_, R> {
    fn extend<I: IntoIterator<Item = Cow<'s, str>>>(&mut self, iter: I) {
        iter.into_iter().for_each(|s| self.push_str(&s));
    }
}

/// `s += "tail"`: [`push_str`](String::push_str).
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut s = onewayalloc::collections::String::from_str_in("cpu", &arena);
/// s += ".user";
/// assert_eq!(s, "cpu.user");
/// ```
impl<R: Arena> AddAssign<&str> for String<'_, R> {
    #[inline]
    fn add_assign(&mut self, other: &str) {
        self.push_str(other);
    }
}

/// `s + "tail"`: appends to `s` (in place, no copy) and returns it.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let s = onewayalloc::collections::String::from_str_in("cpu", &arena) + ".user";
/// assert_eq!(s, "cpu.user");
/// ```
impl<R: Arena> Add<&str> for String<'_, R> {
    type Output = Self;

    #[inline]
    fn add(mut self, other: &str) -> Self {
        self.push_str(other);
        self
    }
}

/// Formats into a [`String`](crate::collections::String) in an arena, like
/// `format!`: `format_in!(&arena, "{x} and {y}")`. The arena is a reference to any
/// [`ArenaHandle`](crate::collections::ArenaHandle) that gives a `&OneWayAlloc`:
/// `&arena`, a pool guard `&guard`, the `arena` of
/// [`with_scratch`](crate::with_scratch), a scope `s` or `s.arena()`; or a
/// `&SyncOneWayAlloc`, whose string is a
/// [`collections::sync::String`](crate::collections::sync::String) (`Send` and
/// `Sync`).
///
/// # Panics
/// Panics if a `Display` implementation returns an error (as `format!` does), or,
/// like any arena allocation, if memory runs out.
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let line = onewayalloc::format_in!(&arena, "{} = {:.1}", "cpu", 12.34);
/// assert_eq!(line, "cpu = 12.3");
/// ```
#[macro_export]
macro_rules! format_in {
    ($arena:expr, $($arg:tt)*) => {{
        let mut string =
            $crate::collections::String::new_in($crate::collections::__alloc_of($arena));
        ::core::fmt::Write::write_fmt(&mut string, ::core::format_args!($($arg)*))
            .expect("a formatting trait implementation returned an error");
        string
    }};
}

/// Like [`format_in!`](crate::format_in), returning
/// `Result<String, AllocError>` instead of calling `handle_alloc_error` when the
/// arena cannot provide the bytes (for example past its
/// [limit](crate::OneWayAlloc::set_limit)). It is `Err` whenever the arena
/// refused bytes during the call, even if a `Display` implementation ignored the
/// refusal and carried on: the string would be missing a part.
///
/// # Panics
/// Panics if a `Display` implementation returns an error (as `format!` does).
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let line = onewayalloc::try_format_in!(&arena, "{}:{}", "cpu", 1)?;
/// assert_eq!(line, "cpu:1");
/// # Ok::<(), onewayalloc::AllocError>(())
/// ```
#[macro_export]
macro_rules! try_format_in {
    ($arena:expr, $($arg:tt)*) => {
        $crate::collections::String::try_from_fmt_in(
            ::core::format_args!($($arg)*),
            $crate::collections::__alloc_of($arena),
        )
    };
}
