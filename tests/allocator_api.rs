//! `&OneWayAlloc` as an `allocator_api2` `Allocator` (SPEC §2): alignment, contents,
//! collections, rollback, in-place growth, realignment, zeroed growth, shrinking and
//! zero-sized blocks.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use common::*;
use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::Allocator;
use onewayalloc::allocator_api2::boxed::Box as ABox;
use onewayalloc::allocator_api2::vec::Vec as AVec;
use onewayalloc::hashbrown::HashMap;

/// Allocates through the trait and checks the slice length.
fn allocate(arena: &OneWayAlloc, layout: Layout) -> NonNull<u8> {
    let a = arena;
    let block = a.allocate(layout).expect("allocate");
    assert_eq!(block.len(), layout.size());
    block.cast()
}

/// Writes `pattern(i)` to byte `i` of the block.
///
/// # Safety
/// `ptr` must be valid for writes of `len` bytes.
unsafe fn fill(ptr: NonNull<u8>, len: usize, seed: u8) {
    for i in 0..len {
        unsafe { ptr.add(i).write(pattern(seed, i)) };
    }
}

fn pattern(seed: u8, i: usize) -> u8 {
    seed.wrapping_mul(31)
        .wrapping_add((i as u8).wrapping_mul(7))
        ^ (i >> 8) as u8
}

/// Checks that byte `i` of the block is `pattern(i)`.
///
/// # Safety
/// `ptr` must be valid for reads of `len` initialized bytes.
unsafe fn check(ptr: NonNull<u8>, len: usize, seed: u8) {
    let got = unsafe { core::slice::from_raw_parts(ptr.as_ptr(), len) };
    let want: Vec<u8> = (0..len).map(|i| pattern(seed, i)).collect();
    assert!(got == want.as_slice(), "contents of a block changed");
}

unsafe fn read(ptr: NonNull<u8>, len: usize) -> Vec<u8> {
    unsafe { core::slice::from_raw_parts(ptr.as_ptr(), len) }.to_vec()
}

/// The contents `stamp` gives block `i` of `len` bytes: a tag byte everywhere, and
/// a per-byte pattern over the first and last 16 bytes.
fn stamped(len: usize, i: usize) -> Vec<u8> {
    let mut bytes = vec![(i as u8) ^ 0xA5; len];
    for j in (0..len.min(16)).chain(len.saturating_sub(16)..len) {
        bytes[j] = pattern(i as u8, j) ^ (i >> 8) as u8;
    }
    bytes
}

/// Writes `stamped(len, i)` into the block (bulk, so that Miri stays quick).
///
/// # Safety
/// `ptr` must be valid for writes of `len` bytes.
unsafe fn stamp(ptr: NonNull<u8>, len: usize, i: usize) {
    let bytes = stamped(len, i);
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.as_ptr(), len) };
}

#[test]
fn every_alignment_up_to_2_mib() {
    let arena = OneWayAlloc::new();
    let sizes: &[usize] = if cfg!(miri) {
        &[1, 24, 300]
    } else {
        &[1, 3, 16, 24, 100, 4097]
    };
    let mut blocks = Vec::new();
    for shift in 0..=21 {
        let align = 1usize << shift;
        for &size in sizes {
            // Misalign the cursor first.
            bytes(&arena, 1);
            let l = layout(size, align);
            let p = allocate(&arena, l);
            assert_eq!(addr(p.as_ptr()) % align, 0, "allocate {size} align {align}");
            blocks.push((p, size));
            let q = arena.alloc_layout(l);
            assert_eq!(
                addr(q.as_ptr()) % align,
                0,
                "alloc_layout {size} align {align}"
            );
            blocks.push((q, size));
            let r = arena.try_alloc_layout(l).expect("try_alloc_layout");
            assert_eq!(addr(r.as_ptr()) % align, 0);
            blocks.push((r, size));
        }
    }
    for (i, &(p, len)) in blocks.iter().enumerate() {
        unsafe { ptr::write_bytes(p.as_ptr(), i as u8, len) };
    }
    for (i, &(p, len)) in blocks.iter().enumerate() {
        let got = unsafe { core::slice::from_raw_parts(p.as_ptr(), len) };
        assert!(got == vec![i as u8; len], "block {i} was overwritten");
    }
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

#[test]
fn typed_values_of_every_alignment_up_to_16() {
    // Typed accesses (not just bytes) through the arena's pointers.
    let arena = OneWayAlloc::new();
    for i in 0..100u8 {
        let a = arena.alloc(i);
        let b = arena.alloc(u16::from(i) * 3);
        let c = arena.alloc(u32::from(i) * 5);
        let d = arena.alloc(u64::from(i) * 7);
        let e = arena.alloc(u128::from(i) * 11);
        assert_eq!(addr(b as *const u16) % 2, 0);
        assert_eq!(addr(c as *const u32) % 4, 0);
        assert_eq!(addr(d as *const u64) % 8, 0);
        assert_eq!(addr(e as *const u128) % align_of::<u128>(), 0);
        assert_eq!(
            (*a, *b, *c, *d, *e),
            (
                i,
                u16::from(i) * 3,
                u32::from(i) * 5,
                u64::from(i) * 7,
                u128::from(i) * 11
            )
        );
    }
}

#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Align64([u64; 3]);

#[repr(C, align(4096))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Align4k(u64);

#[test]
fn typed_values_with_large_alignment() {
    // Typed reads and writes of over-aligned values, which Miri's symbolic alignment
    // check accepts only if the block's alignment follows from its allocation.
    let arena = OneWayAlloc::new();
    let count = if cfg!(miri) { 20 } else { 200 };
    for i in 0..count {
        bytes(&arena, 1 + i % 7);
        let a = arena.alloc(Align64([i as u64, 2, 3]));
        assert_eq!(addr(a as *const Align64) % 64, 0);
        assert_eq!(*a, Align64([i as u64, 2, 3]));
        let b = arena.alloc(Align4k(i as u64));
        assert_eq!(addr(b as *const Align4k) % 4096, 0);
        b.0 += 1;
        assert_eq!(*b, Align4k(i as u64 + 1));
        let c = arena.alloc_slice_copy(&[Align64([1, 2, i as u64]); 3]);
        assert!(c.iter().all(|x| *x == Align64([1, 2, i as u64])));
        assert_eq!(*a, Align64([i as u64, 2, 3]));
    }
}

#[test]
fn contents_survive_many_allocations() {
    let arena = OneWayAlloc::new();
    let mut rng = XorShift::new(0x5eed);
    let count = if cfg!(miri) { 300 } else { 5_000 };
    let mut blocks: Vec<(NonNull<u8>, usize)> = Vec::with_capacity(count);
    for i in 0..count {
        let size = match rng.below(if cfg!(miri) { 40 } else { 200 }) {
            0 => 64 * KIB + rng.below(300 * KIB),
            1..=20 => 1 + rng.below(2 * KIB),
            _ => 1 + rng.below(128),
        };
        let align = match rng.below(50) {
            0 => 4096,
            _ => 1 << rng.below(8),
        };
        let l = layout(size, align);
        let p = match i % 4 {
            0 => allocate(&arena, l),
            1 => arena.alloc_layout(l),
            2 => NonNull::from(arena.alloc_bytes(size)).cast(),
            _ => NonNull::from(arena.alloc_zeroed(size, 1)).cast(),
        };
        let align = if i % 4 >= 2 { 16 } else { align };
        assert_eq!(addr(p.as_ptr()) % align, 0);
        unsafe { stamp(p, size, i) };
        blocks.push((p, size));
    }
    for (i, &(p, size)) in blocks.iter().enumerate() {
        let got = unsafe { core::slice::from_raw_parts(p.as_ptr(), size) };
        assert!(got == stamped(size, i), "block {i} of {size} bytes changed");
    }
    // No two blocks overlap.
    let mut ranges: Vec<(usize, usize)> = blocks
        .iter()
        .map(|&(p, size)| (addr(p.as_ptr()), addr(p.as_ptr()) + size))
        .collect();
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "blocks overlap: {pair:?}");
    }
    let asked: usize = blocks.iter().map(|&(_, size)| size).sum();
    assert!(arena.stats().used >= asked, "{:?}", arena.stats());
    if PAGE_MODE {
        assert!(arena.stats().pages > 1, "the blocks span pages");
        check_consistent(&arena);
    }
}

#[test]
fn vec_box_and_hashmap_live_in_the_arena() {
    let n: u64 = if cfg!(miri) { 1_000 } else { 100_000 };
    let arena = OneWayAlloc::new();

    let mut v: AVec<u64, &OneWayAlloc> = AVec::new_in(&arena);
    for i in 0..n {
        v.push(i * 3);
    }
    assert_eq!(v.len() as u64, n);
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
    let used = arena.stats().used;
    assert!(used >= 8 * n as usize || !PAGE_MODE);

    let b = ABox::new_in([7u32; 64], &arena);
    assert_eq!(*b, [7u32; 64]);
    let mut w = AVec::with_capacity_in(100, &arena);
    w.extend(0..100u16);
    let boxed_slice = w.into_boxed_slice();
    assert_eq!(boxed_slice.len(), 100);
    assert!(boxed_slice.iter().enumerate().all(|(i, &x)| x == i as u16));
    assert!(arena.stats().used > used);

    let mut map = HashMap::new_in(&arena);
    for i in 0..n {
        assert!(map.insert(i, (i * i) ^ 0xabcd).is_none());
    }
    assert_eq!(map.len() as u64, n);
    for i in 0..n {
        assert_eq!(map.get(&i), Some(&((i * i) ^ 0xabcd)), "key {i}");
    }
    assert_eq!(map.get(&n), None);
    for i in (0..n).step_by(2) {
        assert_eq!(map.remove(&i), Some((i * i) ^ 0xabcd));
    }
    assert_eq!(map.len() as u64, n / 2);
    assert_eq!(map.keys().copied().filter(|k| k % 2 == 0).count(), 0);

    // Keys that live in the arena too.
    let mut names = HashMap::new_in(&arena);
    let names_n = if cfg!(miri) { 200 } else { 2_000 };
    for i in 0..names_n {
        let name: &str = arena.alloc_str(&format!("dim{i}"));
        names.insert(name, i);
    }
    assert_eq!(names["dim7"], 7);
    assert_eq!(names.len() as u64, names_n);

    // The vector is untouched by everything allocated after it.
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
    let stats = arena.stats();
    assert!(stats.used as u64 >= n * 8 + n * 16, "{stats:?}");
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

#[test]
fn nested_collections_in_the_arena() {
    let arena = OneWayAlloc::new();
    let rows = if cfg!(miri) { 20 } else { 300 };
    let mut table: AVec<AVec<u32, &OneWayAlloc>, &OneWayAlloc> = AVec::new_in(&arena);
    for r in 0..rows {
        let mut row = AVec::new_in(&arena);
        for c in 0..r {
            row.push((r * 1000 + c) as u32);
        }
        table.push(row);
    }
    for (r, row) in table.iter().enumerate() {
        assert_eq!(row.len(), r);
        assert!(
            row.iter()
                .enumerate()
                .all(|(c, &x)| x == (r * 1000 + c) as u32)
        );
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn vec_grows_in_place_without_a_trail_of_copies() {
    let arena = OneWayAlloc::new();
    let mut v: AVec<u64, &OneWayAlloc> = AVec::new_in(&arena);
    v.push(0);
    let first = addr(v.as_ptr());
    for i in 1..1000u64 {
        v.push(i);
        assert_eq!(addr(v.as_ptr()), first, "the vector moved at push {i}");
    }
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    let stats = arena.stats();
    assert!(stats.used < 12 * KIB, "abandoned copies: {stats:?}");
    assert!(stats.used >= 8000);
    assert_eq!(stats.pages, 1);
    // Dropping the vector rolls the arena back over it.
    drop(v);
    assert_eq!(arena.stats().used, 0);
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn deallocate_rolls_back_only_the_most_recent_block() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let la = layout(40, 8);
    let lb = layout(24, 16);
    let pa = allocate(&arena, la);
    let used_after_a = arena.stats().used;
    let pb = allocate(&arena, lb);
    assert!(arena.stats().used > used_after_a);

    // An older block: nothing happens.
    let before = arena.stats();
    unsafe { a.deallocate(pa, la) };
    assert_eq!(arena.stats(), before);

    // The most recent block: the cursor goes back, and its address is reused.
    unsafe { a.deallocate(pb, lb) };
    let after = arena.stats();
    assert!(after.used < before.used);
    assert_eq!(after.used, before.used - lb.size());
    let pb2 = allocate(&arena, lb);
    assert_eq!(pb2, pb, "the rolled-back address is reused");
    assert_eq!(arena.stats().used, before.used);

    // Rolling back twice in LIFO order rewinds both.
    let pc = allocate(&arena, layout(8, 8));
    let used = arena.stats().used;
    unsafe {
        a.deallocate(pc, layout(8, 8));
        a.deallocate(pb2, lb);
    }
    assert_eq!(arena.stats().used, used - 8 - lb.size());
    // The older block, whose deallocation did nothing, is still usable.
    unsafe {
        fill(pa, 40, 9);
        check(pa, 40, 9);
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn deallocate_of_a_block_on_an_earlier_page_changes_nothing() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    // A block that ends exactly at the end of the first page.
    let l = layout(room(&arena), 1);
    let p = allocate(&arena, l);
    assert_eq!(room(&arena), 0);
    bytes(&arena, 100); // a new page
    assert_eq!(arena.stats().pages, 2);
    let before = arena.stats();
    let pages_before: Vec<_> = arena.pages().collect();
    unsafe { a.deallocate(p, l) };
    assert_eq!(arena.stats(), before);
    assert_eq!(arena.pages().collect::<Vec<_>>(), pages_before);
}

#[test]
fn rollback_keeps_alignment() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let _first = allocate(&arena, layout(1, 1));
    let l1 = layout(1, 1);
    let p = allocate(&arena, l1);
    unsafe { a.deallocate(p, l1) };
    for align in [2, 4, 8, 16, 32, 64] {
        let q = allocate(&arena, layout(8, align));
        assert_eq!(addr(q.as_ptr()) % align, 0, "align {align} after rollback");
        unsafe { q.cast::<u8>().write_bytes(0xEE, 8) };
        unsafe { a.deallocate(q, layout(8, align)) };
    }
    let q = allocate(&arena, Layout::new::<u64>());
    assert_eq!(addr(q.as_ptr()) % 8, 0);
    unsafe { q.cast::<u64>().write(u64::MAX) };
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn grow_of_the_most_recent_block_is_in_place() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let old = layout(16, 8);
    let p = allocate(&arena, old);
    unsafe { fill(p, 16, 1) };
    let used = arena.stats().used;
    let new = layout(1000, 8);
    let q = unsafe { a.grow(p, old, new) }.expect("grow");
    assert_eq!(q.len(), 1000);
    assert_eq!(q.cast::<u8>(), p, "grown in place");
    assert_eq!(arena.stats().used, used + 984);
    unsafe {
        check(p, 16, 1);
        fill(q.cast(), 1000, 2);
        check(q.cast(), 1000, 2);
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn grow_of_an_older_block_copies() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    let old = layout(100, 8);
    let p = allocate(&arena, old);
    unsafe { fill(p, 100, 3) };
    let other = allocate(&arena, layout(10, 1));
    unsafe { fill(other, 10, 4) };
    let new = layout(300, 8);
    let q = unsafe { a.grow(p, old, new) }.expect("grow").cast::<u8>();
    assert_ne!(q, p);
    assert_eq!(addr(q.as_ptr()) % 8, 0);
    unsafe {
        check(q, 100, 3);
        check(other, 10, 4);
        fill(q, 300, 5);
        check(other, 10, 4);
    }
    // The copy comes after `other`: the arena holds all three blocks.
    assert!(addr(q.as_ptr()) > addr(other.as_ptr()));
    assert!(arena.stats().used >= 100 + 10 + 300);
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn grow_across_to_a_new_page_copies() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    // The most recent block, 100 bytes before the end of the first page.
    bytes(&arena, room(&arena) - 1100);
    let old = layout(1000, 1);
    let p = allocate(&arena, old);
    unsafe { fill(p, 1000, 6) };
    let new = layout(10_000, 1);
    let q = unsafe { a.grow(p, old, new) }.expect("grow").cast::<u8>();
    assert_ne!(q, p);
    assert_eq!(arena.stats().pages, 2);
    assert_eq!(current_index(&arena), 1);
    unsafe {
        check(q, 1000, 6);
        fill(q, 10_000, 7);
    }
    // Grow again: now at the top of the new page, in place.
    let newer = layout(20_000, 1);
    let r = unsafe { a.grow(q, new, newer) }.expect("grow").cast::<u8>();
    assert_eq!(r, q);
    unsafe { check(r, 10_000, 7) };
}

/// Allocates the most recent block at an odd address (so misaligned for any larger
/// alignment) with `len` pattern bytes.
fn odd_block(arena: &OneWayAlloc, len: usize, seed: u8) -> (NonNull<u8>, Layout) {
    if addr(arena.alloc_layout(layout(1, 1)).as_ptr()) % 2 == 1 {
        bytes(arena, 1);
    }
    let l = layout(len, 1);
    let p = allocate(arena, l);
    assert_eq!(addr(p.as_ptr()) % 2, 1, "the test needs an odd address");
    unsafe { fill(p, len, seed) };
    (p, l)
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn grow_with_a_larger_alignment_moves_overlap_safely() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    for align in [2, 8, 64, 4096] {
        let (p, old) = odd_block(&arena, 200, align as u8);
        let new = layout(500, align);
        let q = unsafe { a.grow(p, old, new) }.expect("grow").cast::<u8>();
        assert_eq!(addr(q.as_ptr()) % align, 0, "align {align}");
        unsafe { check(q, 200, align as u8) };
        // Moved forward within the page (overlapping its old place).
        assert!(addr(q.as_ptr()) > addr(p.as_ptr()));
        if align < 200 {
            assert!(
                addr(q.as_ptr()) < addr(p.as_ptr()) + 200,
                "overlapping move"
            );
        }
        assert_eq!(arena.stats().pages, 1);
        unsafe { fill(q, 500, 0x33) };
    }
    check_consistent(&arena);
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn shrink_with_a_larger_alignment_realigns() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    for align in [2, 16, 128] {
        // The most recent block.
        let (p, old) = odd_block(&arena, 300, 40);
        let new = layout(100, align);
        let q = unsafe { a.shrink(p, old, new) }.expect("shrink");
        assert_eq!(q.len(), 100);
        let q = q.cast::<u8>();
        assert_eq!(addr(q.as_ptr()) % align, 0);
        unsafe { check(q, 100, 40) };

        // An older block.
        let (p, old) = odd_block(&arena, 300, 41);
        let later = allocate(&arena, layout(10, 1));
        unsafe { fill(later, 10, 42) };
        let q = unsafe { a.shrink(p, old, new) }
            .expect("shrink")
            .cast::<u8>();
        assert_eq!(addr(q.as_ptr()) % align, 0);
        unsafe {
            check(q, 100, 41);
            check(later, 10, 42);
        }
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn grow_zeroed_zeroes_the_tail_over_stale_bytes() {
    let mut arena = OneWayAlloc::new();
    // Dirty the whole first page, then reset: the bytes stay.
    let dirty = room(&arena);
    let p = bytes(&arena, dirty);
    unsafe { ptr::write_bytes(p.as_ptr(), 0xFF, dirty) };
    arena.reset();
    let a: &OneWayAlloc = &arena;

    // In place.
    let old = layout(16, 8);
    let p = allocate(&arena, old);
    unsafe { fill(p, 16, 8) };
    let new = layout(4096, 8);
    let q = unsafe { a.grow_zeroed(p, old, new) }
        .expect("grow_zeroed")
        .cast::<u8>();
    assert_eq!(q, p, "grown in place");
    unsafe {
        check(q, 16, 8);
        assert!(read(q.add(16), 4080).iter().all(|&b| b == 0), "zero tail");
    }

    // Copy: an older block.
    let old = layout(32, 8);
    let p = allocate(&arena, old);
    unsafe { fill(p, 32, 9) };
    let _later = allocate(&arena, layout(1, 1));
    let new = layout(2048, 8);
    let r = unsafe { a.grow_zeroed(p, old, new) }
        .expect("grow_zeroed")
        .cast::<u8>();
    assert_ne!(r, p);
    unsafe {
        check(r, 32, 9);
        assert!(read(r.add(32), 2016).iter().all(|&b| b == 0), "zero tail");
    }

    // Copy across to a new page.
    bytes(&arena, room(&arena) - 64);
    let old = layout(64, 1);
    let p = allocate(&arena, old);
    unsafe { fill(p, 64, 10) };
    let new = layout(8192, 1);
    let s = unsafe { a.grow_zeroed(p, old, new) }
        .expect("grow_zeroed")
        .cast::<u8>();
    assert_eq!(arena.stats().pages, 2);
    unsafe {
        check(s, 64, 10);
        assert!(read(s.add(64), 8128).iter().all(|&b| b == 0), "zero tail");
    }

    // Realigned in place (moved forward over stale 0xFF bytes).
    drop(arena);
    let mut arena = OneWayAlloc::new();
    let dirty = room(&arena);
    let p = bytes(&arena, dirty);
    unsafe { ptr::write_bytes(p.as_ptr(), 0xFF, dirty) };
    arena.reset();
    let (p, old) = odd_block(&arena, 50, 11);
    let new = layout(300, 64);
    let a: &OneWayAlloc = &arena;
    let t = unsafe { a.grow_zeroed(p, old, new) }
        .expect("grow_zeroed")
        .cast::<u8>();
    assert_eq!(addr(t.as_ptr()) % 64, 0);
    unsafe {
        check(t, 50, 11);
        assert!(read(t.add(50), 250).iter().all(|&b| b == 0), "zero tail");
    }
}

#[test]
#[cfg_attr(feature = "separate-blocks", ignore = "page mode only")]
fn shrink_stays_in_place() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    // The most recent block: in place, and the tail goes back to the arena.
    let old = layout(1000, 8);
    let p = allocate(&arena, old);
    unsafe { fill(p, 1000, 12) };
    let used = arena.stats().used;
    let q = unsafe { a.shrink(p, old, layout(100, 8)) }.expect("shrink");
    assert_eq!(q.len(), 100);
    assert_eq!(q.cast::<u8>(), p);
    assert_eq!(arena.stats().used, used - 900);
    unsafe { check(p, 100, 12) };
    // The released tail is handed out next.
    let next = allocate(&arena, layout(8, 8));
    assert_eq!(addr(next.as_ptr()), addr(p.as_ptr()) + 104);

    // An older block: in place, nothing released.
    let used = arena.stats().used;
    let q = unsafe { a.shrink(p, layout(100, 8), layout(10, 4)) }.expect("shrink");
    assert_eq!(q.cast::<u8>(), p);
    assert_eq!(arena.stats().used, used);
    unsafe { check(p, 10, 12) };

    // Shrink to size 0: the most recent block is released.
    let used = arena.stats().used;
    let r = allocate(&arena, layout(64, 8));
    let z = unsafe { a.shrink(r, layout(64, 8), layout(0, 8)) }.expect("shrink");
    assert_eq!(z.len(), 0);
    assert_eq!(addr(z.as_ptr().cast::<u8>()) % 8, 0);
    assert_eq!(arena.stats().used, used);
    unsafe { a.deallocate(z.cast(), layout(0, 8)) };
    assert_eq!(arena.stats().used, used);
    // ... and an older one.
    let s = allocate(&arena, layout(64, 8));
    let _later = allocate(&arena, layout(1, 1));
    let used = arena.stats().used;
    let z = unsafe { a.shrink(s, layout(64, 8), layout(0, 1)) }.expect("shrink");
    assert_eq!(z.len(), 0);
    assert_eq!(arena.stats().used, used);
}

#[test]
fn zero_sized_blocks() {
    let arena = OneWayAlloc::new();
    let a: &OneWayAlloc = &arena;
    bytes(&arena, 3);
    let before = arena.stats();
    for shift in 0..=21 {
        let align = 1usize << shift;
        let l = layout(0, align);
        let p = a.allocate(l).expect("zero-sized");
        assert_eq!(p.len(), 0);
        assert_eq!(addr(p.as_ptr().cast::<u8>()) % align, 0);
        unsafe { a.deallocate(p.cast(), l) };
        let z = a.allocate_zeroed(l).expect("zero-sized");
        assert_eq!(z.len(), 0);
        assert_eq!(addr(z.as_ptr().cast::<u8>()) % align, 0);
    }
    // No page obtained; at most the padding up to the largest alignment that fits
    // the first page was consumed (SPEC §1.8).
    let after = arena.stats();
    assert_eq!(after.pages, before.pages);
    assert_eq!(after.page_allocations, before.page_allocations);
    assert!(
        after.used - before.used < 64 * KIB,
        "{before:?} -> {after:?}"
    );

    // Grow from a zero-sized block.
    let l0 = layout(0, 8);
    let p = a.allocate(l0).expect("zero-sized").cast::<u8>();
    let q = unsafe { a.grow(p, l0, layout(64, 8)) }.expect("grow");
    assert_eq!(q.len(), 64);
    let q = q.cast::<u8>();
    assert_eq!(addr(q.as_ptr()) % 8, 0);
    unsafe {
        fill(q, 64, 13);
        check(q, 64, 13);
    }
    assert!(arena.stats().used >= before.used + 64 || !PAGE_MODE);
    let z = a.allocate(layout(0, 64)).expect("zero-sized").cast::<u8>();
    let q = unsafe { a.grow_zeroed(z, layout(0, 64), layout(128, 64)) }.expect("grow");
    assert_eq!(addr(q.as_ptr().cast::<u8>()) % 64, 0);
    assert!(unsafe { read(q.cast(), 128) }.iter().all(|&b| b == 0));

    // Zero-sized values in collections.
    let mut v: AVec<(), &OneWayAlloc> = AVec::new_in(&arena);
    let before = arena.stats();
    for _ in 0..1000 {
        v.push(());
    }
    assert_eq!(v.len(), 1000);
    assert_eq!(arena.stats(), before);
}

#[test]
fn allocator_by_value_copies_share_the_arena() {
    // `&OneWayAlloc` is `Copy`: collections built from copies all allocate from the
    // same arena, and what one allocates stays intact while the others grow.
    let arena = OneWayAlloc::new();
    let mut a: AVec<u8, &OneWayAlloc> = AVec::new_in(&arena);
    let mut b: AVec<u8, &OneWayAlloc> = AVec::new_in(&arena);
    let n = if cfg!(miri) { 500 } else { 20_000 };
    for i in 0..n {
        a.push(i as u8);
        b.push(!(i as u8));
    }
    assert!(a.iter().enumerate().all(|(i, &x)| x == i as u8));
    assert!(b.iter().enumerate().all(|(i, &x)| x == !(i as u8)));
    assert!(arena.stats().used >= 2 * n || !PAGE_MODE);
}
