//! The arena `String`'s methods against `std`'s `String`: the same operations on the
//! same inputs give the same contents, results and panic messages, and the bytes are
//! UTF-8 after every step (also after a panic).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::cell::Cell;
use std::ops::Bound;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::string::String as StdString;
use std::sync::Once;

use onewayalloc::collections::{CollectIn, FromUtf8Error, String, Vec};
use onewayalloc::{AllocError, OneWayAlloc};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm};

thread_local! {
    /// Set while this thread runs an operation that is expected to panic, so the
    /// panic hook stays quiet for it (and only for it).
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, returning its value or its panic message, without printing expected
/// panics.
fn outcome<R>(f: impl FnOnce() -> R) -> Result<R, StdString> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                default(info);
            }
        }));
    });
    QUIET.with(|quiet| quiet.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|quiet| quiet.set(false));
    result.map_err(|payload| {
        payload
            .downcast_ref::<StdString>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "<non-string panic>".to_string())
    })
}

/// A bound of a generated range: small offsets (in range, past the end, inside a
/// character) and `usize::MAX` (overflowing `..=`).
fn bound() -> impl Strategy<Value = Bound<usize>> {
    let offset = prop_oneof![9 => 0..40usize, 1 => Just(usize::MAX)];
    prop_oneof![
        offset.clone().prop_map(Bound::Included),
        offset.prop_map(Bound::Excluded),
        Just(Bound::Unbounded),
    ]
}

/// Characters of every UTF-8 width.
fn character() -> impl Strategy<Value = char> {
    prop::sample::select(vec!['a', 'b', '_', 'é', 'ß', '€', '字', '𝄞', '💖'])
}

fn text() -> impl Strategy<Value = StdString> {
    prop::collection::vec(character(), 0..6).prop_map(|chars| chars.into_iter().collect())
}

#[derive(Clone, Debug)]
enum Op {
    Push(char),
    PushStr(StdString),
    Pop,
    Truncate(usize),
    Insert(usize, char),
    TryInsert(usize, char),
    InsertStr(usize, StdString),
    TryInsertStr(usize, StdString),
    Remove(usize),
    Retain(u32),
    Drain(Bound<usize>, Bound<usize>, usize, usize),
    SplitOff(usize),
    TrySplitOff(usize),
    ReplaceRange(Bound<usize>, Bound<usize>, StdString),
    TryReplaceRange(Bound<usize>, Bound<usize>, StdString),
    Clear,
    ShrinkToFit,
    ExtendChars(std::vec::Vec<char>),
    ExtendStrs(std::vec::Vec<StdString>),
    AddAssign(StdString),
}

fn op() -> impl Strategy<Value = Op> {
    let index = 0..40usize;
    prop_oneof![
        character().prop_map(Op::Push),
        text().prop_map(Op::PushStr),
        Just(Op::Pop),
        index.clone().prop_map(Op::Truncate),
        (index.clone(), character()).prop_map(|(i, c)| Op::Insert(i, c)),
        (index.clone(), character()).prop_map(|(i, c)| Op::TryInsert(i, c)),
        (index.clone(), text()).prop_map(|(i, s)| Op::InsertStr(i, s)),
        (index.clone(), text()).prop_map(|(i, s)| Op::TryInsertStr(i, s)),
        index.clone().prop_map(Op::Remove),
        (0..4u32).prop_map(Op::Retain),
        (bound(), bound(), 0..4usize, 0..4usize).prop_map(|(s, e, f, b)| Op::Drain(s, e, f, b)),
        index.clone().prop_map(Op::SplitOff),
        index.prop_map(Op::TrySplitOff),
        (bound(), bound(), text()).prop_map(|(s, e, t)| Op::ReplaceRange(s, e, t)),
        (bound(), bound(), text()).prop_map(|(s, e, t)| Op::TryReplaceRange(s, e, t)),
        Just(Op::Clear),
        Just(Op::ShrinkToFit),
        prop::collection::vec(character(), 0..5).prop_map(Op::ExtendChars),
        prop::collection::vec(text(), 0..3).prop_map(Op::ExtendStrs),
        text().prop_map(Op::AddAssign),
    ]
}

/// What an operation returned, comparable across the two strings.
#[derive(Debug, PartialEq)]
enum Value {
    Unit,
    Char(Option<char>),
    Chars(char),
    Text(StdString),
    /// What a drain returned from the front, from the back, and left in the middle.
    Drained(StdString, StdString, StdString),
}

/// The retain predicate of case `k`: drops about a third of the characters.
fn keep(k: u32) -> impl FnMut(char) -> bool {
    move |c| (c as u32 + k) % 3 != 0
}

/// `front` characters from the front of a drain, then `back` from its back.
fn take_both_ends(
    drain: &mut impl DoubleEndedIterator<Item = char>,
    front: usize,
    back: usize,
) -> (StdString, StdString) {
    let front = drain.by_ref().take(front).collect();
    (front, drain.rev().take(back).collect())
}

/// Applies `op` to `std`'s string.
fn on_std(s: &mut StdString, op: &Op) -> Value {
    match op.clone() {
        Op::Push(c) => s.push(c),
        Op::PushStr(t) => s.push_str(&t),
        Op::Pop => return Value::Char(s.pop()),
        Op::Truncate(n) => s.truncate(n),
        Op::Insert(i, c) | Op::TryInsert(i, c) => s.insert(i, c),
        Op::InsertStr(i, t) | Op::TryInsertStr(i, t) => s.insert_str(i, &t),
        Op::Remove(i) => return Value::Chars(s.remove(i)),
        Op::Retain(k) => s.retain(keep(k)),
        Op::Drain(start, end, front, back) => {
            let mut drain = s.drain((start, end));
            let (front, back) = take_both_ends(&mut drain, front, back);
            return Value::Drained(front, back, drain.as_str().to_string());
        }
        Op::SplitOff(at) | Op::TrySplitOff(at) => return Value::Text(s.split_off(at)),
        Op::ReplaceRange(start, end, t) | Op::TryReplaceRange(start, end, t) => {
            s.replace_range((start, end), &t)
        }
        Op::Clear => s.clear(),
        Op::ShrinkToFit => s.shrink_to_fit(),
        Op::ExtendChars(chars) => s.extend(chars),
        Op::ExtendStrs(texts) => s.extend(texts.iter().map(|t| t.as_str())),
        Op::AddAssign(t) => *s += &t,
    }
    Value::Unit
}

/// Applies `op` to the arena string, through the `try_` twin where the op says so.
fn on_arena(s: &mut String<'_>, op: &Op) -> Value {
    let ok = |result: Result<(), AllocError>| result.expect("the arena has room");
    match op.clone() {
        Op::Push(c) => s.push(c),
        Op::PushStr(t) => s.push_str(&t),
        Op::Pop => return Value::Char(s.pop()),
        Op::Truncate(n) => s.truncate(n),
        Op::Insert(i, c) => s.insert(i, c),
        Op::TryInsert(i, c) => ok(s.try_insert(i, c)),
        Op::InsertStr(i, t) => s.insert_str(i, &t),
        Op::TryInsertStr(i, t) => ok(s.try_insert_str(i, &t)),
        Op::Remove(i) => return Value::Chars(s.remove(i)),
        Op::Retain(k) => s.retain(keep(k)),
        Op::Drain(start, end, front, back) => {
            let mut drain = s.drain((start, end));
            let (front, back) = take_both_ends(&mut drain, front, back);
            return Value::Drained(front, back, drain.as_str().to_string());
        }
        Op::SplitOff(at) => return Value::Text(s.split_off(at).to_string()),
        Op::TrySplitOff(at) => {
            return Value::Text(s.try_split_off(at).expect("room").to_string());
        }
        Op::ReplaceRange(start, end, t) => s.replace_range((start, end), &t),
        Op::TryReplaceRange(start, end, t) => ok(s.try_replace_range((start, end), &t)),
        Op::Clear => s.clear(),
        Op::ShrinkToFit => s.shrink_to_fit(),
        Op::ExtendChars(chars) => s.extend(chars),
        Op::ExtendStrs(texts) => s.extend(texts.iter().map(|t| t.as_str())),
        Op::AddAssign(t) => *s += &t,
    }
    Value::Unit
}

fn config() -> Config {
    Config {
        cases: if cfg!(miri) { 8 } else { 512 },
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::XorShift,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Every operation, valid or not, on both strings: the same contents, values
    /// and panic messages, and UTF-8 bytes after every step.
    #[test]
    fn operations_match_std(start in text(), ops in prop::collection::vec(op(), 0..40)) {
        let arena = OneWayAlloc::new();
        let mut ours = String::from_str_in(&start, &arena);
        let mut theirs = start.clone();
        for op in &ops {
            let expected = outcome(|| on_std(&mut theirs, op));
            let got = outcome(|| on_arena(&mut ours, op));
            prop_assert_eq!(&got, &expected, "{:?} on {:?}", op, theirs);
            prop_assert!(std::str::from_utf8(ours.as_bytes()).is_ok());
            prop_assert_eq!(ours.as_str(), theirs.as_str(), "after {:?}", op);
            prop_assert!(ours.capacity() >= ours.len());
        }
        // The arena still serves requests.
        prop_assert_eq!(&*arena.alloc_str("after"), "after");
    }

    /// `from_utf8_lossy_in` replaces exactly what `std`'s `from_utf8_lossy` does,
    /// and `from_utf8` accepts exactly what `std`'s accepts, with the same error.
    #[test]
    fn utf8_conversions_match_std(bytes in prop::collection::vec(
        prop_oneof![any::<u8>(), Just(0xe2), Just(0x82), Just(0xac), Just(0xf0)], 0..24)
    ) {
        let arena = OneWayAlloc::new();
        let lossy = String::from_utf8_lossy_in(&bytes, &arena);
        prop_assert_eq!(lossy.as_str(), &*StdString::from_utf8_lossy(&bytes));
        let vec: Vec<'_, u8> = bytes.iter().copied().collect_in(&arena);
        match (String::from_utf8(vec), StdString::from_utf8(bytes.clone())) {
            (Ok(ours), Ok(theirs)) => prop_assert_eq!(ours.as_str(), theirs.as_str()),
            (Err(ours), Err(theirs)) => {
                prop_assert_eq!(ours.utf8_error(), theirs.utf8_error());
                prop_assert_eq!(ours.to_string(), theirs.to_string());
                prop_assert_eq!(ours.as_bytes(), &bytes[..]);
                prop_assert_eq!(&ours.into_bytes()[..], &bytes[..]);
            }
            (ours, theirs) => prop_assert!(false, "{:?} vs {:?}", ours.is_ok(), theirs.is_ok()),
        }
    }

    /// `from_utf16_in` agrees with `std`'s `String::from_utf16`.
    #[test]
    fn utf16_matches_std(units in prop::collection::vec(
        prop_oneof![0u16..0x80, 0xd800u16..0xe000, Just(0xd834), Just(0xdd1e)], 0..12)
    ) {
        let arena = OneWayAlloc::new();
        match (String::from_utf16_in(&units, &arena), StdString::from_utf16(&units)) {
            (Ok(ours), Ok(theirs)) => prop_assert_eq!(ours.as_str(), theirs.as_str()),
            (Err(ours), Err(theirs)) => prop_assert_eq!(ours.to_string(), theirs.to_string()),
            (ours, theirs) => prop_assert!(false, "{:?} vs {:?}", ours.is_ok(), theirs.is_ok()),
        }
    }
}

// The panics, with `std`'s messages spelled out (the generated comparison above
// checks them against `std` on the toolchain that runs the tests).

fn accented(arena: &OneWayAlloc) -> String<'_> {
    String::from_str_in("aé", arena) // 'é' is bytes 1..3
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(idx)")]
fn insert_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).insert(2, 'x');
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(idx)")]
fn insert_past_the_end_panics() {
    accented(&OneWayAlloc::new()).insert(4, 'x');
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(idx)")]
fn insert_str_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).insert_str(2, "x");
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(idx)")]
fn try_insert_str_inside_a_char_panics_rather_than_err() {
    let _ = accented(&OneWayAlloc::new()).try_insert_str(2, "x");
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(new_len)")]
fn truncate_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).truncate(2);
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(at)")]
fn split_off_inside_a_char_panics() {
    let _ = accented(&OneWayAlloc::new()).split_off(2);
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(at)")]
fn split_off_past_the_end_panics() {
    let _ = accented(&OneWayAlloc::new()).split_off(9);
}

#[test]
#[should_panic(expected = "cannot remove a char from the end of a string")]
fn remove_at_the_end_panics() {
    accented(&OneWayAlloc::new()).remove(3);
}

#[test]
#[should_panic(expected = "byte index 2 is not a char boundary")]
fn remove_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).remove(2);
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(start)")]
fn drain_from_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).drain(2..);
}

#[test]
#[should_panic(expected = "assertion failed: self.is_char_boundary(end)")]
fn drain_to_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).drain(..2);
}

#[test]
#[should_panic(expected = "range end index 9 out of range for slice of length 3")]
fn drain_past_the_end_panics() {
    accented(&OneWayAlloc::new()).drain(..9);
}

#[test]
#[should_panic(expected = "slice index starts at 3 but ends at 2")]
fn drain_of_a_decreasing_range_panics() {
    #[allow(clippy::reversed_empty_ranges)]
    accented(&OneWayAlloc::new()).drain(3..2);
}

#[test]
#[should_panic(expected = "start of range should be a character boundary")]
fn replace_range_from_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).replace_range(2.., "");
}

#[test]
#[should_panic(expected = "end of range should be a character boundary")]
fn replace_range_to_inside_a_char_panics() {
    accented(&OneWayAlloc::new()).replace_range(..2, "");
}

#[test]
fn a_panicking_retain_leaves_utf8_and_keeps_the_unvisited_chars() {
    let mut arena = OneWayAlloc::new();
    for panic_at in 0..6 {
        let mut s = String::from_str_in("a€b𝄞_c", &arena);
        let mut seen = 0;
        let result = outcome(|| {
            s.retain(|c| {
                if seen == panic_at {
                    panic!("predicate panics");
                }
                seen += 1;
                c.is_ascii_alphabetic()
            })
        });
        assert_eq!(result.unwrap_err(), "predicate panics");
        assert!(std::str::from_utf8(s.as_bytes()).is_ok());
        // The kept ones among the first `panic_at` chars, then the rest, intact.
        let chars: std::vec::Vec<char> = "a€b𝄞_c".chars().collect();
        let kept = chars[..panic_at].iter().filter(|c| c.is_ascii_alphabetic());
        let expected: StdString = kept.chain(&chars[panic_at..]).collect();
        assert_eq!(s, expected.as_str(), "panic at char {panic_at}");
        drop(s);
        assert_eq!(*arena.alloc(7u8), 7); // still usable
        arena.reset();
    }
}

#[test]
fn a_leaked_drain_leaves_the_string_as_it_was() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("a€bc", &arena);
    let mut drain = s.drain(1..4);
    assert_eq!(drain.next(), Some('€'));
    std::mem::forget(drain);
    assert_eq!(s, "a€bc");
    let drain = s.drain(1..4);
    assert_eq!(format!("{drain:?}"), r#"Drain("€")"#);
    assert_eq!(drain.size_hint(), "€".chars().size_hint());
    drop(drain);
    assert_eq!(s, "abc");
    assert_eq!(s.drain(..).last(), Some('c'));
    assert!(s.is_empty());
}

#[test]
fn insertions_grow_in_place_at_the_top_of_the_arena() {
    let arena = OneWayAlloc::new();
    let mut s = String::new_in(&arena);
    let n = if cfg!(miri) { 200 } else { 4000 };
    for i in 0..n {
        let middle = (0..=s.len() / 2).rev().find(|&at| s.is_char_boundary(at));
        s.insert_str(middle.unwrap(), if i % 2 == 0 { "é" } else { "x" });
    }
    assert_eq!(s.chars().count(), n);
    if !onewayalloc::SEPARATE_BLOCKS {
        // One buffer, grown in place: no abandoned copies.
        assert!(arena.stats().used <= s.capacity(), "{:?}", arena.stats());
    }
}

#[test]
fn try_forms_report_refusal_and_leave_the_string_unchanged() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("a€b", &arena);
    // No page beyond the first (in the sanitizer mode: room for 60 KB more blocks).
    let room = if onewayalloc::SEPARATE_BLOCKS {
        60_000
    } else {
        0
    };
    arena.set_limit(Some(arena.stats().capacity + room));
    let big = "x".repeat(1 << 20);
    assert_eq!(s.try_insert_str(1, &big), Err(AllocError));
    assert_eq!(s.try_replace_range(1..4, &big), Err(AllocError));
    assert_eq!(s.try_reserve_exact(1 << 20), Err(AllocError));
    assert_eq!(s, "a€b");
    s.try_insert(0, '¡').unwrap();
    s.try_insert_str(s.len(), "!").unwrap();
    assert_eq!(s, "¡a€b!");
    let mut long = String::try_from_str_in(&"y".repeat(40_000), &arena).unwrap();
    assert!(long.try_split_off(1).is_err()); // no room for a second 40 KB
    assert_eq!(long.len(), 40_000);
}

#[test]
fn extend_add_and_comparisons() {
    let arena = OneWayAlloc::new();
    let mut s = String::new_in(&arena);
    s.extend(['a', 'é']);
    s.extend(&['b']);
    s.extend(["-", "cd"]);
    s.extend([StdString::from("e")]);
    s.extend([std::borrow::Cow::Borrowed("f")]);
    s.extend([String::from_str_in("g", &arena)]);
    s += "h";
    let s = s + "i";
    assert_eq!(s, "aéb-cdefghi");
    assert_eq!("aéb-cdefghi", s);
    assert_eq!(*"aéb-cdefghi", s);
    assert_eq!(StdString::from("aéb-cdefghi"), s);
    assert_eq!(s, StdString::from("aéb-cdefghi"));
    assert_eq!(std::borrow::Cow::Borrowed("aéb-cdefghi"), s);
    assert_ne!(s, "other");
    let mut t = String::from_iter_in("xyz".chars(), &arena);
    let borrowed: &mut str = std::borrow::BorrowMut::borrow_mut(&mut t);
    borrowed.make_ascii_uppercase();
    assert_eq!(t, "XYZ");
    assert!(std::ptr::eq(t.arena(), &arena));
}

#[test]
fn from_utf8_keeps_the_vector_and_its_errors_compare() {
    let arena = OneWayAlloc::new();
    let bytes = onewayalloc::vec![in &arena; b'o', 0xff, b'k'];
    let error: FromUtf8Error<'_> = String::from_utf8(bytes).unwrap_err();
    assert_eq!(error.clone(), error);
    // The same UTF-8 error in other bytes: another error, as std's compare.
    let other = String::from_utf8(onewayalloc::vec![in &arena; b'a', 0xff, b'k']).unwrap_err();
    assert_eq!(other.utf8_error(), error.utf8_error());
    assert_ne!(other, error);
    let std_other = StdString::from_utf8(vec![b'a', 0xff, b'k']).unwrap_err();
    assert_ne!(
        std_other,
        StdString::from_utf8(vec![b'o', 0xff, b'k']).unwrap_err()
    );
    assert_eq!(error.utf8_error().valid_up_to(), 1);
    assert!(format!("{error:?}").contains("FromUtf8Error"));
    let std_error = StdString::from_utf8(vec![b'o', 0xff, b'k']).unwrap_err();
    assert_eq!(error.to_string(), std_error.to_string());
    let source: &dyn std::error::Error = &error;
    assert!(source.source().is_none());
    let mut bytes = error.into_bytes();
    bytes[1] = b'-';
    assert_eq!(String::from_utf8(bytes).unwrap(), "o-k");
}
