//! Code shared by the benchmark examples (`context_query`, `linked_list`, `reuse`):
//! the Netdata context query, written once and generic over the allocator, the
//! contenders it runs on, a linear-buffer reference allocator, and table output.
//!
//! Each example uses a part of this module.
#![allow(dead_code)]

use std::alloc::{Layout, handle_alloc_error};
use std::cell::Cell;
use std::fmt::Write as _;
use std::ops::DerefMut;
use std::path::PathBuf;
use std::ptr::{self, NonNull};
use std::time::Duration;

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{AllocError, Allocator, Global};
use onewayalloc::allocator_api2::{boxed::Box, vec::Vec};
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};

// ---------------------------------------------------------------------------------
// The query
// ---------------------------------------------------------------------------------

/// What a query needs from an allocator besides `Allocator`: a way to keep a string
/// (Netdata's `strdupz`) and a way to keep one value (the per-dimension struct, a
/// list node).
///
/// Heap allocators keep them in `Box`es that are freed one by one when the query is
/// dropped; arenas keep them with their own `alloc_str` and `alloc` and free nothing
/// until the reset. Both ways make exactly one allocation and one copy per call.
pub trait QueryAlloc<'a>: Allocator + Copy + 'a {
    type Str: AsRef<str> + 'a;
    type Own<T: 'a>: DerefMut<Target = T> + 'a;
    fn keep_str(self, s: &str) -> Self::Str;
    fn keep<T: 'a>(self, value: T) -> Self::Own<T>;
}

/// `Box<str, A>` with one allocation of exactly `s.len()` bytes, like `strdup`.
pub fn box_str_in<A: Allocator>(s: &str, alloc: A) -> Box<str, A> {
    let mut bytes = Vec::with_capacity_in(s.len(), alloc);
    bytes.extend_from_slice(s.as_bytes());
    let (raw, alloc) = Box::into_raw_with_allocator(bytes.into_boxed_slice());
    // SAFETY: the bytes are a copy of a `str`, so valid UTF-8, and `str` has the
    // layout of `[u8]`; the box came from `alloc`.
    unsafe { Box::from_raw_in(raw as *mut str, alloc) }
}

impl<'a> QueryAlloc<'a> for Global {
    type Str = Box<str, Global>;
    type Own<T: 'a> = Box<T, Global>;
    fn keep_str(self, s: &str) -> Self::Str {
        box_str_in(s, self)
    }
    fn keep<T: 'a>(self, value: T) -> Self::Own<T> {
        Box::new_in(value, self)
    }
}

impl<'a> QueryAlloc<'a> for MiAlloc {
    type Str = Box<str, MiAlloc>;
    type Own<T: 'a> = Box<T, MiAlloc>;
    fn keep_str(self, s: &str) -> Self::Str {
        box_str_in(s, self)
    }
    fn keep<T: 'a>(self, value: T) -> Self::Own<T> {
        Box::new_in(value, self)
    }
}

impl<'a, B: Allocator + 'a> QueryAlloc<'a> for &'a OneWayAlloc<B> {
    type Str = &'a str;
    type Own<T: 'a> = &'a mut T;
    fn keep_str(self, s: &str) -> &'a str {
        self.alloc_str(s)
    }
    fn keep<T: 'a>(self, value: T) -> &'a mut T {
        self.alloc(value)
    }
}

impl<'a> QueryAlloc<'a> for &'a bumpalo::Bump {
    type Str = &'a str;
    type Own<T: 'a> = &'a mut T;
    fn keep_str(self, s: &str) -> &'a str {
        self.alloc_str(s)
    }
    fn keep<T: 'a>(self, value: T) -> &'a mut T {
        self.alloc(value)
    }
}

impl<'a> QueryAlloc<'a> for ScopeRef<'a> {
    type Str = &'a str;
    type Own<T: 'a> = &'a mut T;
    fn keep_str(self, s: &str) -> &'a str {
        self.0.alloc_str(s).into_ref()
    }
    fn keep<T: 'a>(self, value: T) -> &'a mut T {
        bump_scope::BumpBox::leak(self.0.alloc(value))
    }
}

impl<'a> QueryAlloc<'a> for &'a LinearBuffer {
    type Str = &'a str;
    type Own<T: 'a> = &'a mut T;
    fn keep_str(self, s: &str) -> &'a str {
        self.alloc_str(s)
    }
    fn keep<T: 'a>(self, value: T) -> &'a mut T {
        self.alloc(value)
    }
}

/// The metrics database the queries read: chart and dimension ids and names exist
/// before any query (as in Netdata), so a query copies them instead of formatting.
pub struct Database {
    pub charts: std::vec::Vec<SourceChart>,
    pub dims: usize,
    pub points: usize,
}

pub struct SourceChart {
    pub id: String,
    pub dims: std::vec::Vec<SourceDim>,
}

pub struct SourceDim {
    /// Unique in the context: "app7.cpu.dim3".
    pub id: String,
    /// Shared by the same dimension of every chart: "dim3".
    pub name: String,
}

impl Database {
    pub fn new(charts: usize, dims: usize, points: usize) -> Self {
        let charts = (0..charts)
            .map(|c| {
                let id = format!("app{c}.cpu");
                let dims = (0..dims)
                    .map(|d| SourceDim {
                        id: format!("{id}.dim{d}"),
                        name: format!("dim{d}"),
                    })
                    .collect();
                SourceChart { id, dims }
            })
            .collect();
        Database {
            charts,
            dims,
            points,
        }
    }

    pub fn dimensions(&self) -> usize {
        self.charts.len() * self.dims
    }
}

struct Dimension<'a, A: QueryAlloc<'a>> {
    id: A::Str,
    name: A::Str,
    points: Vec<f64, A>,
}

struct Chart<'a, A: QueryAlloc<'a>> {
    id: A::Str,
    dimensions: Vec<A::Own<Dimension<'a, A>>, A>,
}

/// Every dimension of the context, indexed by id and grouped by name.
struct VirtualChart<'q, 'a, A: QueryAlloc<'a>> {
    dimensions: Vec<&'q Dimension<'a, A>, A>,
    by_id: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    by_name: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    /// Per name: the sum of all its points and how many there are.
    groups: Vec<(f64, usize), A>,
}

/// Lookups by id after the virtual chart is built.
const LOOKUPS: usize = 1000;

/// A cheap deterministic sample, an integer so that sums are exact.
fn sample(query: usize, chart: usize, dim: usize, t: usize) -> f64 {
    ((query * 131 + chart * 31 + dim * 17 + t * 7) & 1023) as f64
}

/// One context query, the same code for every allocator: build the charts (per
/// dimension: the dimension struct, its id and name strings, its points buffer and its
/// slot in its chart's `Vec`), build the virtual chart (a slot per dimension, an
/// id -> index map entry per dimension, a name -> group map), aggregate and look up
/// into a checksum, and drop it all. Returns the checksum.
pub fn query<'a, A: QueryAlloc<'a>>(alloc: A, db: &Database, seed: usize) -> f64 {
    let mut charts = Vec::new_in(alloc);
    for (c, source) in db.charts.iter().enumerate() {
        let id = alloc.keep_str(&source.id);
        let mut dimensions = Vec::new_in(alloc);
        for (d, dim) in source.dims.iter().enumerate() {
            let mut points = Vec::with_capacity_in(db.points, alloc);
            points.extend((0..db.points).map(|t| sample(seed, c, d, t)));
            let dimension = Dimension {
                id: alloc.keep_str(&dim.id),
                name: alloc.keep_str(&dim.name),
                points,
            };
            dimensions.push(alloc.keep(dimension));
        }
        charts.push(Chart { id, dimensions });
    }

    let total = db.dimensions(); // known up front, as in Netdata
    let mut vc = VirtualChart {
        dimensions: Vec::with_capacity_in(total, alloc),
        by_id: HashMap::with_capacity_in(total, alloc),
        by_name: HashMap::new_in(alloc),
        groups: Vec::new_in(alloc),
    };
    for chart in &charts {
        for dim in &chart.dimensions {
            let dim: &Dimension<'a, A> = dim;
            vc.by_id.insert(dim.id.as_ref(), vc.dimensions.len());
            vc.dimensions.push(dim);
            let groups = &mut vc.groups;
            let g = *vc.by_name.entry(dim.name.as_ref()).or_insert_with(|| {
                groups.push((0.0, 0));
                groups.len() - 1
            });
            groups[g].0 += dim.points.iter().sum::<f64>();
            groups[g].1 += dim.points.len();
        }
    }

    let mut checksum: f64 = vc.groups.iter().map(|&(sum, n)| sum / n as f64).sum();
    for k in 0..LOOKUPS {
        let c = k * 7919 % charts.len();
        let d = k * 104_729 % db.dims;
        let dim = vc.dimensions[vc.by_id[db.charts[c].dims[d].id.as_str()]];
        debug_assert_eq!(dim.name.as_ref(), db.charts[c].dims[d].name);
        debug_assert!(charts[c].id.as_ref() == db.charts[c].id);
        checksum += dim.points.last().copied().unwrap_or(0.0);
    }
    checksum
}

// ---------------------------------------------------------------------------------
// The contenders
// ---------------------------------------------------------------------------------

/// An allocator that a worker owns and resets between queries.
pub trait Arena {
    type Alloc<'a>: QueryAlloc<'a>
    where
        Self: 'a;
    fn allocator(&self) -> Self::Alloc<'_>;
    fn reset(&mut self);
    /// Bytes held from the backing allocator, if the arena tells.
    fn capacity(&self) -> Option<usize> {
        None
    }
    /// Bytes consumed since the last reset, if the arena tells.
    fn used(&self) -> Option<usize> {
        None
    }
    /// Blocks (pages, chunks) obtained from the backing allocator so far, if the
    /// arena tells.
    fn blocks_obtained(&self) -> Option<usize> {
        None
    }
    /// The sizes of the blocks held, in list order, if the arena tells.
    fn block_sizes(&self) -> Option<std::vec::Vec<usize>> {
        None
    }
}

/// Runs one query on `arena` and resets it. Returns the checksum and the bytes the
/// arena had consumed before the reset.
pub fn run_query<S: Arena>(arena: &mut S, db: &Database, seed: usize) -> (f64, Option<usize>) {
    let checksum = query(arena.allocator(), db, seed);
    let used = arena.used();
    arena.reset();
    (checksum, used)
}

/// How a target line reads: "met" or "MISSED".
pub fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// The global allocator of the process (glibc's malloc in these examples).
pub struct Malloc;

impl Arena for Malloc {
    type Alloc<'a> = Global;
    fn allocator(&self) -> Global {
        Global
    }
    fn reset(&mut self) {}
}

/// mimalloc, through [`MiAlloc`].
pub struct Mimalloc;

impl Arena for Mimalloc {
    type Alloc<'a> = MiAlloc;
    fn allocator(&self) -> MiAlloc {
        MiAlloc
    }
    fn reset(&mut self) {}
}

impl<B: Allocator> Arena for OneWayAlloc<B> {
    type Alloc<'a>
        = &'a OneWayAlloc<B>
    where
        B: 'a;
    fn allocator(&self) -> &OneWayAlloc<B> {
        self
    }
    fn reset(&mut self) {
        OneWayAlloc::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.stats().capacity)
    }
    fn used(&self) -> Option<usize> {
        Some(self.stats().used)
    }
    fn blocks_obtained(&self) -> Option<usize> {
        Some(self.stats().page_allocations)
    }
    fn block_sizes(&self) -> Option<std::vec::Vec<usize>> {
        Some(self.pages().map(|page| page.size).collect())
    }
}

impl Arena for bumpalo::Bump {
    type Alloc<'a> = &'a bumpalo::Bump;
    fn allocator(&self) -> &bumpalo::Bump {
        self
    }
    fn reset(&mut self) {
        bumpalo::Bump::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.allocated_bytes_including_metadata())
    }
}

/// bump-scope's `Bump`, reset with `reset` (keeps only its largest chunk).
pub struct ScopeReset(pub bump_scope::Bump);

/// bump-scope's `Bump`, reset with `reset_to_start` (keeps every chunk).
pub struct ScopeResetToStart(pub bump_scope::Bump);

impl Arena for ScopeReset {
    type Alloc<'a> = ScopeRef<'a>;
    fn allocator(&self) -> ScopeRef<'_> {
        ScopeRef(&self.0)
    }
    fn reset(&mut self) {
        self.0.reset();
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.0.stats().size())
    }
    fn used(&self) -> Option<usize> {
        Some(self.0.stats().allocated())
    }
}

impl Arena for ScopeResetToStart {
    type Alloc<'a> = ScopeRef<'a>;
    fn allocator(&self) -> ScopeRef<'_> {
        ScopeRef(&self.0)
    }
    fn reset(&mut self) {
        self.0.reset_to_start();
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.0.stats().size())
    }
    fn used(&self) -> Option<usize> {
        Some(self.0.stats().allocated())
    }
}

impl Arena for LinearBuffer {
    type Alloc<'a> = &'a LinearBuffer;
    fn allocator(&self) -> &LinearBuffer {
        self
    }
    fn reset(&mut self) {
        LinearBuffer::reset(self);
    }
    fn capacity(&self) -> Option<usize> {
        Some(self.capacity())
    }
    fn used(&self) -> Option<usize> {
        Some(self.used())
    }
}

/// Lets the heap allocators set themselves up (mimalloc builds its thread's heap on
/// first use), so that no round or query is charged for the process's start.
pub fn warm_up() {
    drop(std::hint::black_box(Box::new_in([0u64; 4], Global)));
    drop(std::hint::black_box(Box::new_in([0u64; 4], MiAlloc)));
}

/// mimalloc and bump-scope as `allocator_api2` 0.2 `Allocator`s: the adapters the
/// benchmarks use (`benches/common/compat.rs`), under the names the examples use.
#[path = "../../benches/common/compat.rs"]
mod compat;
pub use compat::{BumpScopeApi2 as ScopeRef, Mi as MiAlloc};

/// The speed-of-light reference: one buffer allocated and pre-faulted up front (the
/// article's `memset`), a bump offset into it, reset to zero, and no page logic at
/// all. It has to be big enough for the whole job; running out is an allocation
/// failure.
pub struct LinearBuffer {
    base: NonNull<u8>,
    layout: Layout,
    offset: Cell<usize>,
}

/// The buffer's alignment, and the largest alignment it serves.
const LINEAR_ALIGN: usize = 4096;

// Every `&mut` that `alloc` and `alloc_str` return points to a fresh block that no
// other reference can reach, which is what `&mut` requires; the lint cannot see that.
#[allow(clippy::mut_from_ref)]
impl LinearBuffer {
    /// A buffer of `capacity` bytes, every page of it written once.
    pub fn new(capacity: usize) -> Self {
        let layout = Layout::from_size_align(capacity.max(1), LINEAR_ALIGN)
            .expect("linear buffer capacity overflows");
        // SAFETY: `layout` has a non-zero size.
        let base = unsafe { std::alloc::alloc(layout) };
        let Some(base) = NonNull::new(base) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `base` holds `layout.size()` writable bytes.
        unsafe { ptr::write_bytes(base.as_ptr(), 0, layout.size()) };
        LinearBuffer {
            base,
            layout,
            offset: Cell::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.layout.size()
    }

    pub fn used(&self) -> usize {
        self.offset.get()
    }

    pub fn reset(&mut self) {
        self.offset.set(0);
    }

    /// Align, compare, bump.
    #[inline(always)]
    fn bump(&self, layout: Layout) -> Option<NonNull<u8>> {
        if layout.align() > LINEAR_ALIGN {
            return None;
        }
        let start = self.offset.get().next_multiple_of(layout.align());
        let end = start.checked_add(layout.size())?;
        if end > self.layout.size() {
            return None;
        }
        self.offset.set(end);
        // SAFETY: `start <= end <= capacity`: inside the buffer or one past its end.
        Some(unsafe { self.base.add(start) })
    }

    /// Moves `value` into the buffer.
    #[inline]
    pub fn alloc<T>(&self, value: T) -> &mut T {
        let layout = Layout::new::<T>();
        let block = self
            .bump(layout)
            .unwrap_or_else(|| handle_alloc_error(layout))
            .cast::<T>();
        // SAFETY: a fresh block, sized and aligned for `T`, used by nothing else until
        // `reset`, which needs `&mut self`.
        unsafe {
            block.write(value);
            &mut *block.as_ptr()
        }
    }

    /// Copies `s` into the buffer.
    #[inline]
    pub fn alloc_str(&self, s: &str) -> &mut str {
        let layout = Layout::for_value(s);
        let block = self
            .bump(layout)
            .unwrap_or_else(|| handle_alloc_error(layout));
        // SAFETY: a fresh block of `s.len()` bytes, used by nothing else until `reset`;
        // the bytes are a copy of a `str`, so valid UTF-8.
        unsafe {
            ptr::copy_nonoverlapping(s.as_ptr(), block.as_ptr(), s.len());
            let bytes = std::slice::from_raw_parts_mut(block.as_ptr(), s.len());
            std::str::from_utf8_unchecked_mut(bytes)
        }
    }
}

impl Drop for LinearBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with `self.layout`.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

// SAFETY: blocks are bumped from the buffer and stay valid until `reset` or drop,
// both of which need `&mut LinearBuffer`, so not while a `&LinearBuffer` is in use.
// `deallocate` does nothing; `grow` extends the most recent block in place when
// there is room, otherwise allocates and copies; `shrink` stays in place.
unsafe impl Allocator for &LinearBuffer {
    #[inline(always)]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = self.bump(layout).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(block, layout.size()))
    }

    #[inline(always)]
    unsafe fn deallocate(&self, _ptr: NonNull<u8>, _layout: Layout) {}

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        let start = ptr.addr().get().wrapping_sub(self.base.addr().get());
        let is_last = old.size() != 0 && start + old.size() == self.offset.get();
        if is_last && start % new.align() == 0 && start + new.size() <= self.layout.size() {
            self.offset.set(start + new.size());
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let block = self.allocate(new)?;
        // SAFETY: `ptr` holds `old.size()` bytes (trait contract) and `block` is fresh
        // and at least as long.
        unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), block.cast().as_ptr(), old.size()) };
        Ok(block)
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        _old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        if ptr.addr().get() % new.align() == 0 {
            return Ok(NonNull::slice_from_raw_parts(ptr, new.size()));
        }
        let block = self.allocate(new)?;
        // SAFETY: `ptr` holds `old.size() >= new.size()` bytes; `block` is fresh.
        unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), block.cast().as_ptr(), new.size()) };
        Ok(block)
    }
}

// ---------------------------------------------------------------------------------
// Command line and output
// ---------------------------------------------------------------------------------

/// One command-line option.
pub enum Opt<'a> {
    /// `--name N`, a positive number.
    Num(&'static str, &'a mut usize),
    /// `--name`, a switch.
    Flag(&'static str, &'a mut bool),
    /// `--name PATH`.
    Path(&'static str, &'a mut Option<PathBuf>),
}

/// Parses the process arguments into `opts`; prints `usage` and exits on `--help`
/// or a bad argument.
pub fn parse_args(usage: &str, opts: &mut [Opt<'_>]) {
    let mut args = std::env::args().skip(1);
    let fail = |msg: String| -> ! {
        eprintln!("{msg}\n{usage}");
        std::process::exit(2)
    };
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            println!("{usage}");
            std::process::exit(0);
        }
        let Some(opt) = opts.iter_mut().find(|opt| match opt {
            Opt::Num(name, _) | Opt::Flag(name, _) | Opt::Path(name, _) => *name == arg,
        }) else {
            fail(format!("unknown option {arg}"))
        };
        match opt {
            Opt::Flag(_, on) => **on = true,
            Opt::Num(_, n) => match args.next().and_then(|v| v.parse().ok()) {
                Some(v) if v > 0 => **n = v,
                _ => fail(format!("{arg} needs a positive number")),
            },
            Opt::Path(_, path) => match args.next() {
                Some(v) => **path = Some(v.into()),
                None => fail(format!("{arg} needs a path")),
            },
        }
    }
}

/// A table printed as aligned text or as Markdown. The first column is left-aligned,
/// the others right-aligned.
pub struct Table {
    header: std::vec::Vec<String>,
    rows: std::vec::Vec<std::vec::Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: std::vec::Vec::new(),
        }
    }

    pub fn row(&mut self, cells: std::vec::Vec<String>) {
        assert_eq!(cells.len(), self.header.len(), "row width");
        self.rows.push(cells);
    }

    pub fn render(&self, markdown: bool) -> String {
        let mut out = String::new();
        let lines = std::iter::once(&self.header).chain(&self.rows);
        if markdown {
            for (i, cells) in lines.enumerate() {
                out.push('|');
                for cell in cells {
                    let _ = write!(out, " {cell} |");
                }
                out.push('\n');
                if i == 0 {
                    out.push_str("|---|");
                    out.push_str(&"---:|".repeat(cells.len() - 1));
                    out.push('\n');
                }
            }
            return out;
        }
        let mut widths = vec![0; self.header.len()];
        for cells in std::iter::once(&self.header).chain(&self.rows) {
            for (w, cell) in widths.iter_mut().zip(cells) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for cells in lines {
            for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
                if i == 0 {
                    let _ = write!(out, "{cell:<w$}");
                } else {
                    let _ = write!(out, "  {cell:>w$}");
                }
            }
            out.push('\n');
        }
        out
    }
}

/// A duration with a unit that suits it: "1.23 s", "45.6 ms", "789 µs", "12 ns".
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

pub fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The median of `values` (sorted in place); zero if empty.
pub fn median(values: &mut [Duration]) -> Duration {
    values.sort_unstable();
    match values.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2,
    }
}

/// The process's minor page faults so far (`getrusage(RUSAGE_SELF).ru_minflt`).
#[cfg(unix)]
pub fn minor_faults() -> Option<u64> {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage.ru_minflt as u64)
    }
}

#[cfg(not(unix))]
pub fn minor_faults() -> Option<u64> {
    None
}
