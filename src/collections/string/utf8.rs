//! The arena `String` from bytes and UTF-16: `from_utf8`, `from_utf8_lossy_in`,
//! `from_utf16_in` (with their `try_` twins), and their errors.

use core::fmt;
use core::str::Utf8Error;

use allocator_api2::alloc::{AllocError, Allocator};

use super::{Bytes, String};
use crate::OneWayAlloc;
use crate::collections::Arena;

impl<'a, R: Arena> String<'a, R> {
    /// The bytes of an arena `Vec<u8>` as a string, without copying, if they are
    /// UTF-8.
    ///
    /// # Errors
    /// [`FromUtf8Error`] if they are not; its [`into_bytes`](FromUtf8Error::into_bytes)
    /// gives the vector back and [`utf8_error`](FromUtf8Error::utf8_error) says where.
    ///
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::collections::String;
    ///
    /// let arena = OneWayAlloc::new();
    /// let heart = onewayalloc::vec![in &arena; 240, 159, 146, 150];
    /// assert_eq!(String::from_utf8(heart).unwrap(), "💖");
    ///
    /// let broken = onewayalloc::vec![in &arena; b'a', 0xff];
    /// let error = String::from_utf8(broken).unwrap_err();
    /// assert_eq!(error.utf8_error().valid_up_to(), 1);
    /// assert_eq!(error.into_bytes(), [b'a', 0xff]);
    /// ```
    pub fn from_utf8(
        bytes: allocator_api2::vec::Vec<u8, &'a R>,
    ) -> Result<Self, FromUtf8Error<'a, R>>
    where
        &'a R: Allocator,
    {
        let bytes = R::vec_of_handle(bytes);
        match core::str::from_utf8(&bytes) {
            Ok(_) => Ok(String { bytes }),
            Err(error) => Err(FromUtf8Error { bytes, error }),
        }
    }

    /// The bytes of an arena `Vec<u8>` as a string, without checking or copying.
    ///
    /// # Safety
    /// The bytes must be valid UTF-8.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let bytes = onewayalloc::vec![in &arena; b'o', b'k'];
    /// // SAFETY: ASCII is UTF-8.
    /// let s = unsafe { onewayalloc::collections::String::from_utf8_unchecked(bytes) };
    /// assert_eq!(s, "ok");
    /// ```
    pub unsafe fn from_utf8_unchecked(bytes: allocator_api2::vec::Vec<u8, &'a R>) -> Self
    where
        &'a R: Allocator,
    {
        String {
            bytes: R::vec_of_handle(bytes),
        }
    }

    /// A string of `bytes` in the arena, with each invalid UTF-8 sequence replaced
    /// by U+FFFD REPLACEMENT CHARACTER, as `std`'s `String::from_utf8_lossy` does
    /// (but always a copy in the arena).
    ///
    /// # Panics
    /// Through `handle_alloc_error` if the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = onewayalloc::collections::String::from_utf8_lossy_in(b"Hello \xF0\x90\x80World", &arena);
    /// assert_eq!(s, "Hello �World");
    /// ```
    pub fn from_utf8_lossy_in(bytes: &[u8], arena: &'a R) -> Self {
        let mut string = Self::with_capacity_in(bytes.len(), arena);
        for chunk in bytes.utf8_chunks() {
            string.push_str(chunk.valid());
            if !chunk.invalid().is_empty() {
                string.push(char::REPLACEMENT_CHARACTER);
            }
        }
        string
    }

    /// Like [`from_utf8_lossy_in`](Self::from_utf8_lossy_in), returning an error
    /// instead of calling `handle_alloc_error`.
    ///
    /// # Errors
    /// [`AllocError`] if the arena cannot provide the bytes (its backing allocator
    /// refuses, or its [limit](OneWayAlloc::set_limit) is reached).
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// let s = String::try_from_utf8_lossy_in(b"ok \xFF", &arena)?;
    /// assert_eq!(s, "ok \u{FFFD}");
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    pub fn try_from_utf8_lossy_in(bytes: &[u8], arena: &'a R) -> Result<Self, AllocError> {
        let mut string = Self::try_with_capacity_in(bytes.len(), arena)?;
        for chunk in bytes.utf8_chunks() {
            string.try_push_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                string.try_push(char::REPLACEMENT_CHARACTER)?;
            }
        }
        Ok(string)
    }

    /// A string of UTF-16 code units in the arena.
    ///
    /// # Errors
    /// [`FromUtf16Error`] if `units` holds a lone surrogate.
    ///
    /// # Panics
    /// Through `handle_alloc_error` if the arena cannot provide the bytes.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// let music = [0xD834, 0xDD1E, 0x006d, 0x0075, 0x0073, 0x0069, 0x0063];
    /// assert_eq!(String::from_utf16_in(&music, &arena).unwrap(), "𝄞music");
    /// assert!(String::from_utf16_in(&[0xD834, 0x006d], &arena).is_err());
    /// ```
    pub fn from_utf16_in(units: &[u16], arena: &'a R) -> Result<Self, FromUtf16Error> {
        let mut string = Self::with_capacity_in(units.len(), arena);
        for ch in char::decode_utf16(units.iter().copied()) {
            string.push(ch.map_err(|_| FromUtf16Error(()))?);
        }
        Ok(string)
    }

    /// Like [`from_utf16_in`](Self::from_utf16_in), returning an error instead of
    /// calling `handle_alloc_error`. The outer `Result` is the allocation's, as for
    /// every `try_` call; the inner one is `from_utf16_in`'s.
    ///
    /// # Errors
    /// The outer [`AllocError`] if the arena cannot provide the bytes (its backing
    /// allocator refuses, or its [limit](OneWayAlloc::set_limit) is reached); the
    /// inner [`FromUtf16Error`] if `units` holds a lone surrogate.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// use onewayalloc::collections::String;
    /// let units = [0xD834, 0xDD1E, 0x006d];
    /// assert_eq!(String::try_from_utf16_in(&units, &arena)?.unwrap(), "𝄞m");
    /// assert!(String::try_from_utf16_in(&[0xD834, 0x006d], &arena)?.is_err());
    /// # Ok::<(), onewayalloc::AllocError>(())
    /// ```
    pub fn try_from_utf16_in(
        units: &[u16],
        arena: &'a R,
    ) -> Result<Result<Self, FromUtf16Error>, AllocError> {
        let mut string = Self::try_with_capacity_in(units.len(), arena)?;
        for ch in char::decode_utf16(units.iter().copied()) {
            match ch {
                Ok(ch) => string.try_push(ch)?,
                Err(_) => return Ok(Err(FromUtf16Error(()))),
            }
        }
        Ok(Ok(string))
    }
}

/// The error of [`String::from_utf8`]: the bytes were not UTF-8. It keeps the
/// vector, as `std`'s `FromUtf8Error` does.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let error = onewayalloc::collections::String::from_utf8(onewayalloc::vec![in &arena; 0xc3]).unwrap_err();
/// assert_eq!(error.as_bytes(), [0xc3]);
/// assert_eq!(error.to_string(), "incomplete utf-8 byte sequence from index 0");
/// ```
pub struct FromUtf8Error<'a, R: Arena + 'a = OneWayAlloc> {
    bytes: Bytes<'a, R>,
    error: Utf8Error,
}

impl<'a, R: Arena> FromUtf8Error<'a, R> {
    /// The bytes that were not UTF-8.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let error = onewayalloc::collections::String::from_utf8(onewayalloc::vec![in &arena; 0xff]).unwrap_err();
    /// assert_eq!(error.as_bytes(), [0xff]);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The vector given to `from_utf8`, back.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let error = onewayalloc::collections::String::from_utf8(onewayalloc::vec![in &arena; 0xff]).unwrap_err();
    /// let mut bytes = error.into_bytes();
    /// bytes[0] = b'!';
    /// assert_eq!(onewayalloc::collections::String::from_utf8(bytes).unwrap(), "!");
    /// ```
    pub fn into_bytes(self) -> Bytes<'a, R> {
        self.bytes
    }

    /// Where and how the bytes stop being UTF-8.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let bytes = onewayalloc::vec![in &arena; b'o', b'k', 0xff];
    /// let error = onewayalloc::collections::String::from_utf8(bytes).unwrap_err();
    /// assert_eq!(error.utf8_error().valid_up_to(), 2);
    /// ```
    pub fn utf8_error(&self) -> Utf8Error {
        self.error
    }
}

impl<R: Arena> fmt::Display for FromUtf8Error<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl<R: Arena> fmt::Debug for FromUtf8Error<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromUtf8Error")
            .field("bytes", &self.as_bytes())
            .field("error", &self.error)
            .finish()
    }
}

impl<R: Arena> Clone for FromUtf8Error<'_, R> {
    fn clone(&self) -> Self {
        FromUtf8Error {
            bytes: self.bytes.clone(),
            error: self.error,
        }
    }
}

impl<R: Arena> PartialEq for FromUtf8Error<'_, R> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes() && self.error == other.error
    }
}

impl<R: Arena> Eq for FromUtf8Error<'_, R> {}

impl<R: Arena> core::error::Error for FromUtf8Error<'_, R> {}

/// The error of [`String::from_utf16_in`]: the code units held a lone surrogate.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let error = onewayalloc::collections::String::from_utf16_in(&[0xD800], &arena).unwrap_err();
/// assert_eq!(error.to_string(), "invalid utf-16: lone surrogate found");
/// ```
#[derive(Debug)]
pub struct FromUtf16Error(());

impl fmt::Display for FromUtf16Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid utf-16: lone surrogate found")
    }
}

impl core::error::Error for FromUtf16Error {}
