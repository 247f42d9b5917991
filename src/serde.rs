//! Serializing arena data with serde (feature `serde`).
//!
//! The feature implements `Serialize` for the arena [`String`] and turns on the
//! `serde` features of allocator-api2 (0.2, and 0.4 with `allocator-api2-04`) and
//! hashbrown, so these serialize as their `std` counterparts do:
//!
//! | arena type | serializes | as |
//! |---|---|---|
//! | [`collections::String`](String) | yes (here) | a string |
//! | [`collections::Vec<T>`](crate::collections::Vec) | yes (allocator-api2) | a sequence |
//! | [`collections::Box<T>`](crate::collections::Box), `T` sized | yes (allocator-api2) | `T` |
//! | [`collections::HashMap`](crate::collections::HashMap), [`HashSet`](crate::collections::HashSet) | yes (hashbrown) | a map, a sequence |
//! | `&'a str`, `&'a mut [T]`, `&'a mut T` from the arena's `alloc_*` calls, `into_str` and `Vec::leak` | yes (serde) | a string, a sequence, `T` |
//! | `collections::Box<[T]>`, `collections::Box<str>` | **no**: allocator-api2 0.2 serializes only sized boxes | use [`by_deref`] |
//! | `collections::Vec` and `Box` under the `nightly` feature | **no**: they are `std`'s `Vec<T, A>` and `Box<T, A>`, and serde implements `Serialize` only for the global allocator's | use [`by_deref`] |
//!
//! The crate cannot fill those two gaps with `Serialize` impls of its own: both the
//! trait (serde's) and the types (allocator-api2's or `std`'s, whatever their
//! allocator parameter) are foreign to it, which the orphan rule forbids. What it
//! can give, and does, is [`by_deref`] for `#[serde(serialize_with = ...)]` and
//! [`ByDeref`] for direct calls: both serialize what the value derefs to (`[T]`,
//! `str`, `T`), which is what serde does for `std`'s boxes and vectors.
//!
//! **`no_std`.** allocator-api2 0.2 depends on serde with serde's default features,
//! so this feature turns on serde's `std`: it needs a target with `std` and does not
//! build for bare metal (`--no-default-features --features serde --target
//! thumbv7em-none-eabihf` fails in serde's `std` build). hashbrown's and allocator-api2
//! 0.4's serde support are `no_std`; the arena's own impls are too.
//!
//! Deserializing into the arena is not provided.
//!
//! # Examples
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections::{HashMap, String, Vec};
//! # #[cfg(not(feature = "nightly"))] {
//!
//! #[derive(serde::Serialize)]
//! struct Dimension<'a> {
//!     id: &'a str,
//!     name: String<'a>,
//!     points: Vec<'a, f64>,
//! }
//!
//! let arena = OneWayAlloc::new();
//! let dim = Dimension {
//!     id: arena.alloc_str("cpu.cpu0.user"),
//!     name: String::from_str_in("user", &arena),
//!     points: onewayalloc::vec![in &arena; 1.5, 2.0],
//! };
//! let mut by_id = HashMap::new_in(&arena);
//! by_id.insert(dim.id, &dim);
//! assert_eq!(
//!     serde_json::to_string(&by_id).unwrap(),
//!     r#"{"cpu.cpu0.user":{"id":"cpu.cpu0.user","name":"user","points":[1.5,2.0]}}"#
//! );
//! # }
//! ```

mod de;

pub use de::{__private, ArenaSeed, DeserializeIn};

use core::ops::Deref;

use allocator_api2::alloc::Allocator;
use serde::{Serialize, Serializer};

use crate::collections::String;

/// Serializes as a string, as `std`'s `String` does.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let s = onewayalloc::format_in!(&arena, "cpu{}", 0);
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#""cpu0""#);
/// ```
impl<A: Allocator> Serialize for String<'_, A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

/// Serializes what `value` derefs to: for `#[serde(serialize_with =
/// "onewayalloc::serde::by_deref")]` on a field whose type has no `Serialize` of its
/// own, such as `collections::Box<[T]>` and `collections::Box<str>`, or the arena
/// `Vec` and `Box` under the `nightly` feature.
///
/// # Errors
/// The serializer's.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::{Box, CollectIn};
///
/// #[derive(serde::Serialize)]
/// struct Chart<'a> {
///     #[serde(serialize_with = "onewayalloc::serde::by_deref")]
///     dims: Box<'a, [u32]>,
/// }
///
/// let arena = OneWayAlloc::new();
/// let chart = Chart { dims: (1..=3).collect_in(&arena) };
/// assert_eq!(serde_json::to_string(&chart).unwrap(), r#"{"dims":[1,2,3]}"#);
/// ```
pub fn by_deref<D, S>(value: &D, serializer: S) -> Result<S::Ok, S::Error>
where
    D: Deref + ?Sized,
    D::Target: Serialize,
    S: Serializer,
{
    value.deref().serialize(serializer)
}

/// A reference that serializes what it points to derefs to, as [`by_deref`] does:
/// `serde_json::to_string(&ByDeref(&boxed_slice))`.
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::{Box, CollectIn};
/// use onewayalloc::serde::ByDeref;
///
/// let arena = OneWayAlloc::new();
/// let names: Box<[&str]> = ["user", "system"].into_iter().collect_in(&arena);
/// assert_eq!(serde_json::to_string(&ByDeref(&names)).unwrap(), r#"["user","system"]"#);
/// ```
pub struct ByDeref<'r, D: ?Sized>(pub &'r D);

impl<D> Serialize for ByDeref<'_, D>
where
    D: Deref + ?Sized,
    D::Target: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        by_deref(self.0, serializer)
    }
}
