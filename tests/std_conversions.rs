//! From the arena collections to `std`'s owned types, with the arena collections
//! imported as the docs do (`collections as arena`), so that `String` and `Vec` here
//! are `std`'s.

use onewayalloc::OneWayAlloc;
use onewayalloc::collections as arena;

/// std's `String` in the signature, an arena `String` inside.
fn label(arena: &OneWayAlloc, id: u32) -> String {
    onewayalloc::format_in!(arena, "dim{id}").into()
}

#[test]
fn the_arena_string_converts_to_stds_owned_strings() {
    let arena = OneWayAlloc::new();
    assert_eq!(label(&arena, 3), "dim3");
    let scratch = arena::String::from_str_in("cpu.user", &arena);
    let by_ref = String::from(&scratch);
    let boxed: Box<str> = scratch.clone().into();
    let owned: String = scratch.into();
    drop(arena); // the copies outlive the arena
    assert_eq!(
        (by_ref.as_str(), &*boxed, owned.as_str()),
        ("cpu.user", "cpu.user", "cpu.user")
    );
}

#[test]
fn arena_vectors_and_boxes_reach_stds_through_the_documented_calls() {
    let arena = OneWayAlloc::new();
    let values = onewayalloc::vec![in &arena; String::from("a"), String::from("b")];
    let cloned: Vec<String> = values.to_vec();
    let moved: Vec<String> = values.into_iter().collect();
    let slice: arena::Box<[u32]> = onewayalloc::vec![in &arena; 1, 2].into_boxed_slice();
    let from_box: Vec<u32> = slice.to_vec();
    let text: arena::String = arena::String::from_str_in("x", &arena);
    let from_str: Box<str> = Box::from(text.as_str());
    drop((slice, text));
    drop(arena);
    assert_eq!(cloned, ["a", "b"]);
    assert_eq!(moved, ["a", "b"]);
    assert_eq!(from_box, [1, 2]);
    assert_eq!(&*from_str, "x");
}
