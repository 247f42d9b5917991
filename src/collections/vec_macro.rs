//! `vec![in &arena; ...]`, bumpalo's `vec!` for the arena `Vec`.

use allocator_api2::alloc::Allocator;
use allocator_api2::vec::Vec;

/// Makes an arena [`Vec`](crate::collections::Vec), like `std`'s `vec!` with the
/// arena first, as bumpalo's `vec!` does:
///
/// - `vec![in &arena]`: an empty vector (allocates nothing yet);
/// - `vec![in &arena; a, b, c]`: the listed elements, in one allocation of exactly
///   their number; the elements are evaluated before the arena is asked, so an
///   element expression that allocates from the arena does not make the vector move;
/// - `vec![in &arena; value; n]`: `n` clones of `value` (the last one is `value`
///   itself; with `n == 0` it is dropped), in one allocation.
///
/// The arena expression is a reference to any [`ArenaHandle`](crate::collections::ArenaHandle):
/// `&arena`, a pool guard `&guard`, the `arena` that
/// [`with_scratch`](crate::with_scratch) gives (reborrowed, not moved), a scope `s`
/// or [`s.arena()`](crate::Scope::arena). With the `nightly` feature the result is
/// `std`'s `Vec<T, &OneWayAlloc>` (where allocator-api2 has no `vec!` of its own).
/// Any other allocator-api2 `Allocator` that is `Clone` works too, by reference
/// (`vec![in &alloc; ...]`, cloned), and gives `Vec<T, That>`.
///
/// Every form without `in` is `std`'s `vec!` (it is passed on as written), so
/// `use onewayalloc::vec;` changes nothing for `vec![1, 2, 3]`, `vec![0; n]` or
/// `vec![]` in that module: they still make `std`'s `Vec`.
///
/// # Panics
/// Like `Vec::with_capacity_in`: if the capacity overflows, and through
/// `handle_alloc_error` if the arena cannot provide the memory.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::Vec;
///
/// let mut arena = OneWayAlloc::new();
/// let empty: Vec<u8> = onewayalloc::vec![in &arena];
/// let listed = onewayalloc::vec![in &arena; 1, 2, 3];
/// let zeros = onewayalloc::vec![in &arena; 0u64; 1000];
/// assert_eq!((empty.len(), listed[2], zeros.len()), (0, 3, 1000));
/// drop((empty, listed, zeros));
///
/// let total = arena.scope(|s| {
///     let words = onewayalloc::vec![in s.arena(); "in", "a", "scope"];
///     words.len()
/// });
/// assert_eq!(total, 3);
///
/// // Without `in`: std's vec!.
/// let std_vec: std::vec::Vec<u8> = onewayalloc::vec![1, 2, 3];
/// assert_eq!(std_vec, [1, 2, 3]);
/// ```
#[macro_export]
macro_rules! vec {
    (in $arena:expr $(;)?) => {
        $crate::allocator_api2::vec::Vec::new_in($crate::collections::__alloc_of($arena))
    };
    (in $arena:expr; $elem:expr; $n:expr) => {
        $crate::collections::__vec_from_elem($elem, $n, $crate::collections::__alloc_of($arena))
    };
    (in $arena:expr; $($x:expr),+ $(,)?) => {
        $crate::collections::__vec_from_array([$($x),+], $crate::collections::__alloc_of($arena))
    };
    ($($std:tt)*) => {
        $crate::collections::__std::vec![$($std)*]
    };
}

/// `vec![in arena; elem; n]`: `n` elements, cloned from `elem`, in one allocation.
#[doc(hidden)]
#[inline]
pub fn __vec_from_elem<T: Clone, B: Allocator>(elem: T, n: usize, arena: B) -> Vec<T, B> {
    let mut vec = Vec::with_capacity_in(n, arena);
    vec.resize(n, elem);
    vec
}

/// `vec![in arena; a, b, c]`: the array's elements, moved, in one allocation.
#[doc(hidden)]
#[inline]
pub fn __vec_from_array<T, B: Allocator, const N: usize>(array: [T; N], arena: B) -> Vec<T, B> {
    let mut vec = Vec::with_capacity_in(N, arena);
    vec.extend(array);
    vec
}
