//! Collections in an arena, without spelling out the allocator parameter.
//!
//! `Vec`, `Box`, `HashMap` and `HashSet` are the `allocator-api2` and `hashbrown`
//! types over `&'a OneWayAlloc`, so every method those crates document works.
//! [`String`] is the arena's own, built on the arena `Vec<u8>` so it grows in
//! place at the top of the arena; [`format_in!`](crate::format_in) formats into one.
//!
//! The examples import this module as `arena` rather than its `String` and `Vec`,
//! so that `String` and `Vec` keep naming `std`'s types in the same module (a
//! `fn label() -> String { format!(..) }` beside them still compiles).
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections as arena;
//! use onewayalloc::format_in;
//!
//! let arena = OneWayAlloc::new();
//! let mut names: arena::HashMap<arena::String, usize> = arena::HashMap::new_in(&arena);
//! let mut order = arena::Vec::new_in(&arena);
//! for i in 0..3 {
//!     let name = format_in!(&arena, "dim{i}");
//!     order.push(name.clone());
//!     names.insert(name, i);
//! }
//! assert_eq!(names["dim2"], 2); // looked up by &str
//! assert_eq!(order[0], "dim0");
//! ```
//!
//! # In the thread-safe arena
//!
//! [`sync`] has the same names over `&'a SyncOneWayAlloc` (feature `std`):
//! `use onewayalloc::collections::sync as arena;` and the code above works with a
//! [`SyncOneWayAlloc`](crate::SyncOneWayAlloc), its values `Send` and `Sync`. The
//! arena [`String`] takes the arena type as its parameter ([`Arena`]):
//! `String<'a>` is in a `OneWayAlloc`, `String<'a, SyncOneWayAlloc>` (spelled
//! `sync::String<'a>`) in a `SyncOneWayAlloc`.
//!
//! # Building collections
//!
//! - [`vec!`](crate::vec): `onewayalloc::vec![in &arena; 1, 2, 3]`,
//!   `vec![in &arena; value; n]` and `vec![in &arena]`, as bumpalo's `vec!`.
//! - [`CollectIn`]: `iter.collect_in::<Vec<_>>(&arena)` for every collection that
//!   implements [`FromIteratorIn`]: `Vec`, `Box<[T]>`, `HashMap`, `HashSet`,
//!   [`String`] (from `char`s or `&str`s), and `Option`/`Result` of those.
//!
//! These, and [`format_in!`](crate::format_in), take every handle on an arena the
//! same way ([`ArenaHandle`]): `&arena`, a pool guard `&guard`, the `arena` of
//! `with_scratch` and a scope `s` or `s.arena()`.
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections::{self as arena, CollectIn};
//!
//! let arena = OneWayAlloc::new();
//! let squares = onewayalloc::vec![in &arena; 1, 4, 9];
//! let evens: arena::Vec<u32> = (0..10).filter(|n| n % 2 == 0).collect_in(&arena);
//! let index: arena::HashMap<u32, usize> = evens.iter().copied().zip(0..).collect_in(&arena);
//! let word: arena::String = ['o', 'w', 'a'].into_iter().collect_in(&arena);
//! assert_eq!((squares[2], evens.len(), index[&8], word.as_str()), (9, 5, 4, "owa"));
//! ```
//!
//! # From a collection to a plain arena slice
//!
//! A collection borrows the arena for `'a`; giving it up for a plain reference of
//! the same lifetime costs no copy. A bumpalo user looks for these under other names:
//!
//! | bumpalo | here |
//! |---|---|
//! | `vec.into_bump_slice()`, `vec.into_bump_slice_mut()` | [`vec.leak()`](allocator_api2::vec::Vec::leak): `&'a mut [T]` |
//! | `string.into_bump_str()` | [`string.into_str()`](String::into_str): `&'a mut str` |
//! | `bumpalo::boxed::Box::leak(b)` | `Box::leak(b)` |
//!
//! `leak` gives up ownership: the elements are never dropped (as with any value
//! placed in the arena), and their memory comes back at the next
//! [`reset`](crate::OneWayAlloc::reset). Unused capacity stays in the arena too; call
//! `shrink_to_fit` first to release it when the vector is the most recent block.
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections::{self as arena, CollectIn};
//!
//! struct Node<'a> {
//!     name: &'a str,
//!     children: &'a [u32],
//! }
//!
//! let arena = OneWayAlloc::new();
//! let children: arena::Vec<u32> = (1..=3).collect_in(&arena);
//! let mut name = arena::String::new_in(&arena);
//! name.push_str("root");
//! let node = Node { name: name.into_str(), children: children.leak() };
//! assert_eq!((node.name, node.children), ("root", &[1, 2, 3][..]));
//! ```
//!
//! # To `std`'s owned types
//!
//! A value that must outlive the arena is copied out of it:
//!
//! | from the arena | to `std` |
//! |---|---|
//! | [`String`] | `std::string::String::from(s)` or `s.into()`; also `Box<str>` |
//! | `Vec<T>` | `v.to_vec()` (`T: Clone`), or `v.into_iter().collect::<std::vec::Vec<T>>()` (moves the elements) |
//! | `Box<str>` | `std::string::String::from(&*b)`, or `Box::<str>::from(&*b)` |
//! | `Box<[T]>` | `b.to_vec()` (`T: Clone`), or `b.into_iter().collect()` |
//!
//! `From` exists for the arena [`String`], which is this crate's type; the arena
//! `Vec` and `Box` are allocator-api2's (or, with `nightly`, `std`'s), and Rust's
//! orphan rule lets neither this crate nor `std` convert between two types of
//! other crates, so they use the calls above.
//!
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections as arena;
//!
//! fn label(arena: &OneWayAlloc, id: u32) -> String {
//!     let scratch = onewayalloc::format_in!(arena, "dim{id}");
//!     scratch.into() // std's String, copied out of the arena
//! }
//!
//! let arena = OneWayAlloc::new();
//! assert_eq!(label(&arena, 7), "dim7");
//! let values = onewayalloc::vec![in &arena; 1, 2, 3];
//! let owned: Vec<u32> = values.to_vec();
//! let moved: Vec<u32> = values.into_iter().collect();
//! let copied: Box<str> = arena::String::from_str_in("cpu", &arena).into();
//! assert_eq!((owned, moved, &*copied), (vec![1, 2, 3], vec![1, 2, 3], "cpu"));
//! ```
//!
//! # With the `nightly` feature
//!
//! `Vec` and `Box` are then `std`'s own types with the arena as their allocator
//! (`std::vec::Vec<T, &OneWayAlloc>`), and everything above works the same.

mod arena_type;
mod collect;
mod handle;
mod string;
#[cfg(feature = "std")]
pub mod sync;
mod vec_macro;

pub use arena_type::Arena;
pub use collect::{CollectIn, FromIteratorIn};
#[doc(hidden)]
pub use handle::__alloc_of;
pub use handle::ArenaHandle;
pub use string::{Drain, FromUtf8Error, FromUtf16Error, String};
#[doc(hidden)]
pub use vec_macro::{__vec_from_array, __vec_from_elem};
/// `alloc`'s `vec!`, which [`vec!`](crate::vec) passes every form without `in` to.
#[doc(hidden)]
pub mod __std {
    pub use alloc::vec;
}

use allocator_api2::alloc::Global;

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
