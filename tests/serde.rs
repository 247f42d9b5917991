//! Feature `serde`: a virtual chart serialized from the arena parses to the same
//! `serde_json::Value` as the same data in `std` types (values, not bytes: map order
//! is random).
#![cfg(feature = "serde")]
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::collections::{HashMap as StdHashMap, HashSet as StdHashSet};

use onewayalloc::OneWayAlloc;
use onewayalloc::collections::{Box, CollectIn, HashMap, HashSet, String, Vec};
use onewayalloc::serde::{ByDeref, by_deref};
use serde::Serialize;
use serde_json::{Value, json};

const CHARTS: usize = if cfg!(miri) { 3 } else { 16 };
const NAMES: [&str; 4] = ["user", "system", "iowait", "idle"];
const POINTS: usize = if cfg!(miri) { 4 } else { 30 };

fn value(c: usize, d: usize, t: usize) -> f64 {
    (d * 10 + (c * 3 + t) % 7) as f64 + 0.25
}

#[derive(Serialize)]
struct Meta {
    units: &'static str,
    priority: u32,
}

/// The chart in `std` types: what the arena version must serialize like.
mod std_types {
    use super::*;

    #[derive(Serialize)]
    pub struct Dimension {
        pub id: std::string::String,
        pub name: std::string::String,
        pub points: std::vec::Vec<f64>,
        pub meta: std::boxed::Box<Meta>,
        pub labels: std::boxed::Box<[&'static str]>,
        pub title: std::boxed::Box<str>,
    }

    #[derive(Serialize)]
    pub struct Chart {
        pub id: std::string::String,
        pub dimensions: std::vec::Vec<Dimension>,
        pub tags: StdHashSet<&'static str>,
    }

    #[derive(Serialize)]
    pub struct VirtualChart {
        pub context: std::string::String,
        pub charts: std::vec::Vec<Chart>,
        pub by_id: StdHashMap<std::string::String, usize>,
    }

    pub fn build() -> VirtualChart {
        let mut by_id = StdHashMap::new();
        let charts = (0..CHARTS)
            .map(|c| Chart {
                id: format!("cpu.cpu{c}"),
                dimensions: NAMES
                    .iter()
                    .enumerate()
                    .map(|(d, name)| {
                        let id = format!("cpu.cpu{c}.{name}");
                        by_id.insert(id.clone(), c * NAMES.len() + d);
                        Dimension {
                            id,
                            name: name.to_string(),
                            points: (0..POINTS).map(|t| value(c, d, t)).collect(),
                            meta: std::boxed::Box::new(Meta {
                                units: "%",
                                priority: d as u32,
                            }),
                            labels: NAMES[..d].into(),
                            title: format!("CPU {name}").into_boxed_str(),
                        }
                    })
                    .collect(),
                tags: ["cpu", if c % 2 == 0 { "even" } else { "odd" }].into(),
            })
            .collect();
        VirtualChart {
            context: "cpu.cpu".into(),
            charts,
            by_id,
        }
    }
}

/// The same chart in the arena, as a module `$name`; `$vec_and_box` is the serde
/// attribute of its `Vec` and sized `Box` fields. `Box<[T]>` and `Box<str>` always
/// need `by_deref` (allocator-api2 serializes only sized boxes).
macro_rules! arena_chart {
    ($(#[$cfg:meta])* $name:ident, #[$vec_and_box:meta]) => {
        $(#[$cfg])*
        mod $name {
            use super::*;

            #[derive(Serialize)]
            pub struct Dimension<'a> {
                pub id: &'a str,
                pub name: String<'a>,
                #[$vec_and_box]
                pub points: Vec<'a, f64>,
                #[$vec_and_box]
                pub meta: Box<'a, Meta>,
                #[serde(serialize_with = "by_deref")]
                pub labels: Box<'a, [&'static str]>,
                #[serde(serialize_with = "by_deref")]
                pub title: Box<'a, str>,
            }

            #[derive(Serialize)]
            pub struct Chart<'a> {
                pub id: String<'a>,
                #[$vec_and_box]
                pub dimensions: Vec<'a, Dimension<'a>>,
                pub tags: HashSet<'a, &'static str>,
            }

            #[derive(Serialize)]
            pub struct VirtualChart<'a> {
                pub context: &'a str,
                #[$vec_and_box]
                pub charts: Vec<'a, Chart<'a>>,
                pub by_id: HashMap<'a, &'a str, usize>,
            }

            pub fn build(arena: &OneWayAlloc) -> VirtualChart<'_> {
                let mut by_id = HashMap::new_in(arena);
                let mut charts = Vec::with_capacity_in(CHARTS, arena);
                for c in 0..CHARTS {
                    let mut dimensions = Vec::new_in(arena);
                    for (d, name) in NAMES.iter().enumerate() {
                        let id: &str = onewayalloc::format_in!(arena, "cpu.cpu{c}.{name}").into_str();
                        by_id.insert(id, c * NAMES.len() + d);
                        dimensions.push(Dimension {
                            id,
                            name: String::from_str_in(name, arena),
                            points: (0..POINTS).map(|t| value(c, d, t)).collect_in(arena),
                            meta: Box::new_in(Meta { units: "%", priority: d as u32 }, arena),
                            labels: NAMES[..d].iter().copied().collect_in(arena),
                            title: boxed_str(&format!("CPU {name}"), arena),
                        });
                    }
                    let tags = ["cpu", if c % 2 == 0 { "even" } else { "odd" }];
                    charts.push(Chart {
                        id: onewayalloc::format_in!(arena, "cpu.cpu{c}"),
                        dimensions,
                        tags: tags.into_iter().collect_in(arena),
                    });
                }
                VirtualChart { context: arena.alloc_str("cpu.cpu"), charts, by_id }
            }
        }
    };
}

// The arena types' own `Serialize` impls (the crate's and its dependencies'). Not
// with `nightly`, where `Vec` and `Box` are `std`'s types with an allocator, which
// serde does not serialize.
arena_chart!(#[cfg(not(feature = "nightly"))] arena_types, #[serde()]);

// Every `Vec` and `Box` through `by_deref`: what works under `nightly` too.
arena_chart!(arena_by_deref, #[serde(serialize_with = "by_deref")]);

/// A `Box<str>` in the arena: the bytes boxed, then reinterpreted.
fn boxed_str<'a>(s: &str, arena: &'a OneWayAlloc) -> Box<'a, str> {
    let bytes: Box<[u8]> = s.bytes().collect_in(arena);
    let (ptr, alloc) = Box::into_raw_with_allocator(bytes);
    // SAFETY: the bytes are a copy of `s`, so UTF-8; `[u8]` and `str` have the same
    // layout, and the box keeps its allocator.
    unsafe { Box::from_raw_in(ptr as *mut str, alloc) }
}

/// The serialized chart with each set (serialized as an array in hash order, which
/// differs between two sets of the same items) sorted, so values compare.
fn normalized(chart: impl Serialize) -> Value {
    fn sort_sets(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if let (true, Value::Array(items)) = (key == "tags", &mut *field) {
                        items.sort_by_key(|item| item.to_string());
                    }
                    sort_sets(field);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(sort_sets),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(chart).unwrap();
    sort_sets(&mut value);
    value
}

fn expected() -> Value {
    normalized(std_types::build())
}

#[cfg(not(feature = "nightly"))]
#[test]
fn the_arena_chart_serializes_like_the_std_chart() {
    let arena = OneWayAlloc::new();
    let chart = arena_types::build(&arena);
    assert!(normalized(&chart) == expected());
    // Through text too, as a program would send it.
    let text = serde_json::to_string(&chart).unwrap();
    assert!(normalized(serde_json::from_str::<Value>(&text).unwrap()) == expected());
}

#[test]
fn the_arena_chart_through_by_deref_serializes_like_the_std_chart() {
    let arena = OneWayAlloc::new();
    let chart = arena_by_deref::build(&arena);
    assert!(normalized(&chart) == expected());
}

#[test]
fn strings_slices_and_by_deref() {
    let arena = OneWayAlloc::new();
    let s = onewayalloc::format_in!(&arena, "dim \"{}\"", 7);
    assert_eq!(serde_json::to_value(&s).unwrap(), json!("dim \"7\""));
    let kept: &str = s.into_str();
    assert_eq!(serde_json::to_value(kept).unwrap(), json!("dim \"7\""));
    let slice: &[u32] = (1..=3).collect_in::<Vec<_>>(&arena).leak();
    assert_eq!(serde_json::to_value(slice).unwrap(), json!([1, 2, 3]));
    let boxed: Box<[u8]> = (1..=2).collect_in(&arena);
    assert_eq!(
        serde_json::to_value(ByDeref(&boxed)).unwrap(),
        json!([1, 2])
    );
    let map: HashMap<&str, String> = [("k", String::from_str_in("v", &arena))]
        .into_iter()
        .collect_in(&arena);
    assert_eq!(serde_json::to_value(&map).unwrap(), json!({"k": "v"}));
}
