//! The slice and uninitialized calls of issue 14 (bumpalo's `alloc_slice_clone`,
//! `alloc_slice_fill_copy`, `alloc_slice_fill_clone`, `alloc_slice_fill_default`,
//! `alloc_slice_fill_iter`, and `alloc_iter`, `alloc_uninit`, `alloc_uninit_slice`),
//! each with its `try_` twin, on the arena and on a scope, in whichever mode the
//! build runs (page mode, or the sanitizer mode with `--features separate-blocks`).
//!
//! Contents, alignment, zero lengths and zero-sized types, overflowing lengths,
//! refusals by the limit, panics in `Clone`, `Default`, closures and iterators (with
//! every element dropped at most once), iterators that lie about their length, and
//! `alloc_iter`'s growth in place (no copy left behind) and soundness when the
//! iterator allocates from the same arena.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

mod common;

use core::alloc::Layout;
use core::fmt::Debug;
use core::mem::{MaybeUninit, align_of, size_of};
use std::cell::{Cell, RefCell};

use common::{KIB, PAGE_MODE, addr, check_consistent, check_overflow, panic_message};
use onewayalloc::{AllocError, OneWayAlloc};

/// Fewer cases under Miri, the same properties.
const N: usize = if cfg!(miri) { 40 } else { 1000 };

// ----- Helpers ---------------------------------------------------------------------

/// The arena still serves requests (the slice calls among them) with the right
/// contents, and its figures add up.
fn assert_serving(arena: &OneWayAlloc) {
    common::assert_usable(arena);
    let a = arena.alloc_slice_fill_copy(10, 0xabu8);
    let b = arena.alloc_iter((0..50u32).filter(|i| i % 2 == 0));
    let c = arena.alloc_str("still serving");
    assert_eq!(a, [0xab; 10]);
    assert_eq!(b.len(), 25);
    assert!(b.iter().enumerate().all(|(i, &x)| x == 2 * i as u32));
    assert_eq!(c, "still serving");
    if PAGE_MODE {
        let used: usize = arena.pages().map(|p| p.used).sum();
        assert_eq!(arena.stats().used, used);
    }
}

/// A value that records its drops by id, so a test can tell "dropped once" from
/// "dropped twice" or "leaked". Cloning takes a clone budget: the clone after the
/// budget runs out panics.
struct Tracked<'a> {
    id: u32,
    log: &'a Log,
}

#[derive(Default)]
struct Log {
    dropped: RefCell<Vec<u32>>,
    next_id: Cell<u32>,
    clones_left: Cell<usize>,
}

impl Log {
    fn with_clone_budget(clones: usize) -> Self {
        let log = Log::default();
        log.clones_left.set(clones);
        log
    }

    fn make(&self) -> Tracked<'_> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        Tracked { id, log: self }
    }

    /// The ids dropped, sorted; asserts none was dropped twice.
    fn dropped_once(&self) -> Vec<u32> {
        let mut ids = self.dropped.borrow().clone();
        ids.sort_unstable();
        let len = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), len, "an element was dropped twice");
        ids
    }
}

impl Clone for Tracked<'_> {
    fn clone(&self) -> Self {
        let left = self.log.clones_left.get();
        assert!(left > 0, "clone budget exhausted");
        self.log.clones_left.set(left - 1);
        self.log.make()
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        self.log.dropped.borrow_mut().push(self.id);
    }
}

/// An iterator over `0..actual` whose `ExactSizeIterator::len` says `claimed`.
struct ClaimsLen {
    next: usize,
    actual: usize,
    claimed: usize,
}

impl Iterator for ClaimsLen {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        (self.next < self.actual).then(|| {
            self.next += 1;
            self.next as u64 - 1
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.claimed.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for ClaimsLen {}

fn claims_len(actual: usize, claimed: usize) -> ClaimsLen {
    ClaimsLen {
        next: 0,
        actual,
        claimed,
    }
}

/// An iterator whose size hint is `(lower, None)` whatever it yields.
struct Hinted<I> {
    inner: I,
    lower: usize,
}

impl<I: Iterator> Iterator for Hinted<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.inner.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.lower, None)
    }
}

fn hinted<I: IntoIterator>(inner: I, lower: usize) -> Hinted<I::IntoIter> {
    Hinted {
        inner: inner.into_iter(),
        lower,
    }
}

#[derive(Clone, Copy, Default, PartialEq, Debug)]
#[repr(align(64))]
struct Align64(u16);

#[derive(Clone, Copy, Default, PartialEq, Debug)]
#[repr(align(8))]
struct ZeroSized8;

/// One result of [`every_call`]: the call, where its slice starts, its length, and
/// whether its elements are what the call promises.
struct Made {
    call: &'static str,
    addr: usize,
    len: usize,
    contents_ok: bool,
}

/// Runs every slice call and its `try_` twin for `len` elements: `value` where the
/// call takes one, `T::default()` for `alloc_slice_fill_default`.
fn every_call<T: Copy + Default + PartialEq + Debug>(
    arena: &OneWayAlloc,
    len: usize,
    value: T,
) -> Vec<Made> {
    fn made<T: PartialEq>(call: &'static str, slice: &[T], len: usize, want: &T) -> Made {
        Made {
            call,
            addr: addr(slice.as_ptr()),
            len: slice.len(),
            contents_ok: slice.len() == len && slice.iter().all(|x| x == want),
        }
    }
    let src = vec![value; len];
    let default = T::default();
    let items = || (0..len).map(|_| value);
    let uninit = |call, slice: &mut [MaybeUninit<T>]| Made {
        call,
        addr: addr(slice.as_ptr()),
        len: slice.len(),
        contents_ok: slice.len() == len,
    };
    vec![
        made(
            "alloc_slice_clone",
            arena.alloc_slice_clone(&src),
            len,
            &value,
        ),
        made(
            "try_alloc_slice_clone",
            arena.try_alloc_slice_clone(&src).unwrap(),
            len,
            &value,
        ),
        made(
            "alloc_slice_fill_copy",
            arena.alloc_slice_fill_copy(len, value),
            len,
            &value,
        ),
        made(
            "try_alloc_slice_fill_copy",
            arena.try_alloc_slice_fill_copy(len, value).unwrap(),
            len,
            &value,
        ),
        made(
            "alloc_slice_fill_clone",
            arena.alloc_slice_fill_clone(len, &value),
            len,
            &value,
        ),
        made(
            "try_alloc_slice_fill_clone",
            arena.try_alloc_slice_fill_clone(len, &value).unwrap(),
            len,
            &value,
        ),
        made(
            "alloc_slice_fill_default",
            arena.alloc_slice_fill_default::<T>(len),
            len,
            &default,
        ),
        made(
            "try_alloc_slice_fill_default",
            arena.try_alloc_slice_fill_default::<T>(len).unwrap(),
            len,
            &default,
        ),
        made(
            "alloc_slice_fill_iter",
            arena.alloc_slice_fill_iter(items()),
            len,
            &value,
        ),
        made(
            "try_alloc_slice_fill_iter",
            arena.try_alloc_slice_fill_iter(items()).unwrap(),
            len,
            &value,
        ),
        made("alloc_iter (exact)", arena.alloc_iter(items()), len, &value),
        made(
            "alloc_iter (filter)",
            arena.alloc_iter(items().filter(|_| true)),
            len,
            &value,
        ),
        made(
            "try_alloc_iter (exact)",
            arena.try_alloc_iter(items()).unwrap(),
            len,
            &value,
        ),
        made(
            "try_alloc_iter (filter)",
            arena.try_alloc_iter(items().filter(|_| true)).unwrap(),
            len,
            &value,
        ),
        uninit("alloc_uninit_slice", arena.alloc_uninit_slice::<T>(len)),
        uninit(
            "try_alloc_uninit_slice",
            arena.try_alloc_uninit_slice::<T>(len).unwrap(),
        ),
    ]
}

/// Every call gives `len` elements with the right contents, aligned for `T`.
fn check_every_call<T: Copy + Default + PartialEq + Debug>(len: usize, value: T) {
    let arena = OneWayAlloc::new();
    for made in every_call(&arena, len, value) {
        let what = format!("{} of {len} {}", made.call, core::any::type_name::<T>());
        assert_eq!(made.len, len, "{what}: length");
        assert!(made.contents_ok, "{what}: contents");
        assert_eq!(made.addr % align_of::<T>(), 0, "{what}: alignment");
    }
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

// ----- Contents, alignment, zero lengths, zero-sized types -------------------------

#[test]
fn every_call_gives_its_contents_aligned() {
    for len in [1, 7, N] {
        check_every_call(len, 0xa5u8);
        check_every_call(len, 0xdead_beefu32);
        check_every_call(len, u64::MAX - 1);
        check_every_call(len, (3u16, 4u8));
        check_every_call(len, Align64(77));
    }
}

#[test]
fn the_uninit_calls_are_aligned_and_writable() {
    let arena = OneWayAlloc::new();
    arena.alloc_bytes(3); // misalign the cursor
    let one = arena.alloc_uninit::<Align64>();
    assert_eq!(addr(one.as_ptr()) % 64, 0);
    assert_eq!(*one.write(Align64(5)), Align64(5));
    let two = arena.try_alloc_uninit::<u64>().unwrap();
    assert_eq!(addr(two.as_ptr()) % 8, 0);
    assert_eq!(*two.write(9), 9);
    let many = arena.alloc_uninit_slice::<u32>(N);
    for (i, slot) in many.iter_mut().enumerate() {
        slot.write(i as u32);
    }
    // SAFETY: every element was written just above.
    let many = unsafe { &*(many as *mut [MaybeUninit<u32>] as *const [u32]) };
    assert!(many.iter().enumerate().all(|(i, &x)| x == i as u32));
    // Distinct blocks.
    let a = arena.alloc_uninit::<u8>().as_ptr();
    let b = arena.alloc_uninit::<u8>().as_ptr();
    assert_ne!(addr(a), addr(b));
}

/// Zero-length requests and zero-sized types get an aligned empty (or ZST) slice,
/// consume at most the alignment padding, and never obtain a page or a block.
fn check_nothing_obtained<T: Copy + Default + PartialEq + Debug>(len: usize, value: T) {
    let arena = OneWayAlloc::new();
    arena.alloc_bytes(1); // the cursor is now misaligned for anything above 1
    let before = arena.stats();
    let made = every_call(&arena, len, value);
    // A single `T` takes room unless it is zero-sized.
    let single = if size_of::<T>() == 0 {
        vec![
            addr(arena.alloc_uninit::<T>().as_ptr()),
            addr(arena.try_alloc_uninit::<T>().unwrap().as_ptr()),
        ]
    } else {
        vec![]
    };
    let after = arena.stats();
    for made in &made {
        assert_eq!(made.len, len, "{}", made.call);
        assert!(made.contents_ok, "{}", made.call);
        assert_eq!(made.addr % align_of::<T>(), 0, "{}", made.call);
    }
    for a in single {
        assert_eq!(a % align_of::<T>(), 0);
    }
    assert_eq!(after.capacity, before.capacity, "no page, no block");
    assert_eq!(after.page_allocations, before.page_allocations);
    // At most the padding to the alignment, once (it is consumed by the first call).
    assert!(
        after.used - before.used < align_of::<T>().max(1),
        "used {} -> {}",
        before.used,
        after.used
    );
    assert_serving(&arena);
}

#[test]
fn zero_lengths_obtain_nothing() {
    check_nothing_obtained(0, 1u8);
    check_nothing_obtained(0, 1u64);
    check_nothing_obtained(0, Align64(1));
}

#[test]
fn zero_sized_types_obtain_nothing() {
    for len in [0, 1, N, if cfg!(miri) { 100 } else { 1_000_000 }] {
        check_nothing_obtained(len, ());
        check_nothing_obtained(len, ZeroSized8);
    }
}

#[test]
fn zero_sized_values_are_dropped_at_most_once() {
    thread_local!(static ZST_DROPS: Cell<usize> = const { Cell::new(0) });
    struct Unit;
    impl Drop for Unit {
        fn drop(&mut self) {
            ZST_DROPS.with(|d| d.set(d.get() + 1));
        }
    }
    let arena = OneWayAlloc::new();
    let units = arena.alloc_iter((0..N).map(|_| Unit).filter(|_| true));
    assert_eq!(units.len(), N);
    assert_eq!(ZST_DROPS.with(Cell::get), 0, "the arena never drops");
    let message = panic_message(|| {
        arena.alloc_iter((0..N).map(|i| {
            assert!(i < 10, "unit {i}");
            Unit
        }));
    });
    assert_eq!(message, "unit 10");
    assert_eq!(ZST_DROPS.with(Cell::get), 10, "the ten taken, once each");
}

// ----- Generic parameters in bumpalo's order ---------------------------------------

#[test]
fn bumpalos_turbofish_calls_compile_unchanged() {
    let arena = OneWayAlloc::new();
    let hello = String::from("hello");
    assert_eq!(arena.alloc_slice_clone::<String>(&[]).len(), 0);
    assert_eq!(arena.alloc_slice_fill_copy::<u64>(2, 4), [4, 4]);
    assert_eq!(arena.alloc_slice_fill_clone::<String>(0, &hello).len(), 0);
    assert_eq!(arena.alloc_slice_fill_default::<u64>(3), [0, 0, 0]);
    assert_eq!(arena.alloc_slice_fill_iter::<u32, _>([1, 2]), [1, 2]);
    assert_eq!(arena.try_alloc_slice_fill_iter::<u32, _>([1]).unwrap(), [1]);
    assert_eq!(arena.try_alloc_slice_fill_default::<u8>(1).unwrap(), [0]);
    assert_eq!(arena.alloc_iter::<u32>(Some(5)), [5]);
    assert_eq!(*arena.alloc_uninit::<u64>().write(6), 6);
    assert_eq!(arena.alloc_uninit_slice::<u64>(3).len(), 3);
}

// ----- Overflowing lengths ---------------------------------------------------------

#[test]
fn lengths_that_overflow() {
    // Just above isize::MAX bytes, and (for bytes) within it but not with the
    // page header.
    let over_u64 = isize::MAX as usize / 8 + 1;
    let with_header = isize::MAX as usize - 8;
    check_overflow(
        "alloc_slice_fill_copy",
        |a| a.try_alloc_slice_fill_copy(over_u64, 0u64).map(|s| s.len()),
        |a| a.alloc_slice_fill_copy(over_u64, 0u64).len(),
    );
    check_overflow(
        "alloc_slice_fill_copy (with the header)",
        |a| {
            a.try_alloc_slice_fill_copy(with_header, 0u8)
                .map(|s| s.len())
        },
        |a| a.alloc_slice_fill_copy(with_header, 0u8).len(),
    );
    check_overflow(
        "alloc_slice_fill_clone",
        |a| {
            a.try_alloc_slice_fill_clone(usize::MAX, &(0..1u32))
                .map(|s| s.len())
        },
        |a| a.alloc_slice_fill_clone(usize::MAX, &(0..1u32)).len(),
    );
    check_overflow(
        "alloc_slice_fill_default",
        |a| {
            a.try_alloc_slice_fill_default::<u64>(over_u64)
                .map(|s| s.len())
        },
        |a| a.alloc_slice_fill_default::<u64>(over_u64).len(),
    );
    check_overflow(
        "alloc_uninit_slice",
        |a| {
            a.try_alloc_uninit_slice::<u16>(usize::MAX / 2)
                .map(|s| s.len())
        },
        |a| a.alloc_uninit_slice::<u16>(usize::MAX / 2).len(),
    );
    check_overflow(
        "alloc_slice_fill_iter",
        |a| {
            a.try_alloc_slice_fill_iter(claims_len(3, usize::MAX))
                .map(|s| s.len())
        },
        |a| a.alloc_slice_fill_iter(claims_len(3, usize::MAX)).len(),
    );
    check_overflow(
        "alloc_iter (a size hint that overflows)",
        |a| {
            a.try_alloc_iter(hinted(0..3u64, usize::MAX))
                .map(|s| s.len())
        },
        |a| a.alloc_iter(hinted(0..3u64, usize::MAX)).len(),
    );
    check_overflow(
        "alloc_iter (the header)",
        |a| {
            a.try_alloc_iter(hinted(0..3u8, with_header))
                .map(|s| s.len())
        },
        |a| a.alloc_iter(hinted(0..3u8, with_header)).len(),
    );
}

#[test]
fn an_overflowing_request_calls_no_clone_and_takes_no_item() {
    let arena = OneWayAlloc::new();
    let log = Log::with_clone_budget(0); // any clone would panic
    let one = log.make();
    assert!(arena.try_alloc_slice_fill_clone(usize::MAX, &one).is_err());
    let mut iter = claims_len(3, usize::MAX);
    assert!(arena.try_alloc_slice_fill_iter(&mut iter).is_err());
    assert_eq!(iter.next(), Some(0), "no item was taken");
    drop(one);
    assert_eq!(log.dropped_once(), [0]);
}

// ----- Refusals (the limit) --------------------------------------------------------

/// What [`arena_near_its_limit`] has room for before its limit.
const ROOM: usize = KIB;
/// A request the arena near its limit cannot serve.
const BIG: usize = 3 * KIB;

/// An arena with `ROOM` bytes left before its limit: its first page is filled up
/// to the last `ROOM` bytes and it may take no other page (page mode), or it may
/// take `ROOM` more bytes of blocks (sanitizer mode).
fn arena_near_its_limit() -> OneWayAlloc {
    let arena = OneWayAlloc::new();
    arena.alloc_str("kept");
    if PAGE_MODE {
        common::bytes(&arena, common::room(&arena) - ROOM);
        assert_eq!(common::room(&arena), ROOM);
    }
    arena.set_limit(Some(arena.stats().capacity + ROOM));
    arena
}

/// Every `try_` call, sized to need more than the limit allows.
#[allow(clippy::type_complexity)]
fn big_try_calls() -> Vec<(
    &'static str,
    Box<dyn Fn(&OneWayAlloc) -> Result<usize, AllocError>>,
)> {
    vec![
        (
            "try_alloc_slice_clone",
            Box::new(|a| a.try_alloc_slice_clone(&vec![1u8; BIG]).map(|s| s.len())),
        ),
        (
            "try_alloc_slice_fill_copy",
            Box::new(|a| a.try_alloc_slice_fill_copy(BIG, 1u8).map(|s| s.len())),
        ),
        (
            "try_alloc_slice_fill_clone",
            Box::new(|a| a.try_alloc_slice_fill_clone(BIG, &1u8).map(|s| s.len())),
        ),
        (
            "try_alloc_slice_fill_default",
            Box::new(|a| a.try_alloc_slice_fill_default::<u8>(BIG).map(|s| s.len())),
        ),
        (
            "try_alloc_slice_fill_iter",
            Box::new(|a| a.try_alloc_slice_fill_iter(0..BIG).map(|s| s.len())),
        ),
        (
            "try_alloc_iter (exact)",
            Box::new(|a| a.try_alloc_iter(0..BIG as u32).map(|s| s.len())),
        ),
        (
            "try_alloc_iter (growing)",
            Box::new(|a| {
                a.try_alloc_iter((0..BIG as u32).filter(|_| true))
                    .map(|s| s.len())
            }),
        ),
        (
            "try_alloc_uninit",
            Box::new(|a| a.try_alloc_uninit::<[u8; BIG]>().map(|s| size_of_val(s))),
        ),
        (
            "try_alloc_uninit_slice",
            Box::new(|a| a.try_alloc_uninit_slice::<u8>(BIG).map(|s| s.len())),
        ),
    ]
}

#[test]
fn a_refusal_is_an_error_and_the_arena_goes_on() {
    for (call, try_call) in big_try_calls() {
        let arena = arena_near_its_limit();
        let before = arena.stats();
        assert_eq!(try_call(&arena), Err(AllocError), "{call}");
        assert_eq!(arena.stats(), before, "{call}: nothing kept");
        assert_serving(&arena);
        arena.set_limit(None);
        assert!(try_call(&arena).is_ok(), "{call}: fine without the limit");
    }
}

#[test]
fn a_refused_growth_drops_the_items_taken_once() {
    let log = Log::default();
    let arena = arena_near_its_limit();
    let before = arena.stats();
    let taken = Cell::new(0);
    let result = arena.try_alloc_iter(core::iter::from_fn(|| {
        taken.set(taken.get() + 1);
        Some(log.make())
    }));
    assert!(result.is_err());
    let ids = log.dropped_once();
    assert_eq!(ids.len(), taken.get(), "every item taken is dropped, once");
    // It grew up to the limit before it was refused.
    assert!(
        taken.get() > ROOM / size_of::<Tracked>() / 2,
        "{}",
        taken.get()
    );
    // The block was the most recent: it went back to the arena.
    assert_eq!(arena.stats(), before);
    assert_serving(&arena);
}

/// The plain call named by the child environment variable, under a limit that
/// refuses it. Does nothing when run normally.
const CHILD_ENV: &str = "ONEWAYALLOC_SLICE_CALLS_CHILD";

#[test]
fn child_plain_call_over_the_limit() {
    let Ok(call) = std::env::var(CHILD_ENV) else {
        return;
    };
    let arena = arena_near_its_limit();
    let len = match call.as_str() {
        "alloc_slice_clone" => arena.alloc_slice_clone(&vec![1u8; BIG]).len(),
        "alloc_slice_fill_copy" => arena.alloc_slice_fill_copy(BIG, 1u8).len(),
        "alloc_slice_fill_clone" => arena.alloc_slice_fill_clone(BIG, &1u8).len(),
        "alloc_slice_fill_default" => arena.alloc_slice_fill_default::<u8>(BIG).len(),
        "alloc_slice_fill_iter" => arena.alloc_slice_fill_iter(0..BIG).len(),
        "alloc_iter" => arena.alloc_iter((0..BIG as u32).filter(|_| true)).len(),
        "alloc_uninit" => size_of_val(arena.alloc_uninit::<[u8; BIG]>()),
        "alloc_uninit_slice" => arena.alloc_uninit_slice::<u8>(BIG).len(),
        other => panic!("unknown child case {other}"),
    };
    // Reaching this line means the call did not end the process.
    println!("CHILD-SURVIVED {len}");
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn plain_calls_over_the_limit_end_in_handle_alloc_error() {
    for call in [
        "alloc_slice_clone",
        "alloc_slice_fill_copy",
        "alloc_slice_fill_clone",
        "alloc_slice_fill_default",
        "alloc_slice_fill_iter",
        "alloc_iter",
        "alloc_uninit",
        "alloc_uninit_slice",
    ] {
        common::assert_child_ends_in_handle_alloc_error(
            "child_plain_call_over_the_limit",
            CHILD_ENV,
            call,
        );
    }
}

// ----- Panics in the user's code ---------------------------------------------------

/// Runs `f`, which must panic inside a call that allocated a block aligned to
/// `align` (and nothing after it), and returns the panic message. The block went
/// back to the arena: at most its alignment padding stays consumed (page mode; in
/// sanitizer mode, nothing), and the arena serves on.
fn panics_and_gives_back(arena: &OneWayAlloc, align: usize, f: impl FnOnce()) -> String {
    let before = arena.stats();
    let message = panic_message(f);
    let after = arena.stats();
    assert_eq!(after.capacity, before.capacity, "{message}: capacity");
    assert_eq!(after.pages, before.pages, "{message}: pages");
    let padding = if PAGE_MODE { align - 1 } else { 0 };
    assert!(
        after.used - before.used <= padding,
        "{message}: the block went back to the arena ({} -> {})",
        before.used,
        after.used
    );
    assert_serving(arena);
    message
}

#[test]
fn a_panicking_clone_drops_the_clones_made_once() {
    let arena = OneWayAlloc::new();
    let log = Log::with_clone_budget(5);
    let src: Vec<Tracked> = (0..10).map(|_| log.make()).collect(); // ids 0..10
    let align = align_of::<Tracked>();
    let message = panics_and_gives_back(&arena, align, || {
        arena.alloc_slice_clone(&src);
    });
    assert_eq!(message, "clone budget exhausted");
    assert_eq!(log.dropped_once(), [10, 11, 12, 13, 14], "the 5 clones");

    log.clones_left.set(3);
    panics_and_gives_back(&arena, align, || {
        let _ = arena.try_alloc_slice_clone(&src);
    });
    assert_eq!(log.dropped_once(), [10, 11, 12, 13, 14, 15, 16, 17]);

    log.clones_left.set(2);
    let message = panics_and_gives_back(&arena, align, || {
        arena.alloc_slice_fill_clone(4, &src[0]);
    });
    assert_eq!(message, "clone budget exhausted");
    assert_eq!(log.dropped_once(), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);

    drop(src);
    assert_eq!(log.dropped_once(), (0..20).collect::<Vec<_>>());
}

#[test]
fn clones_that_succeed_are_never_dropped_by_the_arena() {
    let arena = OneWayAlloc::new();
    let log = Log::with_clone_budget(usize::MAX);
    let src: Vec<Tracked> = (0..3).map(|_| log.make()).collect();
    let copies = arena.alloc_slice_clone(&src);
    let filled = arena.try_alloc_slice_fill_clone(4, &src[1]).unwrap();
    assert_eq!(copies.iter().map(|t| t.id).collect::<Vec<_>>(), [3, 4, 5]);
    assert_eq!(
        filled.iter().map(|t| t.id).collect::<Vec<_>>(),
        [6, 7, 8, 9]
    );
    assert!(log.dropped_once().is_empty());
}

#[test]
fn a_panicking_default_drops_the_elements_made_once() {
    thread_local! {
        static MADE: Cell<usize> = const { Cell::new(0) };
        static DROPPED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }
    struct Flaky(usize);
    impl Default for Flaky {
        fn default() -> Self {
            let n = MADE.with(|m| m.replace(m.get() + 1));
            assert!(n != 6, "default number {n} fails");
            Flaky(n)
        }
    }
    impl Drop for Flaky {
        fn drop(&mut self) {
            DROPPED.with(|d| d.borrow_mut().push(self.0));
        }
    }
    let arena = OneWayAlloc::new();
    let message = panics_and_gives_back(&arena, align_of::<Flaky>(), || {
        arena.alloc_slice_fill_default::<Flaky>(10);
    });
    assert_eq!(message, "default number 6 fails");
    assert_eq!(DROPPED.with(|d| d.borrow().clone()), [0, 1, 2, 3, 4, 5]);
    // The try_ twin, past the failing number: fine, and nothing dropped.
    let made = arena.try_alloc_slice_fill_default::<Flaky>(3).unwrap();
    assert_eq!(made.iter().map(|f| f.0).collect::<Vec<_>>(), [7, 8, 9]);
    assert_eq!(DROPPED.with(|d| d.borrow().len()), 6);
}

#[test]
fn a_panicking_closure_or_iterator_drops_the_items_taken_once() {
    type Call = fn(&OneWayAlloc, &Log, usize);
    let calls: [(&str, Call); 6] = [
        ("alloc_slice_fill_with", |a, log, k| {
            a.alloc_slice_fill_with(N, |i| {
                assert!(i < k, "item {i}");
                log.make()
            });
        }),
        ("try_alloc_slice_fill_with", |a, log, k| {
            let _ = a.try_alloc_slice_fill_with(N, |i| {
                assert!(i < k, "item {i}");
                log.make()
            });
        }),
        ("alloc_slice_fill_iter", |a, log, k| {
            a.alloc_slice_fill_iter((0..N).map(|i| {
                assert!(i < k, "item {i}");
                log.make()
            }));
        }),
        ("try_alloc_slice_fill_iter", |a, log, k| {
            let _ = a.try_alloc_slice_fill_iter((0..N).map(|i| {
                assert!(i < k, "item {i}");
                log.make()
            }));
        }),
        ("alloc_iter", |a, log, k| {
            a.alloc_iter((0..N).filter(|_| true).map(|i| {
                assert!(i < k, "item {i}");
                log.make()
            }));
        }),
        ("try_alloc_iter", |a, log, k| {
            let _ = a.try_alloc_iter((0..N).filter(|_| true).map(|i| {
                assert!(i < k, "item {i}");
                log.make()
            }));
        }),
    ];
    for (name, call) in calls {
        for k in [0, 1, 5, N / 2 + 3] {
            let arena = OneWayAlloc::new();
            let log = Log::default();
            let message =
                panics_and_gives_back(&arena, align_of::<Tracked>(), || call(&arena, &log, k));
            assert_eq!(message, format!("item {k}"), "{name}");
            assert_eq!(
                log.dropped_once(),
                (0..k as u32).collect::<Vec<_>>(),
                "{name}: the {k} items taken, once each"
            );
        }
    }
}

#[test]
fn a_panic_after_the_iterator_allocated_still_drops_once_and_the_arena_serves() {
    let arena = OneWayAlloc::new();
    let log = Log::default();
    let message = panic_message(|| {
        arena.alloc_iter((0..N).filter(|_| true).map(|i| {
            arena.alloc_slice_fill_copy(i % 7, 1u8); // the block is no longer last
            assert!(i < N / 2, "item {i}");
            log.make()
        }));
    });
    assert_eq!(message, format!("item {}", N / 2));
    assert_eq!(log.dropped_once().len(), N / 2);
    assert_serving(&arena);
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

// ----- Iterators that lie about their length ---------------------------------------

#[test]
fn a_short_exact_size_iterator_panics_with_a_clear_message() {
    let arena = OneWayAlloc::new();
    arena.alloc_str("before");
    let message = panics_and_gives_back(&arena, 8, || {
        arena.alloc_slice_fill_iter(claims_len(3, 10));
    });
    assert_eq!(
        message,
        "onewayalloc: alloc_slice_fill_iter: the iterator yielded 3 items, fewer than \
         the 10 its ExactSizeIterator::len reported"
    );
    let message = panics_and_gives_back(&arena, 8, || {
        let _ = arena.try_alloc_slice_fill_iter(claims_len(0, 1));
    });
    assert!(
        message.contains("yielded 0 items, fewer than the 1"),
        "{message}"
    );

    // The items taken before the iterator ran dry are dropped, once.
    let log = Log::default();
    let message = panics_and_gives_back(&arena, align_of::<Tracked>(), || {
        arena.alloc_slice_fill_iter(claims_len(4, 9).map(|_| log.make()));
    });
    assert!(
        message.contains("yielded 4 items, fewer than the 9"),
        "{message}"
    );
    assert_eq!(log.dropped_once(), [0, 1, 2, 3]);
}

#[test]
fn extra_items_are_left_in_the_iterator() {
    let arena = OneWayAlloc::new();
    let mut iter = claims_len(10, 4);
    assert_eq!(arena.alloc_slice_fill_iter(&mut iter), [0, 1, 2, 3]);
    assert_eq!(iter.next(), Some(4), "the fifth item was not taken");
    let mut iter = claims_len(10, 2);
    assert_eq!(arena.try_alloc_slice_fill_iter(&mut iter).unwrap(), [0, 1]);
    assert_eq!(iter.next(), Some(2));
    // Zero-sized items too.
    let mut units = claims_len(10, 3).map(|_| ());
    assert_eq!(arena.alloc_slice_fill_iter(&mut units).len(), 3);
    assert_eq!(units.next(), Some(()), "the fourth item was not taken");
}

#[test]
fn alloc_iter_takes_every_item_whatever_the_size_hint_says() {
    let arena = OneWayAlloc::new();
    let want: Vec<u64> = (0..N as u64).collect();
    for lower in [0, 1, N / 3, N - 1, N, N + 1, 2 * N, 10 * N] {
        assert_eq!(
            arena.alloc_iter(hinted(0..N as u64, lower)),
            &want[..],
            "{lower}"
        );
        assert_eq!(
            arena.try_alloc_iter(hinted(0..N as u64, lower)).unwrap(),
            &want[..],
            "{lower}"
        );
    }
    // An exact-size iterator that lies, given to alloc_iter: all its items.
    assert_eq!(arena.alloc_iter(claims_len(7, 3)), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(arena.alloc_iter(claims_len(2, 30)), [0, 1]);
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

/// Yields `0..first`, then `None` once, then three more items, then `None` for
/// good: not fused (and finite, so that a call that asks again after the first
/// `None` shows by taking the three).
struct NotFused {
    next: u32,
    first: u32,
    lower: usize,
}

impl Iterator for NotFused {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        self.next += 1;
        let item = self.next - 1;
        (item != self.first && item <= self.first + 3).then_some(item)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.lower, None)
    }
}

#[test]
fn alloc_iter_stops_at_the_first_none() {
    let arena = OneWayAlloc::new();
    for first in [0, 1, 5, 40] {
        for lower in [0, 1, 5, 6, 100] {
            let iter = || NotFused {
                next: 0,
                first,
                lower,
            };
            let want: Vec<u32> = (0..first).collect();
            assert_eq!(arena.alloc_iter(iter()), &want[..], "{first} {lower}");
            let units = arena.alloc_iter(iter().map(|_| ()));
            assert_eq!(units.len(), first as usize, "{first} {lower}: zero-sized");
        }
    }
}

// ----- alloc_iter: any iterator, grown in place ------------------------------------

#[test]
fn alloc_iter_of_filter_and_flat_map() {
    let arena = OneWayAlloc::new();
    let odd = arena.alloc_iter((0..N as u32).filter(|i| i % 2 == 1));
    assert_eq!(
        odd,
        (0..N as u32).filter(|i| i % 2 == 1).collect::<Vec<_>>()
    );
    let runs = || (0..N).flat_map(|i| 0..(i % 5) as u16);
    assert_eq!(arena.alloc_iter(runs()), runs().collect::<Vec<_>>());
    assert_eq!(
        arena.try_alloc_iter(runs()).unwrap(),
        runs().collect::<Vec<_>>()
    );
    let text = "a,bb,,ccc";
    let words = arena.alloc_iter(text.split(','));
    assert_eq!(words, ["a", "bb", "", "ccc"]);
    let chars = arena.alloc_iter(text.chars().rev().filter(|c| *c != ','));
    assert_eq!(chars.iter().collect::<String>(), "cccbba");
    assert_eq!(arena.alloc_iter(core::iter::empty::<u64>()), [] as [u64; 0]);
    assert_eq!(arena.alloc_iter(None::<Align64>), []);
    let aligned = arena.alloc_iter((0..9).map(Align64).filter(|a| a.0 != 4));
    assert_eq!(addr(aligned.as_ptr()) % 64, 0);
    assert_eq!(aligned.len(), 8);
}

/// Where the next `T` would go: a zero-length request at the cursor (it consumes
/// only the padding to `T`'s alignment).
fn cursor_for<T>(arena: &OneWayAlloc) -> usize {
    addr(arena.alloc_uninit_slice::<T>(0).as_ptr())
}

/// `alloc_iter` of `n` `u32` under a size hint of `lower`, in a page with room:
/// the slice starts at the cursor and ends where the next block starts, and `used`
/// grew by its bytes exactly. No copy is left behind, so it grew in place.
fn check_grown_in_place(n: usize, lower: usize) {
    let arena = OneWayAlloc::new();
    arena.alloc_bytes(5);
    let start = if PAGE_MODE {
        cursor_for::<u32>(&arena)
    } else {
        0
    };
    let before = arena.stats();
    let slice = arena.alloc_iter(hinted((0..n as u32).map(|i| i * 3), lower));
    let after = arena.stats();
    assert!(slice.iter().enumerate().all(|(i, &x)| x == 3 * i as u32));
    assert_eq!(slice.len(), n);
    assert_eq!(
        after.used - before.used,
        n * 4,
        "n = {n}, lower = {lower}: exactly the slice's bytes, no copy behind"
    );
    assert_eq!(
        after.capacity,
        before.capacity + if PAGE_MODE { 0 } else { n * 4 }
    );
    if PAGE_MODE {
        assert_eq!(
            addr(slice.as_ptr()),
            start,
            "it started at the cursor, never moved"
        );
        assert_eq!(cursor_for::<u32>(&arena), start + n * 4, "nothing after it");
    }
}

#[test]
fn alloc_iter_grows_in_place_and_leaves_nothing_behind() {
    for n in [1, 3, 4, 5, 17, N, 3 * N] {
        for lower in [0, 1, n / 2, n, n + 1, 2 * n + 7] {
            check_grown_in_place(n, lower);
        }
    }
}

#[test]
fn alloc_iter_grows_to_the_end_of_its_page_before_it_moves() {
    if !PAGE_MODE {
        return; // no pages
    }
    let arena = OneWayAlloc::new();
    // Leave 1000 bytes in the first page: doubling 512 -> 1024 bytes would not fit,
    // 200 u32 (800 bytes) do.
    let room = common::room(&arena);
    arena.alloc_bytes(room - 1000);
    assert_eq!(common::room(&arena), 1000);
    let before = arena.stats();
    let slice = arena.alloc_iter(hinted(0..200u32, 0));
    assert!(slice.iter().enumerate().all(|(i, &x)| x == i as u32));
    let after = arena.stats();
    assert_eq!(
        after.page_allocations, before.page_allocations,
        "no new page"
    );
    assert_eq!(after.used - before.used, 800);
    assert_eq!(common::room(&arena), 200);
    // One more item than the page holds: it moves once, to a page with room.
    let slice = arena.alloc_iter(hinted(0..51u32, 0));
    assert_eq!(slice.len(), 51);
    assert!(slice.iter().enumerate().all(|(i, &x)| x == i as u32));
    assert_eq!(arena.stats().page_allocations, before.page_allocations + 1);
    check_consistent(&arena);
}

/// `alloc_iter` of `n` items whatever the hint, then a block allocated behind the
/// slice: the two never overlap, and writing the block leaves the slice intact.
fn check_apart_from_the_next_block<T: Copy + PartialEq + Debug>(
    n: usize,
    item: impl Fn(usize) -> T,
) {
    let arena = OneWayAlloc::new();
    for lower in [0, 1, n / 3] {
        let slice = arena.alloc_iter(hinted((0..n).map(&item), lower));
        let next = arena.alloc_slice_fill_copy(64, 0xA5u8);
        let (start, end) = (addr(slice.as_ptr()), addr(slice.as_ptr_range().end));
        let (next_start, next_end) = (addr(next.as_ptr()), addr(next.as_ptr_range().end));
        assert!(
            end <= next_start || next_end <= start,
            "n = {n}, lower = {lower}: the slice {start:#x}..{end:#x} overlaps the next block \
             {next_start:#x}..{next_end:#x}"
        );
        assert!(
            slice.iter().enumerate().all(|(i, x)| *x == item(i)),
            "n = {n}, lower = {lower}"
        );
    }
}

#[test]
fn alloc_iter_slices_stay_inside_their_blocks() {
    for n in [1, 4, 5, 9, 33, N] {
        check_apart_from_the_next_block(n, |i| i as u8);
        check_apart_from_the_next_block(n, |i| i as u64);
        check_apart_from_the_next_block(n, |i| [i as u16; 600]);
    }
}

/// The capacity `alloc_iter`'s block has when it holds `k` items (`k >= 1`): as a
/// `Vec`'s, doubling from 8 bytes' worth (4 elements for small ones, 1 for elements
/// over 1 KiB).
fn doubled_capacity(k: usize, size: usize) -> usize {
    let min = match size {
        1 => 8,
        ..=1024 => 4,
        _ => 1,
    };
    let mut capacity = min;
    while capacity < k {
        capacity *= 2;
    }
    capacity
}

/// `alloc_iter` under a size hint of 0, with an iterator that allocates a byte
/// from the same arena as it makes item `k`: in a page with room the block has
/// grown in place, doubling, so the byte lands right behind the block's capacity
/// for `k` items; the next growth moves the block, and every item is kept.
fn check_growth_doubles<T: Copy + PartialEq + Debug>(k: usize, item: impl Fn(usize) -> T) {
    let n = 2 * k + 3;
    let arena = OneWayAlloc::new();
    let start = cursor_for::<T>(&arena);
    let probe = Cell::new(0);
    let slice = arena.alloc_iter(hinted(0..n, 0).map(|i| {
        if i == k {
            probe.set(addr(arena.alloc(0u8)));
        }
        item(i)
    }));
    assert_eq!(
        probe.get() - start,
        doubled_capacity(k, size_of::<T>()) * size_of::<T>(),
        "item {k} of {}-byte items",
        size_of::<T>()
    );
    assert_eq!(slice.len(), n);
    assert!(slice.iter().enumerate().all(|(i, x)| *x == item(i)));
    check_consistent(&arena);
}

#[test]
fn alloc_iter_grows_in_place_by_doubling_like_a_vec() {
    if !PAGE_MODE {
        return; // no pages: every growth goes to the backing allocator
    }
    for k in [1, 3, 4, 5, 8, 9, 17, 40] {
        check_growth_doubles(k, |i| i as u8);
        check_growth_doubles(k, |i| i as u32);
    }
    // Within the first page's room (the growth past it is the test above).
    for k in [1, 3, 4, 5, 8, 9, 17] {
        check_growth_doubles(k, |i| [i as u8; 1024]);
    }
    for k in [1, 2, 3, 5, 9] {
        check_growth_doubles(k, |i| [i as u8; 1025]);
    }
}

#[test]
fn alloc_iter_across_pages_keeps_every_item() {
    let n = if cfg!(miri) { 3000 } else { 300_000 };
    let arena = OneWayAlloc::new();
    if PAGE_MODE {
        arena.alloc_bytes(common::room(&arena) - KIB); // 12 KB will not fit
    }
    let slice = arena.alloc_iter((0..n as u32).filter(|_| true));
    assert_eq!(slice.len(), n);
    assert!(slice.iter().enumerate().all(|(i, &x)| x == i as u32));
    if PAGE_MODE {
        assert!(arena.stats().pages > 1);
        check_consistent(&arena);
    }
    // The exact-size path allocates once.
    let exact = arena.alloc_iter(0..n as u64);
    assert!(exact.iter().enumerate().all(|(i, &x)| x == i as u64));
}

#[test]
fn an_iterator_that_allocates_from_the_same_arena() {
    let arena = OneWayAlloc::new();
    // Strings allocated by the iterator, kept in the slice.
    let names = arena.alloc_iter((0..N).filter(|_| true).map(|i| {
        let name: &str = arena.alloc_str(&format!("dim{i}"));
        name
    }));
    assert_eq!(names.len(), N);
    assert!(
        names
            .iter()
            .enumerate()
            .all(|(i, n)| *n == format!("dim{i}"))
    );

    // Big allocations between items, so blocks move across pages, and the
    // references taken stay valid.
    let blocks = arena.alloc_iter((0..N / 4).map(|i| {
        let block = arena.alloc_slice_fill_copy(16, i as u8);
        arena.alloc_uninit_slice::<u8>(20 * KIB);
        (i, &*block)
    }));
    assert_eq!(blocks.len(), N / 4);
    if PAGE_MODE {
        assert!(arena.stats().pages > 1, "the items were made across pages");
    }
    for (i, (n, block)) in blocks.iter().enumerate() {
        assert_eq!(*n, i);
        assert_eq!(**block, [i as u8; 16]);
    }
    // An alloc_iter inside the iterator of another.
    let nested = arena.alloc_iter((0..N / 4).filter(|_| true).map(|i| {
        let inner: &[usize] = arena.alloc_iter((0..i).filter(|j| j % 3 == 0));
        inner
    }));
    for (i, inner) in nested.iter().enumerate() {
        assert_eq!(*inner, (0..i).filter(|j| j % 3 == 0).collect::<Vec<_>>());
    }
    // The same for the other calls that take the user's code.
    let squares = arena.alloc_slice_fill_iter((0..N).map(|i| *arena.alloc(i * i)));
    assert!(squares.iter().enumerate().all(|(i, &x)| x == i * i));
    let copies = arena.alloc_slice_fill_with(N, |i| &*arena.alloc_slice_copy(&[i; 3]));
    assert!(copies.iter().enumerate().all(|(i, x)| **x == [i; 3]));
    assert_eq!(names[N - 1], format!("dim{}", N - 1), "still valid");
    if PAGE_MODE {
        check_consistent(&arena);
    }
}

#[test]
fn an_iterator_that_rolls_its_own_block_back_keeps_growing_in_place() {
    use onewayalloc::collections::Vec as ArenaVec;
    let arena = OneWayAlloc::new();
    arena.alloc_bytes(1);
    let before = arena.stats();
    // Each item makes and drops an arena Vec: the most recent block is rolled back,
    // so alloc_iter's block is the most recent again at its next growth.
    let slice = arena.alloc_iter((0..N as u32).filter(|_| true).map(|i| {
        let mut scratch = ArenaVec::new_in(&arena);
        scratch.extend([i, i + 1]);
        scratch.iter().sum::<u32>()
    }));
    assert!(
        slice
            .iter()
            .enumerate()
            .all(|(i, &x)| x == 2 * i as u32 + 1)
    );
    let grew = arena.stats().used - before.used;
    if PAGE_MODE {
        // The slice, its alignment padding, and at most the last scratch block
        // (the final shrink cannot pass a block that is not rolled back).
        assert!(grew <= N * 4 + 3 + 8, "{grew}");
    } else {
        assert_eq!(grew, N * 4);
    }
}

#[test]
fn alloc_iter_never_drops_what_it_hands_out() {
    let arena = OneWayAlloc::new();
    let log = Log::default();
    let made = arena.alloc_iter((0..N).filter(|_| true).map(|_| log.make()));
    assert_eq!(made.len(), N);
    let exact = arena.try_alloc_iter((0..N).map(|_| log.make())).unwrap();
    assert_eq!(exact.len(), N);
    assert!(log.dropped_once().is_empty());
    assert!(made.iter().enumerate().all(|(i, t)| t.id == i as u32));
}

// ----- Scopes ----------------------------------------------------------------------

#[test]
fn every_call_on_a_scope_lives_for_the_scope_and_rolls_back() {
    let mut arena = OneWayAlloc::new();
    let src = [1u32, 2, 3];
    let log = Log::with_clone_budget(usize::MAX);
    let tracked = log.make();
    let before = arena.stats();
    arena.scope(|outer| {
        let clone = outer.alloc_slice_clone(&src);
        let try_clone = outer.try_alloc_slice_clone(&src).unwrap();
        let copy = outer.alloc_slice_fill_copy(2, 5u8);
        let try_copy = outer.try_alloc_slice_fill_copy(2, 6u8).unwrap();
        let fill_clone = outer.alloc_slice_fill_clone(2, &(1..2));
        let try_fill_clone = outer.try_alloc_slice_fill_clone(1, &tracked).unwrap();
        let default = outer.alloc_slice_fill_default::<u16>(3);
        let try_default = outer.try_alloc_slice_fill_default::<u16>(1).unwrap();
        let iter = outer.alloc_slice_fill_iter(src.iter().map(|x| x * 10));
        let try_iter = outer.try_alloc_slice_fill_iter(0..2u8).unwrap();
        let any = outer.alloc_iter((0..N as u32).filter(|i| i % 100 == 0));
        let try_any = outer.try_alloc_iter("x-y".split('-')).unwrap();
        let uninit = outer.alloc_uninit::<u64>().write(8);
        let try_uninit = outer.try_alloc_uninit::<u8>().unwrap().write(9);
        let uninit_slice = outer.alloc_uninit_slice::<u32>(4);
        let try_uninit_slice = outer.try_alloc_uninit_slice::<u32>(5).unwrap();
        // An inner scope that allocates a lot: the outer scope's slices stay valid.
        outer.scope(|inner| {
            let lots = inner.alloc_iter((0..N as u64 * 10).filter(|_| true));
            assert_eq!(lots.len(), N * 10);
        });
        assert_eq!(clone, src);
        assert_eq!(try_clone, src);
        assert_eq!(copy, [5, 5]);
        assert_eq!(try_copy, [6, 6]);
        assert_eq!(fill_clone, [1..2, 1..2]);
        assert_eq!(try_fill_clone[0].id, 1);
        assert_eq!(default, [0, 0, 0]);
        assert_eq!(try_default, [0]);
        assert_eq!(iter, [10, 20, 30]);
        assert_eq!(try_iter, [0, 1]);
        assert_eq!(any.len(), N.div_ceil(100));
        assert_eq!(try_any, ["x", "y"]);
        assert_eq!((*uninit, *try_uninit), (8, 9));
        assert_eq!((uninit_slice.len(), try_uninit_slice.len()), (4, 5));
    });
    assert_eq!(
        arena.stats().used,
        before.used,
        "the scope rolled everything back"
    );
    assert_serving(&arena);
    drop(tracked);
    assert_eq!(
        log.dropped_once(),
        [0],
        "the clone in the scope was never dropped"
    );
}

#[test]
fn a_panic_inside_a_scope_call_leaves_the_arena_usable() {
    let mut arena = OneWayAlloc::new();
    let log = Log::default();
    let message = panic_message(|| {
        arena.scope(|s| {
            s.alloc_iter((0..N).filter(|_| true).map(|i| {
                assert!(i < 7, "scope item {i}");
                log.make()
            }));
        });
    });
    assert_eq!(message, "scope item 7");
    assert_eq!(log.dropped_once().len(), 7);
    assert_eq!(arena.stats().used, 0);
    assert_serving(&arena);
}

#[test]
fn layout_of_the_slices_matches_the_layout_of_arrays() {
    // What a slice of `len` costs in `used` (page mode: no padding here; sanitizer
    // mode: the block's size), for every slice call.
    let arena = OneWayAlloc::new();
    for len in [1, 3, N] {
        let before = arena.stats().used;
        let made = every_call(&arena, len, 7u64);
        let grew = arena.stats().used - before;
        assert_eq!(
            grew,
            made.len() * Layout::array::<u64>(len).unwrap().size(),
            "len {len}"
        );
    }
}
