//! Runs one allocation operation N times on one arena (or on each), for counting
//! instructions under Callgrind: `scripts/callgrind.sh` runs it with two values of
//! N and divides the difference of the counts by the difference of N, which removes
//! the setup (process start, arena creation) and leaves the cost of one call plus
//! the loop around it (the `noop` op measures that loop alone).
//!
//! ```text
//! cargo run --release --example instructions -- <op> <n> [owa|bumpalo|bump-scope|all]
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
//!
//! Every arena is created large enough (4 MiB) that no op ever leaves its first
//! page or chunk: the figures are the fast paths.
//!
//! bump-scope's `Allocator` ops go through `BumpScopeApi2` (benches/common/compat.rs),
//! which forwards `#[inline(always)]` to bump-scope's own trait exactly as its
//! `allocator-api2-02` feature does (that feature does not build with this crate's
//! `nightly` feature).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

#[path = "../benches/common/compat.rs"]
mod compat;

use std::alloc::Layout;
use std::hint::black_box;
use std::ptr::NonNull;

use allocator_api2::alloc::Allocator;

/// Bytes every arena starts with: more than any op consumes for N = 101,000.
const ARENA_BYTES: usize = 4 << 20;
/// The size at which `grow` starts a fresh block.
const GROW_CAP: usize = 512;

const OPS: &[&str] = &[
    "noop",
    "alloc_u8",
    "alloc_u32",
    "allocate_static",
    "allocate_hidden",
    "grow",
    "reset",
];
const ALLOCATORS: &[&str] = &["owa", "bumpalo", "bump-scope"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!(
            "usage: instructions <op> <n> [owa|bumpalo|bump-scope|all]\nops: {}",
            OPS.join(", ")
        );
        std::process::exit(2)
    };
    if args.len() < 2 || args.len() > 3 {
        usage();
    }
    let op = args[0].as_str();
    if !OPS.contains(&op) {
        usage();
    }
    let Ok(n) = args[1].parse::<usize>() else {
        usage()
    };
    let which = args.get(2).map_or("all", String::as_str);
    let selected: Vec<&str> = match which {
        "all" => ALLOCATORS.to_vec(),
        name if ALLOCATORS.contains(&name) => vec![name],
        _ => usage(),
    };
    for name in selected {
        match name {
            "owa" => run_owa(op, n),
            "bumpalo" => run_bumpalo(op, n),
            _ => run_bump_scope(op, n),
        }
    }
}

fn run_owa(op: &str, n: usize) {
    let mut arena = onewayalloc::OneWayAlloc::with_size_hint(ARENA_BYTES);
    match op {
        "noop" => noop(n),
        "reset" => {
            arena.alloc(1u64);
            owa_reset(&mut arena, n);
        }
        "alloc_u8" => owa_alloc_u8(&arena, n),
        "alloc_u32" => owa_alloc_u32(&arena, n),
        _ => run_allocator(&&arena, op, n),
    }
    assert_eq!(arena.stats().pages, 1, "the op left the first page");
}

#[inline(never)]
fn owa_reset(arena: &mut onewayalloc::OneWayAlloc, n: usize) {
    for _ in 0..n {
        black_box(&mut *arena).reset();
    }
}

#[inline(never)]
fn owa_alloc_u8(arena: &onewayalloc::OneWayAlloc, n: usize) {
    for _ in 0..n {
        black_box(arena.alloc(black_box(1u8)));
    }
}

#[inline(never)]
fn owa_alloc_u32(arena: &onewayalloc::OneWayAlloc, n: usize) {
    for _ in 0..n {
        black_box(arena.alloc(black_box(1u32)));
    }
}

fn run_bumpalo(op: &str, n: usize) {
    let mut bump = bumpalo::Bump::with_capacity(ARENA_BYTES);
    match op {
        "noop" => noop(n),
        "reset" => {
            bump.alloc(1u64);
            bumpalo_reset(&mut bump, n);
        }
        "alloc_u8" => bumpalo_alloc_u8(&bump, n),
        "alloc_u32" => bumpalo_alloc_u32(&bump, n),
        _ => run_allocator(&&bump, op, n),
    }
    assert_eq!(
        bump.iter_allocated_chunks().count(),
        1,
        "the op left the chunk"
    );
}

#[inline(never)]
fn bumpalo_reset(bump: &mut bumpalo::Bump, n: usize) {
    for _ in 0..n {
        black_box(&mut *bump).reset();
    }
}

#[inline(never)]
fn bumpalo_alloc_u8(bump: &bumpalo::Bump, n: usize) {
    for _ in 0..n {
        black_box(bump.alloc(black_box(1u8)));
    }
}

#[inline(never)]
fn bumpalo_alloc_u32(bump: &bumpalo::Bump, n: usize) {
    for _ in 0..n {
        black_box(bump.alloc(black_box(1u32)));
    }
}

fn run_bump_scope(op: &str, n: usize) {
    let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(ARENA_BYTES);
    match op {
        "noop" => noop(n),
        "reset" => {
            bump.alloc(1u64);
            bump_scope_reset(&mut bump, n);
        }
        "alloc_u8" => bump_scope_alloc_u8(&bump, n),
        "alloc_u32" => bump_scope_alloc_u32(&bump, n),
        _ => run_allocator(&compat::BumpScopeApi2(&bump), op, n),
    }
    assert_eq!(bump.stats().count(), 1, "the op left the first chunk");
}

#[inline(never)]
fn bump_scope_reset(bump: &mut bump_scope::Bump, n: usize) {
    for _ in 0..n {
        black_box(&mut *bump).reset_to_start();
    }
}

#[inline(never)]
fn bump_scope_alloc_u8(bump: &bump_scope::Bump, n: usize) {
    for _ in 0..n {
        black_box(bump.alloc(black_box(1u8)).into_mut());
    }
}

#[inline(never)]
fn bump_scope_alloc_u32(bump: &bump_scope::Bump, n: usize) {
    for _ in 0..n {
        black_box(bump.alloc(black_box(1u32)).into_mut());
    }
}

#[inline(never)]
fn noop(n: usize) {
    for _ in 0..n {
        black_box(black_box(1u8));
    }
}

/// The `Allocator` ops, the same code for every arena.
fn run_allocator<A: Allocator>(a: &A, op: &str, n: usize) {
    match op {
        "allocate_static" => allocate_static(a, n),
        "allocate_hidden" => allocate_hidden(a, n),
        "grow" => grow(a, n),
        _ => unreachable!("op checked in main"),
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
