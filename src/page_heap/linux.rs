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
    ALL, SLOT, SPAN_SLOTS, choose, decay_keep, huge_page_mates, mask, purge_choice, runs_of,
    slots_for,
};
use super::{DEFAULT_FREE_PAGE_LIMIT, FREE_PAGE_DECAY_EPOCH};

/// Bytes before a span's first slot that hold its [`Span`] record: one OS page.
const SPAN_HEADER: usize = 4096;

/// The size and alignment of a transparent huge page on x86-64 (and aarch64 with
/// 4 KiB base pages): spans are aligned to it.
const HUGE_PAGE: usize = 2 << 20;

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
}

/// The heap's state, behind [`HEAP`]'s lock.
struct Heap {
    /// Every span mapped, most recent first.
    spans: Option<NonNull<Span>>,
    /// Slots free and resident (`free & dirty` over the standard spans).
    free_resident: usize,
    /// The start of the decay's current epoch (`None` before the first call).
    epoch_start: Option<Instant>,
    /// The fewest free resident slots seen during the current epoch.
    low_water: usize,
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
    heap: UnsafeCell::new(Heap {
        spans: None,
        free_resident: 0,
        epoch_start: None,
        low_water: 0,
    }),
};

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
/// `huge`; `None` if the OS refuses the memory.
pub(super) fn take(size: usize, huge: bool) -> Option<NonNull<u8>> {
    let n = slots_for(size)?;
    if n > SPAN_SLOTS {
        return map_whole(n, huge);
    }
    if let Some(page) = with_heap(|heap| {
        heap.decay(Instant::now());
        heap.take_from_spans(n, huge)
    }) {
        return Some(page);
    }
    // No span has room: a new one, mapped without the lock.
    let span = map_span(SPAN_SLOTS, huge, false)?;
    Some(with_heap(|heap| {
        heap.link(span);
        // SAFETY: just linked, mapped and initialized; under the lock.
        let record = unsafe { &mut *span.as_ptr() };
        heap.take_slots(record, 0, n)
    }))
}

/// Takes back the page at `ptr` of `size` bytes if the heap handed it out (and then
/// returns `true`); with `purge`, its memory goes back to the OS at once.
pub(super) fn give_back(ptr: NonNull<u8>, size: usize, purge: bool) -> bool {
    let Some(n) = slots_for(size) else {
        return false;
    };
    let unmap = with_heap(|heap| {
        let span = heap.span_of(ptr.addr().get())?;
        // SAFETY: a span of the list, under the lock.
        let record = unsafe { &mut *span.as_ptr() };
        if record.whole {
            heap.unlink(span);
            return Some(Some(span));
        }
        let start = (ptr.addr().get() - record.base.addr().get()) / SLOT;
        let slots = mask(start, n);
        debug_assert_eq!(record.free & slots, 0, "a page given back twice");
        record.free |= slots;
        record.dirty |= slots;
        heap.free_resident += n;
        if purge {
            heap.purge_in(span, slots);
        }
        let limit = LIMIT.load(Ordering::Relaxed) / SLOT;
        heap.decay(Instant::now());
        heap.purge_down_to(limit);
        Some(None)
    });
    match unmap {
        None => false,
        Some(None) => true,
        Some(Some(span)) => {
            unmap_span(span);
            true
        }
    }
}

/// The bytes of free slots that may be resident.
pub(super) fn free_resident_bytes() -> usize {
    with_heap(|heap| heap.free_resident * SLOT)
}

/// Purges every free slot and unmaps the spans left empty; returns the bytes purged.
pub(super) fn release_all() -> usize {
    with_heap(|heap| {
        let before = heap.free_resident;
        heap.purge_down_to(0);
        heap.low_water = 0;
        before * SLOT
    })
}

/// Ends the decay's epochs that have passed (see `Heap::decay`).
pub(super) fn decay_now() {
    with_heap(|heap| heap.decay(Instant::now()));
}

pub(super) fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
    with_heap(|heap| heap.purge_down_to(bytes / SLOT));
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

    /// `n` slots from the best span for them (see `slots::choose`).
    fn take_from_spans(&mut self, n: usize, huge: bool) -> Option<NonNull<u8>> {
        let mut best: Option<(NonNull<Span>, usize, u8)> = None;
        let mut next = self.spans;
        while let Some(span) = next {
            // SAFETY: as in `each_span`.
            let record = unsafe { span.as_ref() };
            next = record.next;
            if record.whole {
                continue;
            }
            if let Some((start, rank)) = choose(record.free, record.dirty, n, record.huge, huge) {
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
    /// fewest slots in use first (so that they empty and are unmapped), the highest
    /// slots of each first. Then unmaps the spans that are empty and purged.
    fn purge_down_to(&mut self, keep: usize) {
        while self.free_resident > keep {
            let mut emptiest: Option<(NonNull<Span>, u32)> = None;
            let mut next = self.spans;
            while let Some(span) = next {
                // SAFETY: as in `each_span`.
                let record = unsafe { span.as_ref() };
                next = record.next;
                if record.whole || record.free & record.dirty == 0 {
                    continue;
                }
                let in_use = (!record.free).count_ones();
                if emptiest.is_none_or(|(_, fewest)| in_use < fewest) {
                    emptiest = Some((span, in_use));
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
            let (slots, _) = purge_choice(candidates, held, keep.saturating_sub(others));
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
        self.epoch_start = Some(now);
        self.low_water = self.free_resident;
    }
}

/// Maps a span of `slots` slots (a standard span, or with `whole` one page alone):
/// its header page, then the slots from an address aligned to 2 MiB; asks for
/// transparent huge pages with `huge`. `None` if the OS refuses.
fn map_span(slots: usize, huge: bool, whole: bool) -> Option<NonNull<Span>> {
    let len = slots.checked_mul(SLOT)?;
    let mapped = len.checked_add(SPAN_HEADER + HUGE_PAGE)?;
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
    let start = raw.addr().get();
    // The first slot: 2 MiB-aligned, with room for the header page before it.
    let lead = (start + SPAN_HEADER).next_multiple_of(HUGE_PAGE) - SPAN_HEADER - start;
    let trail = mapped - lead - SPAN_HEADER - len;
    // SAFETY: `lead + SPAN_HEADER + len + trail == mapped`: every pointer stays
    // within the mapping.
    let (header, base, tail) = unsafe {
        let header = raw.add(lead);
        (
            header,
            header.add(SPAN_HEADER),
            header.add(SPAN_HEADER + len),
        )
    };
    // SAFETY: the slack before the header and after the slots belongs to the
    // mapping just made and nothing refers to it; the hints are harmless when
    // refused (no transparent huge pages).
    unsafe {
        if lead > 0 {
            libc::munmap(raw.as_ptr().cast(), lead);
        }
        if trail > 0 {
            libc::munmap(tail.as_ptr().cast(), trail);
        }
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
