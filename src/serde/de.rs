//! `DeserializeIn`: values deserialized straight into the arena.

use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};

use allocator_api2::alloc::Allocator;

use crate::OneWayAlloc;
use crate::collections::{Arena, String};

/// A type that deserializes into an arena: its strings, vectors, boxes and maps are
/// allocated in `arena`, so the value borrows the arena for `'a` and the input can be
/// dropped as soon as the call returns.
///
/// Derive it with `#[derive(onewayalloc::DeserializeIn)]` (feature `derive`), call it
/// with [`OneWayAlloc::deserialize`], or, inside another deserializer, through the
/// seed [`ArenaSeed`].
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::collections::Vec;
/// use onewayalloc::serde::DeserializeIn;
///
/// let arena = OneWayAlloc::new();
/// let mut json = serde_json::Deserializer::from_str(r#"["cpu", "disk"]"#);
/// let names = <Vec<&str>>::deserialize_in(&mut json, &arena).unwrap();
/// assert_eq!(names, ["cpu", "disk"]);
/// ```
///
/// # Implementations
///
/// The primitives, `bool`, `char`, `()`, `PhantomData`, `Duration`, the `NonZero`
/// integers and the `core::net` addresses (none of which owns heap memory) by their
/// `Deserialize`; `&str` (copied into the arena) and the arena
/// [`String`](crate::collections::String); `&[T]`, `&mut [T]`, the arena `Vec`,
/// `Box<T>` and `Box<[T]>`; hashbrown's `HashMap` and `HashSet` in the arena (any
/// `BuildHasher + Default`); `Option<T>`, tuples up to 12 and arrays.
///
/// Every implementation allocates through the arena's fallible calls: past a
/// [`set_limit`](OneWayAlloc::set_limit) the deserializer's error names the limit,
/// and a length announced by the input (`size_hint`) reserves at most 1 MiB ahead,
/// serde's own cautious rule.
///
/// The arena type `R` is `OneWayAlloc` unless named: `DeserializeIn<'a,
/// SyncOneWayAlloc>` deserializes into a [`SyncOneWayAlloc`](crate::SyncOneWayAlloc)
/// (see [`SyncOneWayAlloc::deserialize`](crate::SyncOneWayAlloc::deserialize) and
/// the `serde` module's "Into a `SyncOneWayAlloc`").
///
/// The lifetime of a borrowed field (`&'x str`, `Vec<'x, T>`) may be shorter than
/// the arena borrow `'a`: the implementations hold for every `'x` that `'a`
/// outlives, which is what lets the derive tie a struct's own lifetime to the arena.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be deserialized into the arena `{R}`",
    label = "not `DeserializeIn<'_, {R}>`",
    note = "the arena `Vec`, `Box`, `HashMap`, `HashSet` and `String` deserialize into the arena they are typed for: `collections::Vec` into a `OneWayAlloc`, `collections::sync::Vec` into a `SyncOneWayAlloc`",
    note = "for a struct or enum whose strings and collections live in a `SyncOneWayAlloc`, add `#[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]` beside `#[derive(DeserializeIn)]` and call `SyncOneWayAlloc::deserialize`"
)]
pub trait DeserializeIn<'a, R: ?Sized = OneWayAlloc>: Sized {
    /// Deserializes a value whose allocations live in `arena`.
    ///
    /// # Errors
    /// The deserializer's, and a custom error of it when the arena refuses memory
    /// (its [limit](OneWayAlloc::set_limit) is reached, or its backing allocator
    /// refuses).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::serde::DeserializeIn;
    ///
    /// let arena = OneWayAlloc::new();
    /// let name = <&str>::deserialize_in(&mut serde_json::Deserializer::from_str(r#""cpu""#), &arena);
    /// assert_eq!(name.unwrap(), "cpu");
    /// ```
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error>;
}

impl OneWayAlloc {
    /// Deserializes a `T` into this arena: `arena.deserialize::<Request, _>(&mut de)`.
    ///
    /// With serde_json, make a `serde_json::Deserializer` and call its `end` after
    /// this, so trailing characters are reported (as `serde_json::from_slice` does).
    ///
    /// # Errors
    /// The deserializer's (see [`DeserializeIn::deserialize_in`]).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::OneWayAlloc;
    /// use onewayalloc::collections::Vec;
    ///
    /// let arena = OneWayAlloc::new();
    /// let mut de = serde_json::Deserializer::from_slice(br#"{"cpu": [1, 2]}"#);
    /// let map = arena
    ///     .deserialize::<onewayalloc::collections::HashMap<&str, Vec<u32>>, _>(&mut de)
    ///     .unwrap();
    /// de.end().unwrap();
    /// assert_eq!(map["cpu"], [1, 2]);
    /// ```
    pub fn deserialize<'a, 'de, T: DeserializeIn<'a>, D: Deserializer<'de>>(
        &'a self,
        deserializer: D,
    ) -> Result<T, D::Error> {
        T::deserialize_in(deserializer, self)
    }

    /// The seed that deserializes a `T` into this arena, for
    /// `SeqAccess::next_element_seed`, `MapAccess::next_value_seed` and the like.
    ///
    /// # Examples
    /// ```
    /// use serde::de::DeserializeSeed;
    ///
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    /// let v: &[u8] = arena.seed().deserialize(&mut de).unwrap();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    pub fn seed<'a, T: DeserializeIn<'a>>(&'a self) -> ArenaSeed<'a, T> {
        ArenaSeed::new(self)
    }
}

#[cfg(feature = "std")]
impl crate::SyncOneWayAlloc {
    /// Deserializes a `T` into this thread-safe arena, as
    /// [`OneWayAlloc::deserialize`] does into a `OneWayAlloc`: `T`'s strings and
    /// collections live in the arena (its fields are
    /// [`collections::sync`](crate::collections::sync) types), so a `T` that holds
    /// nothing else is `Send` and `Sync` and may be held across an `.await` or read
    /// by other threads. Each thread allocates in its own serial arena, so several
    /// threads may deserialize into one arena at once.
    ///
    /// # Errors
    /// The deserializer's (see [`DeserializeIn::deserialize_in`]).
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::SyncOneWayAlloc;
    /// use onewayalloc::collections::sync as arena;
    ///
    /// let arena = SyncOneWayAlloc::new();
    /// let mut de = serde_json::Deserializer::from_str(r#"["cpu", "disk"]"#);
    /// let names: arena::Vec<arena::String> = arena.deserialize(&mut de).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert_eq!(names[1], "disk")); // read on another thread
    /// });
    /// ```
    pub fn deserialize<'a, 'de, T, D>(&'a self, deserializer: D) -> Result<T, D::Error>
    where
        T: DeserializeIn<'a, crate::SyncOneWayAlloc>,
        D: Deserializer<'de>,
    {
        T::deserialize_in(deserializer, self)
    }

    /// The seed that deserializes a `T` into this arena, as
    /// [`OneWayAlloc::seed`].
    ///
    /// # Examples
    /// ```
    /// use serde::de::DeserializeSeed;
    ///
    /// let arena = onewayalloc::SyncOneWayAlloc::new();
    /// let mut de = serde_json::Deserializer::from_str("[1, 2, 3]");
    /// let v: &[u8] = arena.seed().deserialize(&mut de).unwrap();
    /// assert_eq!(v, [1, 2, 3]);
    /// ```
    pub fn seed<'a, T: DeserializeIn<'a, crate::SyncOneWayAlloc>>(
        &'a self,
    ) -> ArenaSeed<'a, T, crate::SyncOneWayAlloc> {
        ArenaSeed::new(self)
    }
}

/// The [`DeserializeSeed`] of a [`DeserializeIn`] type: it carries the arena into
/// deserializers that take seeds (`next_element_seed`, `next_value_seed`,
/// `newtype_variant_seed`).
///
/// # Examples
/// ```
/// use onewayalloc::OneWayAlloc;
/// use onewayalloc::serde::ArenaSeed;
/// use serde::de::DeserializeSeed;
///
/// let arena = OneWayAlloc::new();
/// let mut de = serde_json::Deserializer::from_str(r#""disk""#);
/// let name: &str = ArenaSeed::new(&arena).deserialize(&mut de).unwrap();
/// assert_eq!(name, "disk");
/// ```
pub struct ArenaSeed<'a, T, R: ?Sized = OneWayAlloc> {
    arena: &'a R,
    marker: PhantomData<fn() -> T>,
}

impl<'a, T, R: ?Sized> ArenaSeed<'a, T, R> {
    /// The seed of a `T` in `arena`.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let seed = onewayalloc::serde::ArenaSeed::<u32>::new(&arena);
    /// assert!(core::ptr::eq(seed.arena(), &arena));
    /// ```
    pub fn new(arena: &'a R) -> Self {
        ArenaSeed {
            arena,
            marker: PhantomData,
        }
    }

    /// The arena the seed deserializes into.
    ///
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// assert!(core::ptr::eq(arena.seed::<u8>().arena(), &arena));
    /// ```
    pub fn arena(&self) -> &'a R {
        self.arena
    }
}

impl<T, R: ?Sized> Clone for ArenaSeed<'_, T, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, R: ?Sized> Copy for ArenaSeed<'_, T, R> {}

impl<T, R: ?Sized> fmt::Debug for ArenaSeed<'_, T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArenaSeed").finish_non_exhaustive()
    }
}

impl<'de, 'a, T: DeserializeIn<'a, R>, R: ?Sized> DeserializeSeed<'de> for ArenaSeed<'a, T, R> {
    type Value = T;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_in(deserializer, self.arena)
    }
}

/// An arena `Vec` in the arena `R`.
type ArenaVec<'x, T, R> = allocator_api2::vec::Vec<T, &'x R>;
/// An arena `Box` in the arena `R`.
type ArenaBox<'x, T, R> = allocator_api2::boxed::Box<T, &'x R>;

/// The most bytes a `size_hint` from the input reserves ahead: serde's cautious rule.
pub(crate) const MAX_PREALLOC_BYTES: usize = 1024 * 1024;

/// How many elements of `T` to reserve for a `size_hint`: at most 1 MiB of them.
fn cautious<T>(hint: Option<usize>) -> usize {
    match size_of::<T>() {
        0 => 0,
        size => Ord::min(hint.unwrap_or(0), MAX_PREALLOC_BYTES / size),
    }
}

/// The deserializer's error for a refused arena allocation, naming the limit.
#[cold]
#[inline(never)]
fn refused<E: de::Error, R: Arena>(arena: &R) -> E {
    match arena.limit() {
        Some(limit) => E::custom(format_args!(
            "the arena's limit of {limit} bytes is reached"
        )),
        None => E::custom("the arena's backing allocator refused memory"),
    }
}

macro_rules! by_deserialize {
    ($($ty:ty),* $(,)?) => {$(
        impl<'a, R: ?Sized> DeserializeIn<'a, R> for $ty {
            #[inline]
            fn deserialize_in<'de, D: Deserializer<'de>>(
                deserializer: D,
                _arena: &'a R,
            ) -> Result<Self, D::Error> {
                <$ty as Deserialize<'de>>::deserialize(deserializer)
            }
        }
    )*};
}

by_deserialize!(
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    (),
    core::time::Duration,
    core::num::NonZeroU8,
    core::num::NonZeroU16,
    core::num::NonZeroU32,
    core::num::NonZeroU64,
    core::num::NonZeroU128,
    core::num::NonZeroUsize,
    core::num::NonZeroI8,
    core::num::NonZeroI16,
    core::num::NonZeroI32,
    core::num::NonZeroI64,
    core::num::NonZeroI128,
    core::num::NonZeroIsize,
    core::net::IpAddr,
    core::net::Ipv4Addr,
    core::net::Ipv6Addr,
    core::net::SocketAddr,
    core::net::SocketAddrV4,
    core::net::SocketAddrV6,
);

impl<'a, T: ?Sized, R: ?Sized> DeserializeIn<'a, R> for PhantomData<T> {
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        _arena: &'a R,
    ) -> Result<Self, D::Error> {
        PhantomData::<T>::deserialize(deserializer)
    }
}

/// Strings: copied into the arena by `alloc` (a `&str` or a `String`).
///
/// The three string impls below are `#[inline(never)]`: a string is a leaf, read in
/// a frame of its own that is gone before the next field starts. Inlined, the
/// temporaries of the deserializer's string path (its UTF-8 check, its reader
/// position) and of the arena's copy would be in the frame of the struct around the
/// string, which a recursive type repeats at every nesting level.
struct StrVisitor<'a, F, R> {
    arena: &'a R,
    alloc: F,
}

impl<'de, 'a, T, R: Arena, F: FnOnce(&str, &'a R) -> Option<T>> Visitor<'de>
    for StrVisitor<'a, F, R>
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.alloc)(v, self.arena).ok_or_else(|| refused(self.arena))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        match core::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &"a string")),
        }
    }
}

impl<'a: 'x, 'x, R: Arena> DeserializeIn<'a, R> for &'x str {
    #[inline(never)]
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_str(StrVisitor {
            arena,
            alloc: |s: &str, arena: &'a R| arena.try_alloc_str(s).ok().map(|s| &*s),
        })
    }
}

impl<'a: 'x, 'x, R: Arena> DeserializeIn<'a, R> for &'x mut str {
    #[inline(never)]
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_str(StrVisitor {
            arena,
            alloc: |s: &str, arena: &'a R| arena.try_alloc_str(s).ok(),
        })
    }
}

impl<'a: 'x, 'x, R: Arena> DeserializeIn<'a, R> for String<'x, R> {
    #[inline(never)]
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_str(StrVisitor {
            arena,
            alloc: |s: &str, arena: &'a R| String::try_from_str_in(s, arena).ok(),
        })
    }
}

/// Sequences into an arena `Vec`: reserved cautiously, grown by `try_reserve`.
struct VecVisitor<'a, 'x, T, R> {
    arena: &'a R,
    marker: PhantomData<fn() -> (T, &'x ())>,
}

impl<'a, 'x, T, R> VecVisitor<'a, 'x, T, R> {
    fn new(arena: &'a R) -> Self {
        VecVisitor {
            arena,
            marker: PhantomData,
        }
    }
}

impl<'de, 'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena> Visitor<'de> for VecVisitor<'a, 'x, T, R>
where
    &'x R: Allocator,
{
    type Value = ArenaVec<'x, T, R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut vec = ArenaVec::new_in(self.arena);
        // A reservation the arena refuses (a hint past the limit) is only skipped:
        // the elements that do come are what counts against the limit.
        let _ = vec.try_reserve(cautious::<T>(seq.size_hint()));
        while let Some(value) = seq.next_element_seed(ArenaSeed::<T, R>::new(self.arena))? {
            if vec.len() == vec.capacity() {
                // On failure `value` and `vec` drop here, each element once.
                vec.try_reserve(1).map_err(|_| refused(self.arena))?;
            }
            vec.push(value);
        }
        Ok(vec)
    }
}

impl<'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena> DeserializeIn<'a, R> for ArenaVec<'x, T, R>
where
    &'x R: Allocator,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(VecVisitor::new(arena))
    }
}

/// A slice in the arena: the vector's spare capacity is given back first (in place
/// when it is the arena's most recent block), then it is leaked. Its elements are
/// never dropped, as with any value placed in the arena.
impl<'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena + 'x> DeserializeIn<'a, R> for &'x mut [T]
where
    &'x R: Allocator,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        let mut vec = <ArenaVec<'x, T, R>>::deserialize_in(deserializer, arena)?;
        vec.shrink_to_fit();
        Ok(vec.leak())
    }
}

/// As `&mut [T]`.
impl<'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena + 'x> DeserializeIn<'a, R> for &'x [T]
where
    &'x R: Allocator,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        <&'x mut [T]>::deserialize_in(deserializer, arena).map(|s| &*s)
    }
}

/// The value is moved into the box straight from where `T::deserialize_in` returned
/// it: moving it out of the `Result` first (`?`, then `Box::try_new_in`) would be a
/// second copy of `T` in the frame, and a recursive type pays for this frame at
/// every nesting level (the `serde` module's "Nesting depth").
impl<'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena> DeserializeIn<'a, R> for ArenaBox<'x, T, R>
where
    &'x R: Allocator,
{
    #[inline]
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        let result = T::deserialize_in(deserializer, arena);
        // Not `?`: the value stays in `result` (see above).
        #[allow(clippy::question_mark)]
        let value: &T = match result {
            Ok(ref value) => value,
            Err(error) => return Err(error),
        };
        // SAFETY: on `Some` the box owns the value, and `result`, its other owner, is
        // forgotten at once, never used or dropped.
        match unsafe { move_into_box(value, arena) } {
            Some(boxed) => {
                core::mem::forget(result);
                Ok(boxed)
            }
            // `result` drops here, and its value with it, once.
            None => Err(refused(arena)),
        }
    }
}

/// A new box in `arena` with a bitwise copy of `*value`, or `None` when the arena
/// refuses the memory.
///
/// A function of its own so that, in unoptimized builds, the frame of the allocation
/// (the arena's `#[inline(always)]` fast path, expanded in place) is not part of
/// `Box::deserialize_in`'s, which stays on the stack while `T` is deserialized.
///
/// # Safety
/// On `Some`, the box owns the value: the caller must neither use nor drop `*value`
/// again (it forgets the value's owner).
#[inline]
unsafe fn move_into_box<'x, T, R>(value: &T, arena: &'x R) -> Option<ArenaBox<'x, T, R>>
where
    &'x R: Allocator,
{
    let mut boxed = ArenaBox::<T, _>::try_new_uninit_in(arena).ok()?;
    // SAFETY: `boxed` is a fresh allocation for a `T` (dangling but aligned for a
    // zero-sized one), valid for writes of one `T`, so it cannot overlap `value`;
    // the copy moves the value, as the caller gives up `*value` (the contract).
    unsafe { boxed.as_mut_ptr().copy_from_nonoverlapping(value, 1) };
    // SAFETY: the copy initialized the box's `T`.
    Some(unsafe { boxed.assume_init() })
}

impl<'a: 'x, 'x, T: DeserializeIn<'a, R>, R: Arena> DeserializeIn<'a, R> for ArenaBox<'x, [T], R>
where
    &'x R: Allocator,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        <ArenaVec<'x, T, R>>::deserialize_in(deserializer, arena).map(ArenaVec::into_boxed_slice)
    }
}

/// Maps into an arena `HashMap`: reserved cautiously, grown by `try_reserve`; a key
/// that repeats keeps its last value, as serde's `HashMap` does.
struct MapVisitor<'a, M, R> {
    arena: &'a R,
    marker: PhantomData<fn() -> M>,
}

type ArenaMap<'x, K, V, S, R> = hashbrown::HashMap<K, V, S, &'x R>;
type ArenaSet<'x, T, S, R> = hashbrown::HashSet<T, S, &'x R>;

impl<'de, 'a: 'x, 'x, K, V, S, R: Arena> Visitor<'de>
    for MapVisitor<'a, ArenaMap<'x, K, V, S, R>, R>
where
    &'x R: Allocator,
    K: DeserializeIn<'a, R> + Eq + Hash,
    V: DeserializeIn<'a, R>,
    S: BuildHasher + Default,
{
    type Value = ArenaMap<'x, K, V, S, R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut access: M) -> Result<Self::Value, M::Error> {
        let arena = self.arena;
        let mut map = hashbrown::HashMap::with_hasher_in(S::default(), arena);
        let _ = map.try_reserve(cautious::<(K, V)>(access.size_hint()));
        while let Some(key) = access.next_key_seed(ArenaSeed::<K, R>::new(arena))? {
            let value = access.next_value_seed(ArenaSeed::<V, R>::new(arena))?;
            map.try_reserve(1).map_err(|_| refused(arena))?;
            map.insert(key, value);
        }
        Ok(map)
    }
}

impl<'a: 'x, 'x, K, V, S, R: Arena> DeserializeIn<'a, R> for ArenaMap<'x, K, V, S, R>
where
    &'x R: Allocator,
    K: DeserializeIn<'a, R> + Eq + Hash,
    V: DeserializeIn<'a, R>,
    S: BuildHasher + Default,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MapVisitor::<Self, R> {
            arena,
            marker: PhantomData,
        })
    }
}

impl<'de, 'a: 'x, 'x, T, S, R: Arena> Visitor<'de> for MapVisitor<'a, ArenaSet<'x, T, S, R>, R>
where
    &'x R: Allocator,
    T: DeserializeIn<'a, R> + Eq + Hash,
    S: BuildHasher + Default,
{
    type Value = ArenaSet<'x, T, S, R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let arena = self.arena;
        let mut set = hashbrown::HashSet::with_hasher_in(S::default(), arena);
        let _ = set.try_reserve(cautious::<T>(access.size_hint()));
        while let Some(value) = access.next_element_seed(ArenaSeed::<T, R>::new(arena))? {
            set.try_reserve(1).map_err(|_| refused(arena))?;
            set.insert(value);
        }
        Ok(set)
    }
}

impl<'a: 'x, 'x, T, S, R: Arena> DeserializeIn<'a, R> for ArenaSet<'x, T, S, R>
where
    &'x R: Allocator,
    T: DeserializeIn<'a, R> + Eq + Hash,
    S: BuildHasher + Default,
{
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(MapVisitor::<Self, R> {
            arena,
            marker: PhantomData,
        })
    }
}

struct OptionVisitor<'a, T, R: ?Sized> {
    arena: &'a R,
    marker: PhantomData<fn() -> T>,
}

impl<'de, 'a, T: DeserializeIn<'a, R>, R: ?Sized> Visitor<'de> for OptionVisitor<'a, T, R> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an option")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        T::deserialize_in(deserializer, self.arena).map(Some)
    }
}

impl<'a, T: DeserializeIn<'a, R>, R: ?Sized> DeserializeIn<'a, R> for Option<T> {
    #[inline]
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_option(OptionVisitor {
            arena,
            marker: PhantomData,
        })
    }
}

macro_rules! tuples {
    ($($len:literal => ($($n:tt $name:ident)+))+) => {$(
        impl<'a, R: ?Sized, $($name: DeserializeIn<'a, R>),+> DeserializeIn<'a, R> for ($($name,)+) {
            fn deserialize_in<'de, D: Deserializer<'de>>(
                deserializer: D,
                arena: &'a R,
            ) -> Result<Self, D::Error> {
                struct TupleVisitor<'a, R: ?Sized, $($name),+> {
                    arena: &'a R,
                    marker: PhantomData<fn() -> ($($name,)+)>,
                }

                impl<'de, 'a, R: ?Sized, $($name: DeserializeIn<'a, R>),+> Visitor<'de>
                    for TupleVisitor<'a, R, $($name),+>
                {
                    type Value = ($($name,)+);

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a tuple of size {}", $len)
                    }

                    #[allow(non_snake_case)]
                    fn visit_seq<S: SeqAccess<'de>>(
                        self,
                        mut seq: S,
                    ) -> Result<Self::Value, S::Error> {
                        $(
                            let Some($name) =
                                seq.next_element_seed(ArenaSeed::<$name, R>::new(self.arena))?
                            else {
                                // The message of `&self`, without the visitor's address.
                                return Err(S::Error::invalid_length(
                                    $n,
                                    &concat!("a tuple of size ", $len),
                                ));
                            };
                        )+
                        Ok(($($name,)+))
                    }
                }

                deserializer.deserialize_tuple($len, TupleVisitor { arena, marker: PhantomData })
            }
        }
    )+};
}

tuples! {
    1 => (0 T0)
    2 => (0 T0 1 T1)
    3 => (0 T0 1 T1 2 T2)
    4 => (0 T0 1 T1 2 T2 3 T3)
    5 => (0 T0 1 T1 2 T2 3 T3 4 T4)
    6 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5)
    7 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6)
    8 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6 7 T7)
    9 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6 7 T7 8 T8)
    10 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6 7 T7 8 T8 9 T9)
    11 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6 7 T7 8 T8 9 T9 10 T10)
    12 => (0 T0 1 T1 2 T2 3 T3 4 T4 5 T5 6 T6 7 T7 8 T8 9 T9 10 T10 11 T11)
}

struct ArrayVisitor<'a, T, R: ?Sized, const N: usize> {
    arena: &'a R,
    marker: PhantomData<fn() -> [T; N]>,
}

impl<'de, 'a, T: DeserializeIn<'a, R>, R: ?Sized, const N: usize> Visitor<'de>
    for ArrayVisitor<'a, T, R, N>
{
    type Value = [T; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an array of length {N}")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<[T; N], S::Error> {
        // Without `unsafe`: the elements go into `Option`s first; on an error the ones
        // read so far drop with the array, once each.
        let mut error = None;
        let elements: [Option<T>; N] = core::array::from_fn(|i| {
            if error.is_some() {
                return None;
            }
            match seq.next_element_seed(ArenaSeed::<T, R>::new(self.arena)) {
                Ok(Some(value)) => Some(value),
                Ok(None) => {
                    error = Some(S::Error::invalid_length(i, &self));
                    None
                }
                Err(e) => {
                    error = Some(e);
                    None
                }
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(elements.map(|e| e.expect("every element was read"))),
        }
    }
}

impl<'a, T: DeserializeIn<'a, R>, R: ?Sized, const N: usize> DeserializeIn<'a, R> for [T; N] {
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        arena: &'a R,
    ) -> Result<Self, D::Error> {
        deserializer.deserialize_tuple(
            N,
            ArrayVisitor {
                arena,
                marker: PhantomData,
            },
        )
    }
}

/// What `#[derive(DeserializeIn)]` expands to calls; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use ::serde;
    pub use core::{default::Default, fmt, marker::PhantomData, option::Option, result::Result};

    use super::{DeserializeIn, de};

    /// A field that the input left out: `None` for an `Option`, else serde's
    /// `missing_field` error (what serde's own derive does).
    pub fn missing_field<'a, T: DeserializeIn<'a, R>, E: de::Error, R: ?Sized>(
        field: &'static str,
        arena: &'a R,
    ) -> Result<T, E> {
        T::deserialize_in(
            MissingField {
                field,
                marker: PhantomData,
            },
            arena,
        )
    }

    /// A field name in bytes that is not valid UTF-8, for an error message.
    pub fn lossy(bytes: &[u8]) -> alloc::borrow::Cow<'_, str> {
        alloc::string::String::from_utf8_lossy(bytes)
    }

    /// The first field or variant name in `names`, for the error of an index.
    pub fn variant_index_error<E: de::Error>(index: u64, count: usize) -> E {
        E::invalid_value(
            de::Unexpected::Unsigned(index),
            &&*alloc::format!("an index below {count}"),
        )
    }

    struct MissingField<E> {
        field: &'static str,
        marker: PhantomData<E>,
    }

    impl<'de, E: de::Error> de::Deserializer<'de> for MissingField<E> {
        type Error = E;

        fn deserialize_any<V: de::Visitor<'de>>(self, _visitor: V) -> Result<V::Value, E> {
            Err(E::missing_field(self.field))
        }

        fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
            visitor.visit_none()
        }

        ::serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf unit unit_struct newtype_struct seq tuple
            tuple_struct map struct enum identifier ignored_any
        }
    }
}
