//! A model of SPEC §1's page policy and a runner that executes programs of operations
//! against a real arena and the model side by side, checking after every step that
//! they agree. Shared by `tests/model.rs` (proptest) and `fuzz/fuzz_targets/ops.rs`
//! (cargo-fuzz), which only differ in how they generate programs.
//!
//! The arena obtains its pages from [`Backing`], which forwards to the global
//! allocator and writes each page it hands out or takes back into a [`Journal`];
//! collections use the arena through [`Rec`], which forwards every `Allocator` call
//! to `&arena` and journals it, and the runner journals its own direct calls the same
//! way. The model replays the journal in order: for every call it predicts the exact
//! block address, and for every new page its exact size and minimum alignment (it
//! learns each page's address and alignment from the journal; as blocks are placed
//! by their offset in a page, that is all it needs to predict every address). After
//! every step the runner compares `pages()` and `stats()` with the model, checks
//! that no live blocks overlap and that every block still holds what was written
//! into it.

use core::alloc::Layout;
use core::cell::RefCell;
use core::hash::BuildHasherDefault;
use core::ptr::{self, NonNull};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, VecDeque};
use std::sync::OnceLock;

use allocator_api2::alloc::{AllocError, Allocator, Global};
use allocator_api2::boxed::Box as ABox;
use allocator_api2::vec::Vec as AVec;
use hashbrown::HashMap;
use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE};

const KIB: usize = 1024;

/// One step of a program. Indices (`block`, `vec`, `map`, ...) are taken modulo the
/// number of live things of that kind; where that number is 0 the step does nothing
/// (or, for collections, `index % (n + 1) == n` creates a new one).
#[derive(Clone, Debug)]
pub enum Op {
    /// `alloc_layout(size, align = 1 << align_log2)`.
    Layout { size: usize, align_log2: u8 },
    /// `try_alloc_bytes(size)`.
    Bytes { size: usize },
    /// `try_alloc_zeroed(nmemb, size)` (an `nmemb * size` overflow must be refused).
    Zeroed { nmemb: usize, size: usize },
    /// `try_alloc_str` of a `len`-byte string.
    Str { len: usize },
    /// `Allocator::allocate` on `&arena`.
    Allocate { size: usize, align_log2: u8 },
    /// `Allocator::grow` (or `grow_zeroed`) of a live block by `extra` bytes, to
    /// alignment `1 << align_log2` (its own alignment when `None`).
    Grow {
        block: usize,
        extra: usize,
        align_log2: Option<u8>,
        zeroed: bool,
    },
    /// `Allocator::shrink` of a live block to `size % (old size + 1)` bytes.
    Shrink {
        block: usize,
        size: usize,
        align_log2: Option<u8>,
    },
    /// `Allocator::deallocate` of a live block.
    Deallocate { block: usize },
    /// Pushes `count` values into an arena `Vec<u64>`.
    VecPush { vec: usize, count: usize },
    /// `shrink_to_fit` of an arena `Vec`.
    VecShrink { vec: usize },
    /// Drops an arena `Vec`.
    VecDrop { vec: usize },
    /// `Box::new_in` of a `u64` or of a `[u64; 64]`.
    BoxNew { big: bool },
    /// Drops an arena `Box`.
    BoxDrop { index: usize },
    /// Inserts `count` new keys into an arena `hashbrown::HashMap`.
    MapInsert { map: usize, count: usize },
    /// Drops an arena `HashMap`.
    MapDrop { map: usize },
    /// Drops every collection, forgets every block and resets the arena.
    Reset,
    /// Drops the arena (which must release every page) and starts a new one.
    NewArena { size_hint: usize },
}

/// How often the model took each interesting path (to check that generators reach
/// them all).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hits {
    pub new_pages: usize,
    pub oversized_pages: usize,
    pub reused_pages: usize,
    pub reused_after_skipping: usize,
    pub rollbacks: usize,
    pub resized_in_place: usize,
    pub realigned_in_place: usize,
    pub moved: usize,
    pub resets: usize,
}

impl Hits {
    pub fn add(&mut self, other: Hits) {
        self.new_pages += other.new_pages;
        self.oversized_pages += other.oversized_pages;
        self.reused_pages += other.reused_pages;
        self.reused_after_skipping += other.reused_after_skipping;
        self.rollbacks += other.rollbacks;
        self.resized_in_place += other.resized_in_place;
        self.realigned_in_place += other.realigned_in_place;
        self.moved += other.moved;
        self.resets += other.resets;
    }
}

// ----- Journal, backing allocator, recording allocator --------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Allocate,
    Deallocate,
    Grow,
    Shrink,
}

/// One call to the arena: the block it was given (`ptr`, `old`), what was asked
/// (`new`) and what came back (the block's address; `None` for an error).
#[derive(Clone, Copy, Debug)]
struct Call {
    kind: Kind,
    ptr: usize,
    old: Layout,
    new: Layout,
    out: Option<usize>,
}

#[derive(Debug)]
enum Event {
    PageIn(usize, Layout),
    PageOut(usize, Layout),
    Call(Call),
}

/// Everything that happened to the arena and to its backing allocator, in order.
#[derive(Default)]
pub struct Journal(RefCell<Vec<Event>>);

impl Journal {
    fn push(&self, event: Event) {
        self.0.borrow_mut().push(event);
    }

    fn call(&self, kind: Kind, ptr: usize, old: Layout, new: Layout, out: Option<usize>) {
        self.push(Event::Call(Call {
            kind,
            ptr,
            old,
            new,
            out,
        }));
    }

    fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

/// The arena's backing allocator: the global one, journaled.
#[derive(Clone, Copy)]
pub struct Backing<'j>(&'j Journal);

// SAFETY: forwards to `Global`, which upholds the contract.
unsafe impl Allocator for Backing<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(layout)?;
        self.0
            .push(Event::PageIn(block.cast::<u8>().addr().get(), layout));
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        self.0.push(Event::PageOut(ptr.addr().get(), layout));
        // SAFETY: forwarded from the caller.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

type Arena<'j> = OneWayAlloc<Backing<'j>>;

/// `&arena` as an allocator for collections, journaling every call it forwards.
#[derive(Clone, Copy)]
struct Rec<'a, 'j> {
    arena: &'a Arena<'j>,
    journal: &'j Journal,
}

fn addr(block: &Result<NonNull<[u8]>, AllocError>) -> Option<usize> {
    block.as_ref().ok().map(|b| b.cast::<u8>().addr().get())
}

// SAFETY: forwards every call unchanged to `&OneWayAlloc`'s implementation.
unsafe impl Allocator for Rec<'_, '_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Allocator::allocate(&self.arena, layout);
        let out = addr(&block);
        self.journal.call(Kind::Allocate, 0, layout, layout, out);
        block
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { Allocator::deallocate(&self.arena, ptr, layout) };
        let at = ptr.addr().get();
        self.journal
            .call(Kind::Deallocate, at, layout, layout, None);
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::grow(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Grow, ptr.addr().get(), old, new, out);
        block
    }

    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::grow_zeroed(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Grow, ptr.addr().get(), old, new, out);
        block
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::shrink(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Shrink, ptr.addr().get(), old, new, out);
        block
    }
}

// ----- The model -----------------------------------------------------------------------

/// A page as the model sees it. `base` and `align` are learned from the journal;
/// the rest follows from the SPEC.
///
/// Pages are aligned to at least the OS page (or the request they were made for), so
/// a block's alignment follows from its offset in its page: a page *fits* a request
/// only if its own alignment guarantees the request's, wherever the page happens to
/// lie (this is what Miri's symbolic alignment check demands). The model computes
/// with addresses, which in a page aligned to `align` gives the same padding as
/// offsets for every alignment up to `align`.
#[derive(Clone, Copy, Debug)]
struct Page {
    base: usize,
    size: usize,
    align: usize,
    used: usize,
}

impl Page {
    fn payload(&self) -> usize {
        self.base + PAGE_HEADER_SIZE
    }

    fn cursor(&self) -> usize {
        self.payload() + self.used
    }

    /// Where a block for `layout` starts if placed at or after `from`, if it fits.
    fn fit(&self, from: usize, layout: Layout) -> Option<usize> {
        let at = from.next_multiple_of(layout.align());
        let room = at + layout.size() <= self.base + self.size;
        (layout.align() <= self.align && room).then_some(at)
    }

    fn holds(&self, ptr: usize) -> bool {
        self.base <= ptr && ptr < self.base + self.size
    }
}

/// SPEC §1: the page list, the current page, the counters, and every live block.
pub struct Model {
    os_page: usize,
    /// List order.
    pages: Vec<Page>,
    current: usize,
    page_allocations: usize,
    requested: usize,
    allocations: usize,
    /// Start -> size of every live non-empty block (raw and collections').
    live: BTreeMap<usize, usize>,
    hits: Hits,
}

/// Target size of the `nth` page the arena obtains (SPEC §1.2).
fn target(nth: usize) -> usize {
    ((64 * KIB) << nth.min(5)).min(1024 * KIB)
}

/// Offset of the first block aligned to `align` in a page aligned to it: the header
/// rounded up to `max(align, 16)`.
fn aligned_header(align: usize) -> usize {
    PAGE_HEADER_SIZE.next_multiple_of(align.max(16))
}

/// Takes the next page the arena obtained, which must have `size` bytes and be
/// aligned to at least `min_align`; returns the model's page for it.
fn take_page(pages: &mut VecDeque<(usize, Layout)>, size: usize, min_align: usize) -> Page {
    let (base, layout) = pages.pop_front().unwrap_or_else(|| {
        panic!("the model expects a new page of {size} bytes, but the arena obtained none")
    });
    assert_eq!(layout.size(), size, "size of a new page ({layout:?})");
    assert!(
        layout.align() >= min_align,
        "alignment of a new page ({layout:?})"
    );
    assert_eq!(
        base % layout.align(),
        0,
        "misaligned page from the backing allocator"
    );
    Page {
        base,
        size,
        align: layout.align(),
        used: 0,
    }
}

impl Model {
    /// The model of `OneWayAlloc::with_size_hint_in(size_hint, ..)`, whose first page
    /// must be the journal's only event.
    pub fn new(size_hint: usize, journal: &Journal) -> Model {
        let os_page = page_size::get();
        let size = (PAGE_HEADER_SIZE + size_hint)
            .max(64 * KIB)
            .next_multiple_of(os_page);
        let mut pages = VecDeque::new();
        for event in journal.take() {
            match event {
                Event::PageIn(base, layout) => pages.push_back((base, layout)),
                other => panic!("creating an arena: unexpected {other:?}"),
            }
        }
        let first = take_page(&mut pages, size, os_page.max(16));
        assert!(
            pages.is_empty(),
            "creating an arena obtained more pages: {pages:?}"
        );
        Model {
            os_page,
            pages: vec![first],
            current: 0,
            page_allocations: 1,
            requested: 0,
            allocations: 0,
            live: BTreeMap::new(),
            hits: Hits::default(),
        }
    }

    /// Replays every journaled event since the last replay.
    fn replay(&mut self, journal: &Journal) {
        let mut pages = VecDeque::new();
        for event in journal.take() {
            match event {
                Event::PageIn(base, layout) => pages.push_back((base, layout)),
                Event::PageOut(..) => panic!("a live arena released a page: {event:?}"),
                Event::Call(call) => {
                    self.call(&call, &mut pages);
                    assert!(
                        pages.is_empty(),
                        "{call:?} obtained pages the model did not expect: {pages:?}"
                    );
                }
            }
        }
        assert!(
            pages.is_empty(),
            "pages obtained outside any call: {pages:?}"
        );
    }

    fn call(&mut self, call: &Call, pages: &mut VecDeque<(usize, Layout)>) {
        let predicted = match call.kind {
            Kind::Allocate => self.allocate(call.new, pages),
            Kind::Deallocate => return self.deallocate(call.ptr, call.old),
            Kind::Grow | Kind::Shrink => self.resize(call.ptr, call.old, call.new, pages),
        };
        let out = call.out.unwrap_or_else(|| panic!("{call:?} failed"));
        assert_eq!(out % call.new.align(), 0, "{call:?}: misaligned block");
        match predicted {
            Some(at) => assert_eq!(out, at, "{call:?}: block address, model: {at:#x}"),
            None => assert_ne!(out, 0, "{call:?}: null dangling pointer"),
        }
    }

    fn current(&mut self) -> &mut Page {
        &mut self.pages[self.current]
    }

    /// Whether the non-empty block `ptr..ptr + size` ends at the cursor.
    fn is_most_recent(&self, ptr: usize, size: usize) -> bool {
        size != 0 && ptr + size == self.pages[self.current].cursor()
    }

    /// Records a new live block, which must lie in the current page's payload and
    /// overlap no live block.
    fn insert(&mut self, at: usize, size: usize) {
        let page = self.pages[self.current];
        assert!(
            page.payload() <= at && at + size <= page.base + page.size,
            "block {at:#x}+{size} outside the current page {page:?}"
        );
        if let Some((&start, &len)) = self.live.range(..at + size).next_back() {
            assert!(
                start + len <= at,
                "block {at:#x}+{size} overlaps live block {start:#x}+{len}"
            );
        }
        self.live.insert(at, size);
    }

    fn remove(&mut self, ptr: usize, size: usize) {
        if size != 0 {
            assert_eq!(
                self.live.remove(&ptr),
                Some(size),
                "releasing {ptr:#x}+{size}, which is not a live block"
            );
        }
    }

    /// SPEC §1.3: bump the current page; else move the first unused page that fits
    /// right after it; else obtain a new page there (§1.2). `None` for zero-size.
    fn allocate(&mut self, layout: Layout, pages: &mut VecDeque<(usize, Layout)>) -> Option<usize> {
        if layout.size() == 0 {
            return None;
        }
        let cursor = self.current().cursor();
        let at = match self.current().fit(cursor, layout) {
            Some(at) => at,
            None => {
                let next = self.current + 1;
                let fits = |p: &Page| p.fit(p.payload(), layout).is_some();
                let page = match self.pages[next..].iter().position(fits) {
                    Some(skipped) => {
                        self.hits.reused_pages += 1;
                        self.hits.reused_after_skipping += usize::from(skipped > 0);
                        self.pages.remove(next + skipped)
                    }
                    None => self.obtain(layout, pages),
                };
                self.pages.insert(next, Page { used: 0, ..page });
                self.current = next;
                let start = self.current().payload();
                self.current()
                    .fit(start, layout)
                    .expect("model: a selected page fits")
            }
        };
        let payload = self.current().payload();
        self.current().used = at + layout.size() - payload;
        self.allocations += 1;
        self.requested += layout.size();
        self.insert(at, layout.size());
        Some(at)
    }

    /// SPEC §1.2: the `nth` page is the larger of its target and the aligned header
    /// plus the request, rounded up to the OS page, aligned to the OS page and to the
    /// request's alignment.
    fn obtain(&mut self, layout: Layout, pages: &mut VecDeque<(usize, Layout)>) -> Page {
        let needed = aligned_header(layout.align()) + layout.size();
        let nth = self.page_allocations;
        let size = needed.max(target(nth)).next_multiple_of(self.os_page);
        let page = take_page(pages, size, layout.align().max(self.os_page));
        self.page_allocations += 1;
        self.hits.new_pages += 1;
        self.hits.oversized_pages += usize::from(needed > target(nth));
        page
    }

    /// Rolls the cursor back over the most recent block; releases nothing else.
    fn deallocate(&mut self, ptr: usize, layout: Layout) {
        self.remove(ptr, layout.size());
        if self.is_most_recent(ptr, layout.size()) {
            let payload = self.current().payload();
            self.current().used = ptr - payload;
            self.hits.rollbacks += 1;
        }
    }

    /// `grow`/`shrink`: the most recent block is resized in place (moving forward in
    /// its page if the new alignment needs it) when the page fits it; a block shrinks
    /// in place when its offset in its page is aligned for the new alignment and the
    /// page guarantees it; otherwise a new block is allocated.
    fn resize(
        &mut self,
        ptr: usize,
        old: Layout,
        new: Layout,
        pages: &mut VecDeque<(usize, Layout)>,
    ) -> Option<usize> {
        if new.size() == 0 {
            self.deallocate(ptr, old);
            return None;
        }
        if self.is_most_recent(ptr, old.size()) {
            if let Some(at) = self.current().fit(ptr, new) {
                self.remove(ptr, old.size());
                let payload = self.current().payload();
                self.current().used = at + new.size() - payload;
                self.requested += new.size().saturating_sub(old.size());
                self.insert(at, new.size());
                self.hits.resized_in_place += 1;
                self.hits.realigned_in_place += usize::from(at != ptr);
                return Some(at);
            }
        }
        let page = self.pages.iter().find(|p| p.holds(ptr));
        let aligned = page.is_some_and(|p| p.align >= new.align() && ptr % new.align() == 0);
        if new.size() <= old.size() && aligned {
            self.remove(ptr, old.size());
            self.live.insert(ptr, new.size());
            return Some(ptr);
        }
        // The old block stays live until the copy is made: the new one must not
        // overlap it.
        let at = self.allocate(new, pages);
        self.remove(ptr, old.size());
        self.hits.moved += 1;
        at
    }

    /// SPEC §1.4: the first page becomes current and rewound, the others unused, in
    /// the same order.
    fn reset(&mut self) {
        for page in &mut self.pages {
            page.used = 0;
        }
        self.current = 0;
        self.requested = 0;
        self.allocations = 0;
        self.live.clear();
        self.hits.resets += 1;
    }

    /// `pages()` and `stats()` of the arena equal the model's.
    fn check<A: Allocator>(&self, arena: &OneWayAlloc<A>) {
        let actual: Vec<(usize, usize, bool)> =
            arena.pages().map(|p| (p.size, p.used, p.current)).collect();
        let expected: Vec<(usize, usize, bool)> = (self.pages.iter().enumerate())
            .map(|(i, p)| (p.size, p.used, i == self.current))
            .collect();
        assert_eq!(actual, expected, "pages() as (size, used, current)");
        let s = arena.stats();
        let used = self.pages[..=self.current].iter().map(|p| p.used).sum();
        let capacity = self.pages.iter().map(|p| p.size).sum();
        assert_eq!(
            (s.pages, s.capacity, s.used, s.page_allocations),
            (self.pages.len(), capacity, used, self.page_allocations),
            "stats() as (pages, capacity, used, page_allocations)"
        );
    }

    /// SPEC §1.5: dropping the arena released exactly its pages, with their layouts.
    fn check_released(self, journal: &Journal) -> Hits {
        let mut released: Vec<(usize, usize, usize)> = (journal.take().into_iter())
            .map(|event| match event {
                Event::PageOut(base, layout) => (base, layout.size(), layout.align()),
                other => panic!("dropping the arena: unexpected {other:?}"),
            })
            .collect();
        let mut held: Vec<_> = (self.pages.iter())
            .map(|p| (p.base, p.size, p.align))
            .collect();
        released.sort_unstable();
        held.sort_unstable();
        assert_eq!(
            released, held,
            "pages released on drop as (base, size, align)"
        );
        self.hits
    }
}

// ----- Block contents ----------------------------------------------------------------

/// Block contents: byte `i` of a block with seed `s` is `(s + i) % PERIOD`. The prime
/// period makes a block copied to a shifted position (by any power of two) differ.
const PERIOD: usize = 251;
const CHUNK: usize = PERIOD * 64;

fn pattern() -> &'static [u8] {
    static PATTERN: OnceLock<Vec<u8>> = OnceLock::new();
    PATTERN.get_or_init(|| (0..CHUNK + PERIOD).map(|i| (i % PERIOD) as u8).collect())
}

/// A block the runner allocated directly and filled with its pattern.
#[derive(Clone, Copy, Debug)]
struct Raw {
    ptr: NonNull<u8>,
    size: usize,
    align: usize,
    seed: usize,
}

impl Raw {
    fn layout(&self) -> Layout {
        Layout::from_size_align(self.size, self.align).unwrap()
    }

    /// Writes the pattern over the whole block.
    fn fill(&self) {
        let mut offset = 0;
        while offset < self.size {
            let n = (self.size - offset).min(CHUNK);
            // SAFETY: the block is live and holds `size` bytes; the pattern source is
            // `CHUNK + PERIOD` bytes long and `seed < PERIOD`.
            unsafe {
                let src = pattern().as_ptr().add(self.seed);
                ptr::copy_nonoverlapping(src, self.ptr.as_ptr().add(offset), n);
            }
            offset += n;
        }
    }

    /// Checks that the first `len` bytes hold the pattern: all of them (with `memcmp`,
    /// cheap under Miri) or, if not `full`, three of them.
    fn verify(&self, len: usize, full: bool) {
        if full {
            let mut offset = 0;
            while offset < len {
                let n = (len - offset).min(CHUNK);
                // SAFETY: the block is live and its first `len` bytes are initialized.
                let got = unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().add(offset), n) };
                let want = &pattern()[self.seed..self.seed + n];
                assert!(
                    got == want,
                    "{self:?}: bytes {offset}..{} changed",
                    offset + n
                );
                offset += n;
            }
        } else {
            for i in [0, len / 2, len.wrapping_sub(1)]
                .into_iter()
                .filter(|&i| i < len)
            {
                // SAFETY: as above, `i < len`.
                let byte = unsafe { self.ptr.as_ptr().add(i).read() };
                assert_eq!(
                    usize::from(byte),
                    (self.seed + i) % PERIOD,
                    "{self:?}: byte {i}"
                );
            }
        }
    }
}

/// Indices to check in a collection of `len` items: all or a few.
fn probes(len: usize, full: bool) -> impl Iterator<Item = usize> {
    let step = if full { 1 } else { (len / 2).max(1) };
    (0..len).step_by(step).chain(len.checked_sub(1))
}

// ----- The runner ----------------------------------------------------------------------

type Map<'a, 'j> = HashMap<u64, u64, BuildHasherDefault<DefaultHasher>, Rec<'a, 'j>>;

fn map_value(salt: u64, key: u64) -> u64 {
    salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key
}

fn layout(size: usize, align_log2: u8) -> Layout {
    Layout::from_size_align(size, 1 << align_log2).unwrap()
}

/// Everything that borrows the arena between two resets: collections in it and raw
/// blocks. Dropped (collections first, through the journal) before the arena is
/// reset or dropped.
struct Epoch<'a, 'j> {
    arena: &'a Arena<'j>,
    journal: &'j Journal,
    raw: Vec<Raw>,
    /// Vec, salt: element `i` is `salt + i`.
    vecs: Vec<(AVec<u64, Rec<'a, 'j>>, u64)>,
    /// Box, salt: element `i` is `salt + i`.
    smalls: Vec<(ABox<u64, Rec<'a, 'j>>, u64)>,
    bigs: Vec<(ABox<[u64; 64], Rec<'a, 'j>>, u64)>,
    /// Map, salt: keys `0..len` map to `map_value(salt, key)`.
    maps: Vec<(Map<'a, 'j>, u64)>,
    salt: u64,
}

impl<'a, 'j> Epoch<'a, 'j> {
    fn new(arena: &'a Arena<'j>, journal: &'j Journal) -> Self {
        Epoch {
            arena,
            journal,
            raw: Vec::new(),
            vecs: Vec::new(),
            smalls: Vec::new(),
            bigs: Vec::new(),
            maps: Vec::new(),
            salt: 0,
        }
    }

    fn rec(&self) -> Rec<'a, 'j> {
        Rec {
            arena: self.arena,
            journal: self.journal,
        }
    }

    fn salt(&mut self) -> u64 {
        self.salt += 1;
        self.salt * 1000
    }

    /// Journals a direct allocation and takes the block over, filled with a pattern.
    fn adopt(&mut self, ptr: NonNull<u8>, layout: Layout) {
        let out = Some(ptr.addr().get());
        self.journal.call(Kind::Allocate, 0, layout, layout, out);
        let seed = (self.salt() % PERIOD as u64) as usize;
        let raw = Raw {
            ptr,
            size: layout.size(),
            align: layout.align(),
            seed,
        };
        raw.fill();
        self.raw.push(raw);
    }

    fn step(&mut self, op: &Op) {
        let arena = self.arena;
        match *op {
            Op::Layout { size, align_log2 } => {
                let layout = layout(size, align_log2);
                self.adopt(arena.alloc_layout(layout), layout);
            }
            Op::Bytes { size } => {
                let bytes = arena.try_alloc_bytes(size).expect("try_alloc_bytes");
                assert_eq!(bytes.len(), size);
                let ptr = NonNull::new(bytes.as_mut_ptr().cast::<u8>()).unwrap();
                self.adopt(ptr, Layout::from_size_align(size, 16).unwrap());
            }
            Op::Zeroed { nmemb, size } => match nmemb.checked_mul(size) {
                None => assert!(arena.try_alloc_zeroed(nmemb, size).is_err()),
                Some(total) => {
                    let zeroed = arena
                        .try_alloc_zeroed(nmemb, size)
                        .expect("try_alloc_zeroed");
                    assert_eq!(zeroed.len(), total);
                    for chunk in zeroed.chunks(CHUNK) {
                        assert!(chunk == &[0; CHUNK][..chunk.len()], "not zeroed");
                    }
                    let ptr = NonNull::new(zeroed.as_mut_ptr()).unwrap();
                    self.adopt(ptr, Layout::from_size_align(total, 16).unwrap());
                }
            },
            Op::Str { len } => {
                let s: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                let copy = arena.try_alloc_str(&s).expect("try_alloc_str");
                assert_eq!(&*copy, s.as_str());
                let ptr = NonNull::new(copy.as_mut_ptr()).unwrap();
                self.adopt(ptr, Layout::for_value(s.as_str()));
            }
            Op::Allocate { size, align_log2 } => {
                let layout = layout(size, align_log2);
                let block = Allocator::allocate(&arena, layout).expect("allocate");
                assert!(block.len() >= size);
                self.adopt(block.cast(), layout);
            }
            Op::Grow {
                block,
                extra,
                align_log2,
                zeroed,
            } => {
                let Some(i) = block.checked_rem(self.raw.len()) else {
                    return;
                };
                let old = self.raw[i];
                old.verify(old.size, true);
                let align = align_log2.map_or(old.align, |a| 1 << a);
                let new = Layout::from_size_align(old.size + extra, align).unwrap();
                // SAFETY: `old` is a live block of this arena with `old.layout()`.
                let grown = unsafe {
                    if zeroed {
                        Allocator::grow_zeroed(&arena, old.ptr, old.layout(), new)
                    } else {
                        Allocator::grow(&arena, old.ptr, old.layout(), new)
                    }
                };
                let ptr = grown.expect("grow").cast::<u8>();
                let kind = Kind::Grow;
                let at = ptr.addr().get();
                (self.journal).call(kind, old.ptr.addr().get(), old.layout(), new, Some(at));
                let raw = Raw {
                    ptr,
                    size: new.size(),
                    align,
                    ..old
                };
                raw.verify(old.size, true);
                if zeroed {
                    // SAFETY: the grown block holds `new.size()` initialized bytes.
                    let tail =
                        unsafe { core::slice::from_raw_parts(ptr.as_ptr().add(old.size), extra) };
                    assert!(tail.iter().all(|&b| b == 0), "grow_zeroed: tail not zeroed");
                }
                raw.fill();
                self.raw[i] = raw;
            }
            Op::Shrink {
                block,
                size,
                align_log2,
            } => {
                let Some(i) = block.checked_rem(self.raw.len()) else {
                    return;
                };
                let old = self.raw[i];
                let align = align_log2.map_or(old.align, |a| 1 << a);
                let new = Layout::from_size_align(size % (old.size + 1), align).unwrap();
                // SAFETY: `old` is a live block of this arena with `old.layout()`.
                let shrunk = unsafe { Allocator::shrink(&arena, old.ptr, old.layout(), new) };
                let ptr = shrunk.expect("shrink").cast::<u8>();
                let at = ptr.addr().get();
                let kind = Kind::Shrink;
                (self.journal).call(kind, old.ptr.addr().get(), old.layout(), new, Some(at));
                let raw = Raw {
                    ptr,
                    size: new.size(),
                    align,
                    ..old
                };
                raw.verify(new.size(), true);
                self.raw[i] = raw;
            }
            Op::Deallocate { block } => {
                let Some(i) = block.checked_rem(self.raw.len()) else {
                    return;
                };
                let old = self.raw.remove(i);
                // SAFETY: `old` is a live block of this arena with `old.layout()`; it is
                // forgotten here.
                unsafe { Allocator::deallocate(&arena, old.ptr, old.layout()) };
                let at = old.ptr.addr().get();
                let kind = Kind::Deallocate;
                (self.journal).call(kind, at, old.layout(), old.layout(), None);
            }
            Op::VecPush { vec, count } => {
                let i = vec % (self.vecs.len() + 1);
                if i == self.vecs.len() {
                    let salt = self.salt();
                    self.vecs.push((AVec::new_in(self.rec()), salt));
                }
                let (v, salt) = &mut self.vecs[i];
                for _ in 0..count {
                    v.push(*salt + v.len() as u64);
                }
            }
            Op::VecShrink { vec } => {
                if let Some(i) = vec.checked_rem(self.vecs.len()) {
                    self.vecs[i].0.shrink_to_fit();
                }
            }
            Op::VecDrop { vec } => {
                if let Some(i) = vec.checked_rem(self.vecs.len()) {
                    self.vecs.remove(i);
                }
            }
            Op::BoxNew { big } => {
                let salt = self.salt();
                if big {
                    let value = core::array::from_fn(|i| salt + i as u64);
                    self.bigs.push((ABox::new_in(value, self.rec()), salt));
                } else {
                    self.smalls.push((ABox::new_in(salt, self.rec()), salt));
                }
            }
            Op::BoxDrop { index } => {
                let n = self.smalls.len() + self.bigs.len();
                if let Some(i) = index.checked_rem(n) {
                    if i < self.smalls.len() {
                        self.smalls.remove(i);
                    } else {
                        self.bigs.remove(i - self.smalls.len());
                    }
                }
            }
            Op::MapInsert { map, count } => {
                let i = map % (self.maps.len() + 1);
                if i == self.maps.len() {
                    let salt = self.salt();
                    self.maps
                        .push((Map::with_hasher_in(Default::default(), self.rec()), salt));
                }
                let (m, salt) = &mut self.maps[i];
                for _ in 0..count {
                    let key = m.len() as u64;
                    assert!(m.insert(key, map_value(*salt, key)).is_none());
                }
            }
            Op::MapDrop { map } => {
                if let Some(i) = map.checked_rem(self.maps.len()) {
                    self.maps.remove(i);
                }
            }
            Op::Reset | Op::NewArena { .. } => unreachable!("handled by run()"),
        }
    }

    /// Checks every block's contents: a few bytes of each, or all of them if `full`.
    fn verify(&self, full: bool) {
        for raw in &self.raw {
            raw.verify(raw.size, full);
        }
        for (v, salt) in &self.vecs {
            for i in probes(v.len(), full) {
                assert_eq!(v[i], salt + i as u64, "Vec element {i}");
            }
        }
        for (b, salt) in &self.smalls {
            assert_eq!(**b, *salt, "Box<u64>");
        }
        for (b, salt) in &self.bigs {
            for i in probes(b.len(), full) {
                assert_eq!(b[i], salt + i as u64, "Box<[u64; 64]> element {i}");
            }
        }
        for (m, salt) in &self.maps {
            for key in probes(m.len(), full) {
                let key = key as u64;
                assert_eq!(
                    m.get(&key),
                    Some(&map_value(*salt, key)),
                    "HashMap key {key}"
                );
            }
        }
    }
}

/// Runs `ops` against a fresh arena (size hint 0) and the model, checking after every
/// step; returns how often the model took each interesting path.
///
/// In sanitizer mode (every allocation its own block: no pages to model) it checks
/// only what holds in both modes: block contents and alignment, and that the
/// collections work; it then deallocates every block before a reset, since in that
/// mode nothing else releases them (and a leak checker would report them).
pub fn run(ops: &[Op]) -> Hits {
    let journal = Journal::default();
    let modeled = !onewayalloc::SEPARATE_BLOCKS;
    let mut arena = OneWayAlloc::new_in(Backing(&journal));
    let mut model = modeled.then(|| Model::new(0, &journal));
    sync(&mut model, &journal, &arena);
    let mut hits = Hits::default();
    let mut ops = ops.iter();
    loop {
        match run_epoch(&arena, &journal, &mut model, &mut ops) {
            None => break,
            Some(Op::Reset) => {
                arena.reset();
                if let Some(model) = &mut model {
                    model.reset();
                }
            }
            Some(&Op::NewArena { size_hint }) => {
                drop(arena);
                hits.add(released(model, &journal));
                arena = OneWayAlloc::with_size_hint_in(size_hint, Backing(&journal));
                model = modeled.then(|| Model::new(size_hint, &journal));
            }
            Some(op) => unreachable!("{op:?} does not end an epoch"),
        }
        sync(&mut model, &journal, &arena);
    }
    drop(arena);
    hits.add(released(model, &journal));
    hits
}

/// Replays the journal in the model and compares the model with the arena.
fn sync(model: &mut Option<Model>, journal: &Journal, arena: &Arena<'_>) {
    match model {
        Some(model) => {
            model.replay(journal);
            model.check(arena);
        }
        None => drop(journal.take()),
    }
}

/// Checks that a dropped arena released its pages.
fn released(model: Option<Model>, journal: &Journal) -> Hits {
    match model {
        Some(model) => model.check_released(journal),
        None => {
            journal.take();
            Hits::default()
        }
    }
}

/// Runs ops until one needs the arena exclusively (returned) or none is left, then
/// checks every block in full and drops everything that borrows the arena.
fn run_epoch<'o, 'j>(
    arena: &Arena<'j>,
    journal: &'j Journal,
    model: &mut Option<Model>,
    ops: &mut core::slice::Iter<'o, Op>,
) -> Option<&'o Op> {
    let mut epoch = Epoch::new(arena, journal);
    let end = loop {
        let op = ops.next();
        match op {
            None | Some(Op::Reset | Op::NewArena { .. }) => break op,
            Some(op) => epoch.step(op),
        }
        sync(model, journal, arena);
        epoch.verify(false);
    };
    epoch.verify(true);
    if model.is_none() {
        for raw in epoch.raw.drain(..).rev() {
            // SAFETY: `raw` is a live block of this arena with `raw.layout()`; it is
            // forgotten here.
            unsafe { Allocator::deallocate(&arena, raw.ptr, raw.layout()) };
        }
    }
    drop(epoch); // the collections deallocate through the journal
    sync(model, journal, arena);
    end
}
