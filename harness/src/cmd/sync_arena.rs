//! `SyncOneWayAlloc` against `OneWayAlloc` and against the arenas that many threads
//! allocate into: blink-alloc's `SyncBlinkAlloc` (an atomic bump on a shared chunk)
//! and `LocalBlinkAlloc` (a per-thread proxy taking chunks from it), bumpalo-herd (a
//! pool of `Bump`s lent per thread), bump-local (a `Bump` per thread in a
//! `ThreadLocal`) and `Mutex<bumpalo::Bump>`. One interleaved run, so that a loaded
//! machine slows every contender alike; the tables give medians and ratios.
//!
//! Rows (each round, every contender in rotated order):
//! - `one thread, warm`: 100,000 allocations of 8 to 64 bytes (8-aligned, sizes
//!   from a fixed seed, as the criterion group `small_mixed`), then a reset (not
//!   timed);
//! - `two threads, warm`: the same 100,000 on each of two threads into one arena at
//!   once (timed from a barrier to the last thread's end), then a reset, timed on
//!   its own (`reset after two threads`);
//! - `one thread, cold` and `two threads, cold`: the same on a fresh arena, its
//!   creation and its drop included (two threads: the helper thread's spawn too);
//! - `one thread, warm, CPU` and `two threads, warm, CPU`: the warm rows' CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`, both threads summed), which a loaded machine does
//!   not inflate: twice the one-thread figure over the two-thread one is the scaling
//!   that two free cores give;
//! - `rayon, 100k Vecs`: 100,000 small vectors (4 to 19 `u32`) built by
//!   `par_iter().map(..)` on a pool of two threads and collected on the calling
//!   thread without a copy: `Vec<u32, &SyncOneWayAlloc>` (the crate's
//!   `collect_in`) and `Vec<u32, &SyncBlinkAlloc>` (`with_capacity_in`, then
//!   `extend`); bump-local builds bumpalo's
//!   `collections::Vec` the same way and hands it back as its arena slice
//!   (`into_bump_slice`), the vector not being `Send`; bumpalo-herd, whose `Bump`
//!   is lent for the closure only, returns arena slices (`alloc_slice_fill_iter`).
//!   `LocalBlinkAlloc` and `Mutex<Bump>` cannot hand a block out of the closure
//!   without `unsafe`, so they sit out the rayon rows;
//! - `rayon, 100k slices`: the same with arena slices (`alloc_slice_fill_iter`) for
//!   every contender that has them.
//!
//! A per-thread handle (bumpalo-herd's `Member`, `LocalBlinkAlloc`, bump-local's
//! `local()`) is taken once per thread per round, as their docs advise; the other
//! contenders allocate through the shared reference itself.
//!
//! `instructions CONTENDER N` runs N mixed small allocations on one thread, for
//! Callgrind (see docs/PERFORMANCE.md): the difference of two runs' counts over the
//! difference of their N is the cost of one allocation and its loop. `sync`,
//! `sync-second` and `sync-third` measure the thread-safe arena's three paths: the
//! home serial, the second home, a serial of the list.
//!
//! ```text
//! cargo run --release -p onewayalloc-harness -- sync-arena           # ~20 s
//! cargo run --release -p onewayalloc-harness -- sync-arena --quick
//! cargo run --release -p onewayalloc-harness -- sync-arena --instructions sync 101000
//! ```

use std::alloc::Layout;
use std::hint::black_box;
use std::ptr::NonNull;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use onewayalloc::allocator_api2::vec::Vec as ApiVec;
use onewayalloc::collections::CollectIn;
use onewayalloc::{OneWayAlloc, SyncOneWayAlloc};
use onewayalloc_harness::contenders::rotations;
use onewayalloc_harness::output::{Table, fmt_duration, median, met, times};
use rayon::prelude::*;

use super::{ReportArgs, positive};

#[derive(clap::Args)]
pub struct Args {
    /// Small sizes, a run of seconds: 5 rounds (sizes given explicitly still apply)
    #[arg(long)]
    quick: bool,
    /// Allocations per thread per round [default: 100000]
    #[arg(long, value_name = "N", value_parser = positive())]
    allocations: Option<usize>,
    /// Rounds; the median is shown [default: 41; with --quick: 5]
    #[arg(long, value_name = "N", value_parser = positive())]
    rounds: Option<usize>,
    /// Instead of the tables: N allocations on one thread in CONTENDER, for Callgrind
    #[arg(long, num_args = 2, value_names = ["CONTENDER", "N"])]
    instructions: Option<Vec<String>>,
    #[command(flatten)]
    report: ReportArgs,
}

/// The contenders of `--instructions`.
#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Single {
    /// `&OneWayAlloc`
    Owa,
    /// `&SyncOneWayAlloc`, the first thread to allocate (its home serial)
    Sync,
    /// `&SyncOneWayAlloc`, a second thread while the first keeps the home serial
    /// (the second home)
    SyncSecond,
    /// `&SyncOneWayAlloc`, a third thread while two others keep the home serials
    /// (a serial of the list, through the thread-local cache)
    SyncThird,
    /// No allocation: the loop and its `black_box`es only
    Noop,
}

/// The sizes of the mixed small allocations: 8-aligned, 8 to 64 bytes, from the
/// xorshift seed of the criterion group `small_mixed`.
fn layouts(n: usize) -> Vec<Layout> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Layout::from_size_align(8 + (x % 57) as usize, 8).unwrap()
        })
        .collect()
}

/// An arena that threads allocate into.
trait Shared: Sized {
    const NAME: &'static str;
    /// What one thread allocates through in one round.
    type Local<'a>
    where
        Self: 'a;
    fn new() -> Self;
    fn local(&self) -> Self::Local<'_>;
    fn alloc(local: &Self::Local<'_>, layout: Layout) -> NonNull<u8>;
    fn reset(&mut self);
}

impl Shared for OneWayAlloc {
    const NAME: &'static str = "OneWayAlloc\n(one thread)";
    type Local<'a> = &'a OneWayAlloc;
    fn new() -> Self {
        OneWayAlloc::new()
    }
    fn local(&self) -> &OneWayAlloc {
        self
    }
    #[inline(always)]
    fn alloc(local: &&OneWayAlloc, layout: Layout) -> NonNull<u8> {
        local.alloc_layout(layout)
    }
    fn reset(&mut self) {
        OneWayAlloc::reset(self);
    }
}

impl Shared for SyncOneWayAlloc {
    const NAME: &'static str = "SyncOne-\nWayAlloc";
    type Local<'a> = &'a SyncOneWayAlloc;
    fn new() -> Self {
        SyncOneWayAlloc::new()
    }
    fn local(&self) -> &SyncOneWayAlloc {
        self
    }
    #[inline(always)]
    fn alloc(local: &&SyncOneWayAlloc, layout: Layout) -> NonNull<u8> {
        local.alloc_layout(layout)
    }
    fn reset(&mut self) {
        SyncOneWayAlloc::reset(self);
    }
}

impl Shared for blink_alloc::SyncBlinkAlloc {
    const NAME: &'static str = "SyncBlink-\nAlloc";
    type Local<'a> = &'a blink_alloc::SyncBlinkAlloc;
    fn new() -> Self {
        blink_alloc::SyncBlinkAlloc::new()
    }
    fn local(&self) -> &blink_alloc::SyncBlinkAlloc {
        self
    }
    #[inline(always)]
    fn alloc(local: &&blink_alloc::SyncBlinkAlloc, layout: Layout) -> NonNull<u8> {
        local.allocate(layout).unwrap().cast()
    }
    fn reset(&mut self) {
        blink_alloc::SyncBlinkAlloc::reset(self);
    }
}

/// blink-alloc's `SyncBlinkAlloc` through a `LocalBlinkAlloc` per thread.
struct LocalBlink(blink_alloc::SyncBlinkAlloc);

impl Shared for LocalBlink {
    const NAME: &'static str = "LocalBlink-\nAlloc";
    type Local<'a> = blink_alloc::LocalBlinkAlloc<'a>;
    fn new() -> Self {
        LocalBlink(blink_alloc::SyncBlinkAlloc::new())
    }
    fn local(&self) -> blink_alloc::LocalBlinkAlloc<'_> {
        self.0.local()
    }
    #[inline(always)]
    fn alloc(local: &blink_alloc::LocalBlinkAlloc<'_>, layout: Layout) -> NonNull<u8> {
        local.allocate(layout).unwrap().cast()
    }
    fn reset(&mut self) {
        self.0.reset();
    }
}

impl Shared for bumpalo_herd::Herd {
    const NAME: &'static str = "bumpalo-\nherd";
    type Local<'a> = bumpalo_herd::Member<'a>;
    fn new() -> Self {
        bumpalo_herd::Herd::new()
    }
    fn local(&self) -> bumpalo_herd::Member<'_> {
        self.get()
    }
    #[inline(always)]
    fn alloc(local: &bumpalo_herd::Member<'_>, layout: Layout) -> NonNull<u8> {
        local.alloc_layout(layout)
    }
    fn reset(&mut self) {
        bumpalo_herd::Herd::reset(self);
    }
}

impl Shared for bump_local::Bump {
    const NAME: &'static str = "bump-local";
    type Local<'a> = &'a bumpalo::Bump;
    fn new() -> Self {
        bump_local::Bump::new()
    }
    fn local(&self) -> &bumpalo::Bump {
        bump_local::Bump::local(self).as_inner()
    }
    #[inline(always)]
    fn alloc(local: &&bumpalo::Bump, layout: Layout) -> NonNull<u8> {
        local.alloc_layout(layout)
    }
    fn reset(&mut self) {
        self.reset_all().expect("no other handle");
    }
}

/// `Mutex<bumpalo::Bump>`: one lock per allocation.
struct MutexBump(Mutex<bumpalo::Bump>);

impl Shared for MutexBump {
    const NAME: &'static str = "Mutex<\nBump>";
    type Local<'a> = &'a Mutex<bumpalo::Bump>;
    fn new() -> Self {
        MutexBump(Mutex::new(bumpalo::Bump::new()))
    }
    fn local(&self) -> &Mutex<bumpalo::Bump> {
        &self.0
    }
    #[inline(always)]
    fn alloc(local: &&Mutex<bumpalo::Bump>, layout: Layout) -> NonNull<u8> {
        local.lock().unwrap().alloc_layout(layout)
    }
    fn reset(&mut self) {
        self.0.get_mut().unwrap().reset();
    }
}

/// One thread's allocations of one round, through a handle taken for the round.
#[inline(never)]
fn allocate_all<S: Shared>(arena: &S, layouts: &[Layout]) {
    let local = arena.local();
    for &layout in layouts {
        black_box(S::alloc(&local, black_box(layout)));
    }
}

/// The CPU time the calling thread has used.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant of libc.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// One thread's allocations, with the wall and CPU time they took.
struct Timed {
    start: Instant,
    end: Instant,
    cpu: Duration,
}

fn timed<S: Shared>(arena: &S, layouts: &[Layout]) -> Timed {
    let start = Instant::now();
    let cpu = thread_cpu();
    allocate_all(arena, layouts);
    let cpu = thread_cpu() - cpu;
    Timed {
        start,
        end: Instant::now(),
        cpu,
    }
}

/// Two threads allocating `layouts` each into `arena` at once: the time from the
/// barrier that releases both to the later one's end, and their CPU time.
fn two_threads<S: Shared + Sync>(arena: &S, layouts: &[Layout]) -> (Duration, Duration) {
    // Each thread on a core of its own (where the machine has two), and both spin
    // until both have arrived, so that they start within a fraction of a
    // microsecond of each other. A round is about 150 us: a blocking barrier woke
    // the sleeping thread through the kernel tens of microseconds after the other
    // had started, and a new thread is often first queued on its parent's core, so
    // the row measured the scheduler rather than the arena.
    let arrived = AtomicUsize::new(0);
    let run = |core: usize| {
        let _pinned = PinnedToCore::new(core);
        arrived.fetch_add(1, Ordering::AcqRel);
        while arrived.load(Ordering::Acquire) < 2 {
            std::hint::spin_loop();
        }
        timed(arena, layouts)
    };
    let (a, b) = std::thread::scope(|s| {
        let helper = s.spawn(|| run(1));
        let main = run(0);
        (main, helper.join().unwrap())
    });
    (a.end.max(b.end) - a.start.min(b.start), a.cpu + b.cpu)
}

/// The calling thread kept on one core (the `core`-th of those it may run on) until
/// dropped, then given back the cores it had; does nothing where the machine has
/// fewer cores or the calls fail.
struct PinnedToCore(Option<libc::cpu_set_t>);

impl PinnedToCore {
    fn new(core: usize) -> Self {
        // SAFETY: `cpu_set_t` is plain data, valid when zeroed; the calls get a
        // pointer to it and its size, and act on the calling thread (pid 0).
        unsafe {
            let mut allowed: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut allowed) != 0 {
                return Self(None);
            }
            let Some(cpu) = (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &allowed))
                .nth(core)
            else {
                return Self(None);
            };
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, size, &one) != 0 {
                return Self(None);
            }
            Self(Some(allowed))
        }
    }
}

impl Drop for PinnedToCore {
    fn drop(&mut self) {
        if let Some(allowed) = &self.0 {
            // SAFETY: as in `new`: a valid set and its size, for the calling thread.
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), allowed);
            }
        }
    }
}

/// The measured rows of one contender (`None`: it takes no part in that row).
#[derive(Default)]
struct Samples {
    one_warm: Vec<Duration>,
    two_warm: Vec<Duration>,
    reset_two: Vec<Duration>,
    one_cold: Vec<Duration>,
    two_cold: Vec<Duration>,
    rayon: Vec<Duration>,
    rayon_slices: Vec<Duration>,
    /// Two threads, warm: the CPU time of both threads.
    two_warm_cpu: Vec<Duration>,
    /// One thread, warm: its CPU time.
    one_warm_cpu: Vec<Duration>,
}

/// One contender: runs one round of every row it takes part in.
trait Runner {
    fn name(&self) -> &'static str;
    fn round(&mut self, layouts: &[Layout], vectors: usize, samples: &mut Samples);
}

/// A contender that one thread only can use.
struct SingleThread<S>(S);

impl<S: Shared> Runner for SingleThread<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }
    fn round(&mut self, layouts: &[Layout], _vectors: usize, samples: &mut Samples) {
        one_warm(&mut self.0, layouts, samples);
        samples.one_cold.push(one_cold::<S>(layouts));
    }
}

fn one_warm<S: Shared>(arena: &mut S, layouts: &[Layout], samples: &mut Samples) {
    let t = timed(arena, layouts);
    arena.reset();
    samples.one_warm.push(t.end - t.start);
    samples.one_warm_cpu.push(t.cpu);
}

fn one_cold<S: Shared>(layouts: &[Layout]) -> Duration {
    let start = Instant::now();
    let arena = S::new();
    allocate_all(&arena, layouts);
    drop(arena);
    start.elapsed()
}

/// A contender that threads share, with its rayon row if it has one.
struct Threaded<S> {
    arena: S,
    /// Vectors (`Vec`s where the contender's are `Send`, else arena slices).
    rayon: Option<RayonRow<S>>,
    /// Arena slices from `alloc_slice_fill_iter`.
    rayon_slices: Option<RayonRow<S>>,
}

type RayonRow<S> = fn(&S, &rayon::ThreadPool, usize) -> u64;

impl<S: Shared + Sync> Runner for Threaded<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }
    fn round(&mut self, layouts: &[Layout], vectors: usize, samples: &mut Samples) {
        one_warm(&mut self.arena, layouts, samples);
        let (wall, cpu) = two_threads(&self.arena, layouts);
        samples.two_warm.push(wall);
        samples.two_warm_cpu.push(cpu);
        let start = Instant::now();
        self.arena.reset();
        samples.reset_two.push(start.elapsed());
        samples.one_cold.push(one_cold::<S>(layouts));
        let start = Instant::now();
        let arena = S::new();
        two_threads(&arena, layouts);
        drop(arena);
        samples.two_cold.push(start.elapsed());
        let pool = rayon_pool();
        for (rayon_row, times) in [
            (self.rayon, &mut samples.rayon),
            (self.rayon_slices, &mut samples.rayon_slices),
        ] {
            if let Some(rayon_row) = rayon_row {
                let start = Instant::now();
                let sum = rayon_row(&self.arena, pool, vectors);
                times.push(start.elapsed());
                assert_eq!(sum, expected_sum(vectors), "{}: wrong vectors", S::NAME);
                self.arena.reset();
            }
        }
    }
}

static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();

/// The rayon rows' pool of two threads.
fn rayon_pool() -> &'static rayon::ThreadPool {
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
    })
}

/// The length of the `i`-th vector of the rayon row: 4 to 19.
fn vector_len(i: u32) -> usize {
    4 + (i.wrapping_mul(2_654_435_761) >> 28) as usize
}

/// The elements of the `i`-th vector.
fn vector_items(i: u32) -> impl ExactSizeIterator<Item = u32> {
    (0..vector_len(i) as u32).map(move |k| i ^ k)
}

/// The sum of every element, computed without an arena.
fn expected_sum(vectors: usize) -> u64 {
    (0..vectors as u32)
        .flat_map(vector_items)
        .map(u64::from)
        .sum()
}

/// The sum over the vectors handed back to the calling thread.
fn sum_all<V: AsRef<[u32]>>(vectors: &[V]) -> u64 {
    vectors
        .iter()
        .flat_map(|v| v.as_ref())
        .map(|&x| u64::from(x))
        .sum()
}

fn rayon_sync_owa(arena: &SyncOneWayAlloc, pool: &rayon::ThreadPool, vectors: usize) -> u64 {
    let out: Vec<ApiVec<u32, &SyncOneWayAlloc>> = pool.install(|| {
        (0..vectors as u32)
            .into_par_iter()
            .map(|i| vector_items(i).collect_in(arena))
            .collect()
    });
    sum_all(&out)
}

fn rayon_sync_owa_slices(arena: &SyncOneWayAlloc, pool: &rayon::ThreadPool, vectors: usize) -> u64 {
    let out: Vec<&mut [u32]> = pool.install(|| {
        (0..vectors as u32)
            .into_par_iter()
            .map(|i| arena.alloc_slice_fill_iter(vector_items(i)))
            .collect()
    });
    sum_all(&out)
}

fn rayon_sync_blink(
    arena: &blink_alloc::SyncBlinkAlloc,
    pool: &rayon::ThreadPool,
    vectors: usize,
) -> u64 {
    let out: Vec<allocator_api2_04::vec::Vec<u32, &blink_alloc::SyncBlinkAlloc>> =
        pool.install(|| {
            (0..vectors as u32)
                .into_par_iter()
                .map(|i| {
                    let mut v = allocator_api2_04::vec::Vec::with_capacity_in(vector_len(i), arena);
                    v.extend(vector_items(i));
                    v
                })
                .collect()
        });
    sum_all(&out)
}

fn rayon_herd(herd: &bumpalo_herd::Herd, pool: &rayon::ThreadPool, vectors: usize) -> u64 {
    let out: Vec<&mut [u32]> = pool.install(|| {
        (0..vectors as u32)
            .into_par_iter()
            .map_init(
                || herd.get(),
                |member, i| member.alloc_slice_fill_iter(vector_items(i)),
            )
            .collect()
    });
    sum_all(&out)
}

fn rayon_bump_local(bump: &bump_local::Bump, pool: &rayon::ThreadPool, vectors: usize) -> u64 {
    let out: Vec<&mut [u32]> = pool.install(|| {
        (0..vectors as u32)
            .into_par_iter()
            .map_init(
                || bump.local().as_inner(),
                |local, i| local.alloc_slice_fill_iter(vector_items(i)),
            )
            .collect()
    });
    sum_all(&out)
}

/// bump-local's own vector: bumpalo's `collections::Vec` in the thread's `Bump`,
/// handed back as its arena slice (`into_bump_slice`), the vector not being `Send`.
fn rayon_bump_local_vecs(bump: &bump_local::Bump, pool: &rayon::ThreadPool, vectors: usize) -> u64 {
    let out: Vec<&[u32]> = pool.install(|| {
        (0..vectors as u32)
            .into_par_iter()
            .map_init(
                || bump.local().as_inner(),
                |local, i| {
                    let mut v = bumpalo::collections::Vec::with_capacity_in(vector_len(i), local);
                    v.extend(vector_items(i));
                    v.into_bump_slice()
                },
            )
            .collect()
    });
    sum_all(&out)
}

fn threaded<S: Shared + Sync + 'static>(
    rayon: Option<RayonRow<S>>,
    rayon_slices: Option<RayonRow<S>>,
) -> Box<dyn Runner> {
    Box::new(Threaded {
        arena: S::new(),
        rayon,
        rayon_slices,
    })
}

/// Every contender: `OneWayAlloc` (the reference of the one-thread rows) first,
/// `SyncOneWayAlloc` second, then the peers.
fn contenders() -> Vec<Box<dyn Runner>> {
    vec![
        Box::new(SingleThread(OneWayAlloc::new())),
        threaded::<SyncOneWayAlloc>(Some(rayon_sync_owa), Some(rayon_sync_owa_slices)),
        threaded::<blink_alloc::SyncBlinkAlloc>(Some(rayon_sync_blink), None),
        threaded::<LocalBlink>(None, None),
        threaded::<bumpalo_herd::Herd>(Some(rayon_herd), Some(rayon_herd)),
        threaded::<bump_local::Bump>(Some(rayon_bump_local_vecs), Some(rayon_bump_local)),
        threaded::<MutexBump>(None, None),
        Box::new(RayonFloor),
    ]
}

/// The floor of the rayon rows, last and no peer: each pool thread copies its
/// vectors into a buffer of its own, allocated and written once before the first
/// round, with no allocator and no check (the vectors of a round fit in it). What
/// remains is rayon's own work, the collect and the sum, which every contender
/// pays.
struct RayonFloor;

/// A pool thread's buffer for the floor row: written once (pre-faulted), never
/// freed (a few MiB per pool thread), and the items used in the round
/// [`FLOOR_ROUND`] had when they were used.
struct FloorBuffer {
    start: NonNull<u32>,
    used: std::cell::Cell<usize>,
    round: std::cell::Cell<usize>,
}

/// The items in each thread's buffer: more than one round needs (100,000 vectors
/// of at most 19 items).
const FLOOR_ITEMS: usize = 2 << 20;
static FLOOR_ROUND: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static FLOOR_BUFFER: &'static FloorBuffer = Box::leak(Box::new(FloorBuffer {
        start: NonNull::from(Box::leak(vec![1u32; FLOOR_ITEMS].into_boxed_slice())).cast(),
        used: std::cell::Cell::new(0),
        round: std::cell::Cell::new(usize::MAX),
    }));
}

/// This thread's floor buffer, emptied if a new round began: taken once per rayon
/// job (`map_init`), as bumpalo-herd's member is.
fn floor_buffer() -> &'static FloorBuffer {
    let buffer = FLOOR_BUFFER.with(|buffer| *buffer);
    let round = FLOOR_ROUND.load(Ordering::Relaxed);
    if buffer.round.get() != round {
        buffer.used.set(0);
        buffer.round.set(round);
    }
    buffer
}

/// The `i`-th vector, copied into this thread's floor buffer.
#[allow(
    clippy::mut_from_ref,
    reason = "an arena's signature: disjoint ranges of a buffer this thread owns"
)]
fn floor_vector(buffer: &mut &'static FloorBuffer, i: u32) -> &'static mut [u32] {
    let used = buffer.used.get();
    let len = vector_len(i);
    assert!(used + len <= FLOOR_ITEMS, "the floor buffer is too small");
    // SAFETY: `used + len` is within the leaked buffer of `FLOOR_ITEMS` items, which
    // lives for the rest of the process and only this thread uses (a thread-local);
    // each slice of a round is a range of it no other slice of the round overlaps
    // (`used` only grows within a round), and the slices of a round are dropped
    // before the next round begins (`RayonFloor::round` bumps the round after the
    // row's vectors are summed and dropped).
    let vector = unsafe { std::slice::from_raw_parts_mut(buffer.start.as_ptr().add(used), len) };
    for (slot, item) in vector.iter_mut().zip(vector_items(i)) {
        *slot = item;
    }
    buffer.used.set(used + len);
    vector
}

impl Runner for RayonFloor {
    fn name(&self) -> &'static str {
        "floor (no allocator)"
    }
    fn round(&mut self, _layouts: &[Layout], vectors: usize, samples: &mut Samples) {
        let pool = rayon_pool();
        for times in [&mut samples.rayon, &mut samples.rayon_slices] {
            let start = Instant::now();
            let out: Vec<&mut [u32]> = pool.install(|| {
                (0..vectors as u32)
                    .into_par_iter()
                    .map_init(floor_buffer, floor_vector)
                    .collect()
            });
            let sum = sum_all(&out);
            drop(out);
            times.push(start.elapsed());
            FLOOR_ROUND.fetch_add(1, Ordering::Relaxed);
            assert_eq!(sum, expected_sum(vectors), "the floor: wrong vectors");
        }
    }
}

/// N allocations in one arena on this thread, for Callgrind.
fn instructions(which: Single, n: usize) {
    let layouts = layouts(n);
    match which {
        Single::Owa => allocate_all(&OneWayAlloc::with_size_hint(8 << 20), &layouts),
        Single::Sync => allocate_all(&SyncOneWayAlloc::with_size_hint(8 << 20), &layouts),
        Single::SyncSecond | Single::SyncThird => {
            let arena = SyncOneWayAlloc::with_size_hint(8 << 20);
            // This thread takes the home serial; with `SyncThird`, a thread that
            // stays until the end takes the second home.
            arena.alloc(0u8);
            let second_taken = std::sync::Barrier::new(2);
            let done = std::sync::Barrier::new(2);
            std::thread::scope(|s| {
                if which == Single::SyncThird {
                    s.spawn(|| {
                        arena.alloc(0u8);
                        second_taken.wait();
                        done.wait();
                    });
                    second_taken.wait();
                }
                s.spawn(|| allocate_all(&arena, &layouts)).join().unwrap();
                if which == Single::SyncThird {
                    done.wait();
                }
            });
        }
        Single::Noop => {
            for &layout in &layouts {
                black_box(black_box(layout));
            }
        }
    }
}

pub fn run(args: &Args) {
    if let Some(spec) = &args.instructions {
        let which = Single::from_str(&spec[0], true).unwrap_or_else(|e| panic!("{e}"));
        let n: usize = spec[1].parse().expect("N is a number");
        instructions(which, n);
        return;
    }
    let n = args.allocations.unwrap_or(100_000);
    let rounds = args.rounds.unwrap_or(if args.quick { 5 } else { 41 });
    let vectors = 100_000;
    let layouts = layouts(n);
    let mut runners = contenders();
    let mut samples: Vec<Samples> = runners.iter().map(|_| Samples::default()).collect();
    for (_, k) in rotations(rounds, runners.len()) {
        runners[k].round(&layouts, vectors, &mut samples[k]);
    }
    report(args, &runners, &mut samples, n);
}

/// A time with two decimals below a microsecond ("2.08 ns", "190.00 ns").
fn fmt_seconds(s: f64) -> String {
    if s < 1e-6 {
        format!("{:.2} ns", s * 1e9)
    } else {
        fmt_duration(Duration::from_secs_f64(s))
    }
}

/// The medians, per allocation (or per vector, or per reset).
fn report(args: &Args, runners: &[Box<dyn Runner>], samples: &mut [Samples], n: usize) {
    let out = args.report.out();
    type Row = (&'static str, fn(&mut Samples) -> &mut Vec<Duration>, f64);
    let rows: [Row; 9] = [
        ("one thread, warm", |s| &mut s.one_warm, n as f64),
        ("two threads, warm", |s| &mut s.two_warm, 2.0 * n as f64),
        ("one thread, cold", |s| &mut s.one_cold, n as f64),
        ("two threads, cold", |s| &mut s.two_cold, 2.0 * n as f64),
        ("one thread, warm, CPU", |s| &mut s.one_warm_cpu, n as f64),
        (
            "two threads, warm, CPU",
            |s| &mut s.two_warm_cpu,
            2.0 * n as f64,
        ),
        ("rayon, 100k Vecs", |s| &mut s.rayon, 100_000.0),
        ("rayon, 100k slices", |s| &mut s.rayon_slices, 100_000.0),
        ("reset after two threads", |s| &mut s.reset_two, 1.0),
    ];
    let mut header = vec!["row"];
    header.extend(runners.iter().map(|r| r.name()));
    header.push("Sync over\nbest peer");
    let mut table = Table::new(&header);
    // Medians per row and contender, `None` where it takes no part.
    let mut medians = Vec::new();
    for (name, field, per) in rows {
        let m: Vec<Option<f64>> = samples
            .iter_mut()
            .map(|s| {
                let v = field(s);
                (!v.is_empty()).then(|| median(v).as_secs_f64() / per)
            })
            .collect();
        // The peers: every column but the two arenas of this crate and the floor.
        let best_peer = m[2..m.len() - 1]
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let mut cells = vec![name.to_string()];
        cells.extend(m.iter().map(|x| x.map_or("-".into(), fmt_seconds)));
        cells.push(m[1].map_or("-".into(), |s| times(s / best_peer)));
        table.row(cells);
        medians.push((name, m, best_peer));
    }
    out.heading("SyncOneWayAlloc and its peers: time per allocation (per vector, per reset)");
    out.table(&table);
    if args.report.notes {
        let sync = |row: usize| medians[row].1[1].unwrap();
        let over_best = |row: usize| sync(row) / medians[row].2;
        let owa = medians[0].1[0].unwrap();
        // Rate over one thread's: (2N / t2) / (N / t1), with t per allocation.
        let scaling = sync(0) / sync(1);
        let cpu_scaling = 2.0 * sync(4) / sync(5);
        out.para(&format!(
            "One thread, warm, over OneWayAlloc: {} (target at most 1.15x: {}). Two \
             threads, rate over one thread's: {} by the wall clock (target at least 1.8x: \
             {}); {} by CPU time (what two free cores give: twice the one-thread rate \
             over the two-thread CPU time per allocation). Rayon over the best peer: {} \
             with Vecs, {} with slices (target at most 0.90x: {}). Reset after two \
             threads: {} (target at most 15 µs: {}).",
            times(sync(0) / owa),
            met(sync(0) / owa <= 1.15),
            times(scaling),
            met(scaling >= 1.8),
            times(cpu_scaling),
            times(over_best(6)),
            times(over_best(7)),
            met(over_best(6).min(over_best(7)) <= 0.90),
            fmt_seconds(sync(8)),
            met(sync(8) <= 15e-6),
        ));
        // The floor of the rayon rows (the last column): what is left with no
        // allocator at all.
        let floor = |row: usize| medians[row].1.last().copied().flatten().unwrap();
        let best = |row: usize| medians[row].2;
        out.para(&format!(
            "The rayon rows' floor (each thread copying into a pre-written buffer of its \
             own, no allocator): {} per vector with Vecs, {} with slices; the best peer \
             takes {} and {} of it, SyncOneWayAlloc {} and {}. A row at 0.90x the best \
             peer would be {} and {} of the floor.",
            fmt_seconds(floor(6)),
            fmt_seconds(floor(7)),
            times(best(6) / floor(6)),
            times(best(7) / floor(7)),
            times(sync(6) / floor(6)),
            times(sync(7) / floor(7)),
            times(0.9 * best(6) / floor(6)),
            times(0.9 * best(7) / floor(7)),
        ));
        let all = (0..4).all(|row| over_best(row) <= 1.0);
        out.para(&format!(
            "Every allocation row (one and two threads, warm and cold) at most the best \
             peer's time: {}.",
            met(all)
        ));
    }
}
