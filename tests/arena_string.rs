//! The arena `String`'s own methods, each stated by what it must do (its `std`
//! traits are in tests/std_traits.rs).

use core::fmt::{self, Write};

use onewayalloc::collections::String;
use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE, SEPARATE_BLOCKS, try_format_in};

/// An arena whose limit lets it obtain nothing more: no page beyond the first (in
/// sanitizer mode, no block).
fn arena_at_its_limit() -> OneWayAlloc {
    let arena = OneWayAlloc::new();
    if !SEPARATE_BLOCKS {
        // Fill the first page: the next byte needs a page.
        let page = arena.pages().next().unwrap();
        arena.alloc_layout(core::alloc::Layout::array::<u8>(page.size - PAGE_HEADER_SIZE).unwrap());
    }
    arena.set_limit(Some(arena.stats().capacity));
    arena
}

#[test]
fn reserve_makes_room_and_keeps_the_text() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("cpu", &arena);
    s.reserve(1000);
    assert!(s.capacity() >= 1003, "capacity {}", s.capacity());
    assert_eq!(s, "cpu");
    let before = s.capacity();
    s.push_str(&"x".repeat(1000)); // within the reserved room: stays in place
    assert_eq!(s.capacity(), before);
    assert_eq!(s.len(), 1003);
}

#[test]
fn try_push_appends_the_character_or_leaves_the_string_unchanged() {
    let arena = OneWayAlloc::new();
    let mut s = String::new_in(&arena);
    for c in ['a', 'é', '€', '𝄞'] {
        s.try_push(c).unwrap();
    }
    assert_eq!(s, "aé€𝄞");
    assert_eq!(s.len(), 1 + 2 + 3 + 4);

    let full = arena_at_its_limit();
    let mut s = String::new_in(&full);
    assert!(s.try_push('é').is_err(), "no room and no page: refused");
    assert_eq!(s, "");
}

#[test]
fn write_char_appends_the_character() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("x=", &arena);
    s.write_char('é').unwrap();
    s.write_char('1').unwrap();
    assert_eq!(s, "x=é1");
}

/// A `Display` that fails, as `format!` treats it: a panic, never an `AllocError`.
struct Fails;

impl fmt::Display for Fails {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Err(fmt::Error)
    }
}

#[test]
#[should_panic(expected = "a formatting trait implementation returned an error")]
fn try_format_in_panics_when_a_display_fails() {
    let arena = OneWayAlloc::new();
    let _ = try_format_in!(&arena, "{}", Fails);
}

#[test]
fn try_format_in_reports_a_refused_allocation() {
    let full = arena_at_its_limit();
    assert!(try_format_in!(&full, "{}", "a line that needs a page").is_err());
    let arena = OneWayAlloc::new();
    assert_eq!(try_format_in!(&arena, "{}-{}", 1, 'b').unwrap(), "1-b");
}

/// A `Display` that ignores the error of a refused write and carries on with a
/// short one that fits.
struct CarriesOn<'s>(&'s str);

impl fmt::Display for CarriesOn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ignored = f.write_str(self.0);
        f.write_str("tail")
    }
}

#[test]
fn try_format_in_reports_a_refusal_that_the_display_ignored() {
    let arena = OneWayAlloc::new();
    // Room for a short string (in the first page, or a small block), none for 100 KiB.
    arena.set_limit(Some(arena.stats().capacity + 1024));
    let long = "x".repeat(100 * 1024);
    assert!(try_format_in!(&arena, "{}", CarriesOn(&long)).is_err());
    // The same Display with nothing refused formats both parts.
    assert_eq!(
        try_format_in!(&arena, "{}", CarriesOn("a ")).unwrap(),
        "a tail"
    );
}

#[test]
fn reserve_exact_makes_room_and_shrink_to_fit_gives_it_back() {
    let arena = OneWayAlloc::new();
    let mut s = String::from_str_in("cpu", &arena);
    s.reserve_exact(500);
    assert!(s.capacity() >= 503, "capacity {}", s.capacity());
    assert_eq!(s, "cpu");
    s.push_str(".user");
    s.shrink_to_fit();
    assert_eq!(s.capacity(), s.len());
    assert_eq!(s, "cpu.user");
    // The string is the most recent block: what it gave back is the next block's.
    if !SEPARATE_BLOCKS {
        let next = arena.alloc(0u8);
        assert_eq!(
            core::ptr::from_ref(next).addr(),
            s.as_ptr().addr() + s.len()
        );
    }
}

/// Edits `s` after a block with a distinct byte at each position was allocated
/// right behind it, then checks that the block is as it was: the edit wrote only
/// inside the string's own block.
fn check_edit_stays_inside(edit: impl FnOnce(&mut String<'_>), want: &str) {
    let arena = OneWayAlloc::new();
    let mut s = String::with_capacity_in(16, &arena);
    s.push_str("hello world");
    let neighbour = arena.alloc_iter(0..64u8);
    edit(&mut s);
    assert_eq!(s, want);
    assert!(
        neighbour.iter().enumerate().all(|(i, &b)| b == i as u8),
        "the block after the string was overwritten: {neighbour:?}"
    );
}

#[test]
fn edits_write_only_inside_the_strings_block() {
    check_edit_stays_inside(|s| s.replace_range(0..5, "hi"), "hi world");
    check_edit_stays_inside(|s| s.replace_range(0..5, "HELLO!"), "HELLO! world");
    check_edit_stays_inside(|s| s.replace_range(6.., "there"), "hello there");
    check_edit_stays_inside(|s| s.insert_str(5, ","), "hello, world");
    check_edit_stays_inside(|s| drop(s.drain(2..7)), "heorld");
    check_edit_stays_inside(|s| s.retain(|c| c != 'l'), "heo word");
    check_edit_stays_inside(|s| s.truncate(4), "hell");
}

#[test]
fn the_try_twins_of_the_converting_constructors_match_them_or_report_the_refusal() {
    let arena = OneWayAlloc::new();
    let bytes = b"Hello \xF0\x90\x80World";
    let units = [0xD834, 0xDD1E, 0x006d, 0x0075];
    let lossy = String::try_from_utf8_lossy_in(bytes, &arena).unwrap();
    assert_eq!(lossy, String::from_utf8_lossy_in(bytes, &arena));
    let utf16 = String::try_from_utf16_in(&units, &arena).unwrap().unwrap();
    assert_eq!(utf16, String::from_utf16_in(&units, &arena).unwrap());
    assert!(
        String::try_from_utf16_in(&[0xD834, 0x006d], &arena)
            .unwrap()
            .is_err()
    );
    let chars = String::try_from_iter_in("owa".chars(), &arena).unwrap();
    assert_eq!(chars, String::from_iter_in("owa".chars(), &arena));

    let full = arena_at_its_limit();
    assert!(String::try_from_utf8_lossy_in(bytes, &full).is_err());
    assert!(String::try_from_utf16_in(&units, &full).is_err());
    assert!(String::try_from_iter_in("owa".chars(), &full).is_err());
    // A refusal after the first reservation: an iterator that says nothing of its length.
    // The first page filled but for 512 bytes, so that the string outgrows it after a
    // few doublings (Miri runs each char's push).
    let arena = OneWayAlloc::new();
    if !SEPARATE_BLOCKS {
        let page = arena.pages().next().unwrap();
        arena.alloc_layout(
            core::alloc::Layout::array::<u8>(page.size - PAGE_HEADER_SIZE - 512).unwrap(),
        );
    }
    arena.set_limit(Some(arena.stats().capacity + 1024));
    let many = core::iter::repeat_n('x', 4 * 1024).filter(|_| true);
    assert!(String::try_from_iter_in(many, &arena).is_err());
}
