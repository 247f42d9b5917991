//! Runs one allocation operation N times on one arena (or on each), for counting
//! instructions under Callgrind: `scripts/callgrind.sh` runs it with two values of
//! N and divides the difference of the counts by the difference of N, which removes
//! the setup (process start, arena creation) and leaves the cost of one call plus
//! the loop around it (the `noop` op measures that loop alone).
//!
//! ```text
//! onewayalloc-harness instructions <OP> <N> [owa|bumpalo|bump-scope|all]
//! ```
//!
//! Ops:
//! - `noop`: the loop and its `black_box`es only;
//! - `alloc_u8`, `alloc_u32`: the typed `alloc` of each arena (`Bump::alloc` for
//!   bumpalo and bump-scope, `OneWayAlloc::alloc`);
//! - `allocate_static`: `Allocator::allocate` (allocator-api2 0.2) with a layout known
//!   at compile time (8 bytes, 8-aligned);
//! - `allocate_hidden`: the same with the layout behind `black_box`, as `Vec` and
//!   `HashMap` pass it;
//! - `grow`: `Allocator::grow` of the most recent block by 8 bytes (layouts behind
//!   `black_box`, as `Vec` passes them); the block grows from 8 to 512 bytes, then a
//!   fresh 8-byte block is started, so 1 call in 64 is an `allocate`. onewayalloc
//!   and bump-scope grow in place; bumpalo bumps downwards, so it moves the block
//!   (`memmove` of up to 504 bytes, counted);
//! - `reset`: back-to-back resets of an arena holding one page (chunk) with one
//!   block in it (bumpalo `reset`, bump-scope `reset_to_start`, which keeps its
//!   chunks as onewayalloc does; with one chunk bump-scope's `reset` does the same).
//! - `fill_iter_1k`: a slice of 1,000 `u32` from a `map` over a range (an
//!   `ExactSizeIterator`): onewayalloc's and bumpalo's `alloc_slice_fill_iter`,
//!   bump-scope's `alloc_iter_exact`;
//! - `iter_1k`: the same slice through the calls for any iterator: onewayalloc's and
//!   bump-scope's `alloc_iter`; bumpalo has none, so what its users write,
//!   `Vec::from_iter_in(..).into_bump_slice()`. Both slice ops reset the arena after
//!   every 512 slices (2 MiB), which adds a few hundredths of an instruction per
//!   slice.
//!
//! - `owned_string`: a value holding a `String` (made by `String::from`, one
//!   `malloc`) whose destructor runs: onewayalloc's `alloc_owned`, all N dropped by
//!   one `reset` at the end; bumpalo's `boxed::Box::new_in` and bump-scope's
//!   `BumpBox` (from `Bump::alloc`) kept in a `Vec` and dropped by hand, then the
//!   arena reset; and, with this op only, `std-box` (`Box::new` kept in a `Vec`,
//!   then dropped), `typed-arena` (`Arena::alloc`, then the arena dropped) and
//!   `strings-only` (the `String`s alone in a `Vec`: the cost every contender pays
//!   for making and freeing them, to subtract). The arenas start with room for
//!   every value (the `Vec`s too), so the figure is registering plus dropping.
//!
//! Every arena is created large enough (4 MiB) that no op ever leaves its first
//! page or chunk: the figures are the fast paths.
//!
//! bump-scope's `Allocator` ops go through `BumpScopeApi2` (the harness library's
//! `compat`), which forwards `#[inline(always)]` to bump-scope's own trait exactly
//! as its `allocator-api2-02` feature does (that feature does not build with the
//! `nightly` feature).

use std::alloc::Layout;
use std::hint::black_box;
use std::ptr::NonNull;

use clap::ValueEnum;
use onewayalloc::allocator_api2::alloc::Allocator;
use onewayalloc_harness::compat;
use onewayalloc_harness::owned_value::value;

/// Bytes every arena starts with: more than any op consumes for N = 101,000.
const ARENA_BYTES: usize = 4 << 20;
/// The size at which `grow` starts a fresh block.
const GROW_CAP: usize = 512;

#[derive(clap::Args)]
pub struct Args {
    /// The operation
    #[arg(value_enum)]
    op: Op,
    /// How many times to run it
    n: usize,
    /// The arena to run it on
    #[arg(value_enum, default_value_t = Which::All)]
    allocator: Which,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
#[value(rename_all = "snake_case")]
enum Op {
    /// The loop and its `black_box`es only
    Noop,
    /// The typed `alloc` of a `u8`
    AllocU8,
    /// The typed `alloc` of a `u32`
    AllocU32,
    /// `Allocator::allocate` with a layout known at compile time
    AllocateStatic,
    /// `Allocator::allocate` with the layout behind `black_box`
    AllocateHidden,
    /// `Allocator::grow` of the most recent block by 8 bytes
    Grow,
    /// Back-to-back resets of an arena holding one block
    Reset,
    /// A slice of 1,000 `u32` from an `ExactSizeIterator`
    #[value(name = "fill_iter_1k")]
    FillIter1k,
    /// A slice of 1,000 `u32` through the calls for any iterator
    #[value(name = "iter_1k")]
    Iter1k,
    /// A value holding a `String`, dropped by the arena or by hand
    OwnedString,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Which {
    Owa,
    Bumpalo,
    BumpScope,
    /// `Box::new` (with `owned_string` only)
    StdBox,
    /// typed-arena's `Arena` (with `owned_string` only)
    TypedArena,
    /// The `String`s alone (with `owned_string` only)
    StringsOnly,
    All,
}

pub fn run(args: &Args) {
    let (op, n) = (args.op, args.n);
    if op == Op::OwnedString {
        owned_string(args.allocator, n);
        return;
    }
    let all = args.allocator == Which::All;
    if all || args.allocator == Which::Owa {
        run_on::<onewayalloc::OneWayAlloc>(op, n);
    }
    if all || args.allocator == Which::Bumpalo {
        run_on::<bumpalo::Bump>(op, n);
    }
    if all || args.allocator == Which::BumpScope {
        run_on::<bump_scope::Bump>(op, n);
    }
}

/// What the ops call on each arena.
// `alloc` returns a fresh block that nothing else reaches.
#[allow(clippy::mut_from_ref)]
trait Typed {
    type Api<'a>: Allocator
    where
        Self: 'a;
    fn with_bytes(bytes: usize) -> Self;
    /// The typed `alloc`.
    fn alloc<T>(&self, value: T) -> &mut T;
    /// The arena's reset that keeps every chunk.
    fn reset(&mut self);
    /// The arena as an `allocator_api2` 0.2 allocator.
    fn api(&self) -> Self::Api<'_>;
    /// The pages or chunks it holds.
    fn blocks(&mut self) -> usize;
    /// A slice from an iterator of known length.
    fn fill_iter(&self, iter: impl ExactSizeIterator<Item = u32>) -> &mut [u32];
    /// A slice from any iterator.
    fn any_iter(&self, iter: impl Iterator<Item = u32>) -> &mut [u32];
}

/// `alloc`, `reset` and `api` of an arena whose own methods have those names and
/// whose reference is its `Allocator`.
macro_rules! own_calls {
    () => {
        #[inline(always)]
        fn alloc<T>(&self, value: T) -> &mut T {
            self.alloc(value)
        }
        #[inline(always)]
        fn reset(&mut self) {
            self.reset();
        }
        fn api(&self) -> &Self {
            self
        }
    };
}

impl Typed for onewayalloc::OneWayAlloc {
    type Api<'a> = &'a onewayalloc::OneWayAlloc;
    fn with_bytes(bytes: usize) -> Self {
        Self::with_size_hint(bytes)
    }
    own_calls!();
    fn blocks(&mut self) -> usize {
        self.stats().pages
    }
    #[inline(always)]
    fn fill_iter(&self, iter: impl ExactSizeIterator<Item = u32>) -> &mut [u32] {
        self.alloc_slice_fill_iter(iter)
    }
    #[inline(always)]
    fn any_iter(&self, iter: impl Iterator<Item = u32>) -> &mut [u32] {
        self.alloc_iter(iter)
    }
}

impl Typed for bumpalo::Bump {
    type Api<'a> = &'a bumpalo::Bump;
    fn with_bytes(bytes: usize) -> Self {
        Self::with_capacity(bytes)
    }
    own_calls!();
    fn blocks(&mut self) -> usize {
        self.iter_allocated_chunks().count()
    }
    #[inline(always)]
    fn fill_iter(&self, iter: impl ExactSizeIterator<Item = u32>) -> &mut [u32] {
        self.alloc_slice_fill_iter(iter)
    }
    #[inline(always)]
    fn any_iter(&self, iter: impl Iterator<Item = u32>) -> &mut [u32] {
        bumpalo::collections::Vec::from_iter_in(iter, self).into_bump_slice_mut()
    }
}

impl Typed for bump_scope::Bump {
    type Api<'a> = compat::BumpScopeApi2<'a>;
    fn with_bytes(bytes: usize) -> Self {
        Self::with_size(bytes)
    }
    #[inline(always)]
    fn alloc<T>(&self, value: T) -> &mut T {
        bump_scope::BumpBox::leak(self.alloc(value))
    }
    #[inline(always)]
    fn reset(&mut self) {
        self.reset_to_start();
    }
    fn api(&self) -> compat::BumpScopeApi2<'_> {
        compat::BumpScopeApi2(self)
    }
    fn blocks(&mut self) -> usize {
        self.stats().count()
    }
    #[inline(always)]
    fn fill_iter(&self, iter: impl ExactSizeIterator<Item = u32>) -> &mut [u32] {
        self.alloc_iter_exact(iter).into_mut()
    }
    #[inline(always)]
    fn any_iter(&self, iter: impl Iterator<Item = u32>) -> &mut [u32] {
        self.alloc_iter(iter).into_mut()
    }
}

fn run_on<A: Typed>(op: Op, n: usize) {
    let mut arena = A::with_bytes(ARENA_BYTES);
    match op {
        Op::Noop => noop(n),
        Op::Reset => {
            arena.alloc(1u64);
            reset(&mut arena, n);
        }
        Op::AllocU8 => alloc_u8(&arena, n),
        Op::AllocU32 => alloc_u32(&arena, n),
        Op::FillIter1k => fill_iter_1k(&mut arena, n),
        Op::Iter1k => iter_1k(&mut arena, n),
        _ => run_allocator(&arena.api(), op, n),
    }
    assert_eq!(arena.blocks(), 1, "the op left the first page or chunk");
}

#[inline(never)]
fn reset<A: Typed>(arena: &mut A, n: usize) {
    for _ in 0..n {
        black_box(&mut *arena).reset();
    }
}

#[inline(never)]
fn alloc_u8<A: Typed>(arena: &A, n: usize) {
    for _ in 0..n {
        black_box(arena.alloc(black_box(1u8)));
    }
}

#[inline(never)]
fn alloc_u32<A: Typed>(arena: &A, n: usize) {
    for _ in 0..n {
        black_box(arena.alloc(black_box(1u32)));
    }
}

/// The items of the slice ops: 1,000 values mapped from a range.
#[inline(always)]
fn items(seed: u32) -> impl ExactSizeIterator<Item = u32> {
    (0..1000).map(move |i: u32| i.wrapping_mul(3) ^ seed)
}

/// Slices between two resets: 2 MiB of them.
const SLICES_PER_RESET: usize = 512;

#[inline(never)]
fn fill_iter_1k<A: Typed>(arena: &mut A, n: usize) {
    for k in 0..n {
        black_box(arena.fill_iter(items(black_box(k as u32))));
        if (k + 1) % SLICES_PER_RESET == 0 {
            arena.reset();
        }
    }
}

#[inline(never)]
fn iter_1k<A: Typed>(arena: &mut A, n: usize) {
    for k in 0..n {
        black_box(arena.any_iter(items(black_box(k as u32))));
        if (k + 1) % SLICES_PER_RESET == 0 {
            arena.reset();
        }
    }
}

#[inline(never)]
fn noop(n: usize) {
    for _ in 0..n {
        black_box(black_box(1u8));
    }
}

/// The `Allocator` ops, the same code for every arena.
fn run_allocator<A: Allocator>(a: &A, op: Op, n: usize) {
    match op {
        Op::AllocateStatic => allocate_static(a, n),
        Op::AllocateHidden => allocate_hidden(a, n),
        Op::Grow => grow(a, n),
        _ => unreachable!("the typed ops are matched by the caller"),
    }
}

const STATIC: Layout = Layout::new::<u64>();

#[inline(never)]
fn allocate_static<A: Allocator>(a: &A, n: usize) {
    for _ in 0..n {
        let _ = black_box(a.allocate(STATIC));
    }
}

#[inline(never)]
fn allocate_hidden<A: Allocator>(a: &A, n: usize) {
    for _ in 0..n {
        let _ = black_box(a.allocate(black_box(STATIC)));
    }
}

#[inline(never)]
fn grow<A: Allocator>(a: &A, n: usize) {
    let start = Layout::new::<u64>();
    let mut layout = start;
    let mut block = first_block(a, start);
    for _ in 0..n {
        if layout.size() >= GROW_CAP {
            layout = start;
            block = first_block(a, start);
        } else {
            // SAFETY: 8-aligned and far below isize::MAX.
            let new = unsafe { Layout::from_size_align_unchecked(layout.size() + 8, 8) };
            // SAFETY: `block` is the live block allocated (or last grown) with `layout`
            // from `a`, and `new` is larger with the same alignment.
            let grown = unsafe { a.grow(block, black_box(layout), black_box(new)) };
            block = grown.expect("grow failed").cast();
            layout = new;
        }
        black_box(block);
    }
}

fn first_block<A: Allocator>(a: &A, layout: Layout) -> NonNull<u8> {
    a.allocate(layout).expect("allocation failed").cast()
}

/// Bytes the arenas start with for `owned_string`: every value of N = 101,000 fits.
const OWNED_BYTES: usize = 16 << 20;

/// Runs `make(i)` for `i` in `0..n`, keeping each result in a `Vec` (made with
/// room for all), then drops them all: the by-hand contenders of `owned_string`.
#[inline(always)]
fn keep_then_drop<T>(n: usize, mut make: impl FnMut(usize) -> T) {
    let mut kept = Vec::with_capacity(n);
    for i in 0..n {
        kept.push(black_box(make(i)));
    }
    drop(kept);
}

/// The `owned_string` op on `which` (see the module's doc).
fn owned_string(which: Which, n: usize) {
    let all = which == Which::All;
    if all || which == Which::Owa {
        let mut arena = onewayalloc::OneWayAlloc::with_size_hint(OWNED_BYTES);
        for i in 0..n {
            black_box(&arena.alloc_owned(value(i)).id);
        }
        arena.reset();
        assert_eq!(arena.stats().pages, 1);
    }
    if all || which == Which::Bumpalo {
        let mut bump = bumpalo::Bump::with_capacity(OWNED_BYTES);
        keep_then_drop(n, |i| bumpalo::boxed::Box::new_in(value(i), &bump));
        bump.reset();
    }
    if all || which == Which::BumpScope {
        let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(OWNED_BYTES);
        keep_then_drop(n, |i| bump.alloc(value(i)));
        bump.reset_to_start();
    }
    if all || which == Which::StdBox {
        keep_then_drop(n, |i| Box::new(value(i)));
    }
    if all || which == Which::TypedArena {
        let arena = typed_arena::Arena::with_capacity(n);
        for i in 0..n {
            black_box(&arena.alloc(value(i)).id);
        }
        drop(arena);
    }
    if all || which == Which::StringsOnly {
        keep_then_drop(n, |i| value(i).name);
    }
}
