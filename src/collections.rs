//! Collections in an arena, without spelling out the allocator parameter.
//!
//! `Vec`, `Box`, `HashMap` and `HashSet` are the `allocator-api2` and `hashbrown`
//! types over `&'a OneWayAlloc`, so every method those crates document works.
//! [`String`] is the arena's own, built on the arena `Vec<u8>` so it grows in
//! place at the top of the arena; [`format_in!`](crate::format_in) formats into one.
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections::{HashMap, String, Vec};
//! use onewayalloc::format_in;
//!
//! let arena = OneWayAlloc::new();
//! let mut names: HashMap<String, usize> = HashMap::new_in(&arena);
//! let mut order = Vec::new_in(&arena);
//! for i in 0..3 {
//!     let name = format_in!(&arena, "dim{i}");
//!     order.push(name.clone());
//!     names.insert(name, i);
//! }
//! assert_eq!(names["dim2"], 2); // looked up by &str
//! assert_eq!(order[0], "dim0");
//! ```

use core::borrow::Borrow;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};

use allocator_api2::alloc::{AllocError, Allocator, Global};

use crate::OneWayAlloc;

/// A vector in an arena: `Vec::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut v: onewayalloc::collections::Vec<u32> = onewayalloc::collections::Vec::new_in(&arena);
/// v.push(1);
/// ```
pub type Vec<'a, T, A = Global> = allocator_api2::vec::Vec<T, &'a OneWayAlloc<A>>;

/// A box in an arena: `Box::new_in(value, &arena)`. Dropping it runs the value's
/// destructor (and rolls the arena back if it is the most recent block).
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let b: onewayalloc::collections::Box<[u8; 4]> = onewayalloc::collections::Box::new_in([1; 4], &arena);
/// assert_eq!(b[3], 1);
/// ```
pub type Box<'a, T, A = Global> = allocator_api2::boxed::Box<T, &'a OneWayAlloc<A>>;

/// A hash map in an arena, with hashbrown's default hasher: `HashMap::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut m: onewayalloc::collections::HashMap<u32, &str> = onewayalloc::collections::HashMap::new_in(&arena);
/// m.insert(1, "one");
/// ```
pub type HashMap<'a, K, V, A = Global> =
    hashbrown::HashMap<K, V, hashbrown::DefaultHashBuilder, &'a OneWayAlloc<A>>;

/// A hash set in an arena, with hashbrown's default hasher: `HashSet::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut s: onewayalloc::collections::HashSet<u64> = onewayalloc::collections::HashSet::new_in(&arena);
/// assert!(s.insert(7));
/// ```
pub type HashSet<'a, T, A = Global> =
    hashbrown::HashSet<T, hashbrown::DefaultHashBuilder, &'a OneWayAlloc<A>>;

/// A UTF-8 string in an arena, growing in place at the top of the arena.
///
/// It derefs to `str`, formats with [`fmt::Write`] (see [`format_in!`](crate::format_in)),
/// hashes and compares like `str` (so it keys a `HashMap` looked up by `&str`), and
/// [`into_str`](Self::into_str) turns it into a plain `&'a mut str` without copying.
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
pub struct String<'a, A: Allocator = Global> {
    bytes: Vec<'a, u8, A>,
}

impl<'a, A: Allocator> String<'a, A> {
    /// An empty string; allocates nothing until something is pushed.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::new_in(&arena);
    /// assert!(s.is_empty());
    /// ```
    pub fn new_in(arena: &'a OneWayAlloc<A>) -> Self {
        String {
            bytes: Vec::new_in(arena),
        }
    }

    /// An empty string with room for `capacity` bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::with_capacity_in(64, &arena);
    /// assert!(s.capacity() >= 64);
    /// ```
    pub fn with_capacity_in(capacity: usize, arena: &'a OneWayAlloc<A>) -> Self {
        String {
            bytes: Vec::with_capacity_in(capacity, arena),
        }
    }

    /// A copy of `s` in the arena.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_str_in("abc", &arena);
    /// assert_eq!(s, "abc");
    /// ```
    pub fn from_str_in(s: &str, arena: &'a OneWayAlloc<A>) -> Self {
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
    pub fn try_with_capacity_in(
        capacity: usize,
        arena: &'a OneWayAlloc<A>,
    ) -> Result<Self, AllocError> {
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
    pub fn try_from_str_in(s: &str, arena: &'a OneWayAlloc<A>) -> Result<Self, AllocError> {
        let mut string = Self::try_with_capacity_in(s.len(), arena)?;
        string.append(s);
        Ok(string)
    }

    /// Formats `args` into a new string, returning an error instead of calling
    /// `handle_alloc_error`: what [`try_format_in!`](crate::try_format_in) calls.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes.
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
    pub fn try_from_fmt_in(
        args: fmt::Arguments<'_>,
        arena: &'a OneWayAlloc<A>,
    ) -> Result<Self, AllocError> {
        /// Writes with `try_push_str` and remembers a refused allocation.
        struct TryWriter<'s, 'a, A: Allocator> {
            string: &'s mut String<'a, A>,
            refused: bool,
        }
        impl<A: Allocator> fmt::Write for TryWriter<'_, '_, A> {
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
        match fmt::Write::write_fmt(&mut writer, args) {
            Ok(()) => Ok(string),
            Err(fmt::Error) if writer.refused => Err(AllocError),
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
    pub fn into_bytes(self) -> Vec<'a, u8, A> {
        self.bytes
    }
}

impl<A: Allocator> Deref for String<'_, A> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<A: Allocator> DerefMut for String<'_, A> {
    fn deref_mut(&mut self) -> &mut str {
        self.as_mut_str()
    }
}

impl<A: Allocator> fmt::Write for String<'_, A> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }

    fn write_char(&mut self, c: char) -> fmt::Result {
        self.push(c);
        Ok(())
    }
}

impl<A: Allocator> fmt::Display for String<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl<A: Allocator> fmt::Debug for String<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<A: Allocator> Clone for String<'_, A> {
    fn clone(&self) -> Self {
        String {
            bytes: self.bytes.clone(),
        }
    }
}

impl<A: Allocator> PartialEq for String<'_, A> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<A: Allocator> Eq for String<'_, A> {}

impl<A: Allocator> PartialEq<str> for String<'_, A> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<A: Allocator> PartialEq<&str> for String<'_, A> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<A: Allocator> PartialOrd for String<'_, A> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<A: Allocator> Ord for String<'_, A> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Hashes like `str`, as `Borrow<str>` requires.
impl<A: Allocator> Hash for String<'_, A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl<A: Allocator> Borrow<str> for String<'_, A> {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl<A: Allocator> AsRef<str> for String<'_, A> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl<A: Allocator> AsRef<[u8]> for String<'_, A> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Formats into a [`String`](crate::collections::String) in an arena, like
/// `format!`: `format_in!(&arena, "{x} and {y}")`.
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
        let mut string = $crate::collections::String::new_in($arena);
        ::core::fmt::Write::write_fmt(&mut string, ::core::format_args!($($arg)*))
            .expect("a formatting trait implementation returned an error");
        string
    }};
}

/// Like [`format_in!`](crate::format_in), returning
/// `Result<String, AllocError>` instead of calling `handle_alloc_error` when the
/// arena cannot provide the bytes (for example past its
/// [limit](crate::OneWayAlloc::set_limit)).
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
        $crate::collections::String::try_from_fmt_in(::core::format_args!($($arg)*), $arena)
    };
}
