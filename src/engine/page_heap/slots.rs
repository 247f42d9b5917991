//! The arithmetic of the page heap, without `unsafe` (and tested on every platform):
//! how many slots a page takes, where a run of free slots is, which slots a purge
//! gives back, and the decay of the free memory kept.
//!
//! A span is [`SPAN_SLOTS`] slots of [`SLOT`] bytes; its state is two bitmaps, one
//! bit a slot (bit `i` is slot `i`, at `base + i * SLOT`):
//! - `free`: the slot belongs to no arena;
//! - `dirty`: the slot may hold resident memory (it was handed out since it was
//!   last purged, or shares a transparent huge page with a slot that was).

/// Bytes of a slot: the unit the heap hands out, the arena's largest page target.
pub(crate) const SLOT: usize = 1 << 20;

/// Slots of a standard span (one bit each in a `u64`).
pub(crate) const SPAN_SLOTS: usize = 64;

/// Every slot of a standard span.
pub(crate) const ALL: u64 = u64::MAX;

/// Bytes before a span's first slot that hold its record: one OS page.
pub(crate) const SPAN_HEADER: usize = 4096;

/// The size and alignment of a transparent huge page on x86-64 (and aarch64 with
/// 4 KiB base pages): a span's slots start at a multiple of it.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// The length of the mapping made for a span of `len` bytes of slots: the slots, the
/// header page before them and the slack that lets them start at a multiple of
/// [`HUGE_PAGE`]. `None` if that overflows.
pub(crate) fn span_mapping(len: usize) -> Option<usize> {
    len.checked_add(SPAN_HEADER + HUGE_PAGE)
}

/// The slack of a span's mapping ([`span_mapping`] bytes at `start`, a multiple of
/// the OS page), given back once mapped: `(lead, trail)`, the bytes before the
/// header and after the slots, so that the slots start at a multiple of
/// [`HUGE_PAGE`] with the header just before them. `trail` is never 0.
pub(crate) fn span_slack(start: usize) -> (usize, usize) {
    let lead = (start + SPAN_HEADER).next_multiple_of(HUGE_PAGE) - SPAN_HEADER - start;
    (lead, HUGE_PAGE - lead)
}

/// The slots a page of `size` bytes takes: `size / SLOT` rounded up (at least 1).
/// `None` past what a mapping can be.
pub(crate) fn slots_for(size: usize) -> Option<usize> {
    let slots = size.max(1).div_ceil(SLOT);
    // A mapping's length must fit `isize` with the header and alignment slack.
    (slots <= (isize::MAX as usize >> 21)).then_some(slots)
}

/// The bitmap of `n` slots from `start` (`start + n <= 64`, `n >= 1`).
pub(crate) fn mask(start: usize, n: usize) -> u64 {
    debug_assert!(n >= 1 && start + n <= SPAN_SLOTS);
    let ones = if n >= SPAN_SLOTS {
        ALL
    } else {
        (1u64 << n) - 1
    };
    ones << start
}

/// The lowest `start` such that slots `start .. start + n` are all set in
/// `candidates`, if any (`1 <= n <= 64`).
pub(crate) fn find_run(candidates: u64, n: usize) -> Option<usize> {
    if n == 0 || n > SPAN_SLOTS {
        return None;
    }
    // Bit i of `starts` says that bits i .. i + k are all set, for k growing to n.
    let mut starts = candidates;
    for shift in 1..n {
        starts &= candidates >> shift;
    }
    (starts != 0).then(|| starts.trailing_zeros() as usize)
}

/// The slots that share a transparent huge page (2 MiB: two slots, `2k` and
/// `2k + 1`) with any slot of `slots`.
pub(crate) fn huge_page_mates(slots: u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let pairs = (slots | (slots >> 1)) & EVEN;
    // Each even bit and the odd one above it: `3 << 2k`, no carry.
    pairs * 3
}

/// The free slots of a huge-page span whose huge page (2 MiB: slots `2k` and
/// `2k + 1`) is entirely free, so that no arena uses the other half.
pub(crate) fn whole_free_pairs(free: u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let pairs = free & (free >> 1) & EVEN;
    pairs * 3
}

/// The ranks of [`choose`] whose slots are resident: 0 and 1.
pub(crate) const RESIDENT_RANKS: u8 = 1;

/// Where a page of `n` slots goes in a span, by preference: `Some((start, rank))`
/// with the lower rank the better choice, or `None` if the span has no room
/// (or only room the request should not take).
///
/// - rank 0: slots already resident in a span of the kind asked (no page fault,
///   the pages the kind promises);
/// - rank 1: slots already resident in a span of the other kind (no page fault);
/// - rank 2: fresh slots in a span of the kind asked;
/// - rank 3: in a huge-page span, slots that share their huge page with a slot an
///   arena holds.
///
/// In a huge-page span, ranks 0 to 2 take only slots whose huge page is entirely
/// free: an arena's next page then takes the other half (the heap looks there
/// first), so two arenas growing at once each fill huge pages of their own instead
/// of sharing every huge page (which halves each thread's TLB reach). Fresh slots of
/// a huge-page span are not given to a request for plain pages (touching one byte
/// would fault a whole 2 MiB page), and fresh slots of a plain span not to a request
/// for huge pages (it would get no huge page).
pub(crate) fn choose(
    free: u64,
    dirty: u64,
    n: usize,
    span_huge: bool,
    want_huge: bool,
) -> Option<(usize, u8)> {
    let whole = if span_huge {
        whole_free_pairs(free)
    } else {
        free
    };
    if let Some(start) = find_run(whole & dirty, n) {
        return Some((start, if span_huge == want_huge { 0 } else { 1 }));
    }
    if span_huge != want_huge {
        return None;
    }
    if let Some(start) = find_run(whole, n) {
        return Some((start, 2));
    }
    find_run(free, n).map(|start| (start, 3))
}

/// The slots of `candidates` to purge so that at most `keep` of the `held` free
/// resident slots remain. First the huge pages of `whole_pages` (pairs of slots,
/// `2k` and `2k + 1`, that no arena uses) that hold candidates, the highest first,
/// each as one unit: purging a whole huge page gives it back without splitting
/// it, so that the slots it comes back into fault as one 2 MiB page again, not as
/// 512 small ones. Then single slots, the highest first (the heap hands out the
/// lowest first, so the kept ones are those taken next). A unit may take one slot
/// more than `held - keep`. Returns the slots and their count.
pub(crate) fn purge_choice(
    candidates: u64,
    whole_pages: u64,
    held: usize,
    keep: usize,
) -> (u64, usize) {
    let mut excess = held.saturating_sub(keep);
    let mut chosen = 0u64;
    let mut pages = whole_pages & huge_page_mates(candidates);
    // A span has 32 huge pages: the bound keeps a broken step from running on
    // forever.
    for _ in 0..SPAN_SLOTS {
        if excess == 0 || pages == 0 {
            break;
        }
        let top = 63 - pages.leading_zeros() as usize;
        let page = 0b11u64 << (top & !1);
        let slots = candidates & page;
        chosen |= slots;
        pages &= !page;
        excess = excess.saturating_sub(slots.count_ones() as usize);
    }
    let mut left = candidates & !chosen;
    while excess > 0 && left != 0 {
        let top = 63 - left.leading_zeros() as usize;
        chosen |= 1u64 << top;
        left &= !(1u64 << top);
        excess -= 1;
    }
    (chosen, chosen.count_ones() as usize)
}

/// The runs of consecutive set bits of `slots`, as `(start, n)`, lowest first: the
/// ranges one `madvise` each purges.
pub(crate) fn runs_of(slots: u64) -> impl Iterator<Item = (usize, usize)> {
    let mut left = slots;
    core::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let start = left.trailing_zeros() as usize;
        let n = (!(left >> start)).trailing_zeros() as usize;
        left &= !mask(start, n);
        Some((start, n))
    })
    // 32 runs at most (every other bit): the bound keeps a broken step from
    // running on forever.
    .take(SPAN_SLOTS)
}

/// The free slots the decay leaves of the `held` free resident ones when `epochs`
/// epochs have ended since the current one began. At least `low_water` of them were
/// never taken during the first epoch: it gives back half of those. No call came
/// during the epochs after it (a call would have ended them), so nothing was taken
/// then: each gives back half of what is left. Halves are rounded up, so that what
/// is unneeded reaches zero.
pub(crate) fn decay_keep(held: usize, low_water: usize, epochs: u32) -> usize {
    if epochs == 0 {
        return held;
    }
    let unneeded = low_water.min(held);
    let mut left = held - unneeded.div_ceil(2);
    for _ in 1..epochs.min(usize::BITS + 1) {
        if left == 0 {
            break;
        }
        left -= left.div_ceil(2);
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_take_whole_slots() {
        assert_eq!(slots_for(0), Some(1));
        assert_eq!(slots_for(1), Some(1));
        assert_eq!(slots_for(SLOT), Some(1));
        assert_eq!(slots_for(SLOT + 1), Some(2));
        assert_eq!(slots_for(64 * SLOT), Some(64));
        assert_eq!(slots_for(64 * SLOT + 4096), Some(65));
        assert_eq!(slots_for(usize::MAX), None);
        assert_eq!(slots_for(isize::MAX as usize), None);
        let largest = (isize::MAX as usize >> 21) * SLOT;
        assert_eq!(slots_for(largest), Some(isize::MAX as usize >> 21));
        assert_eq!(slots_for(largest + 1), None);
    }

    #[test]
    fn a_span_mapping_leaves_room_to_align_the_slots_and_gives_back_the_rest() {
        let len = SPAN_SLOTS * SLOT;
        assert_eq!(span_mapping(len), Some(len + 4096 + (2 << 20)));
        assert_eq!(
            span_mapping(usize::MAX - SPAN_HEADER - HUGE_PAGE),
            Some(usize::MAX)
        );
        assert_eq!(span_mapping(usize::MAX - SPAN_HEADER - HUGE_PAGE + 1), None);
        let at = 0x3440_0000; // a multiple of 2 MiB (and fits 32 bits)
        // The header just before a 2 MiB boundary: nothing before it to give back.
        assert_eq!(span_slack(at - 4096), (0, 2 << 20));
        assert_eq!(span_slack(at), ((2 << 20) - 4096, 4096));
        assert_eq!(span_slack(at + 4096), ((2 << 20) - 8192, 8192));
        assert_eq!(span_slack(at - 8192), (4096, (2 << 20) - 4096));
        for start in (0..600).map(|page| at + page * 4096 + 12345 * 4096) {
            let (lead, trail) = span_slack(start);
            assert_eq!((start + lead + SPAN_HEADER) % HUGE_PAGE, 0, "{start:#x}");
            assert!(lead < HUGE_PAGE && trail > 0);
            assert_eq!(lead + SPAN_HEADER + len + trail, span_mapping(len).unwrap());
        }
    }

    #[test]
    fn masks_cover_exactly_the_slots_named() {
        assert_eq!(mask(0, 1), 1);
        assert_eq!(mask(3, 2), 0b11000);
        assert_eq!(mask(63, 1), 1 << 63);
        assert_eq!(mask(0, 64), ALL);
        assert_eq!(mask(1, 63), ALL << 1);
        assert_eq!(mask(0, 63), ALL >> 1);
    }

    #[test]
    fn runs_are_found_lowest_first_and_only_whole() {
        assert_eq!(find_run(0, 1), None);
        assert_eq!(find_run(0b1000, 1), Some(3));
        assert_eq!(find_run(0b1011, 2), Some(0));
        assert_eq!(find_run(0b1101, 2), Some(2));
        assert_eq!(find_run(0b1101, 3), None);
        assert_eq!(find_run(0b0111_0110, 3), Some(4));
        assert_eq!(find_run(ALL, 64), Some(0));
        assert_eq!(find_run(ALL << 1, 64), None);
        assert_eq!(find_run(ALL << 1, 63), Some(1));
        assert_eq!(find_run(1 << 63, 1), Some(63));
        assert_eq!(find_run(ALL, 0), None);
        assert_eq!(find_run(ALL, 65), None);
        assert_eq!(find_run(ALL, 66), None);
        assert_eq!(find_run(ALL, usize::MAX), None);
        // Every start and length against a plain scan.
        for candidates in [
            0x00ff_00f0_0f0f_3c3cu64,
            0x8000_0000_0000_0001,
            0xfff0_0000_0000_ffff,
        ] {
            for n in 1..=SPAN_SLOTS {
                let scan = (0..=SPAN_SLOTS - n).find(|&s| candidates & mask(s, n) == mask(s, n));
                assert_eq!(find_run(candidates, n), scan, "{candidates:#x} {n}");
            }
        }
    }

    #[test]
    fn huge_page_mates_pair_even_and_odd_slots() {
        assert_eq!(huge_page_mates(0), 0);
        assert_eq!(huge_page_mates(0b1), 0b11);
        assert_eq!(huge_page_mates(0b10), 0b11);
        assert_eq!(huge_page_mates(0b100), 0b1100);
        assert_eq!(huge_page_mates(0b0110), 0b1111);
        assert_eq!(huge_page_mates(1 << 63), 0b11 << 62);
        assert_eq!(huge_page_mates(ALL), ALL);
    }

    #[test]
    fn whole_free_pairs_are_the_huge_pages_no_arena_uses() {
        assert_eq!(whole_free_pairs(0), 0);
        assert_eq!(whole_free_pairs(0b01), 0);
        assert_eq!(whole_free_pairs(0b10), 0);
        assert_eq!(whole_free_pairs(0b11), 0b11);
        assert_eq!(whole_free_pairs(0b0110), 0);
        assert_eq!(whole_free_pairs(0b1110), 0b1100);
        assert_eq!(whole_free_pairs(ALL), ALL);
        assert_eq!(whole_free_pairs(ALL << 1), ALL << 2);
        assert_eq!(whole_free_pairs(0b11 << 62), 0b11 << 62);
    }

    #[test]
    fn in_huge_page_spans_whole_free_huge_pages_come_before_halves() {
        // Slot 0 in use: slot 1 (resident through its mate) is the last choice.
        let free = ALL << 1;
        let dirty = 0b11;
        assert_eq!(choose(free, dirty, 1, true, true), Some((2, 2)));
        assert_eq!(choose(free, dirty, 1, true, false), None);
        // Only the half left: taken last.
        assert_eq!(choose(0b10, 0b11, 1, true, true), Some((1, 3)));
        assert_eq!(choose(0b10, 0b11, 1, true, false), None);
        // A whole resident pair: rank 0 (or 1 for the other kind).
        assert_eq!(choose(0b1110, 0b1111, 1, true, true), Some((2, 0)));
        assert_eq!(choose(0b1110, 0b1111, 1, true, false), Some((2, 1)));
        // Two slots: a whole pair, not the half and the next pair's first slot.
        assert_eq!(choose(0b1_1110, 0, 2, true, true), Some((2, 2)));
        assert_eq!(choose(0b0_0110, 0, 2, true, true), Some((1, 3)));
        // Plain spans have no pairs.
        assert_eq!(choose(0b10, 0, 1, false, false), Some((1, 2)));
        assert_eq!(choose(0b10, 0b10, 1, false, false), Some((1, 0)));
    }

    #[test]
    fn resident_slots_come_first_then_fresh_slots_of_the_kind_asked() {
        let free = 0b1111_0000u64;
        let dirty = 0b0011_0011u64; // slots 4 and 5 free and resident
        assert_eq!(choose(free, dirty, 1, false, false), Some((4, 0)));
        assert_eq!(choose(free, dirty, 1, true, false), Some((4, 1)));
        assert_eq!(choose(free, dirty, 2, true, true), Some((4, 0)));
        assert_eq!(choose(free, dirty, 2, false, true), Some((4, 1)));
        // Three slots: only fresh room, and only in a span of the kind asked.
        assert_eq!(choose(free, dirty, 3, false, false), Some((4, 2)));
        assert_eq!(choose(free, dirty, 3, true, true), Some((4, 2)));
        assert_eq!(choose(free, dirty, 3, true, false), None);
        assert_eq!(choose(free, dirty, 3, false, true), None);
        assert_eq!(choose(free, dirty, 5, false, false), None);
        assert_eq!(choose(0, ALL, 1, false, false), None);
    }

    #[test]
    fn purges_take_the_highest_slots_down_to_what_may_be_kept() {
        assert_eq!(purge_choice(0b1011_0110, 0, 5, 2), (0b1011_0000, 3));
        assert_eq!(purge_choice(0b1011_0110, 0, 5, 5), (0, 0));
        assert_eq!(purge_choice(0b1011_0110, 0, 5, 9), (0, 0));
        assert_eq!(purge_choice(0b0110, 0, 9, 0), (0b0110, 2));
        assert_eq!(purge_choice(ALL, 0, 64, 0), (ALL, 64));
        assert_eq!(purge_choice(ALL, 0, 70, 10), (ALL << 4, 60));
        assert_eq!(purge_choice(ALL, 0, 64, 70), (0, 0));
        assert_eq!(purge_choice(1, 0, 1, 0), (1, 1));
    }

    #[test]
    fn purges_take_whole_huge_pages_before_single_slots() {
        // Slots 0-1 a whole free huge page; slot 5 free, its mate 4 in use; slots
        // 6-7 free, only 7 resident (6 purged before).
        let free = 0b1110_0011;
        let candidates = 0b1010_0011;
        let whole = whole_free_pairs(free);
        // One slot to purge: the highest whole page with a candidate (6-7, resident
        // in slot 7); slot 5 would split the huge page 4-5.
        assert_eq!(purge_choice(candidates, whole, 4, 3), (0b1000_0000, 1));
        // Two: then the next whole page, both of its slots.
        assert_eq!(purge_choice(candidates, whole, 4, 2), (0b1000_0011, 3));
        // A unit may go one slot past the excess: 0-1 go together.
        assert_eq!(purge_choice(0b11, 0b11, 2, 1), (0b11, 2));
        // All four: the half page last.
        assert_eq!(purge_choice(candidates, whole, 4, 0), (candidates, 4));
        // Without whole pages (a plain span), the highest slots first.
        assert_eq!(purge_choice(candidates, 0, 4, 3), (0b1000_0000, 1));
        assert_eq!(purge_choice(candidates, 0, 4, 2), (0b1010_0000, 2));
        // A whole page among the highest slots: taken before a higher half page.
        assert_eq!(purge_choice(0b1000_0011, 0b11, 3, 2), (0b11, 2));
        // Nothing to purge: none.
        assert_eq!(purge_choice(candidates, whole, 4, 4), (0, 0));
    }

    #[test]
    fn runs_of_bits_split_at_every_gap() {
        let runs: std::vec::Vec<_> = runs_of(0b1110_0110_0001).collect();
        assert_eq!(runs, [(0, 1), (5, 2), (9, 3)]);
        assert_eq!(runs_of(0).count(), 0);
        let all: std::vec::Vec<_> = runs_of(ALL).collect();
        assert_eq!(all, [(0, 64)]);
        let top: std::vec::Vec<_> = runs_of(0b11 << 62).collect();
        assert_eq!(top, [(62, 2)]);
    }

    #[test]
    fn the_decay_halves_what_an_epoch_left_unneeded() {
        assert_eq!(decay_keep(10, 0, 1), 10);
        assert_eq!(decay_keep(10, 8, 0), 10);
        assert_eq!(decay_keep(10, 8, 1), 6);
        // The epochs after the first had no call: all that is left is unneeded.
        assert_eq!(decay_keep(10, 8, 2), 3);
        assert_eq!(decay_keep(10, 8, 3), 1);
        assert_eq!(decay_keep(10, 8, 4), 0);
        // A busy epoch (every slot taken at some point), then quiet ones.
        assert_eq!(decay_keep(10, 0, 2), 5);
        assert_eq!(decay_keep(64, 0, 3), 16);
        assert_eq!(decay_keep(10, 0, 5), 0);
        assert_eq!(decay_keep(usize::MAX, 0, u32::MAX), 0);
        assert_eq!(decay_keep(10, 1, 1), 9);
        assert_eq!(decay_keep(10, 10, 100), 0);
        assert_eq!(decay_keep(4, 10, 1), 2);
        assert_eq!(decay_keep(0, 0, 5), 0);
        assert_eq!(decay_keep(usize::MAX, usize::MAX, u32::MAX), 0);
    }
}
