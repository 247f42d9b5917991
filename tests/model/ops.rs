//! The operations a program is made of, and the paths a run takes.

/// One step of a program.
///
/// A program runs at *levels*: the top level (the arena itself) and one level per
/// open scope. Indices (`block`, `vec`, `map`, ...) are taken modulo the number of
/// live things of that kind at the innermost level (`Deallocate`: at every open
/// level); where there are none the step does nothing, or, for collections,
/// `index % (n + 1) == n` creates a new one. Collections borrow the level's arena
/// handle, so they are dropped whenever the level opens a scope or ends; raw blocks
/// live until their level ends (or, at the top level, until a reset).
///
/// Once a limit is set, every allocating call may be refused; the runner then uses
/// the `try_` calls and `try_reserve`, and the model says which calls fail.
#[derive(Clone, Debug)]
pub enum Op {
    /// `alloc_layout(size, align = 1 << align_log2)` (`try_alloc_layout` under a limit).
    Layout { size: usize, align_log2: u8 },
    /// `try_alloc_bytes(size)`.
    Bytes { size: usize },
    /// `try_alloc_zeroed(nmemb, size)` (an `nmemb * size` overflow must be refused).
    Zeroed { nmemb: usize, size: usize },
    /// `try_alloc_str` of a `len`-byte string.
    Str { len: usize },
    /// `Allocator::allocate` on `&arena`.
    Allocate { size: usize, align_log2: u8 },
    /// A typed value: `alloc::<T>` (or `alloc_with` if `with`; their `try_` twins
    /// under a limit) of one of the fixed types of `contents.rs`, chosen by `class`
    /// (modulo their number), holding its pattern: the calls whose size and
    /// alignment are compile-time constants.
    Typed { class: usize, with: bool },
    /// `Allocator::grow` (or `grow_zeroed`) of a raw block by `extra` bytes, to
    /// alignment `1 << align_log2` (its own alignment when `None`).
    Grow {
        block: usize,
        extra: usize,
        align_log2: Option<u8>,
        zeroed: bool,
    },
    /// `Allocator::shrink` of a raw block to `size % (old size + 1)` bytes.
    Shrink {
        block: usize,
        size: usize,
        align_log2: Option<u8>,
    },
    /// `Allocator::deallocate` of a raw block of any open level: a block of an
    /// enclosing level deallocated inside a scope just stops being live.
    Deallocate { block: usize },
    /// A growing buffer (SPEC §1.3): `Allocator::grow` doubles the level's newest
    /// raw block `doublings` times (a new 4 KiB block if the level has none), up to
    /// a few MiB, past the 1 MiB pages.
    GrowBuffer { doublings: u8 },
    /// Pushes `count` values into an arena `Vec<u64>`.
    VecPush { vec: usize, count: usize },
    /// `shrink_to_fit` of an arena `Vec`.
    VecShrink { vec: usize },
    /// Drops an arena `Vec`.
    VecDrop { vec: usize },
    /// `Box::try_new_in` of a `u64` or of a `[u64; 64]`.
    BoxNew { big: bool },
    /// Drops an arena `Box`.
    BoxDrop { index: usize },
    /// Inserts `count` new keys into an arena `hashbrown::HashMap`.
    MapInsert { map: usize, count: usize },
    /// Drops an arena `HashMap`.
    MapDrop { map: usize },
    /// Opens a scope inside the innermost level (up to a fixed depth; beyond it,
    /// nothing): `OneWayAlloc::scope` at the top level, `Scope::scope` inside.
    ScopeEnter,
    /// Ends the innermost scope: its closure returns, or, if `panic`, panics, and
    /// the panic is caught outside the scope. At the top level, nothing.
    ScopeExit { panic: bool },
    /// `set_limit(Some(capacity + headroom))`, or `set_limit(None)`.
    SetLimit { headroom: Option<usize> },
    /// Ends every scope, drops every collection, then `trim(keep)`. Raw blocks of
    /// the top level stay live.
    Trim { keep: usize },
    /// Ends every scope, forgets every block, then `reset()`.
    Reset,
    /// Ends every scope, drops the arena (which must release everything it holds)
    /// and starts a new one.
    NewArena { size_hint: usize },
}

/// Declares [`Hits`]: one counter per path, with what it means.
macro_rules! hits {
    ($($field:ident: $what:literal,)*) => {
        /// How often a run took each path worth reaching (to check that the
        /// generators reach them all). The page-policy paths are counted by the
        /// model, so they stay at 0 in sanitizer mode.
        #[derive(Clone, Copy, Debug, Default)]
        pub struct Hits {
            $(#[doc = $what] pub $field: usize,)*
        }

        impl Hits {
            pub fn add(&mut self, other: &Hits) {
                $(self.$field += other.$field;)*
            }

            /// Every path with its description and count.
            pub fn paths(&self) -> Vec<(&'static str, usize)> {
                vec![$(($what, self.$field)),*]
            }
        }
    };
}

hits! {
    steps: "operation",
    typed_values: "typed value placed by alloc or alloc_with",
    new_pages: "new page",
    oversized_pages: "new page larger than its target",
    reused_pages: "unused page reused (first fit)",
    reused_after_skipping: "unused page reused after skipping one that does not fit",
    zero_sized_bumped: "zero-sized request served by the bump",
    zero_sized_dangling: "zero-sized request answered with a dangling pointer",
    rollbacks: "deallocate rolls the most recent block back",
    resized_in_place: "most recent block resized in place",
    realigned_in_place: "most recent block moved forward in its page to realign",
    shrunk_in_place: "older block shrunk in place",
    moved: "block resized by an ordinary allocation and a copy",
    buffer_moves: "growing buffer left its page",
    buffer_reused: "growing buffer moved to an unused page",
    buffer_largest: "growing buffer took the largest unused page, not the first that fits",
    buffer_roomy: "growing buffer got a new page with room to double",
    buffer_exact: "growing buffer got a new page of the growth schedule",
    limit_refusals: "request refused by the limit",
    limit_fallbacks: "growing buffer's roomy page over the limit, the exact page taken",
    scopes: "scope",
    nested_scopes: "nested scope",
    panicked_scopes: "scope left by a panic",
    scope_pages: "scope that took pages (unused after the rollback)",
    outer_frees: "block of an enclosing level deallocated inside a scope",
    trims: "trim",
    trimmed_pages: "page freed by trim",
    kept_after_trimmed: "page kept by trim after a page it freed",
    resets: "reset",
    limits: "limit set",
    new_arenas: "arena dropped and made anew",
}
