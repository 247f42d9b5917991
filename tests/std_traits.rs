//! The standard traits of the crate's types, each stated by what it must answer:
//! the arena's `Debug`, and the arena `String`'s comparisons, conversions,
//! hashing and formatting, which must agree with `str`'s.

use core::cmp::Ordering;
use core::hash::{BuildHasher, Hash};
use std::borrow::Borrow;
use std::collections::hash_map::RandomState;

use onewayalloc::OneWayAlloc;
use onewayalloc::collections::String;

/// `{:?}` of an arena names it and shows its figures, which change as it is used.
#[test]
fn arena_debug_shows_its_stats() {
    let arena = OneWayAlloc::new();
    arena.alloc_str("abc");
    let debug = format!("{arena:?}");
    assert_eq!(
        debug,
        format!("OneWayAlloc {{ stats: {:?}, .. }}", arena.stats())
    );
    assert!(debug.contains("used: 3"), "{debug}");
    arena.alloc_bytes(100_000);
    let pages = if onewayalloc::SEPARATE_BLOCKS { 0 } else { 2 };
    assert!(
        format!("{arena:?}").contains(&format!("pages: {pages}")),
        "{arena:?}"
    );
    // The alternate form is the same struct, spread over lines.
    assert!(format!("{arena:#?}").starts_with("OneWayAlloc {\n    stats: Stats {\n"));
}

/// Equality with `str` and `&str` is `str`'s: equal text only.
#[test]
#[allow(clippy::comparison_to_empty)] // the comparison with "" is under test
fn string_equals_str_exactly() {
    let arena = OneWayAlloc::new();
    let s = String::from_str_in("cpu.user", &arena);
    let texts = ["cpu.user", "cpu.use", "cpu.userx", "CPU.USER", ""];
    for text in texts {
        let same = text == "cpu.user";
        assert_eq!(s == *text, same, "String == str {text:?}");
        assert_eq!(s == text, same, "String == &str {text:?}");
        assert_eq!(
            s == String::from_str_in(text, &arena),
            same,
            "String == String {text:?}"
        );
        assert_eq!(s != text, !same);
    }
    let empty = String::new_in(&arena);
    assert!(empty == "");
    assert!(empty != "x");
}

/// `AsRef<str>`, `AsRef<[u8]>`, `Borrow<str>` and `Deref` give the text itself.
#[test]
fn string_converts_to_its_text() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("dim", &arena);
    s.push('7');
    let as_str: &str = s.as_ref();
    let as_bytes: &[u8] = s.as_ref();
    let borrowed: &str = s.borrow();
    assert_eq!(as_str, "dim7");
    assert_eq!(as_bytes, b"dim7");
    assert_eq!(borrowed, "dim7");
    assert_eq!(&*s, "dim7");
    assert_eq!(s.as_str(), "dim7");
}

/// Ordering and hashing are `str`'s, as `Borrow<str>` requires of a map key.
#[test]
fn string_orders_and_hashes_like_str() {
    let arena = OneWayAlloc::new();
    let words = ["", "a", "ab", "b", "ba", "cpu", "cpu.user", "é"];
    let state = RandomState::new();
    for x in words {
        let sx = String::from_str_in(x, &arena);
        assert_eq!(state.hash_one(&sx), state.hash_one(x), "hash of {x:?}");
        for y in words {
            let sy = String::from_str_in(y, &arena);
            assert_eq!(sx.cmp(&sy), x.cmp(y), "{x:?} cmp {y:?}");
            assert_eq!(
                sx.partial_cmp(&sy),
                Some(x.cmp(y)),
                "{x:?} partial_cmp {y:?}"
            );
            assert_eq!(sx == sy, x == y);
        }
    }
    let mut sorted: Vec<String> = words
        .iter()
        .rev()
        .map(|w| String::from_str_in(w, &arena))
        .collect();
    sorted.sort();
    let sorted: Vec<&str> = sorted.iter().map(|s| s.as_str()).collect();
    assert_eq!(sorted, words);
    assert_eq!(
        String::from_str_in("b", &arena).cmp(&String::from_str_in("a", &arena)),
        Ordering::Greater
    );
    // Hashing feeds the text to the hasher, as `str` does.
    let mut hasher = state.build_hasher();
    String::from_str_in("k", &arena).hash(&mut hasher);
    let mut expected = state.build_hasher();
    "k".hash(&mut expected);
    assert_eq!(
        core::hash::Hasher::finish(&hasher),
        core::hash::Hasher::finish(&expected)
    );
}

/// `Display` and `Debug` format as `str` does, with its flags.
#[test]
fn string_formats_like_str() {
    let arena = OneWayAlloc::new();
    let s = String::from_str_in("a\"b\n", &arena);
    assert_eq!(format!("{s}"), "a\"b\n");
    assert_eq!(format!("{s:?}"), format!("{:?}", "a\"b\n"));
    let short = String::from_str_in("ab", &arena);
    assert_eq!(format!("[{short:>5}]"), "[   ab]");
    assert_eq!(format!("[{short:-<4}]"), "[ab--]");
}
