//! The page source of the arenas that [`OneWayAlloc::new`](crate::OneWayAlloc::new)
//! creates: the small first pages from the global allocator, the pages of 1 MiB and
//! more straight from the OS.
//!
//! Why: an arena that has grown to 1 MiB pages is a large working set (Netdata's
//! context query holds ~38 MiB), and the cost of such a query is dominated by
//! touching that memory: with 4 KiB OS pages every 4 KiB is a TLB entry and, on first
//! touch, a page fault. On Linux this source reserves address space in runs of
//! [`RESERVATION`] bytes aligned to 2 MiB, asks for transparent huge pages on them
//! (`madvise(MADV_HUGEPAGE)`, which the common `madvise` THP mode needs), and hands
//! the arena's large pages out of a run one after the other, so consecutive 1 MiB
//! pages share 2 MiB huge pages. Address space costs nothing until it is touched
//! (`MAP_NORESERVE`); memory returned by [`OneWayAlloc::trim`](crate::OneWayAlloc::trim)
//! goes back to the OS at once (`MADV_DONTNEED`), and a run is unmapped when its last
//! page is returned, except that a dropped arena's runs go to a process-wide cache of
//! at most 4 runs for the next arenas (`cache`).
//!
//! Small pages stay with the global allocator: a fresh arena for a small request
//! then costs no system call, and malloc reuses the memory of earlier arenas.
//!
//! Everywhere else (other OSes, 32-bit targets, no `std`, Miri) the source is the
//! backing allocator alone. An arena made with [`new_in`](crate::OneWayAlloc::new_in)
//! (`new_in(Global)` included) always obtains every page from its backing allocator.
//!
//! The bookkeeping of a run lives in its first 4 KiB ([`Run`]); the arena value holds
//! the head of the list of runs (SPEC §1.1: bookkeeping in the arena value and in
//! memory the arena owns, never in extra blocks of the backing allocator).

// The run arithmetic and constants are used by the Linux source only (and tested
// everywhere).
#![cfg_attr(
    not(all(
        feature = "std",
        target_os = "linux",
        target_pointer_width = "64",
        not(miri)
    )),
    allow(dead_code)
)]

use core::alloc::Layout;
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator};

/// Pages of at least this size come from the OS when the source has it on: the
/// arena's largest page target (SPEC §1.2), so the first pages (64 to 512 KiB) of
/// every arena stay with the global allocator.
pub(crate) const OS_PAGE_MIN: usize = crate::arith::MAX_PAGE_TARGET;

/// The backing allocator of an arena, and beside it the OS page source when the
/// arena was created by `new()`: every page the arena obtains or returns goes
/// through this value, which routes it.
pub(crate) struct PageSource<A> {
    pub(crate) backing: A,
    os: OsPages,
}

impl<A: Allocator> PageSource<A> {
    /// `backing` alone, or with the OS page source beside it (`os_pages`, where the
    /// platform has one).
    pub(crate) fn new(backing: A, os_pages: bool) -> Self {
        PageSource {
            backing,
            os: OsPages::new(os_pages),
        }
    }

    /// Says that every page is about to be returned (the arena is dropped): the OS
    /// source then unmaps its runs without first returning each page's memory.
    pub(crate) fn releasing_all(&self) {
        self.os.releasing_all();
    }
}

// `grow` and `shrink` are the trait's own (allocate, copy, deallocate, through
// `self`, so each block goes to and comes from its own source); the arena grows
// its pages only by obtaining new ones.
// SAFETY: every block comes from one of two allocators, the backing allocator or the
// OS source, and goes back to the one it came from: `OsPages::owns` tells the OS
// source's blocks by their address (inside one of its runs), so a block is never
// returned to the other. Blocks stay valid until returned: the OS source never
// unmaps a run that holds a live block.
unsafe impl<A: Allocator> Allocator for PageSource<A> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if self.os.serves(layout) {
            if let Some(block) = self.os.allocate(layout) {
                return Ok(NonNull::slice_from_raw_parts(block, layout.size()));
            }
        }
        self.backing.allocate(layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if self.os.owns(ptr) {
            // SAFETY: the caller's guarantee: `ptr` came from `self` with `layout`, and
            // it lies in a run, so the OS source handed it out.
            unsafe { self.os.deallocate(ptr, layout) }
        } else {
            // SAFETY: as above; outside every run, so the backing allocator did.
            unsafe { self.backing.deallocate(ptr, layout) }
        }
    }
}

#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_pointer_width = "64",
    not(miri)
))]
use linux::OsPages;

#[cfg(not(all(
    feature = "std",
    target_os = "linux",
    target_pointer_width = "64",
    not(miri)
)))]
use elsewhere::OsPages;

/// Address space reserved at a time for an arena's large pages: 64 MiB, aligned to
/// 2 MiB (a larger page gets a run of its own, rounded up to 2 MiB).
pub const RESERVATION: usize = 64 << 20;

/// The size and alignment of a transparent huge page on x86-64 and (with 4 KiB base
/// pages) aarch64: runs are aligned to it.
const HUGE_PAGE: usize = 2 << 20;

/// The arithmetic of runs, without `unsafe` (and tested on every platform).
mod runs {
    use super::{HUGE_PAGE, RESERVATION};

    /// The bytes at the start of a run that hold its [`super::Run`] record.
    pub(super) const RUN_HEADER: usize = 4096;

    /// The size of a new run that must fit a block of `size` bytes aligned to
    /// `align` after its header: [`RESERVATION`], or more rounded up to 2 MiB.
    pub(super) fn run_size(size: usize, align: usize) -> Option<usize> {
        let needed = RUN_HEADER
            .checked_next_multiple_of(align)?
            .checked_add(size)?;
        Some(needed.checked_next_multiple_of(HUGE_PAGE)?.max(RESERVATION))
    }

    /// Where a block of `size` bytes aligned to `align` goes in a run of `run_size`
    /// bytes whose first free byte is at offset `carved`: its offset and the new
    /// `carved`, or `None` if it does not fit.
    pub(super) fn carve(
        carved: usize,
        run_size: usize,
        size: usize,
        align: usize,
    ) -> Option<(usize, usize)> {
        let offset = carved.checked_next_multiple_of(align)?;
        let end = offset.checked_add(size)?;
        (end <= run_size).then_some((offset, end))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn runs_are_the_reservation_or_a_multiple_of_2_mib_that_fits_the_block() {
            assert_eq!(run_size(1 << 20, 4096), Some(RESERVATION));
            assert_eq!(run_size(RESERVATION - RUN_HEADER, 4096), Some(RESERVATION));
            assert_eq!(
                run_size(RESERVATION - RUN_HEADER + 1, 4096),
                Some(RESERVATION + HUGE_PAGE)
            );
            assert_eq!(run_size(RESERVATION, 65536), Some(RESERVATION + HUGE_PAGE));
            assert_eq!(run_size(usize::MAX - 100, 4096), None);
        }

        #[test]
        fn blocks_are_carved_aligned_and_only_when_they_fit() {
            assert_eq!(carve(4096, 8192, 4096, 4096), Some((4096, 8192)));
            assert_eq!(carve(4096, 8192, 4097, 4096), None);
            assert_eq!(carve(4097, 1 << 20, 100, 4096), Some((8192, 8292)));
            assert_eq!(carve(usize::MAX - 10, usize::MAX, 1, 4096), None);
            assert_eq!(carve(0, usize::MAX, usize::MAX, 1), Some((0, usize::MAX)));
        }
    }
}

/// Anywhere without an OS page source: nothing is ever served or owned.
#[cfg(not(all(
    feature = "std",
    target_os = "linux",
    target_pointer_width = "64",
    not(miri)
)))]
mod elsewhere {
    use core::alloc::Layout;
    use core::ptr::NonNull;

    pub(super) struct OsPages;

    impl OsPages {
        pub(super) fn new(_on: bool) -> Self {
            OsPages
        }
        #[inline]
        pub(super) fn serves(&self, _layout: Layout) -> bool {
            false
        }
        #[inline]
        pub(super) fn owns(&self, _ptr: NonNull<u8>) -> bool {
            false
        }
        pub(super) fn allocate(&self, _layout: Layout) -> Option<NonNull<u8>> {
            None
        }
        /// # Safety
        /// Never called: `owns` is always false.
        pub(super) unsafe fn deallocate(&self, _ptr: NonNull<u8>, _layout: Layout) {
            unreachable!("no OS page source on this platform")
        }
        pub(super) fn releasing_all(&self) {}
    }
}

/// The record at the start of a run (its first [`runs::RUN_HEADER`] bytes).
struct Run {
    /// The next run of the same source, most recent first.
    next: Option<NonNull<Run>>,
    /// The run's base: the mapping's start, carrying its provenance.
    base: NonNull<u8>,
    /// Bytes mapped, the header included.
    size: usize,
    /// Offset of the first byte never handed out (or handed back at the end).
    carved: usize,
    /// Blocks handed out and not returned.
    live: usize,
}

#[cfg(all(
    feature = "std",
    target_os = "linux",
    target_pointer_width = "64",
    not(miri)
))]
mod linux {
    use core::alloc::Layout;
    use core::cell::Cell;
    use core::ptr::{self, NonNull};

    use super::runs::{RUN_HEADER, carve, run_size};
    use super::{HUGE_PAGE, OS_PAGE_MIN, Run};

    /// The OS page source of one arena: a list of runs, most recent first, carved
    /// from the head run.
    ///
    /// Invariants: every run in the list is a live mapping of `size` bytes at `base`
    /// whose first `RUN_HEADER` bytes hold its `Run`; blocks handed out lie in
    /// `base + RUN_HEADER .. base + carved`; a run is unmapped (and unlinked) as soon
    /// as `live` drops to 0.
    pub(in crate::os_pages) struct OsPages {
        on: bool,
        head: Cell<Option<NonNull<Run>>>,
        releasing: Cell<bool>,
    }

    impl OsPages {
        pub(in crate::os_pages) fn new(on: bool) -> Self {
            OsPages {
                on,
                head: Cell::new(None),
                releasing: Cell::new(false),
            }
        }

        /// Whether a page of `layout` should come from the OS.
        #[inline]
        pub(in crate::os_pages) fn serves(&self, layout: Layout) -> bool {
            self.on && layout.size() >= OS_PAGE_MIN && layout.align() <= HUGE_PAGE
        }

        /// The run holding `ptr`, if any.
        fn run_of(&self, ptr: NonNull<u8>) -> Option<NonNull<Run>> {
            let addr = ptr.addr().get();
            let mut next = self.head.get();
            while let Some(run) = next {
                // SAFETY: the invariant: every run in the list is mapped and its
                // record initialized.
                let record = unsafe { run.as_ref() };
                let base = record.base.addr().get();
                if addr >= base && addr - base < record.size {
                    return Some(run);
                }
                next = record.next;
            }
            None
        }

        #[inline]
        pub(in crate::os_pages) fn owns(&self, ptr: NonNull<u8>) -> bool {
            self.head.get().is_some() && self.run_of(ptr).is_some()
        }

        /// A block for `layout` from the head run, or from a new run; `None` if the
        /// OS refuses the mapping.
        pub(in crate::os_pages) fn allocate(&self, layout: Layout) -> Option<NonNull<u8>> {
            let align = layout.align().max(RUN_HEADER);
            if let Some(run) = self.head.get() {
                if let Some(block) = Self::carve_from(run, layout.size(), align) {
                    return Some(block);
                }
            }
            let size = run_size(layout.size(), align)?;
            let run = match cache::take(size) {
                Some(mut run) => {
                    // SAFETY: a cached run is a live mapping with its record, owned by
                    // nobody else now that it left the cache.
                    unsafe { run.as_mut().next = self.head.get() };
                    run
                }
                None => Self::map_run(size, self.head.get())?,
            };
            self.head.set(Some(run));
            Self::carve_from(run, layout.size(), align)
        }

        fn carve_from(mut run: NonNull<Run>, size: usize, align: usize) -> Option<NonNull<u8>> {
            // SAFETY: `run` is in the list, so mapped and initialized; the arena is
            // single-threaded and no other reference to the record is live.
            let record = unsafe { run.as_mut() };
            let (offset, end) = carve(record.carved, record.size, size, align)?;
            record.carved = end;
            record.live += 1;
            // SAFETY: `offset + size <= record.size`: the block lies in the mapping,
            // whose provenance `base` carries.
            Some(unsafe { record.base.add(offset) })
        }

        /// Maps a run of `size` bytes aligned to 2 MiB, hints huge pages on it and
        /// writes its record (linked before `next`).
        fn map_run(size: usize, next: Option<NonNull<Run>>) -> Option<NonNull<Run>> {
            let mapped = size.checked_add(HUGE_PAGE)?;
            // SAFETY: an anonymous private mapping at an address the kernel picks:
            // no existing memory is affected.
            let raw = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    mapped,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                return None;
            }
            let raw = NonNull::new(raw.cast::<u8>())?;
            let lead = raw.addr().get().next_multiple_of(HUGE_PAGE) - raw.addr().get();
            let trail = HUGE_PAGE - lead;
            // SAFETY: `lead < HUGE_PAGE` and `lead + size + trail == mapped`: both
            // pointers stay within the mapping.
            let (base, tail) = unsafe { (raw.add(lead), raw.add(lead + size)) };
            // SAFETY: the slack before `base` and after `base + size` belongs to the
            // mapping just made and nothing refers to it.
            unsafe {
                if lead > 0 {
                    libc::munmap(raw.as_ptr().cast(), lead);
                }
                if trail > 0 {
                    libc::munmap(tail.as_ptr().cast(), trail);
                }
                // A hint: without transparent huge pages it fails, harmlessly.
                libc::madvise(base.as_ptr().cast(), size, libc::MADV_HUGEPAGE);
            }
            let run = base.cast::<Run>();
            // SAFETY: `base` is the start of a fresh writable mapping of at least
            // `RUN_HEADER` bytes, aligned to 2 MiB (more than `Run` needs).
            unsafe {
                run.write(Run {
                    next,
                    base,
                    size,
                    carved: RUN_HEADER,
                    live: 0,
                });
            }
            Some(run)
        }

        /// Takes back the block at `ptr`: its memory goes back to the OS at once
        /// (or with its run, when it was the run's last block).
        ///
        /// # Safety
        /// `ptr` was handed out by `allocate` with `layout` and is not used again.
        pub(in crate::os_pages) unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
            let Some(mut run) = self.run_of(ptr) else {
                unreachable!("a block returned to the OS page source that it did not hand out");
            };
            // SAFETY: `run` is in the list (mapped, initialized), and no other
            // reference to its record is live.
            let record = unsafe { run.as_mut() };
            record.live -= 1;
            let offset = ptr.addr().get() - record.base.addr().get();
            if offset + layout.size() == record.carved {
                // The most recent block of the run: its space is carved again next.
                record.carved = offset;
            }
            if record.live == 0 {
                self.unmap(run);
            } else if !self.releasing.get() {
                // SAFETY: the block is the caller's to give up; its pages hold
                // nothing that is used again, and the range lies in a mapping of ours.
                unsafe { libc::madvise(ptr.as_ptr().cast(), layout.size(), libc::MADV_DONTNEED) };
            }
        }

        /// Unlinks `run`, which holds no live block, and unmaps it, or (as the arena
        /// is dropped) keeps it in the process's cache of runs for the next arena.
        fn unmap(&self, run: NonNull<Run>) {
            // SAFETY: `run` is in the list: mapped and initialized.
            let (next, base, size) = unsafe {
                let record = run.as_ref();
                (record.next, record.base, record.size)
            };
            if self.head.get() == Some(run) {
                self.head.set(next);
            } else {
                let mut before = self.head.get();
                while let Some(mut prev) = before {
                    // SAFETY: every run in the list is mapped and initialized.
                    let record = unsafe { prev.as_mut() };
                    if record.next == Some(run) {
                        record.next = next;
                        break;
                    }
                    before = record.next;
                }
            }
            if self.releasing.get() && cache::keep(run).is_ok() {
                return;
            }
            // SAFETY: the run is unlinked and holds no live block: nothing refers to
            // the mapping any more.
            unsafe { libc::munmap(base.as_ptr().cast(), size) };
        }

        pub(in crate::os_pages) fn releasing_all(&self) {
            self.releasing.set(true);
        }
    }

    /// The runs of dropped arenas, kept mapped (their memory resident, huge pages
    /// included) for the arenas created next, as malloc keeps freed memory: Netdata's
    /// pattern of an arena per query then faults nothing after the first query. At
    /// most [`CACHED_RUNS`] runs of the standard size are kept; a run is taken back
    /// whole by the next arena that needs a large page.
    mod cache {
        use core::ptr::NonNull;
        use std::sync::Mutex;
        use std::vec::Vec;

        use super::super::{RESERVATION, Run, runs::RUN_HEADER};

        /// How many runs the process keeps at most: 4 (up to 256 MiB of address
        /// space, resident as far as the dropped arenas had touched it).
        pub(in crate::os_pages) const CACHED_RUNS: usize = 4;

        struct Cached(NonNull<Run>);
        // SAFETY: a cached run belongs to no arena: the cache owns the mapping, and
        // whoever takes it out owns it alone (the mutex hands each run out once).
        unsafe impl Send for Cached {}

        static RUNS: Mutex<Vec<Cached>> = Mutex::new(Vec::new());

        /// Keeps `run` (unlinked, no live block) if the cache has room and the run is
        /// of the standard size; else gives it back to be unmapped.
        pub(in crate::os_pages) fn keep(mut run: NonNull<Run>) -> Result<(), NonNull<Run>> {
            // SAFETY: the caller owns the run: mapped, its record initialized.
            let record = unsafe { run.as_mut() };
            if record.size != RESERVATION {
                return Err(run);
            }
            let Ok(mut runs) = RUNS.lock() else {
                return Err(run);
            };
            if runs.len() >= CACHED_RUNS || runs.try_reserve(1).is_err() {
                return Err(run);
            }
            record.next = None;
            record.carved = RUN_HEADER;
            record.live = 0;
            runs.push(Cached(run));
            Ok(())
        }

        /// A cached run if `size` is the standard size and one is kept.
        pub(in crate::os_pages) fn take(size: usize) -> Option<NonNull<Run>> {
            if size != RESERVATION {
                return None;
            }
            RUNS.lock().ok()?.pop().map(|cached| cached.0)
        }
    }

    impl Drop for OsPages {
        fn drop(&mut self) {
            // Every page went back before the source is dropped, which unmapped each
            // run; a run left here (pages the arena never returned) is unmapped now.
            while let Some(run) = self.head.get() {
                self.unmap(run);
            }
        }
    }
}
