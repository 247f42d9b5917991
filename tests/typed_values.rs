//! Typed values (`alloc::<T>`, `alloc_with`, their `try_` twins, and a scope's) of
//! every size class fill pages to their ends. The typed calls take the fast path's
//! compile-time-size form (`start + size <= end` for a value below 4 KiB), which no
//! run-time layout reaches, so they are tested here on their own:
//!
//! - every value lies inside a page the arena obtained, after its header, and is
//!   aligned; values are packed (each starts where the previous one ended, rounded
//!   up to its alignment) and a page is left only when the next value does not fit
//!   in it (or, under Miri, the page cannot place an alignment above 4 KiB);
//! - every value keeps its contents until the end of the round;
//! - after a reset, and inside a scope, the same values land at the same addresses
//!   in the pages the arena kept, and no page is obtained.
//!
//! The pages come from a guarded backing allocator: each page is followed by guard
//! bytes, part of the same block, that must stay untouched. A value placed past a
//! page's end (the compile-time form's comparison gone wrong) therefore fails an
//! assertion, natively and under Miri, instead of corrupting the heap.
//!
//! In sanitizer mode every value is a block of its own: the same values must each
//! fill exactly a block of the backing allocator, aligned, and keep their contents.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use core::alloc::Layout;
use core::cell::RefCell;
use core::fmt::Debug;
use core::ptr::NonNull;
use std::collections::BTreeMap;

use onewayalloc::{AllocError, Allocator, Global, OneWayAlloc, PAGE_HEADER_SIZE, SEPARATE_BLOCKS};

const PAGE_MODE: bool = !SEPARATE_BLOCKS;
/// Bytes after every page that must stay untouched: more than any value that the
/// compile-time form places (below 4 KiB), twice over.
const GUARD: usize = 8192;
const GUARD_BYTE: u8 = 0xa5;
/// Values left room for in each page when the round pre-fills it (every round
/// under Miri): the page's end is reached after this many.
const TAIL_VALUES: usize = 8;
/// Pages a round moves to after the one it starts in: fewer when it fills every
/// page in full (up to 192 K values of a byte each), which is slow in debug builds.
fn next_pages(prefill: bool) -> usize {
    if prefill { 3 } else { 1 }
}
/// Values per round in sanitizer mode (no pages to run through).
const SEPARATE_VALUES: usize = if cfg!(miri) { 24 } else { 200 };

/// A page the backing allocator handed out: its base, size and alignment.
type Held = (NonNull<u8>, usize, usize);

/// The pages (blocks, in sanitizer mode) the backing allocator handed out, by base
/// address.
#[derive(Default)]
struct Pages {
    live: RefCell<BTreeMap<usize, Held>>,
}

impl Pages {
    /// The page that holds `len` bytes from `at`, if one does: (base, size, align).
    fn holding(&self, at: usize, len: usize) -> Option<(usize, usize, usize)> {
        let live = self.live.borrow();
        let (&base, &(_, size, align)) = live.range(..=at).next_back()?;
        (at + len <= base + size).then_some((base, size, align))
    }
}

/// The backing allocator: the global one, with `GUARD` bytes after every page,
/// filled with `GUARD_BYTE` and checked when the page goes back.
#[derive(Clone, Copy)]
struct Guarded<'p>(&'p Pages);

fn with_guard(layout: Layout) -> Layout {
    Layout::from_size_align(layout.size() + GUARD, layout.align()).unwrap()
}

/// Asserts that the guard after the page at `base` is untouched.
fn check_guard(base: NonNull<u8>, size: usize) {
    static UNTOUCHED: [u8; GUARD] = [GUARD_BYTE; GUARD];
    // SAFETY: the page was allocated with `GUARD` bytes after its `size`, which only
    // `allocate` wrote.
    let guard = unsafe { core::slice::from_raw_parts(base.as_ptr().add(size), GUARD) };
    assert!(
        guard == UNTOUCHED,
        "a value was written past the end of a page"
    );
}

// SAFETY: forwards to `Global` with a larger layout, handing out its start.
unsafe impl Allocator for Guarded<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(with_guard(layout))?.cast::<u8>();
        // SAFETY: the block holds `layout.size() + GUARD` bytes.
        unsafe {
            block
                .as_ptr()
                .add(layout.size())
                .write_bytes(GUARD_BYTE, GUARD)
        };
        let base = block.addr().get();
        (self.0.live.borrow_mut()).insert(base, (block, layout.size(), layout.align()));
        Ok(NonNull::slice_from_raw_parts(block, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // A failed check already panicked: the drop that unwinds must not panic.
        if !std::thread::panicking() {
            check_guard(ptr, layout.size());
        }
        self.0.live.borrow_mut().remove(&ptr.addr().get());
        // SAFETY: `ptr` came from `allocate` above with `layout`.
        unsafe { Global.deallocate(ptr, with_guard(layout)) };
    }
}

type Arena<'p> = OneWayAlloc<Guarded<'p>>;

/// Bytes a value's contents are cut from: byte `i` is `i % 251`, so values made
/// from different offsets differ everywhere.
static PATTERN: [u8; 8192 + 251] = {
    let mut pattern = [0; 8192 + 251];
    let mut i = 0;
    while i < pattern.len() {
        pattern[i] = (i % 251) as u8;
        i += 1;
    }
    pattern
};

/// A value type of the size class under test.
trait Value: Copy + PartialEq + Debug {
    /// The `i`-th value of a round.
    fn make(i: usize) -> Self;
}

/// Declares `$name`: `$size` bytes aligned to `$align`, made from the pattern.
macro_rules! value_types {
    ($($name:ident: [u8; $size:literal], align $align:literal;)*) => {$(
        #[repr(C, align($align))]
        #[derive(Clone, Copy, PartialEq, Debug)]
        struct $name([u8; $size]);

        impl Value for $name {
            fn make(i: usize) -> Self {
                let mut bytes = [0; $size];
                bytes.copy_from_slice(&PATTERN[i % 251..][..$size]);
                $name(bytes)
            }
        }
    )*};
}

value_types! {
    B1: [u8; 1], align 1;
    B2: [u8; 2], align 2;
    B3: [u8; 3], align 1;
    B4: [u8; 4], align 4;
    B6: [u8; 6], align 2;
    B8: [u8; 8], align 8;
    B12: [u8; 12], align 4;
    B16: [u8; 16], align 16;
    B24: [u8; 24], align 8;
    B48: [u8; 48], align 16;
    B64: [u8; 64], align 64;
    B100: [u8; 100], align 4;
    B1000: [u8; 1000], align 8;
    B4088: [u8; 4088], align 8;
    B4095: [u8; 4095], align 1;
    B4096: [u8; 4096], align 16;
    B5000: [u8; 5000], align 8;
    Page4k: [u8; 4096], align 4096;
    Page8k: [u8; 8192], align 8192;
}

/// Where the typed calls are made: the arena itself, or a scope of it. (Each call
/// returns a fresh block, as the arena's own calls do.)
#[allow(clippy::mut_from_ref)]
trait Place {
    /// Places `value` with one of the typed calls, chosen by `i`.
    fn place<T>(&self, i: usize, value: T) -> &mut T;
}

/// Implements [`Place`] with the typed calls, which the arena and its scopes share.
macro_rules! place_with_the_typed_calls {
    ($($ty:ty),*) => {$(
        impl Place for $ty {
            fn place<T>(&self, i: usize, value: T) -> &mut T {
                match i % 4 {
                    0 => self.alloc(value),
                    1 => self.alloc_with(|| value),
                    2 => self.try_alloc(value).expect("no limit"),
                    _ => self.try_alloc_with(|| value).expect("no limit"),
                }
            }
        }
    )*};
}

place_with_the_typed_calls!(Arena<'_>, onewayalloc::Scope<'_, Guarded<'_>>);

/// One round of typed values: in page mode, through the current page and
/// `next_pages(prefill)` more, each pre-filled (if `prefill`) with an untyped block that
/// leaves room for `TAIL_VALUES` values only (it ends with the first value of the
/// last page); checks every rule of the file and
/// returns the values' addresses. `cursor` is where the next block goes.
fn round<T: Value, P: Place>(
    place: &P,
    arena: &Arena<'_>,
    pages: &Pages,
    mut cursor: usize,
    prefill: bool,
) -> Vec<usize> {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    let mut values: Vec<(&mut T, usize)> = Vec::new();
    let mut page = pages.holding(cursor, 0);
    let mut filled = false;
    let mut moves = 0;
    loop {
        if PAGE_MODE && moves == next_pages(prefill)
            || SEPARATE_BLOCKS && values.len() == SEPARATE_VALUES
        {
            break;
        }
        if PAGE_MODE && prefill && !filled {
            // An untyped block up to `TAIL_VALUES` values before the page end.
            let (base, page_size, _) = page.unwrap();
            let room = base + page_size - cursor;
            let filler = room.saturating_sub(TAIL_VALUES * size + align);
            let block = arena.alloc_layout(Layout::from_size_align(filler, 1).unwrap());
            assert_eq!(block.addr().get(), cursor, "an untyped block at the cursor");
            cursor += filler;
            filled = true;
        }
        let i = values.len();
        let value = place.place(i, T::make(i));
        let at = (&raw const *value).addr();
        assert_eq!(at % align, 0, "value {i} misaligned");
        let holder = pages.holding(at, size);
        let Some((base, page_size, page_align)) = holder else {
            panic!("value {i} of {size} bytes at {at:#x} is outside every page");
        };
        if SEPARATE_BLOCKS {
            assert_eq!((at, size), (base, page_size), "value {i}: its own block");
        } else {
            assert!(
                at >= base + PAGE_HEADER_SIZE,
                "value {i} inside a page header"
            );
            let expected = if Some(base) == page.map(|page| page.0) {
                cursor.next_multiple_of(align)
            } else {
                // A page is left only when the value does not fit in it (or, under
                // Miri, when the page cannot place its alignment), and a new page
                // serves from its payload start.
                let (old_base, old_size, old_align) = page.unwrap();
                let placeable = !cfg!(miri) || align <= 4096 || old_align >= align;
                let end = cursor.next_multiple_of(align) + size;
                assert!(
                    end > old_base + old_size || !placeable,
                    "value {i} left a page with room for it"
                );
                assert!(!cfg!(miri) || align <= 4096 || page_align >= align);
                page = Some((base, page_size, page_align));
                filled = false;
                moves += 1;
                (base + PAGE_HEADER_SIZE).next_multiple_of(align)
            };
            assert_eq!(
                at, expected,
                "value {i} is not packed after the previous one"
            );
            cursor = at + size;
        }
        values.push((value, i));
    }
    for (value, i) in &values {
        assert_eq!(**value, T::make(*i), "value {i} changed");
    }
    for &(base, size, _) in pages.live.borrow().values() {
        check_guard(base, size);
    }
    values
        .iter()
        .map(|(value, _)| (&raw const **value).addr())
        .collect()
}

/// The cursor of a fresh or reset arena: the first page's payload start.
fn first_cursor(pages: &Pages) -> usize {
    let live = pages.live.borrow();
    live.keys().next().map_or(0, |base| base + PAGE_HEADER_SIZE)
}

/// Fills a fresh arena with values of `T` (full pages natively, pre-filled pages
/// as well and only under Miri), then again after a reset and inside a scope, which
/// must find the same addresses in the kept pages.
fn fill_pages_with<T: Value>() {
    let modes: &[bool] = if cfg!(miri) { &[true] } else { &[false, true] };
    for &prefill in modes {
        let pages = Pages::default();
        let mut arena = OneWayAlloc::new_in(Guarded(&pages));
        let cursor = first_cursor(&pages);
        let addresses = round::<T, _>(&arena, &arena, &pages, cursor, prefill);
        let held = arena.stats().page_allocations;
        assert_eq!(
            held,
            if PAGE_MODE {
                1 + next_pages(prefill)
            } else {
                0
            }
        );
        arena.reset();
        let again = round::<T, _>(&arena, &arena, &pages, cursor, prefill);
        if PAGE_MODE {
            assert_eq!(again, addresses, "after a reset: other addresses");
            assert_eq!(
                arena.stats().page_allocations,
                held,
                "a page obtained after a reset"
            );
        }
        arena.reset();
        let in_scope = arena.scope(|scope| {
            let arena = scope.arena();
            round::<T, _>(scope, arena, &pages, cursor, prefill)
        });
        if PAGE_MODE {
            assert_eq!(in_scope, addresses, "in a scope: other addresses");
            assert_eq!(
                arena.stats().page_allocations,
                held,
                "a page obtained in a scope"
            );
        }
        assert_eq!(arena.stats().used, 0, "the scope rolled back");
        drop(arena);
        assert!(pages.live.borrow().is_empty(), "every page went back");
    }
}

macro_rules! fill_tests {
    ($($test:ident: $ty:ty,)*) => {$(
        #[test]
        fn $test() {
            fill_pages_with::<$ty>();
        }
    )*};
}

fill_tests! {
    fill_pages_with_1_byte_values: B1,
    fill_pages_with_2_byte_values: B2,
    fill_pages_with_3_byte_values: B3,
    fill_pages_with_4_byte_values: B4,
    fill_pages_with_6_byte_values: B6,
    fill_pages_with_8_byte_values: B8,
    fill_pages_with_12_byte_values: B12,
    fill_pages_with_16_byte_values: B16,
    fill_pages_with_24_byte_values: B24,
    fill_pages_with_48_byte_values: B48,
    fill_pages_with_64_byte_aligned_values: B64,
    fill_pages_with_100_byte_values: B100,
    fill_pages_with_1000_byte_values: B1000,
    fill_pages_with_4088_byte_values: B4088,
    fill_pages_with_4095_byte_values: B4095,
    fill_pages_with_4096_byte_values: B4096,
    fill_pages_with_5000_byte_values: B5000,
    fill_pages_with_4k_aligned_values: Page4k,
    fill_pages_with_8k_aligned_values: Page8k,
}

/// Zero-sized values (SPEC §1.8): served by the bump at the cursor, rounded up to
/// their alignment, when the page can place them there, at the very end of the page
/// included; a dangling aligned pointer otherwise (in sanitizer mode, always). They
/// never obtain a page or a block.
#[test]
fn zero_sized_values_take_the_cursor() {
    let pages = Pages::default();
    let arena = OneWayAlloc::new_in(Guarded(&pages));
    let unit_layout = Layout::from_size_align(3, 1).unwrap();
    let cursor = arena.alloc_layout(unit_layout).addr().get() + 3;
    let unit: *const () = arena.alloc(());
    let empty: *const [u64; 0] = arena.alloc_with(|| []);
    // 8 KiB: above what every page guarantees. Natively the bump aligns it by
    // address; under Miri the fast path leaves it to the slow path: dangling.
    let over_aligned: *const [Page8k; 0] = arena.try_alloc([]).unwrap();
    if PAGE_MODE {
        assert_eq!(unit.addr(), cursor);
        assert_eq!(empty.addr(), cursor.next_multiple_of(align_of::<u64>()));
        let expected = if cfg!(miri) {
            8192
        } else {
            empty.addr().next_multiple_of(8192)
        };
        assert_eq!(over_aligned.addr(), expected);
        // Fill the page to its very end: zero-sized values still fit there.
        let page = arena.pages().next().unwrap();
        let room = page.size - PAGE_HEADER_SIZE - page.used;
        let filler = arena.alloc_layout(Layout::from_size_align(room, 1).unwrap());
        let end = filler.addr().get() + room;
        let unit: *const () = arena.try_alloc_with(|| ()).unwrap();
        let page_aligned: *const [Page4k; 0] = arena.alloc([]);
        assert_eq!((unit.addr(), page_aligned.addr()), (end, end));
    } else {
        assert_eq!(unit.addr(), 1);
        assert_eq!(empty.addr(), align_of::<u64>());
        assert_eq!(over_aligned.addr(), 8192);
    }
    assert_eq!(arena.stats().page_allocations, usize::from(PAGE_MODE));
    let held = pages.live.borrow().len();
    assert_eq!(
        held, 1,
        "the first page only (in sanitizer mode, the 3-byte block)"
    );
}
