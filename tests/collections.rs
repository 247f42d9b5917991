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

// `vec![in &arena; ...]`

#[test]
fn vec_macro_forms() {
    use std::rc::Rc;
    let mut arena = OneWayAlloc::new();
    let empty: Vec<u32> = onewayalloc::vec![in &arena];
    assert!(empty.is_empty() && empty.capacity() == 0);
    let also_empty: Vec<u32> = onewayalloc::vec![in &arena;];
    assert!(also_empty.is_empty());
    let listed = onewayalloc::vec![in &arena; 1, 2, 3];
    assert_eq!(listed, [1, 2, 3]);
    assert_eq!(listed.capacity(), 3); // one allocation of exactly their number
    let trailing = onewayalloc::vec![in &arena; "a", "b",];
    assert_eq!(trailing, ["a", "b"]);
    let one = onewayalloc::vec![in &arena; 7u8];
    assert_eq!(one, [7]);
    let zeros = onewayalloc::vec![in &arena; 0u64; 100];
    assert_eq!((zeros.len(), zeros.capacity()), (100, 100));
    assert!(zeros.iter().all(|&z| z == 0));
    // `value; n` clones n - 1 times and moves the value in last; n == 0 drops it.
    let shared = Rc::new(5);
    let clones = onewayalloc::vec![in &arena; Rc::clone(&shared); 3];
    assert_eq!(Rc::strong_count(&shared), 4);
    drop(clones);
    let none = onewayalloc::vec![in &arena; Rc::clone(&shared); 0];
    assert!(none.is_empty());
    assert_eq!(Rc::strong_count(&shared), 1);
    // Nested, and the element expressions run before the vector is allocated.
    let nested = onewayalloc::vec![in &arena; onewayalloc::vec![in &arena; 1], onewayalloc::vec![in &arena; 2, 3]];
    assert_eq!(nested[1], [2, 3]);
    drop((
        empty, also_empty, listed, trailing, one, zeros, none, nested,
    ));
    arena.reset();
    let total = arena.scope(|s| {
        let words = onewayalloc::vec![in s.arena(); "in", "a", "scope"];
        let counts = onewayalloc::vec![in s.arena(); 1usize; 3];
        words.len() + counts.iter().sum::<usize>()
    });
    assert_eq!(total, 6);
}

#[test]
fn vec_macro_list_is_one_block_at_the_top() {
    if !onewayalloc::SEPARATE_BLOCKS {
        let arena = OneWayAlloc::new();
        let before = arena.stats().used;
        let v = onewayalloc::vec![in &arena; 1u64, 2, 3, 4];
        assert_eq!(arena.stats().used - before, 4 * 8 + (8 - before % 8) % 8);
        drop(v); // the most recent block: rolled back
        assert_eq!(arena.stats().used, before);
    }
}

// `collect_in` for every `FromIteratorIn` impl

use onewayalloc::collections::{CollectIn, FromIteratorIn};

#[test]
fn collect_in_vec_and_boxed_slice() {
    let mut arena = OneWayAlloc::new();
    let v: Vec<u32> = (0..10).collect_in(&arena);
    assert_eq!(v, (0..10).collect::<std::vec::Vec<_>>()[..]);
    assert_eq!(v.capacity(), 10); // the exact hint, reserved once
    let turbofish = (0..3).collect_in::<Vec<_>>(&arena);
    assert_eq!(turbofish, [0, 1, 2]);
    let filtered: Vec<u32> = (0..100).filter(|n| n % 7 == 0).collect_in(&arena);
    assert_eq!(filtered.len(), 15);
    let boxed: Box<[u32]> = (0..5).map(|n| n * n).collect_in(&arena);
    assert_eq!(&*boxed, &[0, 1, 4, 9, 16]);
    let from_filter: Box<[u32]> = (0..50).filter(|n| n % 2 == 0).collect_in(&arena);
    assert_eq!(from_filter.len(), 25);
    let v2 = Vec::from_iter_in([1, 2], &arena);
    assert_eq!(v2, [1, 2]);
    // Any allocator-api2 allocator works, the arena's loan from a scope included.
    drop((v, turbofish, filtered, boxed, from_filter, v2));
    let n = arena.scope(|s| (0..4).collect_in::<Vec<_>>(s.arena()).len());
    assert_eq!(n, 4);
    let global: onewayalloc::allocator_api2::vec::Vec<u8, onewayalloc::Global> =
        (1..=2).collect_in(&onewayalloc::Global); // by reference, cloned
    assert_eq!(global, [1, 2]);
}

#[test]
fn collect_in_a_filter_grows_in_place_without_copies() {
    if !onewayalloc::SEPARATE_BLOCKS {
        let arena = OneWayAlloc::new();
        let n = if cfg!(miri) { 500 } else { 5000 };
        let v: Vec<u64> = (0..n).filter(|x| x % 3 != 0).collect_in(&arena);
        assert!(
            arena.stats().used <= v.capacity() * 8,
            "{:?}",
            arena.stats()
        );
    }
}

/// An iterator whose `size_hint` says `hint` whatever it yields: a buggy one
/// (a lower bound above what it yields) or a modest one (below).
struct Hinted<I> {
    items: I,
    hint: usize,
}

impl<I: Iterator> Iterator for Hinted<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.items.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.hint, None)
    }
}

#[test]
fn collect_in_a_vec_keeps_every_item_whatever_the_hint_says() {
    let arena = OneWayAlloc::new();
    for (len, hint) in [(0, 0), (0, 5), (3, 0), (3, 3), (3, 8), (9, 4), (40, 39)] {
        let items = (0..len).map(|i| format!("item {i}"));
        let v: Vec<std::string::String> = Hinted { items, hint }.collect_in(&arena);
        let expected: std::vec::Vec<_> = (0..len).map(|i| format!("item {i}")).collect();
        assert_eq!(v[..], expected[..], "{len} items, lower bound {hint}");
        assert!(
            v.capacity() >= hint.max(len),
            "{len} items, lower bound {hint}"
        );
    }
}

#[test]
fn collect_in_a_vec_drops_what_it_wrote_when_the_iterator_panics() {
    use std::cell::Cell;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    struct Counted<'c>(&'c Cell<usize>);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }
    let arena = OneWayAlloc::new();
    let drops = Cell::new(0);
    // Panics at the fourth item: within the reserved room (hint 6), then past it
    // (hint 2: the rest goes through `extend`).
    for hint in [6, 2] {
        drops.set(0);
        let items = (0..6).map(|i| {
            assert!(i < 3, "the iterator fails at item {i}");
            Counted(&drops)
        });
        let result = catch_unwind(AssertUnwindSafe(|| {
            let _: Vec<Counted<'_>> = Hinted { items, hint }.collect_in(&arena);
        }));
        assert!(result.is_err());
        assert_eq!(
            drops.get(),
            3,
            "lower bound {hint}: each item written dropped once"
        );
    }
    // The arena goes on.
    let v: Vec<u8> = (0..4).collect_in(&arena);
    assert_eq!(v, [0, 1, 2, 3]);
}

#[test]
fn collect_in_maps_and_sets() {
    let arena = OneWayAlloc::new();
    let n = if cfg!(miri) { 50 } else { 1000 };
    let map: HashMap<u32, u32> = (0..n).map(|i| (i, i * 2)).collect_in(&arena);
    assert_eq!(map.len(), n as usize);
    assert_eq!(map[&7], 14);
    let set: HashSet<u32> = [3, 1, 3, 2].into_iter().collect_in(&arena);
    assert_eq!(set.len(), 3);
    let keyed: HashMap<&str, usize> = ["a", "b"].into_iter().zip(0..).collect_in(&arena);
    assert_eq!(keyed["b"], 1);
    let set2 = HashSet::from_iter_in(0..4u8, &arena);
    assert!(set2.contains(&3));
}

#[test]
fn a_map_reserves_the_size_hint_once() {
    if !onewayalloc::SEPARATE_BLOCKS {
        let n = if cfg!(miri) { 50 } else { 1000 };
        // An exact hint: the same bytes as a map made with that capacity, so no
        // rehash abandoned a table.
        let reserved = {
            let arena = OneWayAlloc::new();
            let mut map: HashMap<u32, u32> = HashMap::with_capacity_in(n as usize, &arena);
            map.extend((0..n).map(|i| (i, i)));
            arena.stats().used
        };
        let arena = OneWayAlloc::new();
        let map: HashMap<u32, u32> = (0..n).map(|i| (i, i)).collect_in(&arena);
        assert_eq!(arena.stats().used, reserved);
        drop(map);
        // No hint: the map rehashes as it grows; the abandoned tables stay until
        // reset, about one final table more (the documented cost).
        let arena = OneWayAlloc::new();
        let map: HashMap<u32, u32> = (0..n).filter(|_| true).map(|i| (i, i)).collect_in(&arena);
        let grown = arena.stats().used;
        assert!(grown > reserved, "{grown} <= {reserved}");
        assert!(grown <= 3 * reserved, "{grown} > 3 * {reserved}");
        assert_eq!(map.len(), n as usize);
    }
}

#[test]
fn collect_in_strings() {
    let arena = OneWayAlloc::new();
    let from_chars: String = "owa".chars().rev().collect_in(&arena);
    assert_eq!(from_chars, "awo");
    let from_char_refs: String = ['é', 'x'].iter().collect_in(&arena);
    assert_eq!(from_char_refs, "éx");
    let from_strs: String = ["cpu", ".", "user"].into_iter().collect_in(&arena);
    assert_eq!(from_strs, "cpu.user");
    let inherent = String::from_iter_in(['a', 'b'], &arena);
    assert_eq!(inherent, "ab");
}

#[test]
fn collect_in_options_and_results_stop_at_the_first_failure() {
    let arena = OneWayAlloc::new();
    let all: Option<Vec<u32>> = [Some(1), Some(2)].into_iter().collect_in(&arena);
    assert_eq!(all.unwrap(), [1, 2]);
    let mut taken = 0;
    let missing: Option<Vec<u32>> = [Some(1), None, Some(3)]
        .into_iter()
        .inspect(|_| taken += 1)
        .collect_in(&arena);
    assert!(missing.is_none());
    assert_eq!(taken, 2); // nothing after the first None
    let parsed: Result<Vec<u8>, _> = ["1", "2"]
        .iter()
        .map(|s| s.parse::<u8>())
        .collect_in(&arena);
    assert_eq!(parsed.unwrap(), [1, 2]);
    let failed: Result<Box<[u8]>, &str> = [Ok(1), Err("bad"), Err("worse")]
        .into_iter()
        .collect_in(&arena);
    assert_eq!(failed.unwrap_err(), "bad");
    let text: Result<String, ()> = [Ok("a"), Ok("b")].into_iter().collect_in(&arena);
    assert_eq!(text.unwrap(), "ab");
    let map: Option<HashMap<u8, u8>> = [Some((1, 2))].into_iter().collect_in(&arena);
    assert_eq!(map.unwrap()[&1], 2);
    let nested: Option<Result<Vec<u8>, ()>> = [Some(Ok(1))].into_iter().collect_in(&arena);
    assert_eq!(nested.unwrap().unwrap(), [1]);
}

type Hints = std::vec::Vec<(usize, Option<usize>)>;

/// A collection that records, in the cell it is "allocated" in, the size hints its
/// iterator gives: before each item, and after the last.
struct RecordsHints<'c>(core::marker::PhantomData<&'c ()>);

impl<'c, T> FromIteratorIn<T> for RecordsHints<'c> {
    type Alloc = &'c core::cell::RefCell<Hints>;
    fn from_iter_in<I: IntoIterator<Item = T>>(iter: I, hints: Self::Alloc) -> Self {
        let mut iter = iter.into_iter();
        hints.borrow_mut().push(iter.size_hint());
        while iter.next().is_some() {
            hints.borrow_mut().push(iter.size_hint());
        }
        hints.borrow_mut().push(iter.size_hint());
        RecordsHints(core::marker::PhantomData)
    }
}

/// The hints the collection inside `C` sees when `items` are collected into `C`.
fn hints_seen<'c, C, T>(
    hints: &'c core::cell::RefCell<Hints>,
    items: impl IntoIterator<Item = T>,
) -> Hints
where
    C: FromIteratorIn<T, Alloc = &'c core::cell::RefCell<Hints>>,
{
    let _: C = items.into_iter().collect_in(&hints);
    hints.take()
}

#[test]
fn options_and_results_give_the_inner_collection_an_honest_size_hint() {
    // No lower bound (any item may be the failure), the iterator's upper bound, and
    // nothing more once the failure is seen.
    let cell = core::cell::RefCell::new(Hints::new());
    let all_ok = hints_seen::<Result<RecordsHints, ()>, _>(&cell, [Ok(1), Ok(2)]);
    assert_eq!(
        all_ok,
        [(0, Some(2)), (0, Some(1)), (0, Some(0)), (0, Some(0))]
    );
    let failed = hints_seen::<Result<RecordsHints, &str>, _>(&cell, [Ok(1), Err("bad"), Ok(3)]);
    assert_eq!(failed, [(0, Some(3)), (0, Some(2)), (0, Some(0))]);
    let unbounded =
        hints_seen::<Option<RecordsHints>, _>(&cell, (0..).map(Some).filter(|_| true).take(2));
    assert_eq!(
        unbounded,
        [(0, Some(2)), (0, Some(1)), (0, Some(0)), (0, Some(0))]
    );
    let endless = hints_seen::<Option<RecordsHints>, _>(&cell, core::iter::repeat(None::<u8>));
    assert_eq!(
        endless,
        [(0, None), (0, Some(0))],
        "stops at the first None"
    );
}

#[test]
fn collecting_nothing_allocates_nothing() {
    let arena = OneWayAlloc::new();
    let before = arena.stats();
    let none: Result<Vec<u64>, ()> = core::iter::empty().collect_in(&arena);
    assert_eq!(none.unwrap().capacity(), 0);
    let none: Option<Box<[u64]>> = core::iter::empty().collect_in(&arena);
    assert!(none.unwrap().is_empty());
    let none: Option<String> = core::iter::empty::<Option<char>>().collect_in(&arena);
    assert_eq!(none.unwrap().capacity(), 0);
    assert_eq!(arena.stats().used, before.used);
}

#[test]
fn a_panicking_iterator_leaves_the_arena_usable() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::rc::Rc;
    let arena = OneWayAlloc::new();
    let counter = Rc::new(());
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _: Vec<Rc<()>> = (0..10)
            .map(|i| {
                if i == 5 {
                    panic!("iterator panics")
                } else {
                    Rc::clone(&counter)
                }
            })
            .collect_in(&arena);
    }));
    assert!(result.is_err());
    assert_eq!(Rc::strong_count(&counter), 1); // the items taken were dropped, once
    let v: Vec<u8> = (0..3).collect_in(&arena);
    assert_eq!(v, [0, 1, 2]);
}

// From a collection to a plain arena slice (bumpalo's `into_bump_slice`, `into_bump_str`)

#[test]
fn leak_and_into_str_give_slices_for_the_arena_lifetime() {
    struct Node<'a> {
        name: &'a str,
        children: &'a [u32],
    }
    let arena = OneWayAlloc::new();
    let nodes: std::vec::Vec<Node<'_>> = (0..3)
        .map(|i| {
            let children: Vec<u32> = (0..i).collect_in(&arena);
            Node {
                name: format_in!(&arena, "n{i}").into_str(),
                children: children.leak(),
            }
        })
        .collect();
    assert_eq!(nodes[2].name, "n2");
    assert_eq!(nodes[2].children, [0, 1]);
    let boxed: &mut [u8] = Box::leak((0..2).collect_in::<Box<[u8]>>(&arena));
    boxed[0] = 9;
    assert_eq!(boxed, [9, 1]);
}
