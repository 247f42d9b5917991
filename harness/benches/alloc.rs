//! Criterion benchmarks: onewayalloc against bumpalo, bump-scope, the global
//! allocator (the system `malloc`: no `#[global_allocator]` is set) and mimalloc.
//!
//! ```text
//! cargo bench -p onewayalloc-harness --bench alloc                # everything, about 4 minutes
//! cargo bench -p onewayalloc-harness --bench alloc -- vec_push    # one group
//! ```
//!
//! Every group runs the same work on each contender and sets `Throughput::Elements`,
//! so criterion prints a rate per allocation (or push, or insert). Arenas are created
//! once per benchmark and reset after every iteration, so their pages or chunks are
//! warm, as they are in a long-running program; the `malloc`-like contenders free
//! what they allocated at the same point instead. bump-scope runs twice: with
//! `reset` (keeps only its largest chunk) and with `reset_to_start` (keeps them
//! all, like onewayalloc).
//!
//! - `small_mixed`: 100,000 allocations of 8 to 64 bytes (8-aligned; sizes from a
//!   fixed seed), then a reset.
//! - `alloc_struct32`, `alloc_str`, `alloc_slice_copy_1k`: the typed calls, 10,000
//!   (1,000 for the 1 KiB copies) per reset.
//! - `vec_push_1m`: 1,000,000 `u64` pushes into a vector that starts empty (grows
//!   in place in the arenas).
//! - `hashmap_insert_100k`: 100,000 inserts into a `hashbrown::HashMap<u64, u64>`
//!   with its default hasher. bump-scope takes part through an adapter that
//!   forwards to its own `Allocator` trait exactly as its `allocator-api2-02`
//!   feature does (see `onewayalloc_harness::compat`); mimalloc through its
//!   `GlobalAlloc`.
//! - `reset`: a reset of an arena holding 1 page (chunk) and 10,000 pages. See
//!   [`bench_reset`] and [`reset_after_use`] for what is and is not measured.
//!
//! After criterion, when the `reset` group was measured, the binary prints the
//! reset-after-use table. The contenders' ratios come from criterion's own results:
//! `scripts/bench.sh` saves them as a baseline (`-- --save-baseline NAME`) and
//! compares the contenders of each group with `critcmp NAME -g '^([^/]+/)'`.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bump_scope::traits::BumpAllocatorTyped;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::vec::Vec as ApiVec;
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};
use onewayalloc_harness::compat::{BumpScopeApi2, Mi};

const OWA: &str = "onewayalloc";
const BUMPALO: &str = "bumpalo";
const BS_RESET: &str = "bump-scope_reset";
const BS_START: &str = "bump-scope_reset_to_start";
const GLOBAL: &str = "global_malloc";
const MIMALLOC: &str = "mimalloc";

/// Set when criterion runs the `reset` group (its filter may skip it).
static RESET_MEASURED: AtomicBool = AtomicBool::new(false);

/// How bump-scope is reset after each iteration.
#[derive(Clone, Copy)]
enum BsReset {
    Reset,
    ToStart,
}

impl BsReset {
    fn name(self) -> &'static str {
        match self {
            BsReset::Reset => BS_RESET,
            BsReset::ToStart => BS_START,
        }
    }

    fn apply(self, bump: &mut bump_scope::Bump) {
        match self {
            BsReset::Reset => bump.reset(),
            BsReset::ToStart => bump.reset_to_start(),
        }
    }
}

const BS_MODES: [BsReset; 2] = [BsReset::Reset, BsReset::ToStart];

/// A `malloc`-like allocator the typed benchmarks allocate from and free to.
trait Malloc {
    fn name(&self) -> &'static str;
    /// # Safety
    /// `layout` has a non-zero size.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8;
    /// # Safety
    /// `ptr` came from `alloc` with `layout`.
    unsafe fn free(&self, ptr: *mut u8, layout: Layout);
}

struct SystemMalloc;

impl Malloc for SystemMalloc {
    fn name(&self) -> &'static str {
        GLOBAL
    }
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn free(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

struct MiMalloc;

impl Malloc for MiMalloc {
    fn name(&self) -> &'static str {
        MIMALLOC
    }
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn free(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
}

/// The blocks a `malloc`-like contender holds until the end of an iteration, when
/// they are all freed (what the arenas' reset stands for).
struct Live<M: Malloc> {
    malloc: M,
    blocks: Vec<(NonNull<u8>, Layout)>,
}

impl<M: Malloc> Live<M> {
    fn new(malloc: M, capacity: usize) -> Self {
        Live {
            malloc,
            blocks: Vec::with_capacity(capacity),
        }
    }

    /// A block of `layout` (non-zero size), recorded to be freed.
    #[inline(always)]
    fn alloc(&mut self, layout: Layout) -> NonNull<u8> {
        // SAFETY: every layout of these benchmarks has a non-zero size.
        let ptr = NonNull::new(unsafe { self.malloc.alloc(layout) }).expect("out of memory");
        self.blocks.push((ptr, layout));
        ptr
    }

    fn free_all(&mut self) {
        for (ptr, layout) in self.blocks.drain(..) {
            // SAFETY: allocated by `alloc` with `layout`, freed once.
            unsafe { self.malloc.free(ptr.as_ptr(), layout) };
        }
    }
}

/// A benchmark group with a throughput of `elements` per iteration.
fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
    elements: usize,
    samples: usize,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(elements as u64));
    g.sample_size(samples);
    g
}

// ----- small_mixed --------------------------------------------------------------------

const SMALL_COUNT: usize = 100_000;

/// 8-aligned layouts of 8..=64 bytes from a fixed xorshift seed.
fn small_layouts() -> Vec<Layout> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..SMALL_COUNT)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Layout::from_size_align(8 + (x % 57) as usize, 8).unwrap()
        })
        .collect()
}

fn bench_small_mixed(c: &mut Criterion) {
    let layouts = small_layouts();
    let mut g = group(c, "small_mixed", SMALL_COUNT, 20);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            for &layout in &layouts {
                black_box(arena.alloc_layout(black_box(layout)));
            }
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            for &layout in &layouts {
                black_box(bump.alloc_layout(black_box(layout)));
            }
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                for &layout in &layouts {
                    black_box(bump.allocate_layout(black_box(layout)));
                }
                mode.apply(&mut bump);
            })
        });
    }
    small_mixed_malloc(&mut g, SystemMalloc, &layouts);
    small_mixed_malloc(&mut g, MiMalloc, &layouts);
    g.finish();
}

fn small_mixed_malloc<M: Malloc>(g: &mut BenchmarkGroup<WallTime>, malloc: M, layouts: &[Layout]) {
    let name = malloc.name();
    let mut live = Live::new(malloc, layouts.len());
    g.bench_function(name, |b| {
        b.iter(|| {
            for &layout in layouts {
                black_box(live.alloc(black_box(layout)));
            }
            live.free_all();
        })
    });
}

// ----- typed calls ---------------------------------------------------------------------

const TYPED_COUNT: usize = 10_000;
const SLICE_COUNT: usize = 1_000;

/// A 32-byte value (written, never read back).
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Point {
    time: u64,
    value: f64,
    min: f32,
    max: f32,
    flags: u64,
}

const _: () = assert!(size_of::<Point>() == 32);

#[inline(always)]
fn point(i: usize) -> Point {
    Point {
        time: i as u64,
        value: i as f64,
        min: 0.0,
        max: 1.0,
        flags: 7,
    }
}

/// Names of the length metric names have (9 to 31 bytes).
const NAMES: [&str; 8] = [
    "system.cpu",
    "system.load.load1",
    "disk.sda.reads",
    "net.eth0.received.kilobits",
    "apps.cpu.user",
    "mem.available",
    "cgroup_docker_1234.cpu_limit",
    "system.interrupts.timer",
];

fn bench_alloc_struct32(c: &mut Criterion) {
    let mut g = group(c, "alloc_struct32", TYPED_COUNT, 20);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                black_box(arena.alloc(point(black_box(i))));
            }
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                black_box(bump.alloc(point(black_box(i))));
            }
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                for i in 0..TYPED_COUNT {
                    black_box(bump.alloc(point(black_box(i))).into_mut());
                }
                mode.apply(&mut bump);
            })
        });
    }
    struct32_malloc(&mut g, SystemMalloc);
    struct32_malloc(&mut g, MiMalloc);
    g.finish();
}

fn struct32_malloc<M: Malloc>(g: &mut BenchmarkGroup<WallTime>, malloc: M) {
    let name = malloc.name();
    let mut live = Live::new(malloc, TYPED_COUNT);
    g.bench_function(name, |b| {
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                let block = live.alloc(Layout::new::<Point>()).cast::<Point>();
                // SAFETY: a fresh block sized and aligned for a `Point`.
                unsafe { block.write(point(black_box(i))) };
                black_box(block);
            }
            live.free_all();
        })
    });
}

fn bench_alloc_str(c: &mut Criterion) {
    let mut g = group(c, "alloc_str", TYPED_COUNT, 20);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                black_box(arena.alloc_str(black_box(NAMES[i % NAMES.len()])));
            }
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                black_box(bump.alloc_str(black_box(NAMES[i % NAMES.len()])));
            }
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                for i in 0..TYPED_COUNT {
                    black_box(bump.alloc_str(black_box(NAMES[i % NAMES.len()])).into_mut());
                }
                mode.apply(&mut bump);
            })
        });
    }
    str_malloc(&mut g, SystemMalloc);
    str_malloc(&mut g, MiMalloc);
    g.finish();
}

fn str_malloc<M: Malloc>(g: &mut BenchmarkGroup<WallTime>, malloc: M) {
    let name = malloc.name();
    let mut live = Live::new(malloc, TYPED_COUNT);
    g.bench_function(name, |b| {
        b.iter(|| {
            for i in 0..TYPED_COUNT {
                let s = black_box(NAMES[i % NAMES.len()]).as_bytes();
                let block = live.alloc(Layout::for_value(s));
                // SAFETY: a fresh block of `s.len()` bytes.
                unsafe { block.copy_from_nonoverlapping(NonNull::from(s).cast(), s.len()) };
                black_box(block);
            }
            live.free_all();
        })
    });
}

fn bench_alloc_slice_copy_1k(c: &mut Criterion) {
    let src: Vec<u8> = (0..1024).map(|i| i as u8).collect();
    let src = &src[..];
    let mut g = group(c, "alloc_slice_copy_1k", SLICE_COUNT, 20);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            for _ in 0..SLICE_COUNT {
                black_box(arena.alloc_slice_copy(black_box(src)));
            }
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            for _ in 0..SLICE_COUNT {
                black_box(bump.alloc_slice_copy(black_box(src)));
            }
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                for _ in 0..SLICE_COUNT {
                    black_box(bump.alloc_slice_copy(black_box(src)).into_mut());
                }
                mode.apply(&mut bump);
            })
        });
    }
    slice_malloc(&mut g, SystemMalloc, src);
    slice_malloc(&mut g, MiMalloc, src);
    g.finish();
}

fn slice_malloc<M: Malloc>(g: &mut BenchmarkGroup<WallTime>, malloc: M, src: &[u8]) {
    let name = malloc.name();
    let mut live = Live::new(malloc, SLICE_COUNT);
    g.bench_function(name, |b| {
        b.iter(|| {
            for _ in 0..SLICE_COUNT {
                let src = black_box(src);
                let block = live.alloc(Layout::for_value(src));
                // SAFETY: a fresh block of `src.len()` bytes.
                unsafe { block.copy_from_nonoverlapping(NonNull::from(src).cast(), src.len()) };
                black_box(block);
            }
            live.free_all();
        })
    });
}

// ----- collections ---------------------------------------------------------------------

const PUSHES: usize = 1_000_000;
const INSERTS: usize = 100_000;

fn bench_vec_push(c: &mut Criterion) {
    let mut g = group(c, "vec_push_1m", PUSHES, 10);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            let mut v = ApiVec::new_in(&arena);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
            drop(v);
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            let mut v = bumpalo::collections::Vec::new_in(&bump);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
            drop(v);
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                let mut v = bump_scope::BumpVec::new_in(&bump);
                for i in 0..PUSHES as u64 {
                    v.push(black_box(i));
                }
                black_box(&v);
                drop(v);
                mode.apply(&mut bump);
            })
        });
    }
    g.bench_function(GLOBAL, |b| {
        b.iter(|| {
            let mut v = Vec::new();
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
        })
    });
    g.bench_function(MIMALLOC, |b| {
        b.iter(|| {
            let mut v = ApiVec::new_in(Mi);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
        })
    });
    g.finish();
}

/// 1M pushes into a fresh allocator each time (created, used, dropped): the cold
/// case, where every page or chunk is new memory. The warm case is `vec_push_1m`.
fn bench_vec_push_cold(c: &mut Criterion) {
    let mut g = group(c, "vec_push_1m_cold", PUSHES, 10);
    g.bench_function(OWA, |b| {
        b.iter(|| {
            let arena = OneWayAlloc::new();
            let mut v = ApiVec::new_in(&arena);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
            drop(v);
            drop(arena);
        })
    });
    g.bench_function(BUMPALO, |b| {
        b.iter(|| {
            let bump = bumpalo::Bump::new();
            let mut v = bumpalo::collections::Vec::new_in(&bump);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
            drop(v);
            drop(bump);
        })
    });
    g.bench_function("bump-scope", |b| {
        b.iter(|| {
            let bump: bump_scope::Bump = bump_scope::Bump::new();
            let mut v = bump_scope::BumpVec::new_in(&bump);
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
            drop(v);
            drop(bump);
        })
    });
    g.bench_function(GLOBAL, |b| {
        b.iter(|| {
            let mut v = Vec::new();
            for i in 0..PUSHES as u64 {
                v.push(black_box(i));
            }
            black_box(&v);
        })
    });
    g.finish();
}

#[inline(always)]
fn key(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn bench_hashmap_insert(c: &mut Criterion) {
    let mut g = group(c, "hashmap_insert_100k", INSERTS, 10);
    g.bench_function(OWA, |b| {
        let mut arena = OneWayAlloc::new();
        b.iter(|| {
            let mut map = HashMap::with_hasher_in(DefaultHashBuilder::default(), &arena);
            for i in 0..INSERTS {
                map.insert(key(black_box(i)), i as u64);
            }
            black_box(&map);
            drop(map);
            arena.reset();
        })
    });
    g.bench_function(BUMPALO, |b| {
        let mut bump = bumpalo::Bump::new();
        b.iter(|| {
            let mut map = HashMap::with_hasher_in(DefaultHashBuilder::default(), &bump);
            for i in 0..INSERTS {
                map.insert(key(black_box(i)), i as u64);
            }
            black_box(&map);
            drop(map);
            bump.reset();
        })
    });
    for mode in BS_MODES {
        g.bench_function(mode.name(), |b| {
            let mut bump: bump_scope::Bump = bump_scope::Bump::new();
            b.iter(|| {
                let mut map =
                    HashMap::with_hasher_in(DefaultHashBuilder::default(), BumpScopeApi2(&bump));
                for i in 0..INSERTS {
                    map.insert(key(black_box(i)), i as u64);
                }
                black_box(&map);
                drop(map);
                mode.apply(&mut bump);
            })
        });
    }
    g.bench_function(GLOBAL, |b| {
        b.iter(|| {
            let mut map = HashMap::with_hasher(DefaultHashBuilder::default());
            for i in 0..INSERTS {
                map.insert(key(black_box(i)), i as u64);
            }
            black_box(&map);
        })
    });
    g.bench_function(MIMALLOC, |b| {
        b.iter(|| {
            let mut map = HashMap::with_hasher_in(DefaultHashBuilder::default(), Mi);
            for i in 0..INSERTS {
                map.insert(key(black_box(i)), i as u64);
            }
            black_box(&map);
        })
    });
    g.finish();
}

// ----- reset ---------------------------------------------------------------------------

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
fn bench_reset(c: &mut Criterion) {
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
    for mode in BS_MODES {
        let mut bump: bump_scope::Bump = bump_scope::Bump::with_size(64 << 10);
        bump.alloc_uninit_slice::<u8>(1000);
        g.bench_function(BenchmarkId::new(mode.name(), "1_chunk"), |b| {
            b.iter(|| mode.apply(black_box(&mut bump)))
        });
    }
    g.finish();
}

/// One row of the reset-after-use table: medians of one reset, and of an empty
/// timed region after the same fill (the timer, and whatever the fill left cold
/// for it, such as TLB entries after touching 10,000 pages).
struct ResetRow {
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
fn reset_after_use() -> Vec<ResetRow> {
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
    for mode in BS_MODES {
        let cell = std::cell::RefCell::new(bump_scope::Bump::with_size(64 << 10));
        let medians = time_resets(
            1001,
            || {
                cell.borrow().alloc_uninit_slice::<u8>(1000);
            },
            || mode.apply(&mut cell.borrow_mut()),
        );
        row(&format!("{}, 1 chunk", mode.name()), medians);
    }
    {
        let cell = std::cell::RefCell::new(new_bump_scope_chunks());
        let medians = time_resets(
            201,
            || *cell.borrow_mut() = new_bump_scope_chunks(),
            || BsReset::Reset.apply(&mut cell.borrow_mut()),
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
            || BsReset::ToStart.apply(&mut cell.borrow_mut()),
        );
        row(
            &format!("{BS_START}, {BS_CHUNKS} chunks (keeps them)"),
            medians,
        );
    }
    rows
}

// ----- reset after use ---------------------------------------------------------------------

fn print_resets(resets: &[ResetRow]) {
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

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    bench_small_mixed(&mut c);
    bench_alloc_struct32(&mut c);
    bench_alloc_str(&mut c);
    bench_alloc_slice_copy_1k(&mut c);
    bench_vec_push(&mut c);
    bench_vec_push_cold(&mut c);
    bench_hashmap_insert(&mut c);
    bench_reset(&mut c);
    c.final_summary();
    // The reset-after-use table goes with the reset benchmarks: it runs when
    // criterion measured them in this run, not under a filter that skips them nor
    // under `cargo test --benches` (which runs each benchmark once, without the
    // `--bench` argument that `cargo bench` passes).
    let benching = std::env::args().any(|arg| arg == "--bench");
    if benching && RESET_MEASURED.load(Ordering::Relaxed) {
        print_resets(&reset_after_use());
    }
}
