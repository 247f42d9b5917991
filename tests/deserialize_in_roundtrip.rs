//! Feature `derive`: a derived type's `Serialize` followed by `DeserializeIn` gives
//! back an equal value, over a struct with every supported field type (proptest; a
//! few cases under Miri).
//!
//! Not with the `nightly` feature: there the arena `Vec` and `Box` are `std`'s, for
//! which serde implements `Serialize` only with the global allocator.
#![cfg(all(feature = "derive", not(feature = "nightly")))]

use std::marker::PhantomData;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::NonZeroU32;
use std::time::Duration;

use onewayalloc::collections::{Box, HashMap, HashSet, String, Vec};
use onewayalloc::{DeserializeIn, OneWayAlloc};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm};
use serde::Serialize;

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Every<'a> {
    flag: bool,
    letter: char,
    small: (u8, u16, u32, u64, u128, usize),
    signed: (i8, i16, i32, i64, i128, isize),
    floats: (f32, f64),
    unit: (),
    marker: PhantomData<u64>,
    duration: Duration,
    nonzero: NonZeroU32,
    address: IpAddr,
    text: &'a str,
    text_mut: &'a mut str,
    string: String<'a>,
    slice: &'a [u32],
    slice_mut: &'a mut [&'a str],
    vec: Vec<'a, String<'a>>,
    boxed: Box<'a, (u8, &'a str)>,
    #[serde(serialize_with = "onewayalloc::serde::by_deref")]
    boxed_slice: Box<'a, [i16]>,
    map: HashMap<'a, &'a str, Vec<'a, i32>>,
    set: HashSet<'a, u64>,
    option: Option<&'a str>,
    nested: Option<Box<'a, Inner<'a>>>,
    array: [u16; 3],
    shapes: Vec<'a, Shape<'a>>,
    newtype: Name<'a>,
    pair: Pair,
    #[serde(rename = "renamed")]
    last: (Unit, Option<bool>),
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Inner<'a> {
    chart_id: &'a str,
    point_count: u32,
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
enum Shape<'a> {
    Empty,
    Label(&'a str),
    Point(i32, i32),
    Named { name: String<'a>, weight: f64 },
}

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Name<'a>(&'a str);

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Pair(u8, bool);

#[derive(DeserializeIn, Serialize, Debug, PartialEq)]
struct Unit;

/// The data of an `Every`, in `std` types, that proptest generates.
#[derive(Debug, Clone)]
struct Data {
    flag: bool,
    letter: char,
    small: (u8, u16, u32, u64, u128, usize),
    signed: (i8, i16, i32, i64, i128, isize),
    floats: (f32, f64),
    duration: Duration,
    nonzero: NonZeroU32,
    v4: bool,
    address: u128,
    texts: [std::string::String; 3],
    slice: std::vec::Vec<u32>,
    words: std::vec::Vec<std::string::String>,
    boxed: (u8, std::string::String),
    boxed_slice: std::vec::Vec<i16>,
    map: std::vec::Vec<(std::string::String, std::vec::Vec<i32>)>,
    set: std::vec::Vec<u64>,
    option: Option<std::string::String>,
    nested: Option<(std::string::String, u32)>,
    array: [u16; 3],
    shapes: std::vec::Vec<(u8, std::string::String, i32, i32)>,
    pair: (u8, bool),
    last: bool,
}

/// A float that JSON carries exactly (a small integer over a small power of two):
/// few enough significant digits that serde_json (without its `float_roundtrip`
/// feature) parses it back to the same bits.
fn float() -> impl Strategy<Value = f64> {
    (any::<i16>(), 0..8u32).prop_map(|(m, e)| f64::from(m) / f64::from(1u32 << e))
}

fn data() -> impl Strategy<Value = Data> {
    let text = || ".{0,12}";
    (
        (
            any::<bool>(),
            any::<char>(),
            any::<(u8, u16, u32, u64, u128, usize)>(),
            any::<(i8, i16, i32, i64, i128, isize)>(),
            (any::<i16>(), float()),
            (any::<u64>(), 0..1_000_000_000u32),
            1..=u32::MAX,
            any::<(bool, u128)>(),
        ),
        (
            [text(), text(), text()],
            prop::collection::vec(any::<u32>(), 0..6),
            prop::collection::vec(text(), 0..4),
            (any::<u8>(), text()),
            prop::collection::vec(any::<i16>(), 0..4),
            prop::collection::vec((text(), prop::collection::vec(any::<i32>(), 0..3)), 0..4),
            prop::collection::vec(any::<u64>(), 0..5),
        ),
        (
            prop::option::of(text()),
            prop::option::of((text(), any::<u32>())),
            any::<[u16; 3]>(),
            prop::collection::vec((0..4u8, text(), any::<i32>(), any::<i32>()), 0..4),
            any::<(u8, bool)>(),
            any::<bool>(),
        ),
    )
        .prop_map(|(a, b, c)| Data {
            flag: a.0,
            letter: a.1,
            small: a.2,
            signed: a.3,
            floats: (f32::from(a.4.0) / 4.0, a.4.1),
            duration: Duration::new(a.5.0, a.5.1),
            nonzero: NonZeroU32::new(a.6).unwrap(),
            v4: a.7.0,
            address: a.7.1,
            texts: b.0,
            slice: b.1,
            words: b.2,
            boxed: b.3,
            boxed_slice: b.4,
            map: b.5,
            set: b.6,
            option: c.0,
            nested: c.1,
            array: c.2,
            shapes: c.3,
            pair: c.4,
            last: c.5,
        })
}

/// The `Every` of `d`, built in `arena` by hand.
fn build<'a>(arena: &'a OneWayAlloc, d: &Data) -> Every<'a> {
    let words: std::vec::Vec<&str> = d.words.iter().map(|w| &*arena.alloc_str(w)).collect();
    Every {
        flag: d.flag,
        letter: d.letter,
        small: d.small,
        signed: d.signed,
        floats: d.floats,
        unit: (),
        marker: PhantomData,
        duration: d.duration,
        nonzero: d.nonzero,
        address: if d.v4 {
            IpAddr::V4(Ipv4Addr::from(d.address as u32))
        } else {
            IpAddr::V6(Ipv6Addr::from(d.address))
        },
        text: arena.alloc_str(&d.texts[0]),
        text_mut: arena.alloc_str(&d.texts[1]),
        string: String::from_str_in(&d.texts[2], arena),
        slice: arena.alloc_slice_copy(&d.slice),
        slice_mut: arena.alloc_slice_copy(&words),
        vec: d.words.iter().map(|w| String::from_str_in(w, arena)).fold(
            Vec::new_in(arena),
            |mut v, w| {
                v.push(w);
                v
            },
        ),
        boxed: Box::new_in((d.boxed.0, &*arena.alloc_str(&d.boxed.1)), arena),
        boxed_slice: {
            let mut v = Vec::new_in(arena);
            v.extend_from_slice(&d.boxed_slice);
            v.into_boxed_slice()
        },
        map: {
            let mut m = HashMap::new_in(arena);
            for (k, vs) in &d.map {
                let mut v = Vec::new_in(arena);
                v.extend_from_slice(vs);
                m.insert(&*arena.alloc_str(k), v);
            }
            m
        },
        set: {
            let mut s = HashSet::new_in(arena);
            s.extend(d.set.iter().copied());
            s
        },
        option: d.option.as_deref().map(|s| &*arena.alloc_str(s)),
        nested: d.nested.as_ref().map(|(id, n)| {
            Box::new_in(
                Inner {
                    chart_id: arena.alloc_str(id),
                    point_count: *n,
                },
                arena,
            )
        }),
        array: d.array,
        shapes: {
            let mut v = Vec::new_in(arena);
            for (kind, s, x, y) in &d.shapes {
                v.push(match kind {
                    0 => Shape::Empty,
                    1 => Shape::Label(arena.alloc_str(s)),
                    2 => Shape::Point(*x, *y),
                    _ => Shape::Named {
                        name: String::from_str_in(s, arena),
                        weight: f64::from(*x) / 8.0,
                    },
                });
            }
            v
        },
        newtype: Name(arena.alloc_str(&d.texts[0])),
        pair: Pair(d.pair.0, d.pair.1),
        last: (Unit, d.last.then_some(d.flag)),
    }
}

fn config() -> Config {
    Config {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::XorShift,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// JSON of the value, parsed into another arena, is the same value; and the
    /// input can be dropped before the value is used.
    #[test]
    fn serialize_then_deserialize_in_gives_an_equal_value(d in data()) {
        // Both arenas first: `Every` is invariant in its lifetime, so both values
        // borrow both arenas until they drop.
        let source = OneWayAlloc::new();
        let arena = OneWayAlloc::new();
        let original = build(&source, &d);
        let json = serde_json::to_vec(&original).unwrap();
        let mut de = serde_json::Deserializer::from_slice(&json);
        let parsed: Every = arena.deserialize(&mut de).unwrap();
        de.end().unwrap();
        drop(json);
        prop_assert_eq!(&parsed, &original);
    }
}
