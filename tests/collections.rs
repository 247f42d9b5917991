//! The arena collections: aliases, `String`, `format_in!`.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::collections::{Box, HashMap, HashSet, String, Vec};
use onewayalloc::{OneWayAlloc, format_in};

#[test]
fn aliases_build_in_the_arena() {
    let arena = OneWayAlloc::new();
    let before = arena.stats().used;
    let mut v: Vec<u32> = Vec::new_in(&arena);
    v.extend(0..10);
    let b: Box<[u32]> = v.clone().into_boxed_slice();
    let mut m: HashMap<u32, u32> = HashMap::new_in(&arena);
    m.insert(1, 1);
    let mut s: HashSet<u32> = HashSet::new_in(&arena);
    s.insert(3);
    assert_eq!(b.len(), 10);
    // The vector, its clone (exactly sized, so boxing it does not reallocate), the map
    // and the set are all in the arena.
    let at_least = 2 * 10 * 4 + 2 * 4 * 4;
    assert!(
        arena.stats().used >= before + at_least,
        "{:?}",
        arena.stats()
    );
}

#[test]
fn string_pushes_grow_in_place() {
    let arena = OneWayAlloc::new();
    let mut s = String::new_in(&arena);
    let n = if cfg!(miri) { 300 } else { 5000 };
    for i in 0..n {
        s.push(char::from(b'a' + (i % 26) as u8));
        if i % 7 == 0 {
            s.push_str("é");
        }
    }
    assert!(s.len() > n);
    assert!(s.chars().take(3).eq("aéb".chars()));
    // Growing in place at the top of the arena leaves no abandoned copies.
    assert!(
        arena.stats().used <= s.capacity(),
        "{} > {}",
        arena.stats().used,
        s.capacity()
    );
}

#[test]
fn string_keys_a_map_looked_up_by_str() {
    let arena = OneWayAlloc::new();
    let mut m: HashMap<String, usize> = HashMap::new_in(&arena);
    for i in 0..100 {
        m.insert(format_in!(&arena, "dim{i}"), i);
    }
    assert_eq!(m.get("dim42"), Some(&42));
    assert_eq!(m["dim0"], 0);
    assert!(!m.contains_key("dim100"));
}

#[test]
fn string_traits_behave_like_str() {
    let arena = OneWayAlloc::new();
    let a = String::from_str_in("beta", &arena);
    let b = format_in!(&arena, "{}", "alpha");
    assert!(b < a);
    assert_eq!(a.clone(), a);
    assert_eq!(format!("{a}"), "beta");
    assert_eq!(format!("{a:?}"), "\"beta\"");
    assert_eq!(a.to_uppercase(), "BETA");
    let mut c = a.clone();
    c.make_ascii_uppercase();
    assert_eq!(c, "BETA");
    c.clear();
    assert!(c.is_empty());
    let bytes: &[u8] = b.as_ref();
    assert_eq!(bytes, b"alpha");
}

#[test]
fn into_str_keeps_the_bytes_without_copying() {
    let arena = OneWayAlloc::new();
    let s = format_in!(&arena, "{}-{}", 1, 2);
    let ptr = s.as_ptr();
    let used = arena.stats().used;
    let kept: &mut str = s.into_str();
    assert_eq!(kept, "1-2");
    assert_eq!(kept.as_ptr(), ptr);
    assert_eq!(arena.stats().used, used);
    // Later allocations do not disturb it.
    let other = format_in!(&arena, "{:>20}", "x").into_str();
    assert_eq!(kept, "1-2");
    assert_eq!(other.trim(), "x");
}

/// Every collection works inside a scope through `Scope::arena`, and the rollback
/// takes all of them back (in both modes: pages rewound, or blocks released).
#[test]
fn collections_inside_scopes() {
    use onewayalloc::try_format_in;
    let mut arena = OneWayAlloc::new();
    arena.alloc_str("before");
    let before = arena.stats().used;
    let answer = arena.scope(|request| {
        let id = request.alloc_str("chart.cpu"); // lives for the whole scope
        let mut names: HashMap<String, usize> = HashMap::new_in(request.arena());
        let mut seen: HashSet<u32> = HashSet::new_in(request.arena());
        for i in 0..50u32 {
            names.insert(format_in!(request.arena(), "{id}.dim{i}"), i as usize);
            seen.insert(i % 7);
        }
        let boxed: Box<[u32; 4]> = Box::new_in([1, 2, 3, 4], request.arena());
        let label = try_format_in!(request.arena(), "{} names", names.len()).unwrap();
        let inner = {
            drop((names, seen, boxed, label));
            request.scope(|step| {
                let mut v: Vec<u64> = Vec::new_in(step.arena());
                v.extend(0..1000);
                let mut s = String::new_in(step.arena());
                s.push_str(id);
                s.len() as u64 + v.iter().sum::<u64>()
            })
        };
        assert_eq!(id, "chart.cpu");
        inner
    });
    assert_eq!(answer, 9 + 999 * 1000 / 2);
    assert_eq!(arena.stats().used, before);
}
