//! Everything that takes an arena takes a `SyncOneWayAlloc` (issue 31 part 2, SPEC
//! §6): `format_in!`, `try_format_in!`, the arena `String`, the `collections::sync`
//! aliases, `collect_in` and `vec![in ..]`, each used from several threads at once;
//! and (feature `derive`) `SyncOneWayAlloc::deserialize` of a derived request struct
//! whose strings and collections live in the arena, read on other threads.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::thread;

use onewayalloc::collections::sync as arena;
use onewayalloc::collections::{Arena, CollectIn};
use onewayalloc::{OneWayAlloc, SyncOneWayAlloc, format_in, try_format_in};

const THREADS: usize = 4;

/// Items per thread: fewer under Miri.
const N: usize = if cfg!(miri) { 20 } else { 2_000 };

// ----- Markers ----------------------------------------------------------------------

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<arena::String<'static>>();
    assert_send_sync::<arena::Vec<'static, arena::String<'static>>>();
    assert_send_sync::<arena::Box<'static, [u64]>>();
    assert_send_sync::<arena::HashMap<'static, arena::String<'static>, u32>>();
    assert_send_sync::<arena::HashSet<'static, &'static str>>();
};

// ----- format_in!, the String, collect_in, vec![in] from several threads -----------

/// Each thread formats, builds and collects in the shared arena; the results are
/// read on the main thread after the join, then everything is reset.
#[test]
fn every_handle_call_from_several_threads() {
    let mut shared = SyncOneWayAlloc::new();
    for round in 0..2 {
        let per_thread: Vec<arena::Vec<arena::String>> = thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let shared = &shared;
                    s.spawn(move || {
                        let mut lines = arena::Vec::new_in(shared);
                        for i in 0..N {
                            let mut line = format_in!(shared, "t{t} r{round} #{i}");
                            line.push('!');
                            lines.push(line);
                        }
                        lines
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for (t, lines) in per_thread.iter().enumerate() {
            assert_eq!(lines.len(), N);
            for (i, line) in lines.iter().enumerate() {
                assert_eq!(*line, format!("t{t} r{round} #{i}!"));
                assert!(core::ptr::eq(line.arena(), &shared));
            }
        }
        // collect_in and vec![in] on the arena, into the sync aliases.
        let total: arena::Vec<usize> = per_thread.iter().map(|l| l.len()).collect_in(&shared);
        let listed = onewayalloc::vec![in &shared; 1u8, 2, 3];
        let word: arena::String = ['o', 'w', 'a'].into_iter().collect_in(&shared);
        assert_eq!(
            (total.iter().sum::<usize>(), listed.len(), word.as_str()),
            (THREADS * N, 3, "owa")
        );
        drop((per_thread, total, listed, word));
        shared.reset();
    }
}

/// A string made on one thread grows on others, one at a time, and keeps its text.
#[test]
fn a_string_grows_on_other_threads() {
    let shared = SyncOneWayAlloc::new();
    let mut text = arena::String::from_str_in("start", &shared);
    for t in 0..THREADS {
        text = thread::scope(|s| {
            s.spawn(move || {
                for i in 0..N {
                    text.push_str(if i % 2 == 0 { "ab" } else { "c" });
                }
                text += &format!("|{t}");
                text
            })
            .join()
            .unwrap()
        });
    }
    let expected_pair = N / 2 * 3 + N % 2 * 2;
    assert_eq!(text.len(), "start".len() + THREADS * (expected_pair + 2));
    assert!(text.starts_with("startabcab"));
    assert!(text.ends_with("|3"));
}

/// `try_format_in!` on a sync arena past its limit is an error, and the arena keeps
/// serving requests afterwards.
#[test]
fn try_format_in_reports_the_limit() {
    let mut shared = SyncOneWayAlloc::new();
    shared.set_limit(Some(64 * 1024));
    let big = "x".repeat(128 * 1024);
    thread::scope(|s| {
        s.spawn(|| {
            assert!(try_format_in!(&shared, "{big}").is_err());
            let small = try_format_in!(&shared, "{}-{}", 1, 2).unwrap();
            assert_eq!(small, "1-2");
        });
    });
}

/// One generic function serves both arena types through the `Arena` trait.
#[test]
fn one_function_for_both_arenas() {
    fn joined<'a, R: Arena>(
        arena: &'a R,
        parts: &[&str],
    ) -> onewayalloc::collections::String<'a, R> {
        let mut s = onewayalloc::collections::String::new_in(arena);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(part);
        }
        s
    }
    let single = OneWayAlloc::new();
    let shared = SyncOneWayAlloc::new();
    assert_eq!(joined(&single, &["a", "b"]), "a,b");
    let from_thread = thread::scope(|s| {
        s.spawn(|| joined(&shared, &["c", "d", "e"]))
            .join()
            .unwrap()
    });
    assert_eq!(from_thread, "c,d,e");
}

// ----- DeserializeIn and the derive ----------------------------------------------

#[cfg(feature = "derive")]
mod deserialize {
    use super::*;
    use bincode::Options as _;
    use onewayalloc::DeserializeIn;
    use onewayalloc::serde::DeserializeIn as _;

    /// A request whose strings and collections live in the sync arena.
    #[derive(DeserializeIn, Debug)]
    #[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]
    struct Request<'a> {
        chart: arena::String<'a>,
        dimensions: arena::Vec<'a, &'a str>,
        labels: arena::HashMap<'a, &'a str, arena::String<'a>>,
        after: Option<u64>,
        points: arena::Box<'a, [f64]>,
        tags: arena::HashSet<'a, &'a str>,
        nested: arena::Vec<'a, Point<'a>>,
        kind: Kind<'a>,
    }

    #[derive(DeserializeIn, Debug, PartialEq)]
    #[onewayalloc(arena = SyncOneWayAlloc)]
    struct Point<'a> {
        name: &'a str,
        value: f64,
    }

    #[derive(DeserializeIn, Debug)]
    #[onewayalloc(arena = SyncOneWayAlloc)]
    enum Kind<'a> {
        Line,
        Stacked(arena::Vec<'a, u32>),
    }

    // A struct deserialized into the sync arena is Send and Sync.
    const _: () = {
        const fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Request<'static>>();
    };

    fn json(i: usize) -> String {
        format!(
            r#"{{"chart":"cpu{i}","dimensions":["user","system"],"labels":{{"host":"h{i}"}},
            "after":{i},"points":[1.5,2.5],"tags":["a","b","a"],
            "nested":[{{"name":"p","value":{i}}}],"kind":{{"Stacked":[{i},7]}}}}"#
        )
    }

    fn check(request: &Request<'_>, i: usize) {
        assert_eq!(request.chart, format!("cpu{i}"));
        assert_eq!(request.dimensions, ["user", "system"]);
        assert_eq!(request.labels["host"], format!("h{i}"));
        assert_eq!(request.after, Some(i as u64));
        assert_eq!(&*request.points, [1.5, 2.5]);
        assert_eq!(request.tags.len(), 2);
        assert_eq!(
            request.nested[0],
            Point {
                name: "p",
                value: i as f64
            }
        );
        match &request.kind {
            Kind::Stacked(v) => assert_eq!(v[..], [i as u32, 7]),
            Kind::Line => panic!("expected Stacked"),
        }
    }

    /// Threads parse requests into one arena at once; each request is then read on
    /// another thread than the one that parsed it.
    #[test]
    fn derived_requests_from_several_threads() {
        let mut shared = SyncOneWayAlloc::new();
        let count = if cfg!(miri) { 2 } else { 50 };
        let requests: Vec<Vec<Request>> = thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let shared = &shared;
                    s.spawn(move || {
                        (0..count)
                            .map(|i| {
                                let input = json(t * 1000 + i);
                                let mut de = serde_json::Deserializer::from_str(&input);
                                let request: Request = shared.deserialize(&mut de).unwrap();
                                de.end().unwrap();
                                request // the input is dropped; the request stays
                            })
                            .collect()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        thread::scope(|s| {
            for (t, list) in requests.iter().enumerate() {
                s.spawn(move || {
                    for (i, request) in list.iter().enumerate() {
                        check(request, t * 1000 + i);
                    }
                });
            }
        });
        drop(requests);
        shared.reset();
    }

    /// The trait's implementations take the arena type as their parameter:
    /// `deserialize_in` with a `&SyncOneWayAlloc`, and the seed.
    #[test]
    fn trait_and_seed_in_the_sync_arena() {
        use serde::de::DeserializeSeed;
        let shared = SyncOneWayAlloc::new();
        let mut de = serde_json::Deserializer::from_str(r#"["x", "yz"]"#);
        let v = <arena::Vec<arena::String>>::deserialize_in(&mut de, &shared).unwrap();
        assert_eq!(v, ["x", "yz"]);
        let mut de = serde_json::Deserializer::from_str(r#"{"a": [1, 2]}"#);
        let map: arena::HashMap<&str, &[u8]> = shared.seed().deserialize(&mut de).unwrap();
        assert_eq!(map["a"], [1, 2]);
    }

    /// A missing field and a refused allocation are the deserializer's errors, and
    /// the arena keeps working. (Read through `io::Read`: to place an error, the
    /// `from_str` reader looks back with memchr's `memrchr`, whose word reads Miri's
    /// symbolic alignment check reports, a false positive; see tests/deserialize_in.rs.)
    #[test]
    fn errors_leave_the_sync_arena_usable() {
        let mut shared = SyncOneWayAlloc::new();
        let mut de = serde_json::Deserializer::from_reader(&br#"{"name":"p"}"#[..]);
        let error = shared.deserialize::<Point, _>(&mut de).unwrap_err();
        assert!(
            error.to_string().contains("missing field `value`"),
            "{error}"
        );
        shared.set_limit(Some(64 * 1024));
        // Past the limit: a string longer than the first page, in bincode (whose
        // reader copies it at once, where JSON would be read byte by byte: slow
        // under Miri).
        let long = ["x".repeat(100 * 1024)];
        let bytes = bincode::DefaultOptions::new().serialize(&long).unwrap();
        let mut de = bincode::Deserializer::from_slice(&bytes, bincode::DefaultOptions::new());
        let error = shared
            .deserialize::<arena::Vec<&str>, _>(&mut de)
            .unwrap_err();
        assert!(error.to_string().contains("limit"), "{error}");
        let mut de = serde_json::Deserializer::from_str(r#"{"name":"q","value":2}"#);
        let point: Point = shared.deserialize(&mut de).unwrap();
        assert_eq!(
            point,
            Point {
                name: "q",
                value: 2.0
            }
        );
    }
}
