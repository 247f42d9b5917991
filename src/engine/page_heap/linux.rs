//! The process-wide page heap on 64-bit Linux: spans mapped from the OS, slots
//! handed to arenas and taken back, the free slots kept resident within a bound and
//! purged by decay or on request. Every span and the heap's state are read and
//! written under one lock ([`Locked`]), which a `fork` never leaves held.

use core::cell::UnsafeCell;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;
use std::time::Instant;

use super::slots::{
    ALL, RESIDENT_RANKS, SLOT, SPAN_HEADER, SPAN_SLOTS, choose, decay_keep, huge_page_mates, mask,
    purge_choice, runs_of, slots_for, span_mapping, span_slack, whole_free_pairs,
};
use super::small_pages::SmallPages;
use super::{DEFAULT_FREE_PAGE_LIMIT, FREE_PAGE_DECAY_EPOCH};
use crate::engine::arith::{os_page, whole_os_pages};
use allocator_api2::alloc::{Allocator, Global};

/// The record of a span, in the OS page just before its first slot.
struct Span {
    /// The next span of the heap's list.
    next: Option<NonNull<Span>>,
    /// The first slot: the mapping's start plus [`SPAN_HEADER`], carrying the
    /// mapping's provenance.
    base: NonNull<u8>,
    /// Slots of the span: [`SPAN_SLOTS`], or more for a span that holds one large
    /// page alone (`whole`).
    slots: usize,
    /// Whether the span asked for transparent huge pages.
    huge: bool,
    /// A span for one page larger than a standard span: unmapped when the page
    /// comes back.
    whole: bool,
    /// Free slots (standard spans).
    free: u64,
    /// Slots that may hold resident memory (see `slots`).
    dirty: u64,
}

impl Span {
    fn len(&self) -> usize {
        self.slots * SLOT
    }

    /// Whether `addr` lies in the span's slots.
    fn holds(&self, addr: usize) -> bool {
        let base = self.base.addr().get();
        addr >= base && addr - base < self.len()
    }

    /// The slots of the huge pages that no arena uses (none in a plain span).
    fn whole_pages(&self) -> u64 {
        if self.huge {
            whole_free_pairs(self.free)
        } else {
            0
        }
    }
}

/// The heap's state, behind [`HEAP`]'s lock (the tests make heaps of their own).
struct Heap {
    /// Every span mapped, most recent first.
    spans: Option<NonNull<Span>>,
    /// Slots free and resident (`free & dirty` over the standard spans).
    free_resident: usize,
    /// The start of the decay's current epoch (`None` before the first call).
    epoch_start: Option<Instant>,
    /// The fewest free resident slots seen during the current epoch.
    low_water: usize,
    /// The small pages kept for later arenas (counted with the free slots, under
    /// the same bound and decay).
    small: SmallPages,
}

/// The heap's lock: a `pthread_mutex_t`, so that `fork` handlers can take it
/// before a fork and release it in the parent and the child (`pthread_atfork`).
struct Locked {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    heap: UnsafeCell<Heap>,
}

// SAFETY: `heap` is read and written only by the thread that holds `mutex` (through
// `with_heap`), and the span records it reaches only so too; the mutex is made for
// sharing between threads.
unsafe impl Sync for Locked {}

static HEAP: Locked = Locked {
    mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
    heap: UnsafeCell::new(Heap::EMPTY),
};

/// What became of a page given back ([`Heap::give_back`]).
#[derive(Debug, PartialEq)]
enum Returned {
    /// The heap did not hand it out.
    NotOurs,
    /// Its slots are free again.
    Kept,
    /// It was a span of its own, unlinked now: to be unmapped.
    Unmap(NonNull<Span>),
}

/// The most free resident memory kept, in bytes ([`super::set_free_page_limit`]).
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_FREE_PAGE_LIMIT);

/// Registers the fork handlers once.
static FORK_HANDLERS: Once = Once::new();

extern "C" fn lock_before_fork() {
    // SAFETY: the mutex is a valid, initialized `pthread_mutex_t` for the program's
    // life; this thread is the one about to fork and does not hold it.
    unsafe { libc::pthread_mutex_lock(HEAP.mutex.get()) };
}

extern "C" fn unlock_after_fork() {
    // SAFETY: `lock_before_fork` locked it on this thread (in the child, the copy
    // of that thread), and nothing else unlocks it.
    unsafe { libc::pthread_mutex_unlock(HEAP.mutex.get()) };
}

/// Releases the lock when dropped (also if the code under it panicked).
struct Unlock;

impl Drop for Unlock {
    fn drop(&mut self) {
        // SAFETY: made only by `with_heap` right after it locked the mutex.
        unsafe { libc::pthread_mutex_unlock(HEAP.mutex.get()) };
    }
}

/// Runs `f` on the heap with the lock held.
fn with_heap<R>(f: impl FnOnce(&mut Heap) -> R) -> R {
    FORK_HANDLERS.call_once(|| {
        // SAFETY: registers three plain functions that only lock and unlock the
        // static mutex. A refusal (ENOMEM) leaves forks unprotected, as before.
        unsafe {
            libc::pthread_atfork(
                Some(lock_before_fork),
                Some(unlock_after_fork),
                Some(unlock_after_fork),
            )
        };
    });
    // SAFETY: a valid, initialized mutex for the program's life; no thread locks it
    // twice (nothing under the lock calls back into the heap).
    unsafe { libc::pthread_mutex_lock(HEAP.mutex.get()) };
    let _unlock = Unlock;
    // SAFETY: the lock is held until `_unlock` drops: no other reference to the heap
    // exists meanwhile.
    f(unsafe { &mut *HEAP.heap.get() })
}

/// A page of `size` bytes aligned to at most a slot, in huge-page spans if
/// `huge`, at `near` if those slots are free (the end of the arena's previous page
/// from the heap, or 0); `None` if the OS refuses the memory.
pub(super) fn take(size: usize, huge: bool, near: usize) -> Option<NonNull<u8>> {
    let n = slots_for(size)?;
    if n > SPAN_SLOTS {
        return map_whole(n, huge);
    }
    let (page, excess) = with_heap(|heap| {
        let page = heap.take(n, huge, near, Instant::now());
        (page, heap.small.over(LIMIT.load(Ordering::Relaxed)))
    });
    if excess {
        free_small_excess();
    }
    if page.is_some() {
        return page;
    }
    // No span has room: a new one, mapped without the lock.
    let span = map_span(SPAN_SLOTS, huge, false)?;
    Some(with_heap(|heap| heap.take_from_new(span, n)))
}

/// Takes back the page at `ptr` of `size` bytes if the heap handed it out (and then
/// returns `true`); with `purge`, its memory goes back to the OS at once.
pub(super) fn give_back(ptr: NonNull<u8>, size: usize, purge: bool) -> bool {
    let Some(n) = slots_for(size) else {
        return false;
    };
    let (returned, excess) = with_heap(|heap| {
        let limit = LIMIT.load(Ordering::Relaxed);
        let returned = heap.give_back(
            ptr.addr().get(),
            n,
            purge,
            heap.slots_kept(limit),
            Instant::now(),
        );
        (returned, heap.small.over(limit))
    });
    if excess {
        free_small_excess();
    }
    match returned {
        Returned::NotOurs => false,
        Returned::Kept => true,
        Returned::Unmap(span) => {
            unmap_span(span);
            true
        }
    }
}

/// A small page of `class` that an arena gave back, the most recent, if the heap
/// keeps one (see `small_pages`).
pub(super) fn take_small(class: usize) -> Option<NonNull<u8>> {
    let (page, excess) = with_heap(|heap| {
        heap.decay(Instant::now());
        let page = heap.small.take(class);
        (page, heap.small.over(LIMIT.load(Ordering::Relaxed)))
    });
    if excess {
        free_small_excess();
    }
    page
}

/// Keeps the small page at `page` of `class` for a later arena, if the bound
/// allows; `false` if the caller is to free it (it stays the caller's).
///
/// # Safety
/// `page` is a block of the global allocator with `small_page_layout(class)` that
/// nothing uses any more: once kept, the heap hands it to one later arena or frees
/// it (`free_small_excess`).
pub(super) unsafe fn keep_small(page: NonNull<u8>, class: usize) -> bool {
    let (kept, excess) = with_heap(|heap| {
        heap.decay(Instant::now());
        let limit = LIMIT.load(Ordering::Relaxed);
        let kept = heap.small.keep(page, class, limit);
        // The free slots and the small pages within the limit together.
        heap.purge_down_to(heap.slots_kept(limit));
        (kept, heap.small.over(limit))
    });
    if excess {
        free_small_excess();
    }
    kept
}

/// Frees, outside the lock, the small pages that exceed their bound or that the
/// decay gave up.
fn free_small_excess() {
    while let Some((page, class)) =
        with_heap(|heap| heap.small.pop_excess(LIMIT.load(Ordering::Relaxed)))
    {
        // SAFETY: a page the heap kept is a block of the global allocator with this
        // layout that nothing uses (`keep_small`'s contract, the only way in), handed
        // out once: `pop_excess` removed it.
        unsafe { Global.deallocate(page, super::small_page_layout(class)) };
    }
}

/// The bytes of free slots that may be resident and of the small pages kept.
pub(super) fn free_resident_bytes() -> usize {
    with_heap(|heap| heap.free_resident * SLOT + heap.small.bytes())
}

/// Purges every free slot, unmaps the spans left empty and frees every small page
/// kept; returns the bytes given back.
pub(super) fn release_all() -> usize {
    let released = with_heap(|heap| {
        let before = heap.free_resident * SLOT + heap.small.bytes();
        heap.purge_down_to(0);
        heap.low_water = 0;
        heap.small.release_all();
        before
    });
    free_small_excess();
    released
}

/// Ends the decay's epochs that have passed (see `Heap::decay`).
pub(super) fn decay_now() {
    with_heap(|heap| heap.decay(Instant::now()));
    free_small_excess();
}

pub(super) fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
    with_heap(|heap| heap.purge_down_to(heap.slots_kept(bytes)));
    free_small_excess();
}

pub(super) fn limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// The spans mapped now and their bytes (for tests and the docs' figures).
pub(super) fn mapped() -> (usize, usize) {
    with_heap(|heap| {
        let mut count = 0;
        let mut bytes = 0;
        heap.each_span(|record| {
            count += 1;
            bytes += record.len();
        });
        (count, bytes)
    })
}

impl Heap {
    const EMPTY: Heap = Heap {
        spans: None,
        free_resident: 0,
        epoch_start: None,
        low_water: 0,
        small: SmallPages::EMPTY,
    };

    /// The free resident slots kept under the limit `limit` (bytes), beside the
    /// small pages kept: the limit bounds both together.
    fn slots_kept(&self, limit: usize) -> usize {
        limit.saturating_sub(self.small.bytes()) / SLOT
    }

    /// A page of `n` slots (at most a span's) from the spans mapped, of huge-page
    /// spans if `huge`, after the decay's epochs passed by `now`; `None` if no span
    /// has room for it.
    ///
    /// Resident slots first, so that the slots the heap has touched are the ones it
    /// hands out again and its resident memory stays what its arenas need at once:
    /// those right after the arena's previous page, else the best resident ones of
    /// any span; fresh slots only when no span has resident ones that fit, and then
    /// right after the arena's previous page if they are free.
    fn take(&mut self, n: usize, huge: bool, near: usize, now: Instant) -> Option<NonNull<u8>> {
        self.decay(now);
        if let Some(page) = self.take_at(n, huge, near, true) {
            return Some(page);
        }
        if let Some(page) = self.take_from_spans(n, huge, RESIDENT_RANKS) {
            return Some(page);
        }
        if let Some(page) = self.take_at(n, huge, near, false) {
            return Some(page);
        }
        self.take_from_spans(n, huge, u8::MAX)
    }

    /// `n` slots from the address `near` on, if they are free (and resident, with
    /// `resident`) and in a standard span of the kind asked: an arena's pages follow
    /// one another, so that it fills the huge pages of a huge-page span by itself.
    fn take_at(
        &mut self,
        n: usize,
        huge: bool,
        near: usize,
        resident: bool,
    ) -> Option<NonNull<u8>> {
        let span = self.span_of(near)?;
        // SAFETY: a span of the list, under the lock, and no other reference to its
        // record is live.
        let record = unsafe { &mut *span.as_ptr() };
        // `near` is the end of the arena's previous page: the next slot boundary.
        let start = (near - record.base.addr().get()).div_ceil(SLOT);
        let fits = !record.whole && record.huge == huge && start + n <= SPAN_SLOTS;
        let wanted = if resident {
            record.free & record.dirty
        } else {
            record.free
        };
        (fits && wanted & mask(start, n) == mask(start, n))
            .then(|| self.take_slots(record, start, n))
    }

    /// Links `span`, just mapped, and hands out its first `n` slots.
    fn take_from_new(&mut self, span: NonNull<Span>, n: usize) -> NonNull<u8> {
        self.link(span);
        // SAFETY: just linked, mapped and initialized; under the lock, and no other
        // reference to its record is live.
        let record = unsafe { &mut *span.as_ptr() };
        self.take_slots(record, 0, n)
    }

    /// Takes back the page of `n` slots at `addr` if it is in one of the spans: its
    /// slots are free again, purged at once with `purge`; then the decay's epochs
    /// passed by `now` run and the free resident slots are purged down to `keep`.
    fn give_back(
        &mut self,
        addr: usize,
        n: usize,
        purge: bool,
        keep: usize,
        now: Instant,
    ) -> Returned {
        let Some(span) = self.span_of(addr) else {
            return Returned::NotOurs;
        };
        // SAFETY: a span of the list, under the lock, and no other reference to its
        // record is live.
        let record = unsafe { &mut *span.as_ptr() };
        if record.whole {
            self.unlink(span);
            return Returned::Unmap(span);
        }
        let start = (addr - record.base.addr().get()) / SLOT;
        let slots = mask(start, n);
        debug_assert_eq!(record.free & slots, 0, "a page given back twice");
        record.free |= slots;
        record.dirty |= slots;
        self.free_resident += n;
        if purge {
            self.purge_in(span, slots);
        }
        self.decay(now);
        self.purge_down_to(keep);
        Returned::Kept
    }

    /// Calls `f` on every span record.
    fn each_span(&self, mut f: impl FnMut(&Span)) {
        let mut next = self.spans;
        while let Some(span) = next {
            // SAFETY: every span of the list is mapped with its record; under the lock.
            let record = unsafe { span.as_ref() };
            f(record);
            next = record.next;
        }
    }

    /// The span whose slots hold `addr`.
    fn span_of(&self, addr: usize) -> Option<NonNull<Span>> {
        let mut next = self.spans;
        while let Some(span) = next {
            // SAFETY: as in `each_span`.
            let record = unsafe { span.as_ref() };
            if record.holds(addr) {
                return Some(span);
            }
            next = record.next;
        }
        None
    }

    /// `n` slots from the best span for them (see `slots::choose`), of a rank at
    /// most `max_rank`; of spans that serve them equally well, the one mapped last.
    fn take_from_spans(&mut self, n: usize, huge: bool, max_rank: u8) -> Option<NonNull<u8>> {
        let mut best: Option<(NonNull<Span>, usize, u8)> = None;
        let mut next = self.spans;
        while let Some(span) = next {
            // SAFETY: as in `each_span`.
            let record = unsafe { span.as_ref() };
            next = record.next;
            if record.whole {
                continue;
            }
            if let Some((start, rank)) = choose(record.free, record.dirty, n, record.huge, huge)
                .filter(|&(_, rank)| rank <= max_rank)
            {
                if best.is_none_or(|(_, _, best_rank)| rank < best_rank) {
                    best = Some((span, start, rank));
                    if rank == 0 {
                        break;
                    }
                }
            }
        }
        let (span, start, _) = best?;
        // SAFETY: a span of the list, under the lock, and no other reference to its
        // record is live.
        let record = unsafe { &mut *span.as_ptr() };
        Some(self.take_slots(record, start, n))
    }

    /// Hands out slots `start .. start + n` of `record` (all free).
    fn take_slots(&mut self, record: &mut Span, start: usize, n: usize) -> NonNull<u8> {
        let slots = mask(start, n);
        debug_assert_eq!(record.free & slots, slots);
        self.free_resident -= (record.free & record.dirty & slots).count_ones() as usize;
        record.free &= !slots;
        // In a huge-page span, touching these slots may make their huge-page mates
        // resident too: a free mate counts as resident from now on.
        let touched = if record.huge {
            huge_page_mates(slots)
        } else {
            slots
        };
        self.free_resident += (record.free & touched & !record.dirty).count_ones() as usize;
        record.dirty |= touched;
        self.low_water = self.low_water.min(self.free_resident);
        // SAFETY: `start + n <= slots` of the span: inside the mapping whose
        // provenance `base` carries.
        unsafe { record.base.add(start * SLOT) }
    }

    /// Links a new span at the head of the list.
    fn link(&mut self, mut span: NonNull<Span>) {
        // SAFETY: a fresh span, not yet shared, its record initialized.
        unsafe { span.as_mut().next = self.spans };
        self.spans = Some(span);
    }

    /// Unlinks `span` from the list.
    fn unlink(&mut self, span: NonNull<Span>) {
        // SAFETY: a span of the list, under the lock.
        let after = unsafe { span.as_ref().next };
        if self.spans == Some(span) {
            self.spans = after;
            return;
        }
        let mut next = self.spans;
        while let Some(mut at) = next {
            // SAFETY: as in `each_span`; no other reference to this record is live.
            let record = unsafe { at.as_mut() };
            if record.next == Some(span) {
                record.next = after;
                return;
            }
            next = record.next;
        }
    }

    /// Purges `slots` (free and resident) of `span`, and unmaps the span if it is
    /// left empty.
    fn purge_in(&mut self, span: NonNull<Span>, slots: u64) {
        // SAFETY: a span of the list, under the lock.
        let record = unsafe { &mut *span.as_ptr() };
        let slots = slots & record.free & record.dirty;
        for (start, n) in runs_of(slots) {
            // SAFETY: free slots of a live mapping of ours: no arena holds them, and
            // the lock keeps them from being handed out meanwhile.
            unsafe {
                let at = record.base.add(start * SLOT);
                libc::madvise(at.as_ptr().cast(), n * SLOT, libc::MADV_DONTNEED);
            }
        }
        record.dirty &= !slots;
        self.free_resident -= slots.count_ones() as usize;
        if record.free == ALL && record.dirty == 0 {
            self.unlink(span);
            unmap_span(span);
        }
    }

    /// Purges free resident slots until at most `keep` remain: in the spans with the
    /// fewest slots in use first (so that they empty and are unmapped; of spans with
    /// as few, the one mapped last), but first in spans where a purge splits no huge
    /// page; in each, whole free huge pages first, then the highest slots (see
    /// `slots::purge_choice`). Then unmaps the spans that are empty and purged.
    fn purge_down_to(&mut self, keep: usize) {
        // Every round purges one slot at least: no more rounds than slots to purge.
        for _ in keep..self.free_resident {
            if self.free_resident <= keep {
                break;
            }
            // By (the purge would split a huge page, slots in use), the lowest.
            let mut emptiest: Option<(NonNull<Span>, (bool, u32))> = None;
            let mut next = self.spans;
            while let Some(span) = next {
                // SAFETY: as in `each_span`.
                let record = unsafe { span.as_ref() };
                next = record.next;
                let candidates = record.free & record.dirty;
                if record.whole || candidates == 0 {
                    continue;
                }
                let splits = record.huge && record.whole_pages() & candidates == 0;
                let order = (splits, (!record.free).count_ones());
                if emptiest.is_none_or(|(_, best)| order < best) {
                    emptiest = Some((span, order));
                }
            }
            let Some((span, _)) = emptiest else {
                break;
            };
            // SAFETY: as in `each_span`.
            let record = unsafe { span.as_ref() };
            let candidates = record.free & record.dirty;
            let held = candidates.count_ones() as usize;
            let others = self.free_resident - held;
            let (slots, _) = purge_choice(
                candidates,
                record.whole_pages(),
                held,
                keep.saturating_sub(others),
            );
            self.purge_in(span, slots);
        }
        self.low_water = self.low_water.min(self.free_resident);
    }

    /// Ends the decay's epochs that have passed by `now`: each purges half of the
    /// free resident slots that no arena took during it.
    fn decay(&mut self, now: Instant) {
        let Some(start) = self.epoch_start else {
            self.epoch_start = Some(now);
            self.low_water = self.free_resident;
            self.small.decay(0);
            return;
        };
        let elapsed = now.saturating_duration_since(start);
        if elapsed < FREE_PAGE_DECAY_EPOCH {
            return;
        }
        let epochs = u32::try_from(elapsed.as_nanos() / FREE_PAGE_DECAY_EPOCH.as_nanos())
            .unwrap_or(u32::MAX);
        let keep = decay_keep(self.free_resident, self.low_water, epochs);
        self.purge_down_to(keep);
        // Its pages go outside the lock (`free_small_excess`).
        self.small.decay(epochs);
        self.epoch_start = Some(now);
        self.low_water = self.free_resident;
    }
}

/// `MADV_DONTNEED` over the whole OS pages within `len` bytes at `start`: they stay
/// mapped and read as zeros when next touched (see `PageSource::discard`).
///
/// # Safety
/// `start..start + len` is memory of this process that nothing reads before writing
/// it again.
pub(super) unsafe fn discard(start: NonNull<u8>, len: usize) {
    let Some((offset, bytes)) = whole_os_pages(start.addr().get(), len, os_page()) else {
        return;
    };
    // SAFETY: `offset + bytes <= len`: the pages lie in the caller's range, whose
    // contents no one needs; the advice keeps them mapped (a refusal, for a locked
    // range, leaves them resident: harmless).
    unsafe {
        libc::madvise(
            start.add(offset).as_ptr().cast(),
            bytes,
            libc::MADV_DONTNEED,
        );
    }
}

/// Maps a span of `slots` slots (a standard span, or with `whole` one page alone):
/// its header page, then the slots from an address aligned to 2 MiB; asks for
/// transparent huge pages with `huge`. `None` if the OS refuses.
fn map_span(slots: usize, huge: bool, whole: bool) -> Option<NonNull<Span>> {
    let len = slots.checked_mul(SLOT)?;
    let mapped = span_mapping(len)?;
    // SAFETY: an anonymous private mapping at an address the kernel picks: no
    // existing memory is affected. Without MAP_NORESERVE, so that the kernel's
    // overcommit policy refuses a size it could not back, as malloc's would.
    let raw = unsafe {
        libc::mmap(
            ptr::null_mut(),
            mapped,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return None;
    }
    let raw = NonNull::new(raw.cast::<u8>())?;
    // The first slot: 2 MiB-aligned, with room for the header page before it.
    let (lead, trail) = span_slack(raw.addr().get());
    // SAFETY: `lead + SPAN_HEADER + len + trail == mapped`: every pointer stays
    // within the mapping.
    let (header, base, tail) = unsafe {
        let header = raw.add(lead);
        let base = header.add(SPAN_HEADER);
        (header, base, base.add(len))
    };
    // SAFETY: the slack before the header and after the slots belongs to the
    // mapping just made and nothing refers to it (the trail is never empty); the
    // hints are harmless when refused (no transparent huge pages).
    unsafe {
        if lead > 0 {
            libc::munmap(raw.as_ptr().cast(), lead);
        }
        libc::munmap(tail.as_ptr().cast(), trail);
        if huge {
            libc::madvise(base.as_ptr().cast(), len, libc::MADV_HUGEPAGE);
        } else {
            // Under the THP mode `always` the kernel would back every 2 MiB of a
            // plain span that an arena touches with a huge page (and khugepaged
            // would collapse them): refused, so that a barely touched page costs
            // what was touched whatever the mode. The header too: one mapping.
            libc::madvise(
                header.as_ptr().cast(),
                SPAN_HEADER + len,
                libc::MADV_NOHUGEPAGE,
            );
        }
    }
    let span = header.cast::<Span>();
    // SAFETY: `header` starts a fresh writable page of the mapping, aligned to the
    // OS page (more than `Span` needs), and nothing else refers to it.
    unsafe {
        span.write(Span {
            next: None,
            base,
            slots,
            huge,
            whole,
            free: if whole { 0 } else { ALL },
            dirty: 0,
        });
    }
    Some(span)
}

/// A span for one page of `n` slots (more than a standard span holds), linked.
fn map_whole(n: usize, huge: bool) -> Option<NonNull<u8>> {
    let span = map_span(n, huge, true)?;
    // SAFETY: just mapped; not yet shared.
    let base = unsafe { span.as_ref().base };
    with_heap(|heap| heap.link(span));
    Some(base)
}

/// Unmaps an unlinked span, its header included.
fn unmap_span(span: NonNull<Span>) {
    // SAFETY: the span is unlinked: nothing else refers to its record or slots.
    unsafe {
        let len = span.as_ref().len();
        libc::munmap(span.as_ptr().cast(), SPAN_HEADER + len);
    }
}

#[cfg(test)]
mod tests {
    //! The heap's rules on heaps of the tests' own (their spans mapped as the
    //! process heap's are, their clocks given), and the lock of the process's heap
    //! (the one test here that calls into it: no other unit test does).

    use super::*;
    use core::sync::atomic::AtomicBool;
    use core::time::Duration;
    use std::vec::Vec;

    use super::super::slots::HUGE_PAGE;

    const MIB: usize = 1 << 20;

    /// Residency of the OS page holding `addr`, which must be mapped (`mincore`).
    fn resident(addr: usize) -> bool {
        let mut vec = 0u8;
        // SAFETY: mincore only reads the page tables of the one page and writes one
        // byte into `vec`.
        let rc = unsafe { libc::mincore((addr & !4095) as *mut libc::c_void, 4096, &mut vec) };
        assert_eq!(rc, 0, "{addr:#x} is not mapped");
        vec & 1 == 1
    }

    /// The offsets in a slot that the tests write and check: its first OS page and
    /// one in its middle.
    const PROBES: [usize; 2] = [0, SLOT / 2];

    /// Writes `byte` at the probes of each of the `slots` slots from `page`.
    fn fill(page: NonNull<u8>, slots: usize, byte: u8) {
        for slot in 0..slots {
            for probe in PROBES {
                // SAFETY: `page` starts `slots` slots handed out to the test.
                unsafe { page.add(slot * SLOT + probe).write(byte) };
            }
        }
    }

    /// Whether every probe of the slot at `page` reads `byte`.
    fn holds_byte(page: NonNull<u8>, byte: u8) -> bool {
        // SAFETY: `page` is a slot handed out to the test.
        PROBES
            .iter()
            .all(|&probe| unsafe { page.add(probe).read() } == byte)
    }

    /// Whether no probe of the slot at `addr` is resident.
    fn purged(addr: usize) -> bool {
        PROBES.iter().all(|&probe| !resident(addr + probe))
    }

    /// The first slot of `span`.
    fn base(span: NonNull<Span>) -> NonNull<u8> {
        // SAFETY: a span mapped by the test, not yet unmapped.
        unsafe { span.as_ref().base }
    }

    /// The slot `i` of `span`.
    fn slot(span: NonNull<Span>, i: usize) -> NonNull<u8> {
        // SAFETY: `i` is one of the span's slots.
        unsafe { base(span).add(i * SLOT) }
    }

    /// The free and dirty bitmaps of `span`.
    fn bits(span: NonNull<Span>) -> (u64, u64) {
        // SAFETY: a span mapped by the test, not yet unmapped.
        let record = unsafe { span.as_ref() };
        (record.free, record.dirty)
    }

    /// A standard span, linked, with its first `n` slots handed out as one page.
    fn new_span(heap: &mut Heap, huge: bool, n: usize) -> NonNull<Span> {
        let span = map_span(SPAN_SLOTS, huge, false).expect("a span mapped");
        assert_eq!(heap.take_from_new(span, n), base(span));
        span
    }

    /// Gives back the page of `n` slots at `page`, which the heap keeps.
    fn back(heap: &mut Heap, page: NonNull<u8>, n: usize, keep: usize, now: Instant) {
        let returned = heap.give_back(addr(page), n, false, keep, now);
        assert_eq!(returned, Returned::Kept);
    }

    /// The first slots of the spans, in the order of the list.
    fn listed(heap: &Heap) -> Vec<usize> {
        let mut bases = Vec::new();
        heap.each_span(|record| bases.push(record.base.addr().get()));
        bases
    }

    fn addr(page: NonNull<u8>) -> usize {
        page.addr().get()
    }

    /// Unmaps every span of `heap`, whatever its state (without the heap's own
    /// unlinking, which some tests check).
    fn unmap_all(heap: &mut Heap) {
        let mut next = heap.spans.take();
        while let Some(span) = next {
            // SAFETY: a span of the list, mapped.
            next = unsafe { span.as_ref().next };
            unmap_span(span);
        }
        heap.free_resident = 0;
    }

    #[test]
    fn a_span_holds_the_addresses_of_its_slots_only() {
        let base = NonNull::new((64 * MIB) as *mut u8).unwrap();
        let mut span = Span {
            next: None,
            base,
            slots: SPAN_SLOTS,
            huge: false,
            whole: false,
            free: ALL,
            dirty: 0,
        };
        assert_eq!(span.len(), 64 * MIB);
        assert!(!span.holds(64 * MIB - 1));
        assert!(span.holds(64 * MIB));
        assert!(span.holds(128 * MIB - 1));
        assert!(!span.holds(128 * MIB));
        span.slots = 65;
        assert_eq!(span.len(), 65 * MIB);
        assert!(span.holds(129 * MIB - 1));
        assert!(!span.holds(129 * MIB));
    }

    #[test]
    fn a_span_is_mapped_with_its_record_just_before_slots_aligned_to_a_huge_page() {
        for (slots, huge, whole) in [(SPAN_SLOTS, true, false), (65, false, true)] {
            let span = map_span(slots, huge, whole).unwrap();
            // SAFETY: just mapped.
            let record = unsafe { span.as_ref() };
            let base = record.base.addr().get();
            assert_eq!(base % HUGE_PAGE, 0);
            assert_eq!(span.addr().get(), base - SPAN_HEADER);
            assert_eq!(record.next, None);
            assert_eq!(
                (record.slots, record.huge, record.whole),
                (slots, huge, whole)
            );
            assert_eq!(
                (record.free, record.dirty),
                (if whole { 0 } else { ALL }, 0)
            );
            let last = record.len() - 1;
            // SAFETY: the first and last bytes of the span's slots.
            unsafe {
                record.base.write(1);
                record.base.add(last).write(2);
                assert_eq!((record.base.read(), record.base.add(last).read()), (1, 2));
            }
            unmap_span(span);
        }
    }

    #[test]
    fn spans_are_linked_first_and_unlinked_from_anywhere_in_the_list() {
        let mut heap = Heap::EMPTY;
        let spans: Vec<_> = (0..3)
            .map(|_| map_span(SPAN_SLOTS, false, false).unwrap())
            .collect();
        for &span in &spans {
            heap.link(span);
        }
        let [a, b, c] = [0, 1, 2].map(|i| addr(base(spans[i])));
        assert_eq!(listed(&heap), [c, b, a]);
        assert_eq!(heap.span_of(b + 5 * MIB), Some(spans[1]));
        assert_eq!(heap.span_of(a + 63 * MIB), Some(spans[0]));
        assert_eq!(heap.span_of(c - 1), None, "the record's page is no slot");
        heap.unlink(spans[1]);
        assert_eq!(listed(&heap), [c, a]);
        assert_eq!(heap.span_of(b), None);
        heap.unlink(spans[0]);
        assert_eq!(listed(&heap), [c]);
        heap.unlink(spans[2]);
        assert_eq!(listed(&heap), []);
        for span in spans {
            unmap_span(span);
        }
    }

    #[test]
    fn pages_come_from_resident_slots_first_then_from_the_span_mapped_last() {
        let t0 = Instant::now();
        let mut heap = Heap::EMPTY;
        // A, full, has one slot free and resident again; B, mapped after it, fresh
        // slots.
        let a = new_span(&mut heap, false, SPAN_SLOTS);
        let returned = heap.give_back(addr(slot(a, 5)), 1, false, 64, t0);
        assert_eq!(returned, Returned::Kept);
        assert_eq!(heap.free_resident, 1);
        let b = new_span(&mut heap, false, 1);
        assert_eq!(
            heap.take(1, false, 0, t0),
            Some(slot(a, 5)),
            "the resident slot"
        );
        assert_eq!(heap.free_resident, 0);
        // Fresh slots in B, and in C mapped after it: C's.
        let c = new_span(&mut heap, false, 1);
        assert_eq!(heap.take(1, false, 0, t0), Some(slot(c, 1)));
        assert_eq!(heap.take(2, false, 0, t0), Some(slot(c, 2)));
        // No fresh slot of a plain span for huge pages; a resident one will do.
        assert_eq!(heap.take(1, true, 0, t0), None);
        back(&mut heap, slot(b, 0), 1, 64, t0);
        assert_eq!(heap.take(1, true, 0, t0), Some(slot(b, 0)));
        assert_eq!(bits(b), (ALL << 1, 1));
        assert_eq!(bits(c), (ALL << 4, 0b1111));
        unmap_all(&mut heap);
    }

    #[test]
    fn resident_slots_come_before_fresh_slots_right_after_the_previous_page() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        // Slots 0 to 4 handed out; slot 2 given back, free and resident.
        let p = new_span(&mut heap, false, 1);
        for i in 1..5 {
            assert_eq!(heap.take(1, false, 0, now), Some(slot(p, i)));
        }
        back(&mut heap, slot(p, 2), 1, 64, now);
        // The arena whose last page is slot 4 gets the resident slot, not the fresh
        // slot 5 after its page.
        let near = addr(slot(p, 5));
        assert_eq!(heap.take(1, false, near, now), Some(slot(p, 2)));
        // No resident slot left: the fresh one after its page, then (slot 9 being
        // `near`) slot 9, ahead of the lower fresh slots 6 to 8.
        assert_eq!(heap.take(1, false, near, now), Some(slot(p, 5)));
        assert_eq!(heap.take(1, false, addr(slot(p, 9)), now), Some(slot(p, 9)));
        assert_eq!(heap.take(1, false, 0, now), Some(slot(p, 6)));
        // A resident huge page of a huge-page span (rank 1 for plain pages) comes
        // before fresh plain slots, `near` included.
        let h = new_span(&mut heap, true, 2);
        back(&mut heap, slot(h, 0), 2, 64, now);
        assert_eq!(
            heap.take(1, false, addr(slot(p, 10)), now),
            Some(slot(h, 0))
        );
        // (Slot 1, half of that huge page, is left to the arena holding slot 0.)
        assert_eq!(
            heap.take(1, false, addr(slot(p, 10)), now),
            Some(slot(p, 10))
        );
        unmap_all(&mut heap);
    }

    #[test]
    fn a_resident_slot_of_the_kind_asked_beats_one_of_the_other_kind_in_a_later_span() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        // A plain span with slot 1 free and resident, then (first in the list) a
        // huge-page span with a whole resident huge page free.
        let p = new_span(&mut heap, false, 2);
        back(&mut heap, slot(p, 1), 1, 64, now);
        let h = new_span(&mut heap, true, 2);
        back(&mut heap, slot(h, 0), 2, 64, now);
        assert_eq!(listed(&heap), [addr(base(h)), addr(base(p))]);
        // A plain page: rank 0 in the plain span, though the huge-page span's rank 1
        // comes first in the list; then the huge page.
        assert_eq!(heap.take(1, false, 0, now), Some(slot(p, 1)));
        assert_eq!(heap.take(1, false, 0, now), Some(slot(h, 0)));
        unmap_all(&mut heap);
    }

    #[test]
    fn slots_of_a_huge_page_span_make_their_huge_page_mates_resident() {
        let mut heap = Heap::EMPTY;
        let now = Instant::now();
        // Slot 0 taken: slot 1 shares its huge page, free and resident now.
        let h = new_span(&mut heap, true, 1);
        assert_eq!(bits(h), (ALL << 1, 0b11));
        assert_eq!(heap.free_resident, 1);
        // The arena's next page, asked near the end of slot 0, takes slot 1.
        assert_eq!(heap.take(1, true, addr(slot(h, 1)), now), Some(slot(h, 1)));
        assert_eq!((bits(h), heap.free_resident), ((ALL << 2, 0b11), 0));
        assert_eq!(heap.take(2, true, 0, now), Some(slot(h, 2)));
        assert_eq!((bits(h), heap.free_resident), ((ALL << 4, 0b1111), 0));
        assert_eq!(heap.take(1, true, 0, now), Some(slot(h, 4)));
        assert_eq!((bits(h), heap.free_resident), ((ALL << 5, 0b11_1111), 1));
        // A plain span's slots have no mates.
        let p = new_span(&mut heap, false, 1);
        assert_eq!((bits(p), heap.free_resident), ((ALL << 1, 1), 1));
        // Slot 5, half of a huge page in use, is left to the arena that holds the
        // other half: a plain page takes a fresh plain slot.
        assert_eq!(heap.take(1, false, 0, now), Some(slot(p, 1)));
        assert_eq!((bits(p), heap.free_resident), ((ALL << 2, 0b11), 1));
        // Given back, slot 4 makes a whole resident huge page: plain pages take it.
        back(&mut heap, slot(h, 4), 1, 64, now);
        assert_eq!(heap.take(1, false, 0, now), Some(slot(h, 4)));
        assert_eq!(heap.free_resident, 1);
        unmap_all(&mut heap);
    }

    #[test]
    fn two_arenas_growing_at_once_fill_huge_pages_of_their_own() {
        let mut heap = Heap::EMPTY;
        let now = Instant::now();
        let h = new_span(&mut heap, true, 1); // arena A's first page: slot 0
        // Near the end of each arena's last page (B has none yet), B first.
        let mut near = [addr(slot(h, 1)), 0];
        let mut taken: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..3 {
            for arena in [1, 0] {
                let page = heap.take(1, true, near[arena], now).unwrap();
                near[arena] = addr(page) + SLOT;
                taken[arena].push((addr(page) - addr(base(h))) / SLOT);
            }
        }
        assert_eq!(taken, [[1, 4, 5], [2, 3, 6]]);
        // `near` in a span of the other kind, past the span or on a slot in use: the
        // usual choice.
        let p = new_span(&mut heap, false, 1);
        assert_eq!(heap.take(1, true, addr(slot(p, 1)), now), Some(slot(h, 8)));
        assert_eq!(
            heap.take(1, false, addr(slot(h, 10)), now),
            Some(slot(p, 1))
        );
        assert_eq!(heap.take(1, true, addr(slot(h, 4)), now), Some(slot(h, 10)));
        assert_eq!(
            heap.take(2, true, addr(slot(h, 63)), now),
            Some(slot(h, 12))
        );
        assert_eq!(
            heap.take(1, true, addr(slot(h, 63)), now),
            Some(slot(h, 63))
        );
        // Two slots right at `near`, though whole free huge pages come lower; `near`
        // inside a slot means the slot after it.
        assert_eq!(
            heap.take(2, true, addr(slot(h, 40)), now),
            Some(slot(h, 40))
        );
        assert_eq!(
            heap.take(1, true, addr(slot(h, 41)) + 1, now),
            Some(slot(h, 42))
        );
        unmap_all(&mut heap);
    }

    #[test]
    fn pages_given_back_are_kept_resident_purged_at_once_or_purged_past_the_bound() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        let p = new_span(&mut heap, false, 1);
        for i in 1..6 {
            assert_eq!(heap.take(1, false, 0, now), Some(slot(p, i)));
        }
        fill(base(p), 6, 9);
        let outside = 0u8;
        let outside = core::ptr::from_ref(&outside).addr();
        assert_eq!(
            heap.give_back(outside, 1, false, 64, now),
            Returned::NotOurs
        );
        // Kept: free, resident, counted.
        back(&mut heap, slot(p, 3), 1, 64, now);
        assert_eq!(bits(p), (ALL << 6 | 1 << 3, 0b11_1111));
        assert_eq!(heap.free_resident, 1);
        assert!(holds_byte(slot(p, 3), 9));
        // Purged at once: free, given back to the OS, not counted.
        assert_eq!(
            heap.give_back(addr(slot(p, 1)), 1, true, 64, now),
            Returned::Kept
        );
        assert_eq!(bits(p), (ALL << 6 | 0b1010, 0b11_1101));
        assert_eq!(heap.free_resident, 1);
        assert!(purged(addr(slot(p, 1))));
        for i in [0, 2, 3, 4, 5] {
            assert!(holds_byte(slot(p, i), 9), "slot {i}");
        }
        // Past the bound: the highest free slot is purged.
        back(&mut heap, slot(p, 4), 1, 1, now);
        assert_eq!(bits(p), (ALL << 6 | 0b1_1010, 0b10_1101));
        assert_eq!(heap.free_resident, 1);
        assert!(purged(addr(slot(p, 4))));
        assert!(holds_byte(slot(p, 3), 9));
        // A page of two slots.
        back(&mut heap, base(p), 1, 64, now);
        heap.purge_down_to(0);
        assert_eq!(heap.take(2, false, 0, now), Some(slot(p, 0)));
        back(&mut heap, base(p), 2, 64, now);
        assert_eq!(bits(p), (ALL & !0b10_0100, 0b10_0111));
        assert_eq!(heap.free_resident, 2);
        // The last pages back and every slot purged: the span is unlinked and unmapped.
        back(&mut heap, slot(p, 2), 1, 64, now);
        back(&mut heap, slot(p, 5), 1, 64, now);
        heap.purge_down_to(0);
        assert_eq!((listed(&heap), heap.free_resident), (Vec::new(), 0));
    }

    #[test]
    fn a_page_of_a_span_of_its_own_comes_back_to_be_unmapped() {
        let mut heap = Heap::EMPTY;
        let plain = new_span(&mut heap, false, 1);
        let whole = map_span(65, false, true).unwrap();
        heap.link(whole);
        let returned = heap.give_back(addr(base(whole)), 65, false, 64, Instant::now());
        assert_eq!(returned, Returned::Unmap(whole));
        assert_eq!(listed(&heap), [addr(base(plain))]);
        assert_eq!(heap.free_resident, 0);
        unmap_span(whole);
        unmap_all(&mut heap);
    }

    #[test]
    fn a_purge_gives_back_exactly_the_free_resident_slots_asked_for() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        let p = new_span(&mut heap, false, 1);
        for i in 1..4 {
            assert_eq!(heap.take(1, false, 0, now), Some(slot(p, i)));
        }
        fill(base(p), 4, 5);
        for i in [1, 2] {
            back(&mut heap, slot(p, i), 1, 64, now);
        }
        assert_eq!(heap.free_resident, 2);
        // Asked: slots 1 to 5, of which 1 and 2 only are free and resident.
        heap.purge_in(p, mask(1, 5));
        assert!(purged(addr(slot(p, 1))) && purged(addr(slot(p, 2))));
        assert!(holds_byte(slot(p, 0), 5) && holds_byte(slot(p, 3), 5));
        assert_eq!(bits(p), (ALL & !0b1001, 0b1001));
        assert_eq!((listed(&heap).len(), heap.free_resident), (1, 0));
        // Every slot free, one still resident: the span stays.
        for i in [0, 3] {
            back(&mut heap, slot(p, i), 1, 64, now);
        }
        heap.purge_in(p, 1 << 3);
        assert!(purged(addr(slot(p, 3))));
        assert!(holds_byte(slot(p, 0), 5));
        assert_eq!(bits(p), (ALL, 1));
        assert_eq!((listed(&heap).len(), heap.free_resident), (1, 1));
        // The last one purged: the span goes.
        heap.purge_in(p, 1);
        assert_eq!((listed(&heap), heap.free_resident), (Vec::new(), 0));
    }

    #[test]
    fn purges_go_to_the_spans_with_fewest_slots_in_use_first() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        // A: one slot in use, three free and resident; B, mapped after it: three in
        // use, two free and resident; C, mapped last: one in use, none resident.
        let a = new_span(&mut heap, false, 4);
        back(&mut heap, slot(a, 1), 3, 64, now);
        let b = new_span(&mut heap, false, 5);
        back(&mut heap, slot(b, 3), 2, 64, now);
        let c = new_span(&mut heap, false, 1);
        assert_eq!(heap.free_resident, 5);
        heap.purge_down_to(4);
        assert_eq!(heap.free_resident, 4);
        assert_eq!(bits(a), (ALL << 1, 0b0111), "A's highest slot purged");
        assert_eq!(bits(b), (ALL << 3, 0b1_1111));
        assert_eq!(bits(c), (ALL << 1, 1));
        heap.purge_down_to(1);
        assert_eq!(heap.free_resident, 1);
        assert_eq!(bits(a), (ALL << 1, 1));
        assert_eq!(bits(b), (ALL << 3, 0b0_1111));
        heap.purge_down_to(0);
        assert_eq!(bits(b), (ALL << 3, 0b0_0111));
        unmap_all(&mut heap);
    }

    #[test]
    fn purges_split_no_huge_page_while_a_whole_free_one_is_resident() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        // A: huge pages, slots 0-2 in use; slot 3 free and resident through its
        // mate 2 (purging it would split that huge page).
        let a = new_span(&mut heap, true, 3);
        assert_eq!(bits(a), (ALL << 3, 0b1111));
        // B, more slots in use: 0-3; 4-5 free and resident, a whole huge page.
        let b = new_span(&mut heap, true, 6);
        back(&mut heap, slot(b, 4), 2, 64, now);
        // C: plain pages, one slot in use, one free and resident (no huge page to
        // split: the emptiest span of all).
        let c = new_span(&mut heap, false, 2);
        back(&mut heap, slot(c, 1), 1, 64, now);
        assert_eq!(heap.free_resident, 4);
        heap.purge_down_to(3);
        assert_eq!(
            bits(c),
            (ALL << 1, 0b01),
            "C first: fewest in use, no split"
        );
        assert_eq!(heap.free_resident, 3);
        // Then B's whole huge page, both halves, though A has fewer slots in use.
        heap.purge_down_to(2);
        assert_eq!(bits(b), (ALL << 4, 0b1111));
        assert_eq!(bits(a), (ALL << 3, 0b1111));
        assert_eq!(heap.free_resident, 1);
        // A's half last.
        heap.purge_down_to(0);
        assert_eq!(bits(a), (ALL << 3, 0b0111));
        assert_eq!(heap.free_resident, 0);
        unmap_all(&mut heap);
    }

    #[test]
    fn of_spans_with_as_few_slots_in_use_the_one_mapped_last_is_purged_first() {
        let now = Instant::now();
        let mut heap = Heap::EMPTY;
        let a = new_span(&mut heap, false, 2);
        let b = new_span(&mut heap, false, 2);
        for span in [a, b] {
            back(&mut heap, slot(span, 1), 1, 64, now);
        }
        heap.purge_down_to(1);
        assert_eq!(
            (bits(a), bits(b)),
            ((ALL << 2 | 0b10, 0b11), (ALL << 2 | 0b10, 0b01))
        );
        unmap_all(&mut heap);
    }

    #[test]
    fn each_epoch_purges_half_of_what_it_left_unneeded() {
        let t0 = Instant::now();
        let at = |millis| t0 + Duration::from_millis(millis);
        let mut heap = Heap::EMPTY;
        let p = new_span(&mut heap, false, 16);
        // The first call starts the first epoch: 16 free resident slots, all unneeded.
        back(&mut heap, base(p), 16, 64, t0);
        heap.decay(at(500));
        assert_eq!(heap.free_resident, 16, "within the epoch");
        heap.decay(at(1000));
        assert_eq!(heap.free_resident, 8, "one epoch: half");
        assert_eq!(bits(p).1, 0xff);
        // A slot taken in the next epoch: 7 never were.
        assert_eq!(heap.take(1, false, 0, at(1500)), Some(base(p)));
        assert_eq!(heap.free_resident, 7);
        // Two epochs and a half: 7 -> 3 -> 1 of them left.
        heap.decay(at(3500));
        assert_eq!(heap.free_resident, 1);
        // Two whole epochs, none of it needed: 1 -> 0.
        heap.decay(at(5500));
        assert_eq!(heap.free_resident, 0);
        unmap_all(&mut heap);
    }

    /// Whether the process heap's lock is free: taken and released at once. (No
    /// other unit test calls into the process heap, but the lock may be held for a
    /// moment: tries for a second.)
    fn lock_is_free() -> bool {
        for _ in 0..100 {
            // SAFETY: the heap's mutex, valid for the program's life; released at
            // once if taken.
            unsafe {
                if libc::pthread_mutex_trylock(HEAP.mutex.get()) == 0 {
                    libc::pthread_mutex_unlock(HEAP.mutex.get());
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// The one unit test that calls into the process's heap. A lock left held
    /// fails it at once rather than hanging the next call.
    #[test]
    fn the_heap_lock_is_released_after_each_call_and_around_a_fork() {
        assert_eq!(with_heap(|_| 7), 7);
        assert!(lock_is_free(), "a call left the heap locked");
        // A thread holds the lock when the test forks: the fork waits until it is
        // done, and neither process finds the lock held after it.
        let locked = AtomicBool::new(false);
        let forking = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                with_heap(|_| {
                    locked.store(true, Ordering::SeqCst);
                    while !forking.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    done.store(true, Ordering::SeqCst);
                });
            });
            while !locked.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            forking.store(true, Ordering::SeqCst);
            // SAFETY: the child only reads its memory, tries the lock and exits
            // (`_exit`: no exit handlers or destructors of the parent's state run).
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: the heap's mutex, in the child's copy of the process.
                let free = unsafe { libc::pthread_mutex_trylock(HEAP.mutex.get()) } == 0;
                let code = match (done.load(Ordering::SeqCst), free) {
                    (true, true) => 0,
                    (false, _) => 1,
                    (true, false) => 2,
                };
                // SAFETY: ends the child at once.
                unsafe { libc::_exit(code) };
            }
            assert!(pid > 0, "fork failed");
            assert!(
                done.load(Ordering::SeqCst),
                "the fork did not wait for the thread in the heap"
            );
            let mut status = 0;
            // SAFETY: waits for the child just made.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
            assert!(libc::WIFEXITED(status), "{status:#x}");
            match libc::WEXITSTATUS(status) {
                0 => {}
                1 => panic!("the child was forked in the middle of a call into the heap"),
                _ => panic!("the child found the heap locked"),
            }
        });
        assert!(lock_is_free(), "a fork left the heap locked in the parent");
    }
}
