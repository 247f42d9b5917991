//! `use onewayalloc::vec;` changes nothing for `std`'s forms of `vec!`: every form
//! without `in` is passed on to `std`'s `vec!` and makes `std`'s `Vec`.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use onewayalloc::{OneWayAlloc, vec};

#[test]
fn the_forms_without_in_are_stds() {
    let list: std::vec::Vec<u32> = vec![1, 2, 3];
    let trailing: std::vec::Vec<&str> = vec!["a", "b"];
    let n = 4;
    let repeated: std::vec::Vec<u8> = vec![7; n];
    let empty: std::vec::Vec<String> = vec![];
    let nested: std::vec::Vec<std::vec::Vec<u8>> = vec![vec![1], vec![]];
    assert_eq!(list, [1, 2, 3]);
    assert_eq!(trailing, ["a", "b"]);
    assert_eq!(repeated, [7, 7, 7, 7]);
    assert!(empty.is_empty());
    assert_eq!(nested, [std::vec![1], std::vec![]]);
}

#[test]
fn the_in_forms_are_the_arenas_beside_them() {
    let arena = OneWayAlloc::new();
    let in_arena = vec![in &arena; 1, 2, 3];
    let on_heap = vec![1, 2, 3];
    assert_eq!(in_arena[..], on_heap[..]);
    assert!(core::ptr::eq(*in_arena.allocator(), &arena));
}
