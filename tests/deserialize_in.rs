//! Feature `derive`: `#[derive(DeserializeIn)]`, the `DeserializeIn` impls, and the
//! rules for untrusted input (a bounded reservation for any `size_hint`, the limit
//! reported as the deserializer's error, partial values dropped exactly once).
#![cfg(feature = "derive")]

use std::cell::Cell;
use std::time::Duration;

use onewayalloc::collections::{Box, HashMap, HashSet, Vec};
use onewayalloc::serde::{ArenaSeed, DeserializeIn};
use onewayalloc::{DeserializeIn, OneWayAlloc};
use serde::de::value::{Error as ValueError, MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeSeed, Deserializer};

/// Parses `json` into the arena, as a server would (`end` rejects trailing bytes).
fn parse<'a, T: DeserializeIn<'a>>(arena: &'a OneWayAlloc, json: &str) -> Result<T, String> {
    if cfg!(miri) {
        // To place an error, serde_json's `from_str` and `from_slice` readers look
        // back for the line start with memchr's `memrchr`, whose word reads Miri's
        // symbolic alignment check reports (a false positive it warns about); the
        // `io::Read` reader counts lines as it goes.
        let mut de = serde_json::Deserializer::from_reader(json.as_bytes());
        let value = arena.deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let value = arena.deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

// String errors without a second arena: the test's own `std` strings.
type String = std::string::String;
type ArenaString<'a> = onewayalloc::collections::String<'a>;

#[derive(DeserializeIn, Debug, PartialEq)]
struct Request<'a> {
    chart: &'a str,
    after: i64,
    dimensions: Vec<'a, &'a str>,
    label: Option<ArenaString<'a>>,
    options: HashSet<'a, &'a str>,
}

#[test]
fn a_request_with_a_missing_option_and_an_unknown_field() {
    let arena = OneWayAlloc::new();
    let r: Request = parse(
        &arena,
        r#"{"chart":"system.cpu","after":-600,"dimensions":["user","system"],
            "unknown":{"nested":[1,2,{"x":null}]},"options":["jsonwrap"]}"#,
    )
    .unwrap();
    assert_eq!(r.chart, "system.cpu");
    assert_eq!(r.after, -600);
    assert_eq!(r.dimensions, ["user", "system"]);
    assert_eq!(r.label, None);
    assert!(r.options.contains("jsonwrap"));
    // Every string lives in the arena.
    let used = arena.stats().used;
    assert!(used >= "system.cpu".len() + "user".len() + "system".len());
}

#[test]
fn missing_duplicate_and_wrongly_typed_fields_are_errors() {
    let arena = OneWayAlloc::new();
    let e = parse::<Request>(&arena, r#"{"after":1,"dimensions":[],"options":[]}"#);
    assert!(e.unwrap_err().contains("missing field `chart`"));
    let e = parse::<Request>(
        &arena,
        r#"{"chart":"a","chart":"b","after":1,"dimensions":[],"options":[]}"#,
    );
    assert!(e.unwrap_err().contains("duplicate field `chart`"));
    let e = parse::<Request>(&arena, r#"{"chart":1}"#);
    assert!(
        e.unwrap_err()
            .contains("invalid type: integer `1`, expected a string")
    );
}

fn ten() -> i64 {
    10
}

#[derive(DeserializeIn, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Attributes<'a> {
    chart_id: &'a str,
    #[serde(rename = "pts", alias = "points")]
    point_count: u32,
    #[serde(default)]
    after: i64,
    #[serde(default = "ten")]
    before: i64,
    #[serde(skip_deserializing)]
    cache: u8,
    maybe_label: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#type: Option<u8>,
}

#[test]
fn rename_rename_all_alias_default_skip_and_deny_unknown_fields() {
    let arena = OneWayAlloc::new();
    let a: Attributes = parse(&arena, r#"{"chartId":"cpu","points":5,"type":1}"#).unwrap();
    assert_eq!(
        a,
        Attributes {
            chart_id: "cpu",
            point_count: 5,
            after: 0,
            before: 10,
            cache: 0,
            maybe_label: None,
            r#type: Some(1),
        }
    );
    let a: Attributes = parse(&arena, r#"{"chartId":"c","pts":1,"after":-1,"before":2}"#).unwrap();
    assert_eq!((a.point_count, a.after, a.before), (1, -1, 2));
    let e = parse::<Attributes>(&arena, r#"{"chartId":"c","pts":1,"cache":3}"#).unwrap_err();
    assert!(
        e.starts_with("unknown field `cache`, expected one of `chartId`, `pts`, `points`"),
        "{e}"
    );
    let e = parse::<Attributes>(&arena, r#"{"chart_id":"c","pts":1}"#).unwrap_err();
    assert!(e.starts_with("unknown field `chart_id`"), "{e}");
}

#[derive(DeserializeIn, Debug, PartialEq)]
#[serde(default)]
struct ContainerDefault {
    a: u32,
    b: u32,
}

impl Default for ContainerDefault {
    fn default() -> Self {
        ContainerDefault { a: 1, b: 2 }
    }
}

#[test]
fn a_container_default_fills_missing_fields() {
    let arena = OneWayAlloc::new();
    let d: ContainerDefault = parse(&arena, r#"{"b":7}"#).unwrap();
    assert_eq!(d, ContainerDefault { a: 1, b: 7 });
}

#[derive(DeserializeIn, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Shape<'a> {
    Unit,
    #[serde(alias = "text")]
    NewType(&'a str),
    Tuple(u8, &'a str),
    #[serde(rename = "named", rename_all = "UPPERCASE")]
    Named {
        x_pos: u32,
        tags: &'a [&'a str],
    },
    #[serde(skip_deserializing)]
    Internal,
}

#[test]
fn enums_externally_tagged() {
    let arena = OneWayAlloc::new();
    let shapes: Vec<Shape> = parse(
        &arena,
        r#"["unit",{"unit":null},{"new_type":"a"},{"text":"b"},{"tuple":[1,"c"]},
            {"named":{"X_POS":3,"TAGS":["t","u"]}}]"#,
    )
    .unwrap();
    assert_eq!(
        shapes,
        [
            Shape::Unit,
            Shape::Unit,
            Shape::NewType("a"),
            Shape::NewType("b"),
            Shape::Tuple(1, "c"),
            Shape::Named {
                x_pos: 3,
                tags: &["t", "u"]
            },
        ]
    );
    let e = parse::<Shape>(&arena, r#""internal""#).unwrap_err();
    assert!(
        e.starts_with("unknown variant `internal`, expected one of `unit`, `new_type`, `text`"),
        "{e}"
    );
    assert!(parse::<Shape>(&arena, r#"{"tuple":[1]}"#).is_err());
    let _ = Shape::Internal;
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Page<'a, T> {
    items: Vec<'a, T>,
    total: u64,
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Two<'a, 'b> {
    a: &'a str,
    b: Box<'b, &'b str>,
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Newtype<'a>(&'a str);

#[derive(DeserializeIn, Debug, PartialEq)]
struct Pair(u8, #[serde(default)] u16);

#[derive(DeserializeIn, Debug, PartialEq)]
struct Unit;

#[derive(DeserializeIn, Debug, PartialEq)]
struct Fixed<'a, T, const N: usize>
where
    T: Copy,
{
    values: [T; N],
    name: Option<&'a str>,
}

#[test]
fn generic_tuple_newtype_and_unit_structs() {
    let arena = OneWayAlloc::new();
    let p: Page<Two> = parse(&arena, r#"{"items":[{"a":"x","b":"y"}],"total":1}"#).unwrap();
    assert_eq!((p.items[0].a, *p.items[0].b, p.total), ("x", "y", 1));
    let p: Page<Newtype> = parse(&arena, r#"{"items":["n"],"total":1}"#).unwrap();
    assert_eq!(p.items[0], Newtype("n"));
    assert_eq!(parse::<Pair>(&arena, "[1,2]").unwrap(), Pair(1, 2));
    assert_eq!(parse::<Unit>(&arena, "null").unwrap(), Unit);
    let f: Fixed<u8, 2> = parse(&arena, r#"{"values":[1,2]}"#).unwrap();
    assert_eq!(
        f,
        Fixed {
            values: [1, 2],
            name: None
        }
    );
}

/// The messages of a sequence too short for a struct, a variant or a tuple, and of
/// bytes that are not UTF-8, name what the visitor expects (its `expecting`).
#[test]
fn short_sequences_and_bad_bytes_name_what_was_expected() {
    let arena = OneWayAlloc::new();
    let e = parse::<Request>(&arena, r#"["c"]"#).unwrap_err();
    assert!(
        e.starts_with("invalid length 1, expected struct Request"),
        "{e}"
    );
    let e = parse::<Pair>(&arena, "[]").unwrap_err();
    assert!(
        e.starts_with("invalid length 0, expected struct Pair"),
        "{e}"
    );
    let e = parse::<Shape>(&arena, r#"{"tuple":[1]}"#).unwrap_err();
    assert!(
        e.starts_with("invalid length 1, expected tuple variant Shape::Tuple"),
        "{e}"
    );
    let e = parse::<Shape>(&arena, r#"{"named":[1]}"#).unwrap_err();
    assert!(
        e.starts_with("invalid length 1, expected struct variant Shape::Named"),
        "{e}"
    );
    let e = parse::<(u8, &str, u8)>(&arena, r#"[1,"a"]"#).unwrap_err();
    assert!(
        e.starts_with("invalid length 2, expected a tuple of size 3"),
        "{e}"
    );
    let bytes = serde::de::value::BytesDeserializer::<ValueError>::new(b"\xff");
    let e = <&str>::deserialize_in(bytes, &arena).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid value: byte array, expected a string"
    );
}

#[test]
fn every_impl() {
    let arena = OneWayAlloc::new();
    assert_eq!(
        parse::<(bool, char, u8, i128, f64)>(&arena, r#"[true,"x",255,-1,0.5]"#).unwrap(),
        (true, 'x', 255, -1, 0.5)
    );
    assert_eq!(parse::<[u16; 3]>(&arena, "[1,2,3]").unwrap(), [1, 2, 3]);
    assert!(
        parse::<[u16; 3]>(&arena, "[1,2]")
            .unwrap_err()
            .contains("invalid length 2")
    );
    assert_eq!(parse::<&mut str>(&arena, r#""a\nb""#).unwrap(), "a\nb");
    assert_eq!(parse::<ArenaString>(&arena, r#""s""#).unwrap(), "s");
    assert_eq!(parse::<&[u8]>(&arena, "[1,2]").unwrap(), [1, 2]);
    assert_eq!(parse::<&mut [&str]>(&arena, r#"["a"]"#).unwrap(), ["a"]);
    assert_eq!(*parse::<Box<[u8]>>(&arena, "[4]").unwrap(), [4]);
    assert_eq!(*parse::<Box<Option<u8>>>(&arena, "null").unwrap(), None);
    let m: HashMap<&str, Vec<u32>> = parse(&arena, r#"{"a":[1],"b":[]}"#).unwrap();
    assert_eq!((m["a"].as_slice(), m["b"].len()), (&[1][..], 0));
    assert_eq!(
        parse::<Duration>(&arena, r#"{"secs":1,"nanos":5}"#).unwrap(),
        Duration::new(1, 5)
    );
    assert_eq!(
        parse::<std::net::IpAddr>(&arena, r#""::1""#)
            .unwrap()
            .to_string(),
        "::1"
    );
    parse::<()>(&arena, "null").unwrap();
    parse::<core::marker::PhantomData<u8>>(&arena, "null").unwrap();
    // The seed, inside another deserializer.
    let mut de = serde_json::Deserializer::from_str(r#""seeded""#);
    assert_eq!(
        ArenaSeed::<&str>::new(&arena).deserialize(&mut de).unwrap(),
        "seeded"
    );
}

/// A sequence whose `size_hint` says `claimed` elements while it yields `real`:
/// what a length prefix of untrusted input can say.
struct Lying {
    real: std::vec::IntoIter<u64>,
    claimed: usize,
}

impl Iterator for Lying {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.real.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claimed, Some(self.claimed))
    }
}

fn lying(claimed: usize) -> SeqDeserializer<Lying, ValueError> {
    SeqDeserializer::new(Lying {
        real: vec![1, 2, 3].into_iter(),
        claimed,
    })
}

#[test]
fn a_size_hint_reserves_at_most_one_mib() {
    let arena = OneWayAlloc::new();
    let v: Vec<u64> = arena.deserialize(lying(usize::MAX / 16)).unwrap();
    assert_eq!(v, [1, 2, 3]);
    assert!(v.capacity() <= (1 << 20) / 8, "{}", v.capacity());
    assert!(arena.stats().used <= (1 << 20) + 64);
    let s: HashSet<u64> = arena.deserialize(lying(usize::MAX / 16)).unwrap();
    assert!(s.capacity() <= 2 * (1 << 20) / 8, "{}", s.capacity());
    let pairs = (0..3u64).map(|i| (i, i));
    let m: HashMap<u64, u64> = arena
        .deserialize(MapDeserializer::<_, ValueError>::new(Lying2(
            pairs,
            usize::MAX / 16,
        )))
        .unwrap();
    assert_eq!(m.len(), 3);
    assert!(m.capacity() <= 2 * (1 << 20) / 16, "{}", m.capacity());

    // Under a limit below the reservation, the elements that do come still fit.
    let small = OneWayAlloc::new();
    small.set_limit(Some(small.stats().capacity.max(64 << 10)));
    let v: Vec<u64> = small.deserialize(lying(usize::MAX / 16)).unwrap();
    assert_eq!(v, [1, 2, 3]);
}

struct Lying2<I>(I, usize);

impl<I: Iterator<Item = (u64, u64)>> Iterator for Lying2<I> {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

/// An arena with about 4 KiB of room under its limit: in the page mode its first
/// page filled up to 4 KiB from the end and the limit at the page (so no page can be
/// added), in the sanitizer mode 4 KiB of blocks. Small inputs pass it, which keeps
/// the test quick under Miri.
fn limited() -> (OneWayAlloc, usize) {
    let arena = OneWayAlloc::new();
    let capacity = arena.stats().capacity;
    if capacity > ROOM {
        arena.alloc_bytes(capacity - ROOM);
    }
    let limit = arena.stats().capacity.max(ROOM);
    arena.set_limit(Some(limit));
    (arena, limit)
}

const ROOM: usize = 4 << 10;

#[test]
fn past_the_limit_the_error_names_it_and_the_arena_goes_on() {
    let (arena, limit) = limited();
    let long = format!(
        r#"{{"chart":"{}","after":1,"dimensions":[],"options":[]}}"#,
        "x".repeat(2 * ROOM)
    );
    let e = parse::<Request>(&arena, &long).unwrap_err();
    assert!(
        e.contains(&format!("the arena's limit of {limit} bytes is reached")),
        "{e}"
    );

    let many = format!("[{}0]", "0,".repeat(ROOM / 4));
    let e = parse::<Vec<u64>>(&arena, &many).unwrap_err();
    assert!(e.contains(&format!("limit of {limit} bytes")), "{e}");
    let e = parse::<&[u64]>(&arena, &many).unwrap_err();
    assert!(e.contains("limit"), "{e}");
    let e = parse::<HashMap<u32, u64>>(
        &arena,
        &format!(
            "{{{}\"0\":0}}",
            (1..ROOM / 8)
                .map(|i| format!(r#""{i}":0,"#))
                .collect::<String>()
        ),
    )
    .unwrap_err();
    assert!(e.contains("limit"), "{e}");

    // The arena still serves requests, and parses what fits.
    assert_eq!(&*arena.alloc_str("after"), "after");
    let r: Request = parse(
        &arena,
        r#"{"chart":"c","after":1,"dimensions":["d"],"options":[]}"#,
    )
    .unwrap();
    assert_eq!(r.dimensions, ["d"]);
    assert!(arena.stats().capacity <= limit);
}

thread_local! {
    static MADE: Cell<usize> = const { Cell::new(0) };
    static DROPPED: Cell<usize> = const { Cell::new(0) };
}

/// A value that counts how often it is made and dropped.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Counted(u32);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
    }
}

impl<'a> DeserializeIn<'a> for Counted {
    fn deserialize_in<'de, D: Deserializer<'de>>(
        d: D,
        _arena: &'a OneWayAlloc,
    ) -> Result<Self, D::Error> {
        let n = <u32 as serde::Deserialize>::deserialize(d)?;
        MADE.with(|m| m.set(m.get() + 1));
        Ok(Counted(n))
    }
}

#[derive(DeserializeIn, Debug)]
#[allow(dead_code)]
struct Partial<'a> {
    first: Box<'a, Counted>,
    list: Vec<'a, Counted>,
    map: HashMap<'a, &'a str, Counted>,
    pair: (Counted, Counted),
    array: [Counted; 3],
    option: Option<Counted>,
    last: u32,
}

/// After `f`, every value made was dropped exactly once.
fn balanced(what: &str, f: impl FnOnce()) {
    MADE.with(|m| m.set(0));
    DROPPED.with(|d| d.set(0));
    f();
    let (made, dropped) = (MADE.with(Cell::get), DROPPED.with(Cell::get));
    assert_eq!(made, dropped, "{what}: made {made}, dropped {dropped}");
}

#[test]
fn on_an_error_partial_values_drop_exactly_once() {
    let arena = OneWayAlloc::new();
    let full = r#"{"first":1,"list":[2,3],"map":{"a":4},"pair":[5,6],"array":[7,8,9],"option":10,"last":11}"#;
    balanced("whole", || {
        parse::<Partial>(&arena, full).unwrap();
    });
    // The error at each place where a value can be in construction.
    for bad in [
        r#"{"first":1,"list":[2,"x"]}"#,
        r#"{"first":1,"list":[2],"map":{"a":4,"b":"x"}}"#,
        r#"{"first":1,"list":[],"map":{},"pair":[5,"x"]}"#,
        r#"{"first":1,"list":[],"map":{},"pair":[5,6],"array":[7,8,"x"]}"#,
        r#"{"first":1,"list":[],"map":{},"pair":[5,6],"array":[7,8],"option":1}"#,
        r#"{"first":1,"list":[2],"map":{},"pair":[5,6],"array":[7,8,9],"option":10,"last":"x"}"#,
        r#"{"first":1,"list":[2],"map":{},"pair":[5,6],"array":[7,8,9],"option":10}"#,
        r#"{"first":1,"first":2}"#,
    ] {
        balanced(bad, || {
            parse::<Partial>(&arena, bad).unwrap_err();
        });
    }
    balanced("nested vectors", || {
        parse::<Vec<Vec<Counted>>>(&arena, "[[1,2],[3,4,-1]]").unwrap_err();
    });
    // Under a limit: a vector that cannot grow drops what it holds, and the value
    // that could not be placed.
    let (limited, _) = limited();
    let many = format!("[{}0]", "1,".repeat(ROOM / 2));
    balanced("limit", || {
        parse::<Vec<Counted>>(&limited, &many).unwrap_err();
    });
    balanced("after the limit", || {
        assert_eq!(parse::<Vec<Counted>>(&limited, "[1,2]").unwrap().len(), 2);
    });
}

#[test]
fn a_box_the_arena_refuses_drops_its_value_once() {
    let (arena, limit) = limited();
    // Every byte under the limit taken, so the box is the allocation refused (its
    // value, read first, allocates nothing).
    let mut size = ROOM;
    while size > 0 {
        if arena.try_alloc_bytes(size).is_err() {
            size /= 2;
        }
    }
    balanced("box", || {
        let e = parse::<Box<Counted>>(&arena, "7").unwrap_err();
        assert!(e.contains(&format!("limit of {limit} bytes")), "{e}");
        assert_eq!(MADE.with(Cell::get), 1);
    });
    balanced("nested boxes", || {
        parse::<Option<Box<Box<Counted>>>>(&arena, "8").unwrap_err();
    });

    // With room, the value is moved into the box, and dropped with it, once.
    let arena = OneWayAlloc::new();
    balanced("boxed", || {
        let b = parse::<Box<Box<Counted>>>(&arena, "9").unwrap();
        assert_eq!(b.0, 9);
        assert_eq!(DROPPED.with(Cell::get), 0);
    });
    assert_eq!(*parse::<Box<()>>(&arena, "null").unwrap(), ());
    assert_eq!(
        *parse::<Box<[u16; 3]>>(&arena, "[1,2,3]").unwrap(),
        [1, 2, 3]
    );
}

#[test]
fn the_seed_of_an_arena_and_deserialize_with_two_type_arguments() {
    let arena = OneWayAlloc::new();
    let mut de = serde_json::Deserializer::from_str("[1,2]");
    let v = arena.deserialize::<Vec<u8>, _>(&mut de).unwrap();
    assert_eq!(v, [1, 2]);
    let mut de = serde_json::Deserializer::from_str("[3]");
    let s: &[u32] = arena.seed().deserialize(&mut de).unwrap();
    assert_eq!(s, [3]);
}

#[test]
fn a_string_of_the_arena_type_alias() {
    let arena = OneWayAlloc::new();
    let s: String = parse::<onewayalloc::collections::String>(&arena, r#""x""#)
        .unwrap()
        .as_str()
        .to_owned();
    assert_eq!(s, "x");
}
