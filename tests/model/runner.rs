//! Runs a program against a real arena, with the model of `policy.rs` replaying the
//! journal alongside, and checks after every step:
//!
//! - the model agrees on every block address, refusal, page, and on `stats()`;
//! - no two live blocks overlap (raw blocks, `Vec` buffers, boxes), every block is
//!   aligned as asked, and keeps its contents (checked in full at every level's
//!   end, sampled after every step);
//! - `stats()` agrees with `pages()` and with the backing allocator: `used` and
//!   `capacity` are the sums over `pages()`, `capacity` is what the backing
//!   allocator holds for the arena, `pages` their number, exactly one page is
//!   current and none after it is used, `capacity` stays within the limit;
//! - after a scope ends, normally or by a panic: the next allocation lands where
//!   it would have before the scope, `stats().used` and the pages up to the current
//!   one are what they were, the other pages are unused (the ones the scope took
//!   included), and in sanitizer mode every block of the scope went back to the
//!   backing allocator;
//! - after a reset nothing is used; after a drop nothing is held.

use core::alloc::Layout;
use core::hash::BuildHasherDefault;
use core::ptr::NonNull;
use std::collections::hash_map::DefaultHasher;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use allocator_api2::alloc::{AllocError, Allocator};
use allocator_api2::boxed::Box as ABox;
use allocator_api2::vec::Vec as AVec;
use hashbrown::HashMap;
use onewayalloc::{OneWayAlloc, PAGE_HEADER_SIZE, PageInfo, SEPARATE_BLOCKS, Scope, Stats};

use super::contents::{Raw, is_zeroed, place_typed, probes};
use super::journal::{Arena, Backing, Event, Journal, Kind, Rec, addr};
use super::ops::{Hits, Op};
use super::policy::Model;

/// Scopes nest at most this deep; `ScopeEnter` does nothing beyond.
const MAX_DEPTH: usize = 6;
/// A growing buffer stops doubling before it passes this.
const MAX_BUFFER: usize = 4 << 20;
/// Size of the block a growing buffer starts from when the level has none.
const BUFFER_START: usize = 4096;

/// Runs `ops` against a fresh arena (size hint 0) and, in page mode, the model,
/// checking after every step; returns how often each path was taken.
pub fn run(ops: &[Op]) -> Hits {
    quiet_scope_panics();
    let journal = Journal::default();
    let mut arena = OneWayAlloc::new_in(Backing(&journal));
    let mut ctx = Ctx {
        journal: &journal,
        model: None,
        raw: vec![Vec::new()],
        scopes: Vec::new(),
        salt: 0,
        hits: Hits {
            steps: ops.len(),
            ..Hits::default()
        },
    };
    ctx.new_model(0);
    ctx.check(&arena, None);
    let mut ops = ops.iter();
    loop {
        match run_level(&mut ctx, &mut arena, &mut ops, 0) {
            Exit::End => break,
            Exit::Exclusive(&Op::Trim { keep }) => {
                let used = arena.stats().used;
                arena.trim(keep);
                journal.push(Event::Trim(keep));
                ctx.hits.trims += 1;
                let unused = arena.pages().skip_while(|p| !p.current).skip(1);
                let kept: usize = unused.map(|p| p.size).sum();
                assert!(
                    kept <= keep,
                    "trim({keep}) kept {kept} bytes of unused pages"
                );
                assert_eq!(arena.stats().used, used, "used after a trim");
            }
            Exit::Exclusive(Op::Reset) => {
                ctx.raw[0].clear();
                arena.reset();
                journal.push(Event::Reset);
                ctx.hits.resets += 1;
                let stats = arena.stats();
                assert_eq!(stats.used, 0, "used after a reset");
                if SEPARATE_BLOCKS {
                    assert_eq!(journal.held(), 0, "blocks held after a reset");
                } else {
                    let first = arena.pages().next().unwrap();
                    assert!(first.current, "the first page is current after a reset");
                }
            }
            Exit::Exclusive(&Op::NewArena { size_hint }) => {
                ctx.raw[0].clear();
                drop(arena);
                ctx.released();
                arena = OneWayAlloc::with_size_hint_in(size_hint, Backing(&journal));
                ctx.new_model(size_hint);
                ctx.hits.new_arenas += 1;
            }
            exit => unreachable!("the top level cannot end with {exit:?}"),
        }
        ctx.check(&arena, None);
    }
    drop(arena);
    ctx.released();
    ctx.hits
}

/// Why a level stopped running ops.
#[derive(Debug)]
enum Exit<'o> {
    /// The program ended: every level ends.
    End,
    /// An op that needs the arena exclusively: every scope ends, the top level
    /// runs it.
    Exclusive(&'o Op),
    /// The level opens a scope.
    Enter,
    /// The scope ends (by a panic if `panicked`).
    Leave { panicked: bool },
}

/// What a level runs ops on: the arena itself, or a scope of it.
trait Level<'j> {
    fn arena(&self) -> &Arena<'j>;
    fn open<R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s, Backing<'j>>) -> R) -> R;
}

impl<'j> Level<'j> for Arena<'j> {
    fn arena(&self) -> &Arena<'j> {
        self
    }

    fn open<R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s, Backing<'j>>) -> R) -> R {
        self.scope(f)
    }
}

impl<'j> Level<'j> for Scope<'_, Backing<'j>> {
    fn arena(&self) -> &Arena<'j> {
        Scope::arena(self)
    }

    fn open<R>(&mut self, f: impl for<'s> FnOnce(&mut Scope<'s, Backing<'j>>) -> R) -> R {
        self.scope(f)
    }
}

/// The payload of the panic that ends a scope on `ScopeExit { panic: true }`.
struct ScopePanic;

/// Keeps the panics that end scopes on purpose out of the output; every other
/// panic goes to the hook that was there before (the test harness's, or the
/// fuzzer's, which aborts).
fn quiet_scope_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<ScopePanic>() {
                previous(info);
            }
        }));
    });
}

/// Runs ops at a level (depth 0: the arena; else a scope) until it ends. Each time
/// the level opens a scope, its collections are dropped first (they borrow the
/// handle that the scope borrows mutably), and made anew afterwards.
fn run_level<'o, 'j, L: Level<'j>>(
    ctx: &mut Ctx<'j>,
    level: &mut L,
    ops: &mut core::slice::Iter<'o, Op>,
    depth: usize,
) -> Exit<'o> {
    loop {
        let exit = run_epoch(ctx, level.arena(), ops, depth);
        let Exit::Enter = exit else {
            return exit;
        };
        ctx.enter(level.arena());
        let ended = panic::catch_unwind(AssertUnwindSafe(|| {
            level.open(|scope| run_level(ctx, scope, ops, depth + 1))
        }));
        let exit = match ended {
            Ok(exit) => exit,
            Err(payload) if payload.is::<ScopePanic>() => Exit::Leave { panicked: true },
            Err(payload) => panic::resume_unwind(payload),
        };
        ctx.leave(
            level.arena(),
            matches!(exit, Exit::Leave { panicked: true }),
        );
        if !matches!(exit, Exit::Leave { .. }) {
            return exit;
        }
    }
}

/// Runs ops at a level with one set of collections, until the level opens a scope
/// or ends; then checks every block in full and drops the collections (or, for a
/// scope that ends by a panic, panics with them alive).
fn run_epoch<'o, 'j>(
    ctx: &mut Ctx<'j>,
    arena: &Arena<'j>,
    ops: &mut core::slice::Iter<'o, Op>,
    depth: usize,
) -> Exit<'o> {
    let mut colls = Collections::new(arena, ctx.journal);
    let exit = loop {
        let Some(op) = ops.next() else {
            break Exit::End;
        };
        match op {
            Op::Trim { .. } | Op::Reset | Op::NewArena { .. } => break Exit::Exclusive(op),
            Op::ScopeEnter if depth < MAX_DEPTH => break Exit::Enter,
            &Op::ScopeExit { panic } if depth > 0 => break Exit::Leave { panicked: panic },
            Op::ScopeEnter | Op::ScopeExit { .. } => {}
            op => ctx.step(arena, &mut colls, op),
        }
        ctx.check(arena, Some(&colls));
        ctx.verify(Some(&colls), false);
    };
    ctx.verify(Some(&colls), true);
    if let Exit::Leave { panicked: true } = exit {
        if cfg!(panic = "unwind") {
            // Unwinding drops the collections, then the scope rolls back.
            panic::panic_any(ScopePanic);
        }
        drop(colls);
        ctx.check(arena, None);
        return Exit::Leave { panicked: false };
    }
    drop(colls); // the collections deallocate through the journal
    ctx.check(arena, None);
    exit
}

type Map<'a, 'j> = HashMap<u64, u64, BuildHasherDefault<DefaultHasher>, Rec<'a, 'j>>;

fn map_value(salt: u64, key: u64) -> u64 {
    salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key
}

fn layout(size: usize, align_log2: u8) -> Layout {
    Layout::from_size_align(size, 1 << align_log2).unwrap()
}

/// The collections of a level, all allocating through [`Rec`]. Each holds values
/// derived from its salt.
struct Collections<'a, 'j> {
    rec: Rec<'a, 'j>,
    /// Element `i` is `salt + i`.
    vecs: Vec<(AVec<u64, Rec<'a, 'j>>, u64)>,
    smalls: Vec<(ABox<u64, Rec<'a, 'j>>, u64)>,
    /// Element `i` is `salt + i`.
    bigs: Vec<(ABox<[u64; 64], Rec<'a, 'j>>, u64)>,
    /// Keys `0..len` map to `map_value(salt, key)`.
    maps: Vec<(Map<'a, 'j>, u64)>,
}

impl<'a, 'j> Collections<'a, 'j> {
    fn new(arena: &'a Arena<'j>, journal: &'j Journal) -> Self {
        Collections {
            rec: Rec { arena, journal },
            vecs: Vec::new(),
            smalls: Vec::new(),
            bigs: Vec::new(),
            maps: Vec::new(),
        }
    }

    /// The memory they hold, as (start, length), for the overlap check.
    fn spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let vecs = (self.vecs.iter())
            .filter(|(v, _)| v.capacity() != 0)
            .map(|(v, _)| (v.as_ptr().addr(), v.capacity() * size_of::<u64>()));
        let smalls = (self.smalls.iter()).map(|(b, _)| (&raw const **b).addr());
        let bigs = (self.bigs.iter()).map(|(b, _)| ((&raw const **b).addr(), 512));
        vecs.chain(smalls.map(|at| (at, 8))).chain(bigs)
    }

    fn verify(&self, full: bool) {
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
                let value = m.get(&key);
                assert_eq!(value, Some(&map_value(*salt, key)), "HashMap key {key}");
            }
        }
    }
}

/// What a scope must find again when it ends.
struct Snapshot {
    /// Where a zero-sized, byte-aligned request lands (the cursor).
    next: usize,
    stats: Stats,
    pages: Vec<PageInfo>,
    /// Bytes the backing allocator holds for the arena, less the blocks of
    /// enclosing levels deallocated inside the scope (sanitizer mode).
    held: usize,
}

/// The run's state, apart from the arena and the collections.
struct Ctx<'j> {
    journal: &'j Journal,
    model: Option<Model>,
    /// Raw blocks by level: `[0]` the top level's, `[d]` the scope at depth `d`'s.
    raw: Vec<Vec<Raw>>,
    /// `[d - 1]`: what the scope at depth `d` must restore.
    scopes: Vec<Snapshot>,
    salt: u64,
    hits: Hits,
}

impl<'j> Ctx<'j> {
    fn salt(&mut self) -> u64 {
        self.salt += 1;
        self.salt * 1000
    }

    fn new_model(&mut self, size_hint: usize) {
        self.model = match SEPARATE_BLOCKS {
            false => Some(Model::new(size_hint, self.journal)),
            true => {
                self.journal.take();
                None
            }
        };
    }

    /// Checks that a dropped arena released everything it held.
    fn released(&mut self) {
        assert_eq!(self.journal.held(), 0, "bytes held after the arena's drop");
        match self.model.take() {
            Some(model) => self.hits.add(&model.check_released(self.journal)),
            None => drop(self.journal.take()),
        }
    }

    /// The live blocks of the innermost level.
    fn level(&mut self) -> &mut Vec<Raw> {
        self.raw.last_mut().unwrap()
    }

    /// Whether a refusal is allowed: only a limit makes the arena refuse.
    fn refusal(&self, arena: &Arena<'_>, what: &dyn core::fmt::Debug) {
        assert!(arena.limit().is_some(), "{what:?} refused without a limit");
    }

    /// Journals a direct allocation and takes the block over, filled with a pattern.
    fn allocated(
        &mut self,
        arena: &Arena<'_>,
        layout: Layout,
        result: Result<NonNull<u8>, AllocError>,
    ) {
        let salt = self.salt();
        self.take_over(arena, layout, result, salt, false);
    }

    /// Journals a direct allocation and takes the block over: fills it with the
    /// pattern of `salt`, or, if `written` (a typed value), checks that it holds it.
    fn take_over(
        &mut self,
        arena: &Arena<'_>,
        layout: Layout,
        result: Result<NonNull<u8>, AllocError>,
        salt: u64,
        written: bool,
    ) {
        let out = result.ok().map(|ptr| ptr.addr().get());
        self.journal.call(Kind::Allocate, 0, layout, layout, out);
        match result {
            Ok(ptr) => {
                let raw = Raw::new(ptr, layout, salt);
                raw.check_alignment();
                if written {
                    raw.verify(raw.size, true);
                } else {
                    raw.fill_from(0);
                }
                self.level().push(raw);
            }
            Err(_) => self.refusal(arena, &layout),
        }
    }

    /// `grow` (or `grow_zeroed`) of the level's raw block `i` to `new`; whether it
    /// was served.
    fn grow(&mut self, arena: &Arena<'_>, i: usize, new: Layout, zeroed: bool) -> bool {
        let old = self.level()[i];
        // SAFETY: `old` is a live block of this arena with `old.layout()`, and
        // `new.size() >= old.size`.
        let grown = unsafe {
            if zeroed {
                Allocator::grow_zeroed(&arena, old.ptr, old.layout(), new)
            } else {
                Allocator::grow(&arena, old.ptr, old.layout(), new)
            }
        };
        let at = old.ptr.addr().get();
        (self.journal).call(Kind::Grow, at, old.layout(), new, addr(&grown));
        let Ok(block) = grown else {
            self.refusal(arena, &new);
            old.verify(old.size, true);
            return false;
        };
        assert!(block.len() >= new.size());
        let raw = old.resized(block.cast(), new);
        raw.check_alignment();
        raw.verify(old.size, true);
        if zeroed {
            let extra = new.size() - old.size;
            // SAFETY: the grown block holds `new.size()` initialized bytes.
            let tail =
                unsafe { core::slice::from_raw_parts(raw.ptr.as_ptr().add(old.size), extra) };
            assert!(is_zeroed(tail), "grow_zeroed: tail not zeroed");
        }
        raw.fill_from(old.size);
        self.level()[i] = raw;
        true
    }

    fn step(&mut self, arena: &Arena<'j>, colls: &mut Collections<'_, 'j>, op: &Op) {
        let limited = arena.limit().is_some();
        match *op {
            Op::Layout { size, align_log2 } => {
                let layout = layout(size, align_log2);
                let block = match limited {
                    false => Ok(arena.alloc_layout(layout)),
                    true => arena.try_alloc_layout(layout),
                };
                self.allocated(arena, layout, block);
            }
            Op::Bytes { size } => {
                let block = arena.try_alloc_bytes(size).map(|bytes| {
                    assert_eq!(bytes.len(), size);
                    NonNull::new(bytes.as_mut_ptr().cast::<u8>()).unwrap()
                });
                self.allocated(arena, layout(size, 4), block);
            }
            Op::Zeroed { nmemb, size } => match nmemb.checked_mul(size) {
                None => assert!(arena.try_alloc_zeroed(nmemb, size).is_err()),
                Some(total) => {
                    let block = arena.try_alloc_zeroed(nmemb, size).map(|zeroed| {
                        assert_eq!(zeroed.len(), total);
                        assert!(is_zeroed(zeroed), "alloc_zeroed: not zeroed");
                        NonNull::new(zeroed.as_mut_ptr()).unwrap()
                    });
                    self.allocated(arena, layout(total, 4), block);
                }
            },
            Op::Str { len } => {
                let s: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                let block = arena.try_alloc_str(&s).map(|copy| {
                    assert_eq!(&*copy, s.as_str());
                    NonNull::new(copy.as_mut_ptr()).unwrap()
                });
                self.allocated(arena, Layout::for_value(s.as_str()), block);
            }
            Op::Allocate { size, align_log2 } => {
                let layout = layout(size, align_log2);
                let block = Allocator::allocate(&arena, layout).map(|block| {
                    assert!(block.len() >= size);
                    block.cast::<u8>()
                });
                self.allocated(arena, layout, block);
            }
            Op::Typed { class, with } => {
                let salt = self.salt();
                let (layout, block) = place_typed(arena, class, with, limited, Raw::seed(salt));
                self.take_over(arena, layout, block, salt, true);
                self.hits.typed_values += usize::from(block.is_ok());
            }
            Op::Grow {
                block,
                extra,
                align_log2,
                zeroed,
            } => {
                let Some(i) = block.checked_rem(self.level().len()) else {
                    return;
                };
                let old = self.level()[i];
                let align = align_log2.map_or(old.align, |a| 1 << a);
                let new = Layout::from_size_align(old.size + extra, align).unwrap();
                self.grow(arena, i, new, zeroed);
            }
            Op::Shrink {
                block,
                size,
                align_log2,
            } => {
                let Some(i) = block.checked_rem(self.level().len()) else {
                    return;
                };
                let old = self.level()[i];
                let align = align_log2.map_or(old.align, |a| 1 << a);
                let new = Layout::from_size_align(size % (old.size + 1), align).unwrap();
                // SAFETY: `old` is a live block of this arena with `old.layout()`.
                let shrunk = unsafe { Allocator::shrink(&arena, old.ptr, old.layout(), new) };
                let at = old.ptr.addr().get();
                (self.journal).call(Kind::Shrink, at, old.layout(), new, addr(&shrunk));
                match shrunk {
                    Ok(block) => {
                        let raw = old.resized(block.cast(), new);
                        raw.check_alignment();
                        raw.verify(new.size(), true);
                        self.level()[i] = raw;
                    }
                    Err(_) => {
                        self.refusal(arena, &new);
                        old.verify(old.size, true);
                    }
                }
            }
            Op::Deallocate { block } => self.deallocate(arena, block),
            Op::GrowBuffer { doublings } => {
                if self.level().is_empty() {
                    let layout = layout(BUFFER_START, 3);
                    let block = Allocator::allocate(&arena, layout).map(|b| b.cast::<u8>());
                    self.allocated(arena, layout, block);
                }
                let Some(i) = self.level().len().checked_sub(1) else {
                    return;
                };
                for _ in 0..doublings {
                    let old = self.level()[i];
                    let size = (old.size * 2).max(64);
                    if size > MAX_BUFFER || !self.grow(arena, i, layout(size, 0), false) {
                        break;
                    }
                }
            }
            Op::VecPush { vec, count } => {
                let i = vec % (colls.vecs.len() + 1);
                if i == colls.vecs.len() {
                    let salt = self.salt();
                    colls.vecs.push((AVec::new_in(colls.rec), salt));
                }
                let (v, salt) = &mut colls.vecs[i];
                for _ in 0..count {
                    if v.try_reserve(1).is_err() {
                        self.refusal(arena, &"Vec::try_reserve");
                        break;
                    }
                    v.push(*salt + v.len() as u64);
                }
            }
            Op::VecShrink { vec } => {
                if let Some(i) = vec.checked_rem(colls.vecs.len()) {
                    colls.vecs[i].0.shrink_to_fit();
                }
            }
            Op::VecDrop { vec } => {
                if let Some(i) = vec.checked_rem(colls.vecs.len()) {
                    colls.vecs.remove(i);
                }
            }
            Op::BoxNew { big } => {
                let salt = self.salt();
                let boxed = if big {
                    let value = core::array::from_fn(|i| salt + i as u64);
                    ABox::try_new_in(value, colls.rec).map(|b| colls.bigs.push((b, salt)))
                } else {
                    ABox::try_new_in(salt, colls.rec).map(|b| colls.smalls.push((b, salt)))
                };
                if boxed.is_err() {
                    self.refusal(arena, &"Box::try_new_in");
                }
            }
            Op::BoxDrop { index } => {
                let n = colls.smalls.len() + colls.bigs.len();
                if let Some(i) = index.checked_rem(n) {
                    if i < colls.smalls.len() {
                        colls.smalls.remove(i);
                    } else {
                        colls.bigs.remove(i - colls.smalls.len());
                    }
                }
            }
            Op::MapInsert { map, count } => {
                let i = map % (colls.maps.len() + 1);
                if i == colls.maps.len() {
                    let salt = self.salt();
                    let map = Map::with_hasher_in(Default::default(), colls.rec);
                    colls.maps.push((map, salt));
                }
                let (m, salt) = &mut colls.maps[i];
                for _ in 0..count {
                    if m.try_reserve(1).is_err() {
                        self.refusal(arena, &"HashMap::try_reserve");
                        break;
                    }
                    let key = m.len() as u64;
                    assert!(m.insert(key, map_value(*salt, key)).is_none());
                }
            }
            Op::MapDrop { map } => {
                if let Some(i) = map.checked_rem(colls.maps.len()) {
                    colls.maps.remove(i);
                }
            }
            Op::SetLimit { headroom } => {
                let limit = headroom.map(|more| arena.stats().capacity + more);
                arena.set_limit(limit);
                self.journal.push(Event::Limit(limit));
                self.hits.limits += usize::from(limit.is_some());
            }
            Op::ScopeEnter
            | Op::ScopeExit { .. }
            | Op::Trim { .. }
            | Op::Reset
            | Op::NewArena { .. } => unreachable!("{op:?} is run by the levels"),
        }
    }

    /// `deallocate` of a raw block of any open level, counted across the levels.
    fn deallocate(&mut self, arena: &Arena<'_>, index: usize) {
        let total = self.raw.iter().map(Vec::len).sum();
        let Some(mut i) = index.checked_rem(total) else {
            return;
        };
        let mut level = 0;
        while i >= self.raw[level].len() {
            i -= self.raw[level].len();
            level += 1;
        }
        let old = self.raw[level].remove(i);
        // SAFETY: `old` is a live block of this arena with `old.layout()`; it is
        // forgotten here.
        unsafe { Allocator::deallocate(&arena, old.ptr, old.layout()) };
        let at = old.ptr.addr().get();
        (self.journal).call(Kind::Deallocate, at, old.layout(), old.layout(), None);
        if level + 1 < self.raw.len() {
            self.hits.outer_frees += 1;
            // The scopes opened since the block's level no longer find it held.
            if SEPARATE_BLOCKS {
                for scope in &mut self.scopes[level..] {
                    scope.held -= old.size;
                }
            }
        }
    }

    /// Where a zero-sized, byte-aligned request lands: the cursor (it consumes
    /// nothing), or in sanitizer mode a dangling pointer.
    fn next_block(&mut self, arena: &Arena<'_>) -> usize {
        let layout = Layout::new::<()>();
        let at = arena.alloc_layout(layout).addr().get();
        self.journal
            .call(Kind::Allocate, 0, layout, layout, Some(at));
        at
    }

    /// Before a scope opens: what it must restore.
    fn enter(&mut self, arena: &Arena<'_>) {
        let snapshot = Snapshot {
            next: self.next_block(arena),
            stats: arena.stats(),
            pages: arena.pages().collect(),
            held: self.journal.held(),
        };
        self.journal.push(Event::ScopeEnter);
        self.scopes.push(snapshot);
        self.raw.push(Vec::new());
        self.hits.scopes += 1;
        self.hits.nested_scopes += usize::from(self.scopes.len() > 1);
    }

    /// After a scope ended: the arena is back where it was when it opened.
    fn leave(&mut self, arena: &Arena<'_>, panicked: bool) {
        self.journal.push(Event::ScopeExit);
        self.raw.pop();
        let before = self.scopes.pop().unwrap();
        self.hits.panicked_scopes += usize::from(panicked);
        let next = self.next_block(arena);
        assert_eq!(
            next, before.next,
            "the next block after a scope lands elsewhere than before it"
        );
        let (stats, pages): (_, Vec<_>) = (arena.stats(), arena.pages().collect());
        let obtained = stats.page_allocations - before.stats.page_allocations;
        assert_eq!(
            stats.pages,
            before.stats.pages + obtained,
            "pages after a scope"
        );
        if SEPARATE_BLOCKS {
            assert_eq!(
                self.journal.held(),
                before.held,
                "blocks held after a scope"
            );
        } else {
            assert_eq!(stats.used, before.stats.used, "used after a scope");
            // The pages up to the current one are as they were; every other page
            // (those of the scope among them) is unused, and none was freed.
            let current = before.pages.iter().position(|p| p.current).unwrap();
            assert_eq!(
                pages[..=current],
                before.pages[..=current],
                "pages after a scope"
            );
            let unused = &pages[current + 1..];
            assert!(
                unused.iter().all(|p| p.used == 0),
                "used pages after a scope"
            );
            let mut sizes: Vec<usize> = unused.iter().map(|p| p.size).collect();
            for page in &before.pages[current + 1..] {
                let i = sizes.iter().position(|&s| s == page.size);
                sizes.remove(i.expect("an unused page disappeared in a scope"));
            }
            self.hits.scope_pages += usize::from(pages != before.pages);
        }
        self.check(arena, None);
    }

    /// Replays the journal in the model and compares; checks the invariants that
    /// hold whatever the policy.
    fn check(&mut self, arena: &Arena<'_>, colls: Option<&Collections<'_, '_>>) {
        match &mut self.model {
            Some(model) => {
                model.replay(self.journal);
                model.check(arena);
            }
            None => drop(self.journal.take()),
        }
        let stats = arena.stats();
        let pages: Vec<PageInfo> = arena.pages().collect();
        let held = self.journal.held();
        assert_eq!(
            stats.capacity, held,
            "capacity vs bytes held from the backing"
        );
        if let Some(limit) = arena.limit() {
            assert!(
                stats.capacity <= limit,
                "capacity {stats:?} over the limit {limit}"
            );
        }
        assert_eq!(stats.pages, pages.len(), "stats().pages vs pages()");
        if SEPARATE_BLOCKS {
            assert_eq!(
                stats.used, stats.capacity,
                "sanitizer mode: used vs capacity"
            );
        } else {
            let sum = |f: fn(&PageInfo) -> usize| pages.iter().map(f).sum::<usize>();
            assert_eq!(stats.capacity, sum(|p| p.size), "capacity vs pages()");
            assert_eq!(stats.used, sum(|p| p.used), "used vs pages()");
            assert!(stats.page_allocations >= stats.pages);
            let current: Vec<usize> = (0..pages.len()).filter(|&i| pages[i].current).collect();
            assert_eq!(current.len(), 1, "current pages in {pages:?}");
            assert!(pages[current[0] + 1..].iter().all(|p| p.used == 0));
            assert!(pages.iter().all(|p| p.used <= p.size - PAGE_HEADER_SIZE));
        }
        // No two live blocks overlap.
        let raw = self.raw.iter().flatten().filter(|raw| raw.size != 0);
        let mut spans: Vec<(usize, usize)> = raw.map(|r| (r.ptr.addr().get(), r.size)).collect();
        spans.extend(colls.into_iter().flat_map(Collections::spans));
        spans.sort_unstable();
        for pair in spans.windows(2) {
            let ((a, len), (b, _)) = (pair[0], pair[1]);
            assert!(a + len <= b, "blocks {a:#x}+{len} and {b:#x} overlap");
        }
    }

    /// Checks the contents of every live block: a few bytes of each, or all of
    /// them if `full`.
    fn verify(&self, colls: Option<&Collections<'_, '_>>, full: bool) {
        for raw in self.raw.iter().flatten() {
            raw.verify(raw.size, full);
        }
        if let Some(colls) = colls {
            colls.verify(full);
        }
    }
}
