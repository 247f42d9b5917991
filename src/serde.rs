//! Requests deserialized straight into the arena, and arena data serialized with
//! serde (feature `serde`; feature `derive` for `#[derive(DeserializeIn)]`).
//!
//! ```
//! # #[cfg(feature = "derive")] {
//! use onewayalloc::collections::{HashMap, Vec};
//! use onewayalloc::{DeserializeIn, OneWayAlloc};
//!
//! #[derive(DeserializeIn)]
//! struct Request<'a> {
//!     chart: &'a str,
//!     after: i64,
//!     dimensions: Vec<'a, &'a str>,
//!     labels: Option<HashMap<'a, &'a str, &'a str>>,
//!     #[serde(default)]
//!     points: u32,
//! }
//!
//! let body = br#"{"chart":"system.cpu","after":-600,"dimensions":["user","system"]}"#;
//! let arena = OneWayAlloc::new();
//! let mut json = serde_json::Deserializer::from_slice(body);
//! let request: Request = arena.deserialize(&mut json).unwrap();
//! json.end().unwrap(); // nothing after the value
//! assert_eq!((request.chart, request.after), ("system.cpu", -600));
//! assert_eq!(request.dimensions, ["user", "system"]);
//! assert_eq!((request.labels, request.points), (None, 0));
//! # }
//! ```
//!
//! # Deserializing into the arena
//!
//! [`DeserializeIn<'a>`](DeserializeIn) is serde's `Deserialize` with the arena
//! passed along: every string, vector, box and map of the value is allocated in the
//! arena, so the value borrows the arena and the input can be dropped at once. With
//! serde_json and a body without escaped strings, parsing a request makes no global
//! allocation at all (serde_json's own scratch buffer is allocated, once per
//! deserializer, for the first escaped string or unknown field whose value nests).
//! Call it with [`OneWayAlloc::deserialize`](crate::OneWayAlloc::deserialize), or [`OneWayAlloc::seed`](crate::OneWayAlloc::seed) /
//! [`ArenaSeed`] inside another `Deserialize` or `DeserializeSeed`.
//!
//! `#[derive(onewayalloc::DeserializeIn)]` (feature `derive`) takes structs (named,
//! tuple, unit) and enums (unit, newtype, tuple and struct variants, externally tagged
//! as serde's default). A struct's own lifetimes are the lifetimes of its arena data
//! (`&'a str`, `Vec<'a, T>`): the derived impl is `DeserializeIn<'arena>` for every
//! arena borrow that outlives them. Its type parameters must be `DeserializeIn`. It
//! reads serde's own `#[serde(...)]` attributes, so one struct can derive both
//! `Serialize` and `DeserializeIn`:
//!
//! | attribute | on | meaning, as serde's |
//! |---|---|---|
//! | `rename = "n"`, `rename(deserialize = "n")` | container, field, variant | the name in the input |
//! | `rename_all = "camelCase"` (and serde's other rules) | container, variant | field or variant names |
//! | `alias = "n"` | field, variant | another accepted name |
//! | `default`, `default = "path"` | field, struct | a missing field's value (`Default`: the arena collections have none, they need the arena; make such a field an `Option`) |
//! | `skip`, `skip_deserializing` | field, variant | never read; the field gets its default |
//! | `deny_unknown_fields` | container | an unknown field is an error, not skipped |
//! | `skip_serializing`, `skip_serializing_if`, `serialize_with` | field (the first and last on variants too) | serialization only: accepted, no effect here |
//!
//! Any other serde attribute (`flatten`, `tag`, `untagged`, `with`, `bound`, ...) is a
//! compile error naming it. A missing `Option` field is `None`, as in serde; unknown
//! fields are skipped unless `deny_unknown_fields`.
//!
//! **Untrusted input.** A length announced by the input (`size_hint`) reserves at most
//! 1 MiB ahead (serde's cautious rule), and a reservation the arena refuses is
//! skipped: only the elements that do come count. Every allocation goes through the
//! arena's fallible calls: past [`set_limit`](crate::OneWayAlloc::set_limit) the
//! deserializer returns its error "the arena's limit of N bytes is reached", never a
//! panic or an abort. On any error, what was built so far is dropped exactly once and
//! the arena goes on serving. (Elements of a `&[T]` or `&mut [T]` are never dropped,
//! as with any value placed in the arena; prefer `Vec` for types with a destructor.)
//! How deep the input may nest is the stack's matter: see [Nesting depth](#nesting-depth).
//!
//! **The arena type.** `DeserializeIn<'a, R = OneWayAlloc>` takes the arena type
//! as its parameter, `OneWayAlloc` when it is left out. The implementations of the
//! crate's collections hold for the arena they are typed for
//! ([`Arena`]: `OneWayAlloc<A>` or `SyncOneWayAlloc<A>`,
//! over any backing allocator), the others (numbers, `Option`, tuples, arrays) for
//! every arena. The derive implements `DeserializeIn<'a, OneWayAlloc>`, or the
//! arena named by `#[onewayalloc(arena = ...)]` on the struct or enum.
//!
//! ## Into a `SyncOneWayAlloc`
//!
//! A request that must be `Send` and `Sync` (held across an `.await` on a
//! multi-threaded runtime, or read by other threads) keeps its strings and
//! collections in a [`SyncOneWayAlloc`](crate::SyncOneWayAlloc): its fields are the
//! [`collections::sync`](crate::collections::sync) types (`&'a str` and plain values
//! work in both arenas), the derive names the arena, and
//! [`SyncOneWayAlloc::deserialize`](crate::SyncOneWayAlloc::deserialize) parses it.
//! Without the attribute the compiler says which field is typed for which arena.
//!
//! ```
//! # #[cfg(feature = "derive")] {
//! use onewayalloc::collections::sync as arena;
//! use onewayalloc::{DeserializeIn, SyncOneWayAlloc};
//!
//! #[derive(DeserializeIn)]
//! #[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]
//! struct Request<'a> {
//!     chart: arena::String<'a>,
//!     dimensions: arena::Vec<'a, &'a str>,
//! }
//!
//! let arena = SyncOneWayAlloc::new();
//! let mut json = serde_json::Deserializer::from_str(r#"{"chart":"cpu","dimensions":["user"]}"#);
//! let request: Request = arena.deserialize(&mut json).unwrap();
//! let seen = std::thread::scope(|s| s.spawn(|| request.dimensions.len()).join().unwrap());
//! assert_eq!((request.chart.as_str(), seen), ("cpu", 1));
//! # }
//! ```
//!
//! ## Nesting depth
//!
//! Deserializing recurses, in serde as here: every level of nesting in the input (a
//! struct in a `Box` or an `Option`, a vector's element, a map's value) is a few calls
//! deeper, so the thread's stack bounds how deep an input can go. The rule: **a
//! nesting level of `DeserializeIn` takes at most 1.25 times the stack of serde's
//! `Deserialize` for the same shape in `std` types** (`String` for `&str`, `std`'s
//! `Box` and `Vec`) in release builds, and at most 1.5 times in debug builds.
//! `tests/deserialize_in_stack.rs` checks it on a list nested through
//! `Option<Box<Node>>`, a `u64` and a string in each node; `cargo test --release
//! --features derive --test deserialize_in_stack -- --nocapture` prints the bytes per
//! level:
//!
//! | build (x86-64, Rust 1.95) | bincode: serde | bincode: `DeserializeIn` | serde_json: serde | serde_json: `DeserializeIn` |
//! |---|---:|---:|---:|---:|
//! | release | 208 | 112 (0.54x) | 352 | 352 (1.00x) |
//! | release, one codegen unit | 144 | 96 (0.67x) | 336 | 336 (1.00x) |
//! | release, fat LTO | 160 | 96 (0.60x) | 368 | 336 (0.91x) |
//! | debug | 1120 | 1392 (1.24x) | 2096 | 2368 (1.13x) |
//!
//! The figures move by some tens of bytes with the compiler's inlining (codegen
//! units, LTO, its version, the rest of the program), serde's as much as these; a
//! type with more fields takes more per level, in both.
//!
//! What it means for deep input:
//! - **serde_json** stops at 128 nested arrays and objects, its recursion limit (unless
//!   `disable_recursion_limit`): at a few hundred bytes per level, under 50 KiB of
//!   stack in release and 300 KiB in debug, well within any thread's.
//! - **Compact formats** (bincode, postcard, ...) may have no depth limit of their own
//!   (bincode 1 has none): a level costs the input a few bytes but the stack a hundred
//!   or more, so a small input can nest deeper than the stack holds. A thread's 2 MiB
//!   (Rust's default for spawned threads) hold about 18,000 levels of the list above
//!   in release and 1,500 in debug; past them the process aborts with a stack
//!   overflow, which is no error the deserializer could return. For input from
//!   outside, bound its depth before parsing (a limit of the format, or of the
//!   input's size), parse on a thread with a larger stack
//!   (`std::thread::Builder::stack_size`: levels times bytes per level, and a
//!   margin), or wrap the deserializer in serde_stacker's, which continues on new
//!   stack segments as the stack runs out; `DeserializeIn` takes any deserializer:
//!   `arena.deserialize(serde_stacker::Deserializer::new(&mut de))`.
//! - **Dropping** a deep value recurses too (a `Box` drops its value): take the links
//!   out in a loop, or, when nothing inside has a destructor to run, leave the memory
//!   to the arena with [`core::mem::forget`].
//!
//! # Serializing
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
//! ## Examples
//! ```
//! use onewayalloc::OneWayAlloc;
//! use onewayalloc::collections as arena;
//! # #[cfg(not(feature = "nightly"))] {
//!
//! #[derive(serde::Serialize)]
//! struct Dimension<'a> {
//!     id: &'a str,
//!     name: arena::String<'a>,
//!     points: arena::Vec<'a, f64>,
//! }
//!
//! let arena = OneWayAlloc::new();
//! let dim = Dimension {
//!     id: arena.alloc_str("cpu.cpu0.user"),
//!     name: arena::String::from_str_in("user", &arena),
//!     points: onewayalloc::vec![in &arena; 1.5, 2.0],
//! };
//! let mut by_id = arena::HashMap::new_in(&arena);
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

use serde::{Serialize, Serializer};

use crate::collections::{Arena, String};

/// Serializes as a string, as `std`'s `String` does.
///
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// let s = onewayalloc::format_in!(&arena, "cpu{}", 0);
/// assert_eq!(serde_json::to_string(&s).unwrap(), r#""cpu0""#);
/// ```
impl<R: Arena> Serialize for String<'_, R> {
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
