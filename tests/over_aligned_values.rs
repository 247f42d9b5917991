//! Typed values aligned above the OS page, placed in an arena whose pages already
//! exist: natively and under Miri's `-Zmiri-symbolic-alignment-check`, which
//! accepts a typed access only if the block's alignment follows from its
//! allocation's alignment and its offset in it (not from where the page happens to
//! lie). Until commit f4f4d55 this failed under that check: an 8 KiB-aligned value
//! was bumped into the OS-page-aligned first page by address ("accessing memory
//! based on pointer with alignment 4096, but alignment 8192 is required").
//!
//! In its own test binary because a failure under Miri aborts the whole binary.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use common::*;
use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::vec::Vec as AVec;

#[repr(C, align(8192))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Align8k(u64);

#[repr(C, align(65536))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Align64k(u64);

#[test]
fn typed_values_aligned_above_the_os_page() {
    let arena = OneWayAlloc::new();
    // The first 64 KiB page has room for an 8 KiB-aligned block wherever it lies.
    bytes(&arena, 100);
    let a = arena.alloc(Align8k(1));
    assert_eq!(addr(a as *const Align8k) % 8192, 0);
    a.0 += 10;
    assert_eq!(*a, Align8k(11));
    for i in 0..4u64 {
        bytes(&arena, 100);
        let b = arena.alloc(Align64k(i));
        assert_eq!(addr(b as *const Align64k) % 65536, 0);
        b.0 += 10;
        assert_eq!(*b, Align64k(i + 10));
        let mut v: AVec<Align64k, &OneWayAlloc> = AVec::new_in(&arena);
        v.push(Align64k(i));
        v.push(Align64k(i + 1));
        assert_eq!(v[1], Align64k(i + 1));
        assert_eq!(addr(v.as_ptr()) % 65536, 0);
    }
    assert_eq!(*a, Align8k(11));
}
