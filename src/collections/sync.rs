//! The collections of [`collections`](super), in a [`SyncOneWayAlloc`]: the same
//! names (`Vec`, `Box`, `HashMap`, `HashSet`, `String`) over `&'a SyncOneWayAlloc`,
//! so a value built of them is `Send` and `Sync` when its elements are: it may be
//! held across an `.await` in a multi-threaded runtime, or built on one thread and
//! read on others.
//!
//! Import the module under the name you use for the arena collections, and the
//! code reads as it does with a `OneWayAlloc`:
//!
//! ```
//! use onewayalloc::collections::sync as arena; // instead of `collections as arena`
//! use onewayalloc::{SyncOneWayAlloc, format_in};
//! use onewayalloc::collections::CollectIn;
//!
//! let arena = SyncOneWayAlloc::new();
//! let lines: arena::Vec<arena::String> = std::thread::scope(|s| {
//!     let workers: std::vec::Vec<_> = (0..3)
//!         .map(|i| {
//!             let arena = &arena;
//!             s.spawn(move || format_in!(arena, "worker {i}"))
//!         })
//!         .collect();
//!     workers.into_iter().map(|w| w.join().unwrap()).collect_in(&arena)
//! });
//! let mut index: arena::HashMap<&str, usize> = arena::HashMap::new_in(&arena);
//! for (i, line) in lines.iter().enumerate() {
//!     index.insert(line, i);
//! }
//! assert_eq!(index["worker 2"], 2);
//! ```
//!
//! [`format_in!`](crate::format_in), [`vec!`](crate::vec) and `collect_in` take
//! `&arena` for a `SyncOneWayAlloc` as for a `OneWayAlloc`, and
//! `SyncOneWayAlloc::deserialize` (feature `serde`) parses into these types.

use allocator_api2::alloc::Global;

use crate::SyncOneWayAlloc;

/// A vector in a [`SyncOneWayAlloc`]: `Vec::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::SyncOneWayAlloc::new();
/// let mut v: onewayalloc::collections::sync::Vec<u32> = onewayalloc::collections::sync::Vec::new_in(&arena);
/// v.push(1);
/// std::thread::scope(|s| {
///     s.spawn(|| v.push(2)); // grown on another thread
/// });
/// assert_eq!(v, [1, 2]);
/// ```
pub type Vec<'a, T, A = Global> = allocator_api2::vec::Vec<T, &'a SyncOneWayAlloc<A>>;

/// A box in a [`SyncOneWayAlloc`]: `Box::new_in(value, &arena)`. Dropping it runs
/// the value's destructor.
///
/// ```
/// let arena = onewayalloc::SyncOneWayAlloc::new();
/// let b: onewayalloc::collections::sync::Box<[u8; 4]> = onewayalloc::collections::sync::Box::new_in([1; 4], &arena);
/// assert_eq!(b[3], 1);
/// ```
pub type Box<'a, T, A = Global> = allocator_api2::boxed::Box<T, &'a SyncOneWayAlloc<A>>;

/// A hash map in a [`SyncOneWayAlloc`], with hashbrown's default hasher:
/// `HashMap::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::SyncOneWayAlloc::new();
/// let mut m: onewayalloc::collections::sync::HashMap<u32, &str> = onewayalloc::collections::sync::HashMap::new_in(&arena);
/// m.insert(1, "one");
/// assert_eq!(m[&1], "one");
/// ```
pub type HashMap<'a, K, V, A = Global> =
    hashbrown::HashMap<K, V, hashbrown::DefaultHashBuilder, &'a SyncOneWayAlloc<A>>;

/// A hash set in a [`SyncOneWayAlloc`], with hashbrown's default hasher:
/// `HashSet::new_in(&arena)`.
///
/// ```
/// let arena = onewayalloc::SyncOneWayAlloc::new();
/// let mut s: onewayalloc::collections::sync::HashSet<u64> = onewayalloc::collections::sync::HashSet::new_in(&arena);
/// assert!(s.insert(7));
/// ```
pub type HashSet<'a, T, A = Global> =
    hashbrown::HashSet<T, hashbrown::DefaultHashBuilder, &'a SyncOneWayAlloc<A>>;

/// The arena [`String`](super::String) in a [`SyncOneWayAlloc`], with every method
/// of that type: `String::new_in(&arena)`, or [`format_in!`](crate::format_in).
///
/// ```
/// let arena = onewayalloc::SyncOneWayAlloc::new();
/// let mut s = onewayalloc::collections::sync::String::new_in(&arena);
/// s.push_str("cpu");
/// let s = std::thread::scope(|scope| scope.spawn(move || s + "0").join().unwrap());
/// assert_eq!(s, "cpu0");
/// ```
pub type String<'a, A = Global> = super::String<'a, SyncOneWayAlloc<A>>;
