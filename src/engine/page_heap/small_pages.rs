//! The small pages that arenas of `new()` gave back, kept for the next arena: their
//! first pages and the ones that follow (64, 128, 256 and 512 KiB), which come from
//! the global allocator.
//!
//! Without it, a page of 128 to 512 KiB freed to `malloc` is often given back to the
//! system by `malloc` itself (glibc trims the top of its heaps) and faults in again,
//! 4 KiB at a time, when the next arena grows: measured on the awaiting `SyncPool`
//! handler of the harness's `http` experiment, 31 thousand of its 37 thousand page
//! faults per 256 requests. Kept here, those pages are counted in
//! [`free_page_bytes`](super::free_page_bytes), bounded by
//! [`SMALL_PAGES_MAX`] (and by a quarter of the free page limit), decay with the
//! page heap's free slots, and go back by
//! [`release_free_pages`](super::release_free_pages).
//!
//! This module is the bookkeeping alone, without `unsafe` (tested on every
//! platform); the page heap keeps one [`SmallPages`] under its lock and frees what
//! [`SmallPages::pop_excess`] hands it outside the lock.

// Used by the Linux heap only (and tested everywhere).
#![cfg_attr(not(onewayalloc_page_heap), allow(dead_code))]

use core::ptr::NonNull;

use super::slots::decay_keep;
use crate::engine::arith::{MIN_PAGE_SIZE, page_target};

/// The classes kept: the pages of 64, 128, 256 and 512 KiB (the page targets below
/// the heap's slot).
pub(crate) const CLASSES: usize = 4;

/// The most bytes of small pages kept, whatever the free page limit: 16 MiB (256
/// first pages of 64 KiB).
pub(crate) const SMALL_PAGES_MAX: usize = 16 << 20;

/// Room for the most pages of the smallest class.
const MOST_PER_CLASS: usize = SMALL_PAGES_MAX / MIN_PAGE_SIZE;

/// The class of a page of `size` bytes aligned to `align`, for a system whose page
/// alignment is `page_align`: a page target below 1 MiB at exactly that alignment
/// (the layout of every such page the arenas obtain, so that every page of a class
/// has one layout); `None` for every other page.
pub(crate) fn class_of(size: usize, align: usize, page_align: usize) -> Option<usize> {
    if align != page_align {
        return None;
    }
    (0..CLASSES).find(|&class| page_target(class) == size)
}

/// The bytes of a page of `class`.
pub(crate) fn class_size(class: usize) -> usize {
    page_target(class)
}

/// The most small-page bytes kept under the free page limit `limit`: a quarter of
/// it, and at most [`SMALL_PAGES_MAX`], so that the heap's slots keep the rest.
pub(crate) fn small_limit(limit: usize) -> usize {
    (limit / 4).min(SMALL_PAGES_MAX)
}

/// The small pages kept: a stack of pages per class (the most recently returned,
/// the warmest, is taken first), their bytes, and the decay's state.
pub(crate) struct SmallPages {
    stacks: [[Option<NonNull<u8>>; MOST_PER_CLASS]; CLASSES],
    lens: [usize; CLASSES],
    /// Bytes of every page kept.
    bytes: usize,
    /// The fewest bytes kept during the decay's current epoch.
    low_water: usize,
    /// Bytes the decay has given up and [`pop_excess`](Self::pop_excess) still
    /// has to hand out for freeing.
    releasing: usize,
}

impl SmallPages {
    pub(crate) const EMPTY: SmallPages = SmallPages {
        stacks: [[None; MOST_PER_CLASS]; CLASSES],
        lens: [0; CLASSES],
        bytes: 0,
        low_water: 0,
        releasing: 0,
    };

    /// Bytes of the pages kept.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// A kept page of `class`, the most recently returned, if any.
    pub(crate) fn take(&mut self, class: usize) -> Option<NonNull<u8>> {
        let len = self.lens[class].checked_sub(1)?;
        let page = self.stacks[class][len].take();
        self.lens[class] = len;
        // The page was counted when kept: no underflow.
        self.bytes -= class_size(class);
        self.low_water = self.low_water.min(self.bytes);
        page
    }

    /// Keeps `page` of `class` if that leaves the pages kept within
    /// [`small_limit`]`(limit)`; `false` if the caller is to free it.
    pub(crate) fn keep(&mut self, page: NonNull<u8>, class: usize, limit: usize) -> bool {
        let size = class_size(class);
        let len = self.lens[class];
        // `bytes <= SMALL_PAGES_MAX`: no overflow. Within that bound a class holds
        // at most `SMALL_PAGES_MAX / size <= MOST_PER_CLASS` pages: `len` indexes
        // its stack.
        if self.bytes + size > small_limit(limit) {
            return false;
        }
        self.stacks[class][len] = Some(page);
        self.lens[class] = len + 1;
        self.bytes += size;
        true
    }

    /// Ends `epochs` epochs of the decay (see `slots::decay_keep`): what the pages
    /// kept exceed of what the decay leaves is to be handed out by
    /// [`pop_excess`](Self::pop_excess); the next epoch starts from what is kept.
    pub(crate) fn decay(&mut self, epochs: u32) {
        let left = decay_keep(self.bytes, self.low_water, epochs);
        self.releasing = self.releasing.max(self.bytes - left);
        self.low_water = left;
    }

    /// Hands out every page for freeing, one per call (see
    /// [`pop_excess`](Self::pop_excess)).
    pub(crate) fn release_all(&mut self) {
        self.releasing = self.bytes;
        self.low_water = 0;
    }

    /// Whether [`pop_excess`](Self::pop_excess) has a page to hand out: the pages
    /// kept exceed [`small_limit`]`(limit)`, or the decay (or
    /// [`release_all`](Self::release_all)) has bytes still to give up.
    pub(crate) fn over(&self, limit: usize) -> bool {
        self.releasing > 0 || self.bytes > small_limit(limit)
    }

    /// A page to free, and its class, while the pages kept exceed
    /// [`small_limit`]`(limit)` or the decay (or [`release_all`](Self::release_all))
    /// has bytes still to give up: the largest class first.
    pub(crate) fn pop_excess(&mut self, limit: usize) -> Option<(NonNull<u8>, usize)> {
        if !self.over(limit) {
            return None;
        }
        let Some(class) = (0..CLASSES).rev().find(|&class| self.lens[class] > 0) else {
            self.releasing = 0;
            return None;
        };
        let page = self.take(class)?;
        self.releasing = self.releasing.saturating_sub(class_size(class));
        Some((page, class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 64 << 20;

    /// A distinct, never dereferenced address for each `i`.
    fn page(i: usize) -> NonNull<u8> {
        NonNull::new(core::ptr::without_provenance_mut((i + 1) << 16)).unwrap()
    }

    #[test]
    fn classes_are_the_page_targets_below_a_slot_at_the_page_alignment() {
        assert_eq!(class_of(64 << 10, 4096, 4096), Some(0));
        assert_eq!(class_of(128 << 10, 4096, 4096), Some(1));
        assert_eq!(class_of(256 << 10, 4096, 4096), Some(2));
        assert_eq!(class_of(512 << 10, 4096, 4096), Some(3));
        assert_eq!(class_of(1 << 20, 4096, 4096), None, "the heap's slots");
        assert_eq!(class_of(96 << 10, 4096, 4096), None, "a size hint's page");
        assert_eq!(class_of(64 << 10, 8192, 4096), None, "over-aligned");
        assert_eq!(
            class_of(64 << 10, 4096, 16384),
            None,
            "another system's pages"
        );
        assert_eq!(class_of(64 << 10, 16384, 16384), Some(0));
        assert_eq!((0..CLASSES).map(class_size).sum::<usize>(), 960 << 10);
    }

    #[test]
    fn the_small_limit_is_a_quarter_of_the_limit_up_to_16_mib() {
        assert_eq!(small_limit(64 << 20), 16 << 20);
        assert_eq!(small_limit(1 << 30), SMALL_PAGES_MAX);
        assert_eq!(small_limit(8 << 20), 2 << 20);
        assert_eq!(small_limit(3), 0);
    }

    #[test]
    fn pages_are_taken_back_most_recent_first_and_counted() {
        let mut small = SmallPages::EMPTY;
        assert_eq!(small.take(1), None);
        assert!(small.keep(page(1), 1, LIMIT));
        assert!(small.keep(page(2), 1, LIMIT));
        assert!(small.keep(page(3), 3, LIMIT));
        assert_eq!(small.bytes(), (128 + 128 + 512) << 10);
        assert_eq!(small.take(0), None);
        assert_eq!(small.take(1), Some(page(2)));
        assert_eq!(small.bytes(), (128 + 512) << 10);
        assert_eq!(small.take(1), Some(page(1)));
        assert_eq!(small.take(1), None);
        assert_eq!(small.take(3), Some(page(3)));
        assert_eq!(small.bytes(), 0);
        assert_eq!(small.pop_excess(LIMIT), None);
    }

    #[test]
    fn keeping_stops_at_the_small_limit() {
        // 1 MiB limit: a quarter, 256 KiB.
        let mut small = SmallPages::EMPTY;
        assert!(small.keep(page(1), 1, 1 << 20));
        assert!(small.keep(page(2), 1, 1 << 20), "exactly at the bound");
        assert!(!small.keep(page(3), 0, 1 << 20), "64 KiB over it");
        assert_eq!(small.bytes(), 256 << 10);
        let mut small = SmallPages::EMPTY;
        for i in 0..MOST_PER_CLASS {
            assert!(small.keep(page(i), 0, LIMIT));
        }
        assert_eq!(small.bytes(), SMALL_PAGES_MAX);
        assert!(!small.keep(page(999), 0, LIMIT), "the class is full");
        assert!(!small.keep(page(999), 3, usize::MAX));
        assert_eq!(small.pop_excess(LIMIT), None, "within the bound");
    }

    #[test]
    fn a_lower_limit_hands_out_the_excess_largest_first() {
        let mut small = SmallPages::EMPTY;
        for (i, class) in [0, 3, 1, 3, 2].into_iter().enumerate() {
            assert!(small.keep(page(i), class, LIMIT));
        }
        assert_eq!(small.bytes(), (64 + 512 + 128 + 512 + 256) << 10);
        // Limit 4 MiB: 1 MiB kept at most.
        assert_eq!(small.pop_excess(4 << 20), Some((page(3), 3)));
        assert_eq!(small.pop_excess(4 << 20), None, "960 KiB are within 1 MiB");
        assert_eq!(small.pop_excess(0), Some((page(1), 3)));
        assert_eq!(small.pop_excess(0), Some((page(4), 2)));
        assert_eq!(small.pop_excess(0), Some((page(2), 1)));
        assert_eq!(small.pop_excess(0), Some((page(0), 0)));
        assert_eq!(small.pop_excess(0), None);
        assert_eq!(small.bytes(), 0);
    }

    #[test]
    fn release_all_hands_out_every_page() {
        let mut small = SmallPages::EMPTY;
        assert!(small.keep(page(1), 0, LIMIT));
        assert!(small.keep(page(2), 2, LIMIT));
        small.release_all();
        assert_eq!(small.pop_excess(LIMIT), Some((page(2), 2)));
        assert_eq!(small.pop_excess(LIMIT), Some((page(1), 0)));
        assert_eq!(small.pop_excess(LIMIT), None);
        // Nothing left to give up: pages kept later stay.
        assert!(small.keep(page(3), 0, LIMIT));
        assert_eq!(small.pop_excess(LIMIT), None);
        assert_eq!(small.take(0), Some(page(3)));
    }

    #[test]
    fn the_decay_gives_up_half_of_what_no_arena_took() {
        let mut small = SmallPages::EMPTY;
        for i in 0..4 {
            assert!(small.keep(page(i), 1, LIMIT)); // 4 x 128 KiB
        }
        // The first epoch began with nothing kept: nothing was unneeded.
        small.decay(1);
        assert_eq!(small.pop_excess(LIMIT), None);
        // 512 KiB kept through the next epoch; one page taken and given back.
        assert_eq!(small.take(1), Some(page(3)));
        assert!(small.keep(page(3), 1, LIMIT));
        // 384 KiB were never taken: half of them go, the largest class first.
        small.decay(1);
        assert_eq!(small.pop_excess(LIMIT), Some((page(3), 1)));
        assert_eq!(small.pop_excess(LIMIT), Some((page(2), 1)));
        assert_eq!(small.pop_excess(LIMIT), None, "192 KiB, rounded to pages");
        assert_eq!(small.bytes(), 256 << 10);
        // Three quiet epochs: half, then half of the rest each time.
        small.decay(3);
        assert_eq!(small.pop_excess(LIMIT), Some((page(1), 1)));
        assert_eq!(small.pop_excess(LIMIT), Some((page(0), 1)));
        assert_eq!(small.pop_excess(LIMIT), None);
        assert_eq!(small.bytes(), 0);
        // No epoch ended: nothing to give up.
        assert!(small.keep(page(5), 0, LIMIT));
        small.decay(0);
        assert_eq!(small.pop_excess(LIMIT), None);
    }
}
