//! With the `nightly` feature, `allocator_api2`'s `Allocator` is the standard
//! library's, so `std`'s own `Vec` and `Box` live in the arena (SPEC §2).
//! Without the feature this file is empty.
#![cfg_attr(feature = "nightly", feature(allocator_api))]
#![cfg(feature = "nightly")]

use std::boxed::Box;
use std::collections::VecDeque;
use std::vec::Vec;

use onewayalloc::OneWayAlloc;

#[test]
fn std_vec_lives_in_the_arena() {
    let n: u64 = if cfg!(miri) { 1_000 } else { 10_000 };
    let mut arena = OneWayAlloc::new();
    {
        let mut v: Vec<u64, &OneWayAlloc> = Vec::new_in(&arena);
        for i in 0..n {
            v.push(i * 5);
        }
        assert_eq!(v.len() as u64, n);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 5));
        let stats = arena.stats();
        assert!(stats.used >= n as usize * 8, "{stats:?}");
    }
    arena.reset();
    assert_eq!(arena.stats().used, 0);
    // The same in a fresh cycle, grown in place at the top of the arena.
    let mut v = Vec::new_in(&arena);
    v.extend(0..1000u64);
    if !onewayalloc::SEPARATE_BLOCKS {
        // One buffer, grown in place: no abandoned copies.
        assert!(arena.stats().used < 12 * 1024);
    }
    assert!(arena.stats().used >= 8000);
}

#[test]
fn std_box_lives_in_the_arena() {
    let arena = OneWayAlloc::new();
    let before = arena.stats().used;
    let b = Box::new_in([3u32; 100], &arena);
    assert_eq!(*b, [3u32; 100]);
    assert_eq!(arena.stats().used, before + 400);
    let s: Box<str, &OneWayAlloc> = {
        let mut v = Vec::new_in(&arena);
        v.extend_from_slice(b"arena");
        let bytes = v.into_boxed_slice();
        let (ptr, alloc) = Box::into_raw_with_allocator(bytes);
        // SAFETY: the bytes are ASCII; the box keeps its allocator.
        unsafe { Box::from_raw_in(ptr as *mut str, alloc) }
    };
    assert_eq!(&*s, "arena");
    assert!(arena.stats().used >= before + 405);
}

#[test]
fn other_std_collections_live_in_the_arena() {
    let arena = OneWayAlloc::new();
    let mut q = VecDeque::new_in(&arena);
    for i in 0..1000u32 {
        q.push_back(i);
        if i % 3 == 0 {
            q.pop_front();
        }
    }
    assert_eq!(q.len(), 1000 - 334);
    assert_eq!(q.front(), Some(&334));
    assert!(arena.stats().used >= q.capacity() * 4);
}
