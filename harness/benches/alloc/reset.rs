//! `reset`: a reset of an arena holding 1 page (chunk) and 10,000 pages. See
//! [`bench_reset`] and [`reset_after_use`] for what is and is not measured. After
//! criterion, when this group was measured, `main` prints the reset-after-use table.

use std::alloc::Layout;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use onewayalloc::OneWayAlloc;

use crate::contenders::{BS_RESET, BS_START, BUMPALO, OWA, group};

/// Set when criterion runs the `reset` group (its filter may skip it).
pub static RESET_MEASURED: AtomicBool = AtomicBool::new(false);

/// A reset of bump-scope's `Bump`.
type BumpScopeReset = fn(&mut bump_scope::Bump);

/// bump-scope with each of its resets: `reset` and `reset_to_start`.
fn bump_scope_modes() -> [(&'static str, BumpScopeReset); 2] {
    [
        (BS_RESET, |bump| bump.reset()),
        (BS_START, |bump| bump.reset_to_start()),
    ]
}

const MANY_PAGES: usize = 10_000;
/// A request that needs a page of its own: after the first pages, every page is
/// 1 MiB and holds one of these.
const BIG: usize = 600 << 10;

/// Makes a new or reset `arena` hold `MANY_PAGES` pages and use them all: the first
/// page cannot take a `BIG` block and every other page takes exactly one. The first
/// call obtains the pages (about 10 GB of address space, untouched but for the page
/// headers); later calls, after a reset, reuse them in list order.
fn fill_pages(arena: &OneWayAlloc) {
    for _ in 1..MANY_PAGES {
        arena.alloc_bytes(BIG);
    }
}

/// Makes `bump` hold `MANY_PAGES` chunks of 1 MiB (bumpalo doubles its chunk size
/// unless an allocation limit stops it; the limit is lifted afterwards).
fn fill_bumpalo_chunks(bump: &bumpalo::Bump) {
    for _ in 0..MANY_PAGES {
        bump.set_allocation_limit(Some(bump.allocated_bytes() + (3 << 19)));
        bump.alloc_layout(Layout::from_size_align((1 << 20) - 256, 16).unwrap());
    }
    bump.set_allocation_limit(None);
}

/// bump-scope doubles its chunk size without bound, so 10,000 chunks cannot exist:
/// this makes the most there is room for, 19 chunks of 4 KiB to 1 GiB (2 GiB of
/// address space, untouched).
const BS_CHUNKS: usize = 19;

fn fill_bump_scope_chunks(bump: &bump_scope::Bump) {
    let mut size = 2048;
    for _ in 0..BS_CHUNKS {
        bump.alloc_uninit_slice::<u8>(size);
        size *= 2;
    }
}

fn new_bump_scope_chunks() -> bump_scope::Bump {
    let bump: bump_scope::Bump = bump_scope::Bump::with_size(4096);
    fill_bump_scope_chunks(&bump);
    bump
}

/// Criterion's part of the reset benchmarks: back-to-back resets of a standing
/// arena. For onewayalloc that is exactly the work of a reset after use: `reset`
/// never looks at the pages, used or not, so the 1-page and 10,000-page figures
/// compare like with like (the target: 10,000 pages within 2x of 1 page). For the
/// peers it is only true with one chunk (a second reset has no chunks left to free
/// or walk), so they appear here with one chunk; their resets of many chunks, and
/// onewayalloc's reset right after filling 10,000 pages, are timed one by one in
/// [`reset_after_use`].
pub fn bench_reset(c: &mut Criterion) {
    let mut g = group(c, "reset", 1, 100);
    {
        let mut arena = OneWayAlloc::new();
        arena.alloc_bytes(1000);
        g.bench_function(BenchmarkId::new(OWA, "1_page"), |b| {
            RESET_MEASURED.store(true, Ordering::Relaxed);
            b.iter(|| black_box(&mut arena).reset())
        });
    }
    {
        let mut arena = OneWayAlloc::new();
        fill_pages(&arena);
        assert_eq!(arena.stats().pages, MANY_PAGES);
        g.bench_function(BenchmarkId::new(OWA, "10000_pages"), |b| {
            b.iter(|| black_box(&mut arena).reset())
        });
    }
    {
        let mut bump = bumpalo::Bump::with_capacity(64 << 10);
        bump.alloc_layout(Layout::from_size_align(1000, 8).unwrap());
        g.bench_function(BenchmarkId::new(BUMPALO, "1_chunk"), |b| {
            b.iter(|| black_box(&mut bump).reset())
        });
    }
    for (name, reset) in bump_scope_modes() {
        let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(64 << 10);
        bump.alloc_uninit_slice::<u8>(1000);
        g.bench_function(BenchmarkId::new(name, "1_chunk"), |b| {
            b.iter(|| reset(black_box(&mut bump)))
        });
    }
    g.finish();
}

/// One row of the reset-after-use table: medians of one reset, and of an empty
/// timed region after the same fill (the timer, and whatever the fill left cold
/// for it, such as TLB entries after touching 10,000 pages).
pub struct ResetRow {
    name: String,
    reset: Duration,
    control: Duration,
}

/// Times single resets right after `fill` (one `Instant` pair around each), and
/// the same `Instant` pair around nothing after the same fill, `rounds` times each,
/// interleaved. Returns the two medians.
fn time_resets(
    rounds: usize,
    mut fill: impl FnMut(),
    mut reset: impl FnMut(),
) -> (Duration, Duration) {
    let mut resets = Vec::with_capacity(rounds);
    let mut controls = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        fill();
        let start = Instant::now();
        black_box(());
        controls.push(start.elapsed());
        reset();
        fill();
        let start = Instant::now();
        reset();
        resets.push(start.elapsed());
    }
    resets.sort();
    controls.sort();
    (resets[rounds / 2], controls[rounds / 2])
}

/// Resets timed one by one right after use: what criterion cannot time when every
/// reset needs a refill that costs a million times more (see [`bench_reset`]).
pub fn reset_after_use() -> Vec<ResetRow> {
    let mut rows = Vec::new();
    let mut row = |name: &str, (reset, control)| {
        rows.push(ResetRow {
            name: name.to_string(),
            reset,
            control,
        })
    };
    {
        let cell = std::cell::RefCell::new(OneWayAlloc::new());
        let medians = time_resets(
            1001,
            || {
                cell.borrow().alloc_bytes(1000);
            },
            || cell.borrow_mut().reset(),
        );
        row("onewayalloc, 1 page (used)", medians);
    }
    {
        let cell = std::cell::RefCell::new(OneWayAlloc::new());
        let medians = time_resets(
            201,
            || fill_pages(&cell.borrow()),
            || cell.borrow_mut().reset(),
        );
        let arena = cell.borrow();
        assert_eq!(arena.stats().pages, MANY_PAGES);
        assert_eq!(arena.stats().page_allocations, MANY_PAGES);
        drop(arena);
        row("onewayalloc, 10,000 pages (all used)", medians);
    }
    {
        let cell = std::cell::RefCell::new(bumpalo::Bump::with_capacity(64 << 10));
        let medians = time_resets(
            1001,
            || {
                cell.borrow()
                    .alloc_layout(Layout::from_size_align(1000, 8).unwrap());
            },
            || cell.borrow_mut().reset(),
        );
        row("bumpalo, 1 chunk", medians);
    }
    {
        let cell = std::cell::RefCell::new(bumpalo::Bump::new());
        let medians = time_resets(
            21,
            || fill_bumpalo_chunks(&cell.borrow()),
            || cell.borrow_mut().reset(),
        );
        row("bumpalo, 10,000 chunks (frees 9,999)", medians);
    }
    for (name, reset) in bump_scope_modes() {
        let cell = std::cell::RefCell::new(bump_scope::Bump::with_size(64 << 10));
        let medians = time_resets(
            1001,
            || {
                cell.borrow().alloc_uninit_slice::<u8>(1000);
            },
            || reset(&mut cell.borrow_mut()),
        );
        row(&format!("{name}, 1 chunk"), medians);
    }
    {
        let cell = std::cell::RefCell::new(new_bump_scope_chunks());
        let medians = time_resets(
            201,
            || *cell.borrow_mut() = new_bump_scope_chunks(),
            || cell.borrow_mut().reset(),
        );
        row(
            &format!("{BS_RESET}, {BS_CHUNKS} chunks (frees 18)"),
            medians,
        );
    }
    {
        let cell = std::cell::RefCell::new(new_bump_scope_chunks());
        let medians = time_resets(
            201,
            || fill_bump_scope_chunks(&cell.borrow()),
            || cell.borrow_mut().reset_to_start(),
        );
        row(
            &format!("{BS_START}, {BS_CHUNKS} chunks (keeps them)"),
            medians,
        );
    }
    rows
}

pub fn print_resets(resets: &[ResetRow]) {
    println!(
        "\n## Reset right after use (one reset timed at a time, medians; the control is the \
         same timer around nothing after the same fill)\n"
    );
    println!("| arena | reset | control | difference |\n|---|---:|---:|---:|");
    for row in resets {
        println!(
            "| {} | {:?} | {:?} | {:?} |",
            row.name,
            row.reset,
            row.control,
            row.reset.saturating_sub(row.control)
        );
    }
}
