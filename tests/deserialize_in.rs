//! Feature `derive`: `#[derive(DeserializeIn)]` and the `DeserializeIn` impls.
#![cfg(feature = "derive")]
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{Box, HashMap, HashSet, String, Vec};
use onewayalloc::{DeserializeIn, OneWayAlloc};

#[derive(DeserializeIn, Debug, PartialEq)]
struct Request<'a> {
    name: &'a str,
    after: i64,
    dims: Vec<'a, &'a str>,
    label: Option<String<'a>>,
}

#[derive(DeserializeIn, Debug, PartialEq)]
enum Shape<'a> {
    Unit,
    New(&'a str),
    Tup(u8, &'a str),
    Named { x: u32, tags: &'a [&'a str] },
}

#[derive(DeserializeIn, Debug, PartialEq)]
struct Wrap<'a, T>(Box<'a, T>);

#[derive(DeserializeIn, Debug, PartialEq)]
struct Pair(u8, u16);

#[derive(DeserializeIn, Debug, PartialEq)]
struct Nothing;

fn parse<'a, T: onewayalloc::serde::DeserializeIn<'a>>(
    arena: &'a OneWayAlloc,
    json: &str,
) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = arena.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[test]
fn a_request() {
    let arena = OneWayAlloc::new();
    let r: Request = parse(
        &arena,
        r#"{"name":"cpu","after":-60,"dims":["user","system"],"extra":1}"#,
    )
    .unwrap();
    assert_eq!(r.name, "cpu");
    assert_eq!(r.dims, ["user", "system"]);
    assert_eq!(r.label, None);
    let s: Vec<Shape> = parse(
        &arena,
        r#"["Unit",{"New":"a"},{"Tup":[1,"b"]},{"Named":{"x":3,"tags":["t"]}}]"#,
    )
    .unwrap();
    assert_eq!(s[3], Shape::Named { x: 3, tags: &["t"] });
    let w: Wrap<u32> = parse(&arena, "7").unwrap();
    assert_eq!(*w.0, 7);
    let p: Pair = parse(&arena, "[1,2]").unwrap();
    assert_eq!(p, Pair(1, 2));
    let n: Nothing = parse(&arena, "null").unwrap();
    assert_eq!(n, Nothing);
    let m: HashMap<&str, HashSet<u8>> = parse(&arena, r#"{"a":[1,2]}"#).unwrap();
    assert!(m["a"].contains(&2));
}
