//! The arena `String`'s editing methods, with `std`'s names, meanings and panics.

use core::fmt;
use core::iter::FusedIterator;
use core::ops::{Bound, Range, RangeBounds};
use core::ptr;

use allocator_api2::alloc::AllocError;

use super::String;
use crate::OneWayAlloc;
use crate::collections::Arena;

impl<'a, R: Arena> String<'a, R> {
    /// Removes the last character and returns it, or `None` if the string is empty.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("abč", &arena);
    /// assert_eq!(s.pop(), Some('č'));
    /// assert_eq!(s.pop(), Some('b'));
    /// assert_eq!(s.pop(), Some('a'));
    /// assert_eq!(s.pop(), None);
    /// ```
    pub fn pop(&mut self) -> Option<char> {
        let last = self.chars().next_back()?;
        self.bytes.truncate(self.len() - last.len_utf8());
        Some(last)
    }

    /// Shortens the string to `new_len` bytes; does nothing if `new_len` is not
    /// below the length. The capacity is kept.
    ///
    /// # Panics
    /// If `new_len` does not lie on a `char` boundary (as `std`'s: "assertion
    /// failed: self.is_char_boundary(new_len)").
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("hello", &arena);
    /// s.truncate(2);
    /// assert_eq!(s, "he");
    /// ```
    #[track_caller]
    pub fn truncate(&mut self, new_len: usize) {
        if new_len <= self.len() {
            assert!(self.is_char_boundary(new_len));
            self.bytes.truncate(new_len);
        }
    }

    /// Inserts a character at byte position `idx`, moving the rest up.
    ///
    /// # Panics
    /// If `idx` is past the end or not on a `char` boundary ("assertion failed:
    /// self.is_char_boundary(idx)", as `std`'s); on capacity overflow, and through
    /// `handle_alloc_error` if the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("fo", &arena);
    /// s.insert(2, 'o');
    /// s.insert(0, '¡');
    /// assert_eq!(s, "¡foo");
    /// ```
    #[track_caller]
    pub fn insert(&mut self, idx: usize, ch: char) {
        self.insert_str(idx, ch.encode_utf8(&mut [0; 4]));
    }

    /// Like [`insert`](Self::insert), returning an error instead of calling
    /// `handle_alloc_error`.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes; the string is unchanged.
    ///
    /// # Panics
    /// If `idx` is past the end or not on a `char` boundary, as `insert`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// s.try_insert(1, '-')?;
    /// assert_eq!(s, "a-b");
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    #[track_caller]
    pub fn try_insert(&mut self, idx: usize, ch: char) -> Result<(), AllocError> {
        self.try_insert_str(idx, ch.encode_utf8(&mut [0; 4]))
    }

    /// Inserts a string slice at byte position `idx`, moving the rest up.
    ///
    /// # Panics
    /// If `idx` is past the end or not on a `char` boundary ("assertion failed:
    /// self.is_char_boundary(idx)", as `std`'s); on capacity overflow, and through
    /// `handle_alloc_error` if the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("cpu.user", &arena);
    /// s.insert_str(3, "0");
    /// assert_eq!(s, "cpu0.user");
    /// ```
    #[track_caller]
    pub fn insert_str(&mut self, idx: usize, string: &str) {
        assert!(self.is_char_boundary(idx));
        self.reserve(string.len());
        self.replace_reserved(idx..idx, string);
    }

    /// Like [`insert_str`](Self::insert_str), returning an error instead of calling
    /// `handle_alloc_error` (or panicking on capacity overflow).
    ///
    /// # Errors
    /// [`AllocError`] if the capacity overflows or the arena cannot provide the
    /// bytes; the string is unchanged.
    ///
    /// # Panics
    /// If `idx` is past the end or not on a `char` boundary, as `insert_str`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// arena.set_limit(Some(arena.stats().capacity)); // no page beyond the first
    /// let mut s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// assert!(s.try_insert_str(1, "-").is_ok());
    /// assert!(s.try_insert_str(1, &"x".repeat(1 << 20)).is_err());
    /// assert_eq!(s, "a-b");
    /// ```
    #[track_caller]
    pub fn try_insert_str(&mut self, idx: usize, string: &str) -> Result<(), AllocError> {
        assert!(self.is_char_boundary(idx));
        self.try_reserve(string.len())?;
        self.replace_reserved(idx..idx, string);
        Ok(())
    }

    /// Removes the character at byte position `idx` and returns it, moving the rest
    /// down (so removing in a loop can take quadratic time; see
    /// [`retain`](Self::retain)).
    ///
    /// # Panics
    /// If `idx` is not on a `char` boundary or past the end (`std`'s message for
    /// slicing a `str` there), or at the end ("cannot remove a char from the end of
    /// a string").
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("abç", &arena);
    /// assert_eq!(s.remove(0), 'a');
    /// assert_eq!(s.remove(1), 'ç');
    /// assert_eq!(s.remove(0), 'b');
    /// ```
    #[track_caller]
    pub fn remove(&mut self, idx: usize) -> char {
        let Some(ch) = self[idx..].chars().next() else {
            panic!("cannot remove a char from the end of a string")
        };
        let next = idx + ch.len_utf8();
        let len = self.len();
        self.bytes.copy_within(next..len, idx);
        self.bytes.truncate(len - (next - idx));
        ch
    }

    /// Keeps only the characters for which `keep` returns `true`, in order, visiting
    /// each character once, in place and in linear time.
    ///
    /// If `keep` panics, the string keeps the characters kept so far followed by
    /// every character not yet visited, the one `keep` panicked on included, so it
    /// is valid UTF-8 and the arena stays usable. (`std`'s `String::retain` drops
    /// the characters not yet visited instead; `Vec::retain` keeps them, as here.)
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("f_o_ob_ar", &arena);
    /// s.retain(|c| c != '_');
    /// assert_eq!(s, "foobar");
    /// ```
    pub fn retain<F: FnMut(char) -> bool>(&mut self, mut keep: F) {
        /// The compaction in progress: `bytes[..write]` are the kept characters,
        /// `bytes[read..len]` the ones not yet visited (untouched, so valid UTF-8).
        struct Compaction<'v, 'a, R: Arena + 'a> {
            bytes: &'v mut super::Bytes<'a, R>,
            read: usize,
            write: usize,
            len: usize,
        }
        impl<R: Arena> Drop for Compaction<'_, '_, R> {
            // Runs at the end and when `keep` panics: the unvisited tail moves down
            // behind the kept characters.
            fn drop(&mut self) {
                let (read, write, len) = (self.read, self.write, self.len);
                self.bytes.copy_within(read..len, write);
                self.bytes.truncate(write + (len - read));
            }
        }

        let len = self.len();
        let mut state: Compaction<'_, '_, R> = Compaction {
            bytes: &mut self.bytes,
            read: 0,
            write: 0,
            len,
        };
        loop {
            // SAFETY: `bytes[read..len]` has not been written since it was a valid
            // `str` (writes go below `write <= read`, within the characters already
            // visited) and `read` is the start of a character (or `len`), so it is
            // UTF-8; only its first character is decoded, and at the end there is
            // none.
            let rest = unsafe { core::str::from_utf8_unchecked(&state.bytes[state.read..len]) };
            let Some(ch) = rest.chars().next() else { break };
            let width = ch.len_utf8();
            if keep(ch) {
                let (read, write) = (state.read, state.write);
                if read != write {
                    state.bytes.copy_within(read..read + width, write);
                }
                state.write += width;
            }
            state.read += width;
        }
    }

    /// Splits the string in two at byte position `at`: returns a new string (in the
    /// same arena) holding `at..`, and keeps `..at`, with its capacity.
    ///
    /// # Panics
    /// If `at` is past the end or not on a `char` boundary ("assertion failed:
    /// self.is_char_boundary(at)", as `std`'s); through `handle_alloc_error` if the
    /// arena cannot provide the new string's bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("cpu.user", &arena);
    /// let dim = s.split_off(4);
    /// assert_eq!((s.as_str(), dim.as_str()), ("cpu.", "user"));
    /// ```
    #[must_use = "use `.truncate()` if you don't need the other half"]
    #[track_caller]
    pub fn split_off(&mut self, at: usize) -> Self {
        assert!(self.is_char_boundary(at));
        let tail = Self::from_str_in(&self[at..], self.arena());
        self.bytes.truncate(at);
        tail
    }

    /// Like [`split_off`](Self::split_off), returning an error instead of calling
    /// `handle_alloc_error`.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the new string's bytes; the
    /// string is unchanged.
    ///
    /// # Panics
    /// If `at` is past the end or not on a `char` boundary, as `split_off`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("ab", &arena);
    /// let b = s.try_split_off(1)?;
    /// assert_eq!((s.as_str(), b.as_str()), ("a", "b"));
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    #[track_caller]
    pub fn try_split_off(&mut self, at: usize) -> Result<Self, AllocError> {
        assert!(self.is_char_boundary(at));
        let tail = Self::try_from_str_in(&self[at..], self.arena())?;
        self.bytes.truncate(at);
        Ok(tail)
    }

    /// Replaces the bytes in `range` with `replace_with`, which may be of any length.
    ///
    /// # Panics
    /// As `std`'s: if the range is out of bounds or decreasing (the slice index
    /// messages), or a bounded end is not on a `char` boundary ("start of range
    /// should be a character boundary", "end of range should be a character
    /// boundary"); on capacity overflow, and through `handle_alloc_error` if the
    /// arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("α is alpha", &arena);
    /// let end = s.find(' ').unwrap();
    /// s.replace_range(..end, "Α");
    /// assert_eq!(s, "Α is alpha");
    /// ```
    #[track_caller]
    pub fn replace_range<Bounds: RangeBounds<usize>>(&mut self, range: Bounds, replace_with: &str) {
        let range = self.replace_range_checked(range);
        self.reserve(replace_with.len().saturating_sub(range.len()));
        self.replace_reserved(range, replace_with);
    }

    /// Like [`replace_range`](Self::replace_range), returning an error instead of
    /// calling `handle_alloc_error` (or panicking on capacity overflow).
    ///
    /// # Errors
    /// [`AllocError`] if the capacity overflows or the arena cannot provide the
    /// bytes; the string is unchanged.
    ///
    /// # Panics
    /// For a bad range, as `replace_range`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("cpu0", &arena);
    /// s.try_replace_range(3.., "12")?;
    /// assert_eq!(s, "cpu12");
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    #[track_caller]
    pub fn try_replace_range<Bounds: RangeBounds<usize>>(
        &mut self,
        range: Bounds,
        replace_with: &str,
    ) -> Result<(), AllocError> {
        let range = self.replace_range_checked(range);
        self.try_reserve(replace_with.len().saturating_sub(range.len()))?;
        self.replace_reserved(range, replace_with);
        Ok(())
    }

    /// Removes the bytes in `range` and returns their characters as an iterator.
    /// The removal happens when the iterator is dropped, whether or not it was run to
    /// the end; if it is leaked (`mem::forget`), the string is left as it was.
    ///
    /// # Panics
    /// As `std`'s: if the range is out of bounds or decreasing (the slice index
    /// messages), or its start or end is not on a `char` boundary ("assertion
    /// failed: self.is_char_boundary(start)", or `end`).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("α is alpha, β is beta", &arena);
    /// let beta = s.find('β').unwrap();
    /// let alpha: std::string::String = s.drain(..beta).collect();
    /// assert_eq!(alpha, "α is alpha, ");
    /// assert_eq!(s, "β is beta");
    /// s.drain(..);
    /// assert_eq!(s, "");
    /// ```
    #[track_caller]
    pub fn drain<Bounds: RangeBounds<usize>>(&mut self, range: Bounds) -> Drain<'_, 'a, R> {
        let Range { start, end } = checked_range(self.as_bytes(), range);
        assert!(self.is_char_boundary(start));
        assert!(self.is_char_boundary(end));
        Drain {
            string: self,
            start,
            end,
            front: start,
            back: end,
        }
    }

    /// The checks of `replace_range`, with `std`'s messages.
    #[track_caller]
    fn replace_range_checked<Bounds: RangeBounds<usize>>(&self, range: Bounds) -> Range<usize> {
        let range = checked_range(self.as_bytes(), range);
        assert!(
            self.is_char_boundary(range.start),
            "start of range should be a character boundary"
        );
        assert!(
            self.is_char_boundary(range.end),
            "end of range should be a character boundary"
        );
        range
    }

    /// Replaces the bytes in `range` with `with`: one move of the tail and one copy.
    /// Callers checked that `range` is in bounds, on `char` boundaries, and reserved
    /// the growth, `with.len() - range.len()` bytes, if positive.
    fn replace_reserved(&mut self, range: Range<usize>, with: &str) {
        let Range { start, end } = range;
        let len = self.bytes.len();
        debug_assert!(start <= end && end <= len);
        debug_assert!(self.is_char_boundary(start) && self.is_char_boundary(end));
        // Cannot overflow: `len - (end - start)` and `with.len()` are both at most
        // `isize::MAX` (a `Vec` and a `str`).
        let new_len = len - (end - start) + with.len();
        assert!(new_len <= self.bytes.capacity(), "the growth was reserved");
        let base = self.bytes.as_mut_ptr();
        // SAFETY: the tail `end..len` is initialized and moves to `start + with.len()`,
        // ending at `new_len`, within the capacity (checked above); `ptr::copy` allows
        // the overlap. `with` is a `str` outside the vector (the vector is borrowed
        // mutably), copied to `start..start + with.len()`, inside the capacity too.
        // Then `..new_len` is initialized: the head, `with`, the tail; all of it
        // whole UTF-8 sequences, as `start` and `end` are `char` boundaries.
        unsafe {
            ptr::copy(base.add(end), base.add(start + with.len()), len - end);
            ptr::copy_nonoverlapping(with.as_ptr(), base.add(start), with.len());
            self.bytes.set_len(new_len);
        }
    }
}

/// `range` as a `Range` within `bytes`, or `std`'s panic for a bad range: slicing
/// with the pair of bounds runs the checks (and messages) of `core::slice::range`,
/// which `std`'s `String::drain` and `replace_range` use. The bounds are read once.
#[track_caller]
fn checked_range<Bounds: RangeBounds<usize>>(bytes: &[u8], range: Bounds) -> Range<usize> {
    let bounds = (range.start_bound().cloned(), range.end_bound().cloned());
    let _checked = &bytes[bounds];
    // The slicing above passed, so `start <= end <= len`: neither `+ 1` overflows.
    let start = match bounds.0 {
        Bound::Included(start) => start,
        Bound::Excluded(start) => start + 1,
        Bound::Unbounded => 0,
    };
    let end = match bounds.1 {
        Bound::Included(end) => end + 1,
        Bound::Excluded(end) => end,
        Bound::Unbounded => bytes.len(),
    };
    start..end
}

/// The characters of a range of a [`String`], removed from it when the iterator is
/// dropped: from [`String::drain`].
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let mut s = onewayalloc::collections::String::from_str_in("a,b,c", &arena);
/// let mut drain = s.drain(..2);
/// assert_eq!(drain.as_str(), "a,");
/// assert_eq!(drain.next_back(), Some(','));
/// drop(drain);
/// assert_eq!(s, "b,c");
/// ```
pub struct Drain<'s, 'a, R: Arena = OneWayAlloc> {
    string: &'s mut String<'a, R>,
    /// The range to remove.
    start: usize,
    end: usize,
    /// The characters not yet returned: `front..back`, within `start..end`.
    front: usize,
    back: usize,
}

impl<R: Arena> Drain<'_, '_, R> {
    /// The characters not yet returned, as a `str`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut s = onewayalloc::collections::String::from_str_in("abc", &arena);
    /// let mut drain = s.drain(..);
    /// drain.next();
    /// assert_eq!(drain.as_str(), "bc");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.string[self.front..self.back]
    }
}

impl<R: Arena> Iterator for Drain<'_, '_, R> {
    type Item = char;

    #[inline]
    fn next(&mut self) -> Option<char> {
        let ch = self.as_str().chars().next()?;
        self.front += ch.len_utf8();
        Some(ch)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.as_str().chars().size_hint()
    }

    #[inline]
    fn last(mut self) -> Option<char> {
        self.next_back()
    }
}

impl<R: Arena> DoubleEndedIterator for Drain<'_, '_, R> {
    #[inline]
    fn next_back(&mut self) -> Option<char> {
        let ch = self.as_str().chars().next_back()?;
        self.back -= ch.len_utf8();
        Some(ch)
    }
}

impl<R: Arena> FusedIterator for Drain<'_, '_, R> {}

/// Removes the drained range: the bytes after it move down.
impl<R: Arena> Drop for Drain<'_, '_, R> {
    fn drop(&mut self) {
        let (start, end, len) = (self.start, self.end, self.string.len());
        let bytes = &mut self.string.bytes;
        bytes.copy_within(end..len, start);
        bytes.truncate(len - (end - start));
    }
}

impl<R: Arena> fmt::Debug for Drain<'_, '_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Drain").field(&self.as_str()).finish()
    }
}
