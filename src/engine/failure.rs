//! One allocation path for the plain and the `try_` calls.
//!
//! Every allocating function is written once, generic over [`Failure`]: with
//! [`AllocError`] it returns the error, with [`Infallible`] the failure points panic
//! (overflow) or call [`handle_alloc_error`] (a refused allocation), and the `Err`
//! arm disappears at compile time.

use core::alloc::Layout;
use core::convert::Infallible;

use allocator_api2::alloc::{AllocError, handle_alloc_error};

/// What a failed allocation turns into.
pub(crate) trait Failure: Sized {
    /// A size computation overflowed (`nmemb * size`, a layout or a page size above
    /// `isize::MAX`).
    fn overflow() -> Self;
    /// The backing allocator refused to give a page of `layout`.
    fn refused(layout: Layout) -> Self;
}

impl Failure for AllocError {
    #[inline]
    fn overflow() -> Self {
        AllocError
    }

    #[inline]
    fn refused(_layout: Layout) -> Self {
        AllocError
    }
}

impl Failure for Infallible {
    #[cold]
    #[inline(never)]
    fn overflow() -> Self {
        panic!(
            "onewayalloc: allocation size overflow: the request, with its alignment and \
             the page header, exceeds isize::MAX bytes"
        )
    }

    #[cold]
    #[inline(never)]
    fn refused(layout: Layout) -> Self {
        handle_alloc_error(layout)
    }
}

/// Unwraps the result of an infallible call.
#[inline(always)]
pub(crate) fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}
