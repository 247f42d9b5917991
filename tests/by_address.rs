//! The hidden by-address calls that the C API (`capi/`) builds `onewayalloc_freez`
//! and `onewayalloc_doublesize` on, tested from Rust in both modes (and under Miri,
//! which the C programs cannot run in).

use core::ptr::NonNull;

use onewayalloc::{ByAddressError, OneWayAlloc, SEPARATE_BLOCKS};

const PAGE_MODE: bool = !SEPARATE_BLOCKS;

/// `len` bytes of `fill(i)`.
fn expected(len: usize, fill: impl Fn(usize) -> u8) -> Vec<u8> {
    (0..len).map(fill).collect()
}

/// A fresh 16-byte-aligned block of `len` bytes, filled with `fill(i)` (copied in
/// one go, which Miri runs natively).
fn filled(arena: &OneWayAlloc, len: usize, fill: impl Fn(usize) -> u8) -> NonNull<u8> {
    let source = expected(len, fill);
    let block = arena.alloc_bytes(len).as_mut_ptr().cast::<u8>();
    // SAFETY: the block holds `len` bytes and is fresh.
    unsafe { block.copy_from_nonoverlapping(source.as_ptr(), len) };
    NonNull::new(block).expect("a block is never null")
}

/// The first `len` bytes at `block`.
///
/// # Safety
/// `block` must be valid for reads of `len` initialized bytes.
unsafe fn bytes_at<'a>(block: NonNull<u8>, len: usize) -> &'a [u8] {
    // SAFETY: the caller's guarantee.
    unsafe { core::slice::from_raw_parts(block.as_ptr(), len) }
}

fn pattern(i: usize) -> u8 {
    (i * 7 + 3) as u8
}

#[test]
fn the_most_recent_block_grows_in_place_in_the_page_mode() {
    let arena = OneWayAlloc::new();
    let series = filled(&arena, 40, pattern);
    // SAFETY: `series` starts a block of 40 bytes of this arena, used only through
    // the returned pointer afterwards.
    let grown = unsafe { arena.grow_by_address(series, 40, 80) }.unwrap();
    assert_eq!(grown.as_ptr() as usize % 16, 0);
    // SAFETY: the first 40 of the 80 bytes are kept.
    assert_eq!(unsafe { bytes_at(grown, 40) }, expected(40, pattern));
    if PAGE_MODE {
        assert_eq!(grown, series, "in place");
        assert_eq!(
            arena.stats().used,
            80,
            "the block now ends 80 bytes after its start"
        );
    } else {
        assert_eq!(arena.stats().used, 80, "one outstanding block of 80 bytes");
    }
    // The grown block is writable over its whole new size.
    // SAFETY: 80 bytes at `grown` are the block's.
    unsafe { grown.as_ptr().add(79).write(1) };
}

#[test]
fn a_block_that_does_not_end_at_the_kept_bytes_is_copied() {
    let arena = OneWayAlloc::new();
    // A string block of "abc\0": doubling keeps strlen = 3 bytes, which end one byte
    // before the block does, so even the most recent block is copied.
    let s = filled(&arena, 4, |i| b"abc\0"[i]);
    // SAFETY: `s` starts a block of 4 >= 3 bytes of this arena.
    let grown = unsafe { arena.grow_by_address(s, 3, 6) }.unwrap();
    // SAFETY: 3 bytes kept.
    assert_eq!(unsafe { bytes_at(grown, 3) }, b"abc");
    assert_eq!(grown.as_ptr() as usize % 16, 0);
    if PAGE_MODE {
        assert_ne!(grown, s);
        // The old block stays valid until reset.
        // SAFETY: the page mode frees nothing one by one.
        assert_eq!(unsafe { bytes_at(s, 4) }, b"abc\0");
    } else {
        // The 4-byte block was resized to 6 bytes by the backing allocator.
        assert_eq!(arena.stats().used, 6);
    }
}

#[test]
fn a_block_that_is_not_the_most_recent_is_copied() {
    let arena = OneWayAlloc::new();
    let first = filled(&arena, 64, pattern);
    let _after = filled(&arena, 16, |_| 0xee);
    // SAFETY: `first` starts a block of 64 bytes of this arena.
    let grown = unsafe { arena.grow_by_address(first, 64, 128) }.unwrap();
    // SAFETY: 64 bytes kept.
    assert_eq!(unsafe { bytes_at(grown, 64) }, expected(64, pattern));
    if PAGE_MODE {
        assert_ne!(grown, first);
        assert_eq!(arena.stats().used, 64 + 16 + 128);
    } else {
        assert_eq!(arena.stats().used, 128 + 16);
    }
}

#[test]
fn a_series_that_keeps_doubling_keeps_its_values() {
    // Netdata's median and percentile groupings: a series of doubles grows by
    // doublesize and is reassigned every time it is full.
    let rounds = if cfg!(miri) { 8 } else { 15 };
    let arena = OneWayAlloc::new();
    let mut len = 1usize;
    let mut series = filled(&arena, 8, |_| 0);
    let mut in_place = 0;
    for _ in 0..rounds {
        let values = series.cast::<u64>();
        for i in 0..len {
            // SAFETY: the block holds `len` u64s and is 16-byte aligned.
            unsafe { values.add(i).write(i as u64 * 3) };
        }
        // SAFETY: the current series block holds `len * 8` bytes.
        let grown = unsafe { arena.grow_by_address(series, len * 8, len * 16) }.unwrap();
        in_place += usize::from(grown == series);
        let values = grown.cast::<u64>();
        for i in 0..len {
            // SAFETY: the first `len` u64s were kept.
            assert_eq!(unsafe { values.add(i).read() }, i as u64 * 3);
        }
        series = grown;
        len *= 2;
    }
    if PAGE_MODE {
        // Nothing else is allocated meanwhile: the series moves only when it leaves
        // a page (64 KiB = 8192 u64s at most fit in the first page).
        assert!(in_place >= rounds - 3, "{in_place} of {rounds} in place");
    }
}

#[test]
fn growing_out_of_a_full_page_moves_to_another_page() {
    const LEN: usize = 60 * 1024;
    let arena = OneWayAlloc::new();
    // Only the ends are written and checked: copying the block is what matters.
    let big = arena.alloc_bytes(LEN).as_mut_ptr().cast::<u8>();
    // SAFETY: the block holds LEN bytes.
    unsafe {
        big.copy_from_nonoverlapping(b"head".as_ptr(), 4);
        big.add(LEN - 4)
            .copy_from_nonoverlapping(b"tail".as_ptr(), 4);
    }
    let big = NonNull::new(big).unwrap();
    // SAFETY: `big` starts a block of 60 KiB of this arena; its ends are written, and
    // only they are read back.
    let grown = unsafe { arena.grow_by_address(big, 4, 2 * LEN) }.unwrap();
    // SAFETY: the first 4 bytes are kept.
    assert_eq!(unsafe { bytes_at(grown, 4) }, b"head");
    if PAGE_MODE {
        // Not the most recent block's end (keep = 4): copied, in the first page.
        assert_ne!(grown, big);
        assert_eq!(arena.stats().page_allocations, 2);
    }
    let moved = filled(&arena, 16, pattern);
    // SAFETY: `moved` starts a block of 16 bytes; the most recent, ending exactly
    // 16 bytes after its start, but the page it is in may have no room for 1 MiB.
    let grown = unsafe { arena.grow_by_address(moved, 16, 1 << 20) }.unwrap();
    // SAFETY: 16 bytes kept.
    assert_eq!(unsafe { bytes_at(grown, 16) }, expected(16, pattern));
    if PAGE_MODE {
        assert_ne!(grown, moved, "1 MiB leaves the page");
        assert!(arena.stats().page_allocations >= 3);
    }
}

#[test]
fn a_new_size_of_zero_is_served_as_one_byte() {
    let arena = OneWayAlloc::new();
    let a = filled(&arena, 1, |_| 9);
    // SAFETY: `a` starts a block of 1 >= 0 bytes.
    let b = unsafe { arena.grow_by_address(a, 0, 0) }.unwrap();
    assert_eq!(b.as_ptr() as usize % 16, 0);
    // SAFETY: the block has 1 byte.
    unsafe { b.as_ptr().write(1) };
}

#[test]
fn a_size_that_overflows_is_refused_and_the_block_kept() {
    let arena = OneWayAlloc::new();
    let block = filled(&arena, 32, pattern);
    for new_size in [usize::MAX, isize::MAX as usize] {
        // SAFETY: `block` starts a block of 32 bytes.
        let result = unsafe { arena.grow_by_address(block, 32, new_size) };
        assert_eq!(result, Err(ByAddressError::Alloc));
    }
    // SAFETY: the block is untouched.
    assert_eq!(unsafe { bytes_at(block, 32) }, expected(32, pattern));
    // And the arena goes on serving, the block included.
    // SAFETY: as above.
    let grown = unsafe { arena.grow_by_address(block, 32, 64) }.unwrap();
    // SAFETY: 32 bytes kept.
    assert_eq!(unsafe { bytes_at(grown, 1) }[0], pattern(0));
}

#[test]
fn the_limit_refuses_growth_and_keeps_the_block() {
    let arena = OneWayAlloc::new();
    arena.set_limit(Some(64 * 1024));
    let block = filled(&arena, 1024, pattern);
    // SAFETY: `block` starts a block of 1024 bytes.
    let result = unsafe { arena.grow_by_address(block, 1024, 1 << 20) };
    assert_eq!(result, Err(ByAddressError::Alloc));
    // SAFETY: untouched.
    assert_eq!(unsafe { bytes_at(block, 1) }[0], pattern(0));
}

#[test]
#[should_panic(expected = "fewer than the 8 to keep")]
fn a_new_size_below_the_kept_bytes_panics() {
    let arena = OneWayAlloc::new();
    let block = filled(&arena, 8, pattern);
    // SAFETY: `block` starts a block of 8 bytes.
    let _ = unsafe { arena.grow_by_address(block, 8, 4) };
}

#[test]
fn free_releases_the_block_in_the_sanitizer_mode_only() {
    let arena = OneWayAlloc::new();
    let a = filled(&arena, 100, pattern);
    let b = filled(&arena, 50, pattern);
    // SAFETY: `a` is not used again.
    assert_eq!(unsafe { arena.free_by_address(a) }, Ok(()));
    if PAGE_MODE {
        assert_eq!(arena.stats().used, 112 + 50, "nothing is freed one by one");
    } else {
        assert_eq!(arena.stats().used, 50, "the 100-byte block went back");
    }
    // SAFETY: `b` is not used again.
    assert_eq!(unsafe { arena.free_by_address(b) }, Ok(()));
}

#[test]
fn the_sanitizer_mode_refuses_addresses_it_does_not_hold() {
    let arena = OneWayAlloc::new();
    let other = OneWayAlloc::new();
    let a = filled(&arena, 24, pattern);
    let foreign = filled(&other, 24, pattern);
    let mut local = [0u8; 32];
    let stack = NonNull::new(local.as_mut_ptr()).unwrap();
    // SAFETY: `a` is not used after the first free. The other addresses are not
    // blocks of `arena`: the sanitizer mode reports them, the page mode ignores a
    // free and is never asked to grow them here.
    unsafe {
        assert_eq!(arena.free_by_address(a), Ok(()));
        let second = arena.free_by_address(a);
        let foreign_free = arena.free_by_address(foreign);
        let stack_free = arena.free_by_address(stack);
        if PAGE_MODE {
            assert_eq!((second, foreign_free, stack_free), (Ok(()), Ok(()), Ok(())));
        } else {
            assert_eq!(second, Err(ByAddressError::NotHeld), "freed twice");
            assert_eq!(
                foreign_free,
                Err(ByAddressError::NotHeld),
                "another arena's"
            );
            assert_eq!(stack_free, Err(ByAddressError::NotHeld), "not a block");
            assert_eq!(arena.grow_by_address(a, 0, 8), Err(ByAddressError::NotHeld));
            assert_eq!(
                arena.grow_by_address(foreign, 8, 16),
                Err(ByAddressError::NotHeld)
            );
            // The middle of a block is not a block either.
            let b = filled(&arena, 64, pattern);
            let middle = b.add(16);
            assert_eq!(arena.free_by_address(middle), Err(ByAddressError::NotHeld));
            assert_eq!(
                arena.grow_by_address(b, 65, 130),
                Err(ByAddressError::KeepExceedsBlock { block_size: 64 })
            );
            assert_eq!(
                arena.stats().used,
                64,
                "nothing was freed by the refused calls"
            );
        }
    }
    // Both arenas still work and free everything on drop.
    filled(&arena, 8, pattern);
    filled(&other, 8, pattern);
}

#[test]
fn reset_releases_grown_blocks_too() {
    let mut arena = OneWayAlloc::new();
    let a = filled(&arena, 16, pattern);
    // SAFETY: `a` starts a block of 16 bytes, used only through the result.
    let grown = unsafe { arena.grow_by_address(a, 16, 32) }.unwrap();
    let _ = grown;
    arena.reset();
    assert_eq!(arena.stats().used, 0);
    if !PAGE_MODE {
        // SAFETY: `grown` was released by the reset; the call only looks it up.
        assert_eq!(
            unsafe { arena.free_by_address(grown) },
            Err(ByAddressError::NotHeld)
        );
    }
}

#[test]
fn keeping_more_than_the_most_recent_block_is_refused_in_both_modes() {
    let arena = OneWayAlloc::new();
    let first = filled(&arena, 64, pattern);
    let last = filled(&arena, 16, pattern);
    // SAFETY: both start blocks of this arena; the calls are refused before any
    // byte is read, so the too-large `keep` is never used.
    unsafe {
        assert_eq!(
            arena.grow_by_address(last, 32, 64),
            Err(ByAddressError::KeepExceedsBlock { block_size: 16 })
        );
        // In the page mode the bound for an earlier block of the current page is
        // what was handed out from its start: its 64 bytes and the 16 after them.
        let bound = if PAGE_MODE { 64 + 16 } else { 64 };
        assert_eq!(
            arena.grow_by_address(first, 200, 400),
            Err(ByAddressError::KeepExceedsBlock { block_size: bound })
        );
    }
    assert_eq!(arena.stats().used, 64 + 16, "nothing was allocated");
}

/// `free_span` and `claim_until`, which the C API's inline `onewayalloc_mallocz`
/// bumps through: the span is the current page's free bytes; claiming hands out
/// exactly the bytes up to an address between the cursor and the page end, and
/// refuses any other address without moving; the arena's own blocks then follow
/// the claimed bytes. The sanitizer mode has no span and claims nothing.
#[test]
fn claiming_hands_out_the_free_span_up_to_an_address() {
    let arena = OneWayAlloc::new();
    let first = filled(&arena, 24, pattern);
    if SEPARATE_BLOCKS {
        assert!(!arena.claim_until(first.addr().get() + 24));
        assert_eq!(arena.free_span(), None);
        return;
    }
    let (cursor, end) = arena.free_span().expect("the page mode has a span");
    let (cursor, end) = (cursor.addr().get(), end.addr().get());
    assert_eq!(
        cursor,
        first.addr().get() + 24,
        "the span starts after the block"
    );
    assert!(cursor < end);
    let stats = arena.stats();
    assert_eq!(
        end - cursor,
        stats.capacity - onewayalloc::PAGE_HEADER_SIZE - 24,
        "the span runs to the first page's end"
    );
    // Refused, the cursor unmoved: behind it, past the page end, far away.
    for addr in [cursor - 1, end + 1, 0, usize::MAX] {
        assert!(!arena.claim_until(addr), "{addr:#x}");
        assert_eq!(arena.stats().used, 24);
    }
    assert!(
        arena.claim_until(cursor),
        "the cursor itself: nothing claimed"
    );
    assert_eq!(arena.stats().used, 24);
    assert!(arena.claim_until(cursor + 40));
    assert_eq!(arena.stats().used, 64);
    assert!(!arena.claim_until(cursor + 39), "behind the new cursor");
    let span = arena
        .free_span()
        .map(|(c, e)| (c.addr().get(), e.addr().get()));
    assert_eq!(span, Some((cursor + 40, end)));
    // The arena's next block follows the claimed bytes (16-byte aligned).
    let next = filled(&arena, 8, pattern);
    assert_eq!(next.addr().get(), (cursor + 40).next_multiple_of(16));
    // Up to the page end exactly, then the next block is in another page.
    assert!(arena.claim_until(end));
    assert_eq!(
        arena
            .free_span()
            .map(|(c, e)| e.addr().get() - c.addr().get()),
        Some(0)
    );
    assert_eq!(arena.stats().used, end - cursor + 24);
    let other = filled(&arena, 8, pattern);
    assert!(other.addr().get() >= end || other.addr().get() < cursor);
    assert_eq!(arena.stats().pages, 2);
    // SAFETY: the first block holds 24 initialized bytes.
    assert_eq!(unsafe { bytes_at(first, 24) }, expected(24, pattern));
}
