//! A second implementation of SPEC §1's page policy, as `src/engine/bump.rs` and
//! `src/engine/page.rs` implement it, written for clarity: a list of pages with a current
//! one, and the live blocks.
//!
//! It replays the journal: for every call it predicts the exact outcome (the block's
//! address, or a refusal by the limit), for every new page its exact size and
//! alignment (it learns each page's address from the journal; blocks are placed by
//! address, so that is all it needs), for every trim the pages freed, and after
//! every step it compares `pages()` and `stats()` with its own. It also checks that
//! no two live blocks overlap and that every block lies in the current page.
//!
//! The rules (SPEC §1.2, §1.3, §1.8, the memory limit, scopes, trim):
//! - a request bumps the current page: padding to its alignment, then its size;
//!   natively any page places any alignment where the address works out; under
//!   Miri an alignment above 4 KiB goes only into a page aligned that much;
//! - zero-sized requests bump too, and get a dangling pointer where they do not
//!   fit; they never obtain a page;
//! - else the first unused page that fits once rewound moves right after the
//!   current page and becomes current; else a new page is obtained there: the
//!   larger of its target and the aligned header plus the request, rounded up to
//!   the OS page (at least 4 KiB), within the limit;
//! - the most recent block is resized in its page when it fits there (moving
//!   forward to realign); else, if it grows, it is a *growing buffer*: the largest
//!   unused page that fits, else a new page sized for twice its size when that is
//!   larger than the exact page and within the limit, else the exact page;
//! - an older block shrinks in place when its address is aligned for the new
//!   alignment (under Miri, also only if that alignment is at most the old one or
//!   4 KiB, which its page guarantees); else it moves;
//! - a scope's rollback makes its checkpoint page current at its cursor and every
//!   page after it unused, without reordering; `reset` does the same with the first
//!   page rewound; `trim(keep)` walks the unused pages and keeps each one that
//!   still fits in `keep`.

use core::alloc::Layout;
use std::collections::{BTreeMap, VecDeque};

use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE};

use super::journal::{Call, Event, Journal, Kind};
use super::ops::Hits;
use allocator_api2::alloc::Allocator;

const KIB: usize = 1024;

/// Every page is aligned to at least this, and its size is a multiple of it
/// (`MIN_PAGE_ALIGN` in src/engine/arith.rs); under Miri, larger alignments go only into
/// pages aligned that much.
const MIN_PAGE_ALIGN: usize = 4096;

/// Target size of the `nth` page the arena obtains (SPEC §1.2).
fn target(nth: usize) -> usize {
    ((64 * KIB) << nth.min(4)).min(1024 * KIB)
}

/// Offset of the first block aligned to `align` in a page aligned to it: the header
/// rounded up to `max(align, 16)`.
fn aligned_header(align: usize) -> usize {
    PAGE_HEADER_SIZE.next_multiple_of(align.max(16))
}

/// A page as the model sees it: `base` and `align` are learned from the journal,
/// the rest follows from the policy.
#[derive(Clone, Copy, Debug)]
struct Page {
    base: usize,
    size: usize,
    align: usize,
    /// Bytes consumed since it was last rewound (0 for an unused page).
    used: usize,
}

impl Page {
    fn payload(&self) -> usize {
        self.base + PAGE_HEADER_SIZE
    }

    fn end(&self) -> usize {
        self.base + self.size
    }

    fn cursor(&self) -> usize {
        self.payload() + self.used
    }

    /// Whether the page may hold blocks aligned to `align` (`Page::can_place`).
    fn can_place(&self, align: usize) -> bool {
        !cfg!(miri) || align <= MIN_PAGE_ALIGN || self.align >= align
    }

    /// Where a block for `layout` starts if bumped at `from`, if it fits.
    fn fit(&self, from: usize, layout: Layout) -> Option<usize> {
        let at = from.checked_next_multiple_of(layout.align())?;
        let end = at.checked_add(layout.size())?;
        (end <= self.end()).then_some(at)
    }

    /// Whether `layout` fits in the page once it is rewound.
    fn fits_rewound(&self, layout: Layout) -> bool {
        self.can_place(layout.align()) && self.fit(self.payload(), layout).is_some()
    }
}

/// How a request that needs another page chooses among the unused ones.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Choice {
    FirstFit,
    /// A growing buffer: the largest, the first of those on a tie.
    Largest,
}

/// A scope's checkpoint: the current page (by address) and its consumed bytes.
#[derive(Clone, Copy, Debug)]
struct Checkpoint {
    page: usize,
    used: usize,
}

/// The page list in list order, the current page, the counters, the limit, the
/// open scopes and every live block.
pub struct Model {
    os_page: usize,
    pages: Vec<Page>,
    current: usize,
    page_allocations: usize,
    limit: Option<usize>,
    scopes: Vec<Checkpoint>,
    /// Start -> (size, scope depth at which it was allocated) of every live
    /// non-empty block (raw and collections').
    live: BTreeMap<usize, (usize, usize)>,
    pub hits: Hits,
}

/// Blocks the backing allocator handed out or took back, not yet accounted for.
type Pending = VecDeque<Event>;

impl Model {
    /// The model of `OneWayAlloc::with_size_hint_in(size_hint, ..)`, whose first page
    /// must be the journal's only event.
    pub fn new(size_hint: usize, journal: &Journal) -> Model {
        let os_page = page_size::get();
        let mut pending: Pending = journal.take().into();
        let size = (PAGE_HEADER_SIZE + size_hint)
            .max(64 * KIB)
            .next_multiple_of(os_page.max(MIN_PAGE_ALIGN));
        let mut model = Model {
            os_page,
            pages: Vec::new(),
            current: 0,
            page_allocations: 0,
            limit: None,
            scopes: Vec::new(),
            live: BTreeMap::new(),
            hits: Hits::default(),
        };
        let first = model.take_new_page(&mut pending, size, 16);
        assert!(
            pending.is_empty(),
            "creating an arena did more: {pending:?}"
        );
        model.pages.push(first);
        model
    }

    /// Replays every journaled event since the last replay.
    pub fn replay(&mut self, journal: &Journal) {
        let mut pending = Pending::new();
        for event in journal.take() {
            match event {
                Event::PageIn(..) | Event::PageOut(..) => {
                    pending.push_back(event);
                    continue;
                }
                Event::Call(call) => self.call(&call, &mut pending),
                Event::ScopeEnter => self.enter(),
                Event::ScopeExit => self.exit(),
                Event::Limit(limit) => self.limit = limit,
                Event::Trim(keep) => self.trim(keep, &mut pending),
                Event::Reset => self.reset(),
            }
            assert!(
                pending.is_empty(),
                "the backing allocator did what the model did not expect: {pending:?}"
            );
        }
        assert!(
            pending.is_empty(),
            "the backing allocator was called outside any call: {pending:?}"
        );
    }

    fn call(&mut self, call: &Call, pending: &mut Pending) {
        let predicted = match call.kind {
            Kind::Allocate => self.allocate(call.new, pending),
            Kind::Deallocate => return self.deallocate(call.ptr, call.old),
            Kind::Grow => match self.grow_in_place(call.ptr, call.old, call.new) {
                Some(at) => Some(at),
                None => self.resize(call.ptr, call.old, call.new, pending),
            },
            Kind::Shrink => self.resize(call.ptr, call.old, call.new, pending),
        };
        assert_eq!(
            call.out, predicted,
            "{call:?}: block address (None: refused) differs from the model's"
        );
    }

    fn depth(&self) -> usize {
        self.scopes.len()
    }

    fn current(&self) -> Page {
        self.pages[self.current]
    }

    /// Whether the block `ptr..ptr + size` ends at the cursor: the most recent
    /// block (an empty block at the cursor counts: resizing it is a fresh bump).
    fn is_most_recent(&self, ptr: usize, size: usize) -> bool {
        ptr + size == self.current().cursor()
    }

    /// Records a new live block, which must lie in the current page's payload and
    /// overlap no live block.
    fn insert(&mut self, at: usize, size: usize) {
        let page = self.current();
        assert!(
            page.payload() <= at && at + size <= page.end(),
            "block {at:#x}+{size} outside the current page {page:?}"
        );
        if let Some((&start, &(len, _))) = self.live.range(..at + size).next_back() {
            assert!(
                start + len <= at,
                "block {at:#x}+{size} overlaps live block {start:#x}+{len}"
            );
        }
        self.live.insert(at, (size, self.depth()));
    }

    fn remove(&mut self, ptr: usize, size: usize) {
        if size != 0 {
            let removed = self.live.remove(&ptr).map(|(len, _)| len);
            assert_eq!(
                removed,
                Some(size),
                "releasing {ptr:#x}+{size}, which is not a live block"
            );
        }
    }

    /// Bumps `layout` in the current page (if it can place its alignment and has
    /// room), returning the block's address.
    fn bump(&mut self, layout: Layout) -> Option<usize> {
        let page = self.current();
        if !page.can_place(layout.align()) {
            return None;
        }
        let at = page.fit(page.cursor(), layout)?;
        self.pages[self.current].used = at + layout.size() - page.payload();
        Some(at)
    }

    /// An ordinary request: the bump, else the first unused page that fits, else a
    /// new page. `None` if the limit refuses the page.
    fn allocate(&mut self, layout: Layout, pending: &mut Pending) -> Option<usize> {
        if layout.size() == 0 {
            return Some(self.zero_sized(layout));
        }
        let at = match self.bump(layout) {
            Some(at) => at,
            None => {
                self.next_page(layout, Choice::FirstFit, pending)?;
                self.bump(layout).expect("model: a selected page fits")
            }
        };
        self.insert(at, layout.size());
        Some(at)
    }

    /// SPEC §1.8: the bump, which may consume padding, else a dangling pointer
    /// (whose address is the alignment). Under Miri the fast path leaves
    /// alignments above 4 KiB to the slow path, which answers dangling.
    fn zero_sized(&mut self, layout: Layout) -> usize {
        let bumps = !cfg!(miri) || layout.align() <= MIN_PAGE_ALIGN;
        match self.bump(layout).filter(|_| bumps) {
            Some(at) => {
                self.hits.zero_sized_bumped += 1;
                at
            }
            None => {
                self.hits.zero_sized_dangling += 1;
                layout.align()
            }
        }
    }

    /// Makes the page chosen for `layout` current, right after the current one: an
    /// unused page that fits, else a new page. `None` if the limit refuses it.
    fn next_page(&mut self, layout: Layout, choice: Choice, pending: &mut Pending) -> Option<()> {
        let after = self.current + 1;
        let fitting: Vec<usize> = (after..self.pages.len())
            .filter(|&i| self.pages[i].fits_rewound(layout))
            .collect();
        let chosen = match choice {
            Choice::FirstFit => fitting.first().copied(),
            Choice::Largest => fitting.iter().copied().reduce(|best, i| {
                if self.pages[i].size > self.pages[best].size {
                    i
                } else {
                    best
                }
            }),
        };
        let page = match chosen {
            Some(i) => {
                match choice {
                    Choice::FirstFit => {
                        self.hits.reused_pages += 1;
                        self.hits.reused_after_skipping += usize::from(i > after);
                    }
                    Choice::Largest => {
                        self.hits.buffer_reused += 1;
                        self.hits.buffer_largest +=
                            usize::from(Some(i) != fitting.first().copied());
                    }
                }
                self.pages.remove(i)
            }
            None => self.obtain(layout, choice == Choice::Largest, pending)?,
        };
        self.pages.insert(after, Page { used: 0, ..page });
        self.current = after;
        Some(())
    }

    /// Size of the `nth` new page for a request of `size` bytes aligned to `align`.
    fn new_page_size(&self, nth: usize, size: usize, align: usize) -> usize {
        (aligned_header(align) + size)
            .max(target(nth))
            .next_multiple_of(self.os_page.max(MIN_PAGE_ALIGN))
    }

    fn within_limit(&self, size: usize) -> bool {
        let capacity: usize = self.pages.iter().map(|p| p.size).sum();
        self.limit.is_none_or(|limit| capacity + size <= limit)
    }

    /// SPEC §1.2: a new page for `layout`; for a growing buffer, sized for twice the
    /// request when that is larger and within the limit. `None` if the limit
    /// refuses the page.
    fn obtain(&mut self, layout: Layout, growing: bool, pending: &mut Pending) -> Option<Page> {
        let nth = self.page_allocations;
        let exact = self.new_page_size(nth, layout.size(), layout.align());
        let mut size = exact;
        if growing {
            let roomy = self.new_page_size(nth, 2 * layout.size(), layout.align());
            if roomy > exact && self.within_limit(roomy) {
                self.hits.buffer_roomy += 1;
                size = roomy;
            } else if roomy > exact {
                self.hits.limit_fallbacks += usize::from(self.within_limit(exact));
            }
        }
        if !self.within_limit(size) {
            self.hits.limit_refusals += 1;
            return None;
        }
        self.hits.buffer_exact += usize::from(growing && size == exact);
        self.hits.oversized_pages += usize::from(size > target(nth));
        self.hits.new_pages += 1;
        Some(self.take_new_page(pending, size, layout.align()))
    }

    /// Takes the next block the backing allocator handed out, which must be a page
    /// of `size` bytes aligned for requests of `align`.
    fn take_new_page(&mut self, pending: &mut Pending, size: usize, align: usize) -> Page {
        let expected =
            Layout::from_size_align(size, align.max(self.os_page).max(MIN_PAGE_ALIGN)).unwrap();
        let (base, layout) = match pending.pop_front() {
            Some(Event::PageIn(base, layout)) => (base, layout),
            other => panic!(
                "the model expects a new page {expected:?}, the journal has {other:?}; \
                 pages {:?}, current {}, limit {:?}",
                self.pages, self.current, self.limit
            ),
        };
        assert_eq!(layout, expected, "layout of a new page");
        assert_eq!(base % layout.align(), 0, "misaligned page");
        self.page_allocations += 1;
        Page {
            base,
            size,
            align: layout.align(),
            used: 0,
        }
    }

    /// Rolls the cursor back over the most recent block; releases nothing else.
    fn deallocate(&mut self, ptr: usize, layout: Layout) {
        self.remove(ptr, layout.size());
        if self.is_most_recent(ptr, layout.size()) {
            self.pages[self.current].used = ptr - self.current().payload();
            self.hits.rollbacks += usize::from(layout.size() != 0);
        }
    }

    /// The inline part of `grow`: the most recent block keeps its start when it asks
    /// no larger alignment and the page has room (also when it stays empty).
    fn grow_in_place(&mut self, ptr: usize, old: Layout, new: Layout) -> Option<usize> {
        let page = self.current();
        let fits = new.align() <= old.align() && ptr + new.size() <= page.end();
        if !(self.is_most_recent(ptr, old.size()) && fits) {
            return None;
        }
        self.remove(ptr, old.size());
        self.pages[self.current].used = ptr + new.size() - page.payload();
        if new.size() != 0 {
            self.insert(ptr, new.size());
        }
        self.hits.resized_in_place += 1;
        Some(ptr)
    }

    /// `grow`/`shrink` (in place for the most recent block when the page has room,
    /// else the growing-buffer rule if it grows; in place for an older block that
    /// shrinks and keeps a guaranteed alignment; else an ordinary request).
    fn resize(
        &mut self,
        ptr: usize,
        old: Layout,
        new: Layout,
        pending: &mut Pending,
    ) -> Option<usize> {
        if new.size() == 0 {
            self.deallocate(ptr, old);
            return Some(new.align());
        }
        if self.is_most_recent(ptr, old.size()) {
            let page = self.current();
            if let Some(at) = page.fit(ptr, new).filter(|_| page.can_place(new.align())) {
                self.remove(ptr, old.size());
                self.pages[self.current].used = at + new.size() - page.payload();
                self.insert(at, new.size());
                self.hits.resized_in_place += 1;
                self.hits.realigned_in_place += usize::from(at != ptr);
                return Some(at);
            }
            if new.size() > old.size() {
                self.next_page(new, Choice::Largest, pending)?;
                let at = self.bump(new).expect("model: a selected page fits");
                // The old block stays live until it is copied: no overlap.
                self.insert(at, new.size());
                self.remove(ptr, old.size());
                self.hits.buffer_moves += 1;
                return Some(at);
            }
        } else if new.size() <= old.size()
            && ptr % new.align() == 0
            && (!cfg!(miri) || new.align() <= old.align().max(MIN_PAGE_ALIGN))
        {
            self.remove(ptr, old.size());
            if new.size() != 0 {
                let depth = self.depth();
                self.live.insert(ptr, (new.size(), depth));
            }
            self.hits.shrunk_in_place += 1;
            return Some(ptr);
        }
        // The old block stays live until it is copied: the new one must not
        // overlap it.
        let at = self.allocate(new, pending)?;
        self.remove(ptr, old.size());
        self.hits.moved += 1;
        Some(at)
    }

    fn enter(&mut self) {
        let page = self.current();
        self.scopes.push(Checkpoint {
            page: page.base,
            used: page.used,
        });
    }

    /// The rollback: the checkpoint page becomes current at its cursor, every page
    /// after it unused, nothing reordered; the scope's blocks are gone.
    fn exit(&mut self) {
        let checkpoint = self.scopes.pop().expect("a scope ended that never began");
        let i = (self.pages.iter())
            .position(|p| p.base == checkpoint.page)
            .expect("the checkpoint's page is gone");
        assert!(
            i <= self.current,
            "the checkpoint's page moved past current"
        );
        self.current = i;
        self.pages[i].used = checkpoint.used;
        for page in &mut self.pages[i + 1..] {
            page.used = 0;
        }
        let depth = self.depth();
        self.live.retain(|_, &mut (_, d)| d <= depth);
    }

    /// `trim(keep)`: walking the unused pages in list order, keeps each page that
    /// fits the budget with the pages kept so far and frees the others, which must
    /// be the journal's next `PageOut`s, in that order.
    fn trim(&mut self, keep: usize, pending: &mut Pending) {
        assert!(self.scopes.is_empty(), "trim inside a scope");
        let mut kept = 0usize;
        let mut freed = false;
        let mut i = self.current + 1;
        while i < self.pages.len() {
            let page = self.pages[i];
            if let Some(total) = kept.checked_add(page.size).filter(|&t| t <= keep) {
                kept = total;
                self.hits.kept_after_trimmed += usize::from(freed);
                i += 1;
                continue;
            }
            self.pages.remove(i);
            freed = true;
            self.hits.trimmed_pages += 1;
            let layout = Layout::from_size_align(page.size, page.align).unwrap();
            match pending.pop_front() {
                Some(Event::PageOut(base, out)) if (base, out) == (page.base, layout) => {}
                other => {
                    panic!("trim({keep}) should free {page:?} next, the journal has {other:?}")
                }
            }
        }
    }

    /// SPEC §1.4: the first page becomes current and rewound, the others unused, in
    /// the same order.
    fn reset(&mut self) {
        assert!(self.scopes.is_empty(), "reset inside a scope");
        for page in &mut self.pages {
            page.used = 0;
        }
        self.current = 0;
        self.live.clear();
    }

    /// `pages()` and `stats()` of the arena equal the model's.
    pub fn check<A: Allocator>(&self, arena: &OneWayAlloc<A>) {
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
        assert_eq!(arena.limit(), self.limit, "limit()");
    }

    /// SPEC §1.5: dropping the arena released exactly its pages, with their layouts.
    pub fn check_released(self, journal: &Journal) -> Hits {
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
