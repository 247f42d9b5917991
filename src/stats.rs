//! What the arena holds: [`Stats`] and the per-page [`PageInfo`].

use allocator_api2::alloc::Allocator;

use crate::OneWayAlloc;

/// A snapshot of what an arena holds, from [`OneWayAlloc::stats`].
///
/// Every figure is derived from the page headers and the cursor when `stats` is
/// called: the allocation fast path keeps no counter of its own, so there is no
/// count of calls or of requested bytes.
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc(1u64);
/// arena.alloc_str("abc");
/// let stats = arena.stats();
/// assert_eq!(stats.used, 11);
/// assert_eq!(stats.pages, 1);
/// assert_eq!(stats.capacity, 64 * 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Pages held now, used and unused.
    pub pages: usize,
    /// Bytes held from the backing allocator, page headers included.
    pub capacity: usize,
    /// Bytes consumed since the last reset, alignment padding included, headers not.
    pub used: usize,
    /// Pages ever obtained from the backing allocator by this arena (it stops at
    /// `usize::MAX` rather than wrap).
    pub page_allocations: usize,
    /// Values placed with [`alloc_owned`](OneWayAlloc::alloc_owned) whose
    /// destructors wait to run (at the next reset, the end of their scope or the
    /// arena's drop). Kept by the registration, not by the allocation fast path.
    pub pending_drops: usize,
}

/// One page of an arena, from [`OneWayAlloc::pages`].
///
/// # Examples
/// ```
/// let arena = onewayalloc::OneWayAlloc::new();
/// arena.alloc_bytes(100);
/// let page = arena.pages().next().unwrap();
/// assert_eq!(page.size, 64 * 1024);
/// assert_eq!(page.used, 100);
/// assert!(page.current);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PageInfo {
    /// Bytes of the page, header included.
    pub size: usize,
    /// Bytes consumed in it since the last reset; 0 for an unused page.
    pub used: usize,
    /// Whether this page serves the next request.
    pub current: bool,
}

impl<A: Allocator> OneWayAlloc<A> {
    /// What the arena holds, in constant time.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// arena.alloc_bytes(1000);
    /// assert_eq!(arena.stats().used, 1000);
    /// arena.reset();
    /// assert_eq!(arena.stats().used, 0);
    /// assert_eq!(arena.stats().pages, 1);
    /// ```
    pub fn stats(&self) -> Stats {
        Stats {
            pending_drops: self.owned.len(),
            ..self.core().stats()
        }
    }

    /// The pages the arena holds, in list order: the used pages, then the current
    /// one, then the unused ones.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// arena.alloc_bytes(100_000); // does not fit the 64 KiB first page
    /// let sizes: Vec<usize> = arena.pages().map(|p| p.size / 1024).collect();
    /// assert_eq!(sizes, [64, 128]);
    /// assert!(arena.pages().last().unwrap().current);
    /// ```
    pub fn pages(&self) -> impl Iterator<Item = PageInfo> + '_ {
        self.core().pages()
    }
}
