//! Netdata's One Way Allocator C API, served by the Rust crate `onewayalloc`: the
//! functions that `include/onewayalloc.h` declares, built as a static library
//! (`libonewayalloc_capi.a`), a shared library (`libonewayalloc_capi.so`) and, with
//! cargo-c, as `libonewayalloc` with a pkg-config file.
//!
//! A C program switches from Netdata's allocator to this one by linking another
//! library: the 12 functions have Netdata's prototypes and the semantics C callers
//! rely on, plus `onewayalloc_trim` and `onewayalloc_set_fatal_handler`. The header
//! is the reference for C callers; this page is for Rust readers. The functions can
//! be called from Rust too:
//!
//! ```
//! use onewayalloc_capi::*;
//!
//! // SAFETY: the arena is used by this thread only and destroyed once; every block
//! // is used within its size and before the reset.
//! unsafe {
//!     let owa = onewayalloc_create(0);
//!     let name = onewayalloc_strdupz(owa, c"system.cpu".as_ptr());
//!     assert_eq!(core::ffi::CStr::from_ptr(name), c"system.cpu");
//!     let points = onewayalloc_callocz(owa, 30, size_of::<f64>()).cast::<f64>();
//!     assert_eq!(*points.add(29), 0.0);
//!     assert_eq!(points as usize % 16, 0);
//!     onewayalloc_reset(owa); // every page kept for the next query
//!     onewayalloc_destroy(owa);
//! }
//! ```
//!
//! # Design
//!
//! - The handle (`ONEWAYALLOC *`) is a boxed `Handle`: the header's `struct
//!   onewayalloc_cursor` first, a `OneWayAlloc<Counting>`, and the most recent
//!   block a call of this arena handed out. `Counting` is the global allocator with
//!   every byte counted, which is what [`onewayalloc_allocated_memory`] reports.
//! - The header inlines `mallocz`, `callocz`, `strdupz` and `memdupz`: they bump
//!   the cursor's `pos..end` (the free bytes of the arena's current page) without
//!   calling the library. Every other call takes those blocks in first (the arena's
//!   cursor moves up to `pos`; the last inline block, `last..pos`, becomes the most
//!   recent block) and hands the free span back before returning to C or running a
//!   cleanup. In the sanitizer mode the span is empty, so every block comes here.
//!   The struct's layout is ABI version 1 (`onewayalloc_mallocz_slow_v1`).
//! - Every block comes from `alloc_bytes`, 16-byte aligned like `malloc`. `freez`
//!   and `doublesize` work by address through the crate's hidden by-address calls,
//!   which in the sanitizer mode look the block's exact layout up in the arena's
//!   record of outstanding blocks. In the page mode `doublesize` grows a block in
//!   place only when it is the most recent block the handle remembers, with its
//!   exact size: any other block is copied, so no `oldsize` can make two blocks
//!   overlap.
//! - Every entry point runs through one guard: a refusal (overflow, out of memory,
//!   NULL where a value is required, a pointer the sanitizer mode does not hold)
//!   and any Rust panic end in the fatal path (one line on stderr, the handler,
//!   `abort()`). Nothing unwinds into C and no call returns NULL where the header
//!   promises a block.
//! - Cleanups (`onewayalloc_add_cleanup`) are C functions that `reset` and
//!   `destroy` run while they hold the handle through a shared reference, and
//!   that may call back into the library on the same handle. No such call takes
//!   the handle exclusively: the allocating calls, `freez`, `doublesize` and
//!   `add_cleanup` work through `Cell`s; `trim` is recorded and carried out by the
//!   reset after its last cleanup; a `reset` or `destroy` of the arena is fatal.
//!   `tests/cleanup_calls.rs` makes these calls under Miri.
//! - Without the `std` feature (the small C library: `cargo rustc --lib -p
//!   onewayalloc-capi --no-default-features --profile capi-release --crate-type
//!   staticlib,cdylib`) the library is `no_std` and needs `panic = "abort"`: the C
//!   library's `malloc`, `write` and `abort` stand in for std's, and its panic
//!   handler takes the same fatal path (module `nostd`).
//! - The shared library's SONAME is `libonewayalloc.so.0.1` in every build, the
//!   name cargo-c installs it under (`build.rs`).
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

// The `no_std` build has no way to catch a panic: only `panic = "abort"` keeps the
// header's promise that nothing unwinds into C.
#[cfg(all(not(feature = "std"), not(panic = "abort")))]
compile_error!(
    "onewayalloc-capi without its `std` feature needs panic = \"abort\": \
     cargo build -p onewayalloc-capi --no-default-features --profile capi-release"
);

mod counting;
mod fatal;
#[cfg(not(feature = "std"))]
mod nostd;

use core::cell::Cell;
use core::ffi::{CStr, c_char, c_void};
use core::fmt::Write;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};

use onewayalloc::allocator_api2::boxed::Box;
use onewayalloc::{ByAddressError, OneWayAlloc};

use counting::Counting;
pub use fatal::FatalHandler;
use fatal::{Ptr, Reason, entry};

/// Whether the library runs the crate's sanitizer mode (every block its own block
/// of the system allocator; `freez` frees, `reset` releases every block). Chosen
/// by the `separate-blocks` feature, or by `-Zsanitizer=address`.
///
/// ```
/// assert_eq!(onewayalloc_capi::SEPARATE_BLOCKS, onewayalloc::SEPARATE_BLOCKS);
/// ```
pub const SEPARATE_BLOCKS: bool = onewayalloc::SEPARATE_BLOCKS;

/// The arena of an `ONEWAYALLOC *`.
type Arena = OneWayAlloc<Counting>;

/// What an `ONEWAYALLOC *` points to: the inline path's cursor (first, at offset
/// 0: the header reads it), the arena, the most recent block a call handed out
/// from it, which only `onewayalloc_doublesize` may grow in place, and what the
/// arena's cleanups may not do at once while they run (see [`Handle::run_cleanups`]).
#[repr(C)]
struct Handle {
    cursor: Cursor,
    arena: Arena,
    last: Cell<LastBlock>,
    /// While `onewayalloc_reset` or `onewayalloc_destroy` runs the arena's
    /// cleanups: the name of that call (for the fatal line of a cleanup that
    /// resets or destroys its own arena). `None` otherwise.
    cleaning: Cell<Option<&'static str>>,
    /// The smallest `keep_bytes` of the `onewayalloc_trim` calls the cleanups made
    /// while `onewayalloc_reset` ran them: carried out once the reset has made the
    /// pages available (and dropped by `onewayalloc_destroy`, which returns them all).
    deferred_trim: Cell<Option<usize>>,
    /// The bytes of the arena's pages from the process's page heap that
    /// `onewayalloc_allocated_memory` counts now (brought up to date by
    /// [`Handle::sync_out`], taken out when the handle drops).
    heap_counted: Cell<usize>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        // The arena, dropped right after, gives every page back.
        Counting::heap_pages_changed(self.heap_counted.get(), 0);
    }
}

/// The header's `struct onewayalloc_cursor` (ABI version 1, `ONEWAYALLOC_CURSOR_ABI`):
/// the free bytes of the arena's current page, `pos..end`, out of which the header's
/// inline `onewayalloc_mallocz` bumps blocks without calling the library, and the
/// start of the last block it bumped. Its layout is part of the ABI: changing it
/// renames `onewayalloc_mallocz_slow_v1` and changes the SONAME.
///
/// Who moves what: between calls C owns `pos` and `last` (the inline path moves them
/// forward), while the arena's own cursor stays where the last call left it. Every
/// call that uses the arena first takes the inline blocks in ([`Handle::sync_in`]:
/// the arena's cursor moves up to `pos`, and the last inline block becomes the most
/// recent block), and before it returns to C, or calls a cleanup, hands the cursor
/// back ([`Handle::sync_out`]). So the arena and C never bump the same bytes.
///
/// Invariants C relies on: `end` is 16-byte aligned and `pos <= end`, so `pos`
/// rounded up to 16 is at most `end`. In the sanitizer mode (and if a page's end
/// were not 16-byte aligned) `pos == end ==` the cursor's own address, 16-byte
/// aligned: the inline path always misses and every block goes through the library.
#[repr(C, align(16))]
struct Cursor {
    pos: Cell<*mut u8>,
    end: Cell<*mut u8>,
    last: Cell<*mut u8>,
}

/// The alignment of every block the C API hands out.
const BLOCK_ALIGN: usize = 16;

/// The most recent block of an arena: its start and the bytes it was handed out
/// with (0 bytes are served as 1); `start` 0 when there is none (a fresh arena,
/// after a reset, or in the sanitizer mode after its `freez`).
#[derive(Clone, Copy)]
struct LastBlock {
    start: usize,
    size: usize,
}

impl LastBlock {
    const NONE: LastBlock = LastBlock { start: 0, size: 0 };
}

impl Handle {
    /// Remembers `start`, of `size` bytes, as the most recent block.
    fn handed_out(&self, start: NonNull<u8>, size: usize) {
        self.last.set(LastBlock {
            start: start.addr().get(),
            size,
        });
    }

    /// The address of the cursor, where `pos` and `end` point when the inline
    /// path must always miss.
    fn parked(&self) -> *mut u8 {
        ptr::from_ref(&self.cursor).cast_mut().cast()
    }

    /// Takes in the blocks the header's inline path bumped since the last call: the
    /// last of them becomes the most recent block (it ends at `pos`: the inline path
    /// bumps by the exact size), and the arena's cursor moves up to `pos`. Called
    /// before anything uses the arena.
    fn sync_in(&self) -> Result<(), Reason> {
        let pos = self.cursor.pos.get();
        if pos == self.parked() {
            return Ok(());
        }
        let last = self.cursor.last.get().addr();
        if last != self.last.get().start {
            // A block bumped inline: `last..pos`, its exact size.
            let size = pos.addr().checked_sub(last).ok_or(Reason::BadCursor)?;
            self.last.set(LastBlock { start: last, size });
        }
        if self.arena.claim_until(pos.addr()) {
            Ok(())
        } else {
            Err(Reason::BadCursor)
        }
    }

    /// Hands the free bytes of the current page to the inline path (parks it in the
    /// sanitizer mode), with the most recent block's start as `last`. Called before
    /// returning to C and before running cleanups.
    fn sync_out(&self) {
        // Every call that obtains or returns pages ends here: the count follows.
        let heap = self.arena.page_heap_bytes();
        Counting::heap_pages_changed(self.heap_counted.replace(heap), heap);
        let (pos, end) = match self.arena.free_span() {
            Some((pos, end)) if end.addr().get() % BLOCK_ALIGN == 0 => (pos.as_ptr(), end.as_ptr()),
            _ => (self.parked(), self.parked()),
        };
        self.cursor.pos.set(pos);
        self.cursor.end.set(end);
        // C never dereferences `last`: it only stores the blocks it bumps there.
        self.cursor
            .last
            .set(ptr::without_provenance_mut(self.last.get().start));
    }

    /// The header's inline bump, done by the library: `size` bytes, 16-byte aligned,
    /// out of the cursor's span, recorded as the inline path records them; `None`
    /// when they do not fit, for a size of 0, and in the sanitizer mode (the span
    /// is empty).
    fn bump(&self, size: usize) -> Option<NonNull<u8>> {
        let pos = self.cursor.pos.get();
        // `pos <= end`, and `end` is 16-byte aligned (see `Cursor`).
        let room = self.cursor.end.get().addr().checked_sub(pos.addr())?;
        let pad = pos.addr().wrapping_neg() % BLOCK_ALIGN;
        if size == 0 || size > room.checked_sub(pad)? {
            return None;
        }
        // SAFETY: `pos + pad + size <= end`: inside the current page (or at its
        // end), whose provenance `pos` carries (`sync_out` took it from the arena's
        // cursor, or the inline path moved it within the page).
        let (block, next) = unsafe {
            let block = pos.add(pad);
            (block, block.add(size))
        };
        self.cursor.pos.set(next);
        self.cursor.last.set(block);
        NonNull::new(block)
    }

    /// A new handle of `arena`; its cursor is set by [`sync_out`](Self::sync_out)
    /// once the handle is at its final address.
    fn new(arena: Arena) -> Handle {
        Handle {
            cursor: Cursor {
                pos: Cell::new(ptr::null_mut()),
                end: Cell::new(ptr::null_mut()),
                last: Cell::new(ptr::null_mut()),
            },
            arena,
            last: Cell::new(LastBlock::NONE),
            cleaning: Cell::new(None),
            deferred_trim: Cell::new(None),
            heap_counted: Cell::new(0),
        }
    }

    /// Refuses a reset or destroy (`call`) while this arena's cleanups run: one of
    /// them called it on its own arena, which the header forbids. Going on would
    /// take the handle exclusively (or free it) while the call running the cleanups
    /// holds it, and reset or free the very blocks the cleanups may still use.
    fn not_cleaning(&self) -> Result<(), Reason> {
        match self.cleaning.get() {
            Some(running) => Err(Reason::OwnArenaInCleanup { running }),
            None => Ok(()),
        }
    }

    /// The first half of `onewayalloc_reset` and `onewayalloc_destroy` (`call`,
    /// their name): takes the inline blocks in and runs the arena's cleanups, most
    /// recent first, with `cleaning` set meanwhile.
    ///
    /// The cleanups are C functions that may call back into the library on this
    /// very handle (through C's raw pointer) while this shared reference is held up
    /// the stack (and the crate's `run_owned_drops` holds one to the arena, as a
    /// protected argument). So while `cleaning` is set, every call takes the handle
    /// through shared references only, never exclusively: the allocating calls,
    /// `freez`, `doublesize` and `add_cleanup` work through `Cell`s as always;
    /// `onewayalloc_trim` is recorded in `deferred_trim` instead of trimming; a reset
    /// or destroy is fatal ([`not_cleaning`](Self::not_cleaning)). A fatal path
    /// aborts (nothing unwinds), so `cleaning` cannot be left set on a handle
    /// that is used again.
    ///
    /// # Safety
    /// The caller resets or drops the arena next, and no block of it is used
    /// afterwards (the header's contract for reset and destroy).
    unsafe fn run_cleanups(&self, call: &'static str) -> Result<(), Reason> {
        self.not_cleaning()?;
        // The cleanups may allocate inline too: the cursor is in sync while they
        // run (`sync_in` leaves it as it is), and what they bump is released by
        // the reset or destroy with the rest.
        self.sync_in()?;
        self.cleaning.set(Some(call));
        // SAFETY: the caller's guarantee: no block is used after the reset or
        // destroy that follows.
        unsafe { self.arena.run_owned_drops() };
        self.cleaning.set(None);
        Ok(())
    }
}

/// The C type `ONEWAYALLOC`, which C declares as `void`: handles are `void *`.
#[allow(clippy::upper_case_acronyms)]
pub type ONEWAYALLOC = c_void;

/// The handle behind an `ONEWAYALLOC *`, or `None` for NULL.
///
/// # Safety
/// `owa` must be NULL or a live handle from [`onewayalloc_create`], used by this
/// thread only for the duration of the borrow.
unsafe fn handle<'a>(owa: *mut ONEWAYALLOC) -> Option<&'a Handle> {
    // SAFETY: the caller's guarantee: a live handle points to a boxed `Handle`.
    unsafe { owa.cast::<Handle>().as_ref() }
}

/// The handle behind an `ONEWAYALLOC *`, exclusively, or `None` for NULL.
///
/// # Safety
/// As for [`handle`], and no block of the arena may be in use by Rust references
/// (C holds raw pointers only). No other reference to the handle may be in use:
/// never while the arena's cleanups run (`Handle::cleaning` set), when the call
/// running them holds one up the stack; so only the calls a cleanup cannot make
/// on its own arena take it (reset, and trim outside cleanups).
unsafe fn handle_mut<'a>(owa: *mut ONEWAYALLOC) -> Option<&'a mut Handle> {
    // SAFETY: the caller's guarantee, as above.
    unsafe { owa.cast::<Handle>().as_mut() }
}

/// Runs `call` on the handle an allocating call got (NULL is fatal), with the
/// blocks of the header's inline path taken in first and the cursor handed back to
/// C afterwards.
///
/// # Safety
/// As for [`handle`]: the header's contract for every call.
unsafe fn with_live<T>(
    owa: *mut ONEWAYALLOC,
    call: impl FnOnce(&Handle) -> Result<T, Reason>,
) -> Result<T, Reason> {
    // SAFETY: the caller's guarantee: `owa` is NULL or a live handle used by one
    // thread at a time.
    let handle = unsafe { handle(owa) }.ok_or(Reason::NullArena)?;
    handle.sync_in()?;
    let result = call(handle);
    handle.sync_out();
    result
}

/// The exported allocating calls' fast path: the header's inline bump (see
/// [`Handle::bump`]), for programs that call the library's functions (built with
/// `ONEWAYALLOC_NO_INLINE`, through a function pointer, or against an older
/// header). `None` for a NULL arena and whenever the inline path would miss: the
/// caller then takes its full path, which checks and syncs.
///
/// # Safety
/// `owa` must be NULL or a live handle used by this thread only.
unsafe fn bump(owa: *mut ONEWAYALLOC, size: usize) -> Option<NonNull<u8>> {
    // SAFETY: the caller's guarantee.
    unsafe { handle(owa) }?.bump(size)
}

/// `size` bytes, 16-byte aligned, remembered as the most recent block; 0 bytes are
/// served as 1, so that every block is distinct and `freez` accepts it in both
/// modes.
fn block(handle: &Handle, size: usize) -> Result<NonNull<u8>, Reason> {
    let bytes: &mut [MaybeUninit<u8>] = handle
        .arena
        .try_alloc_bytes(size.max(1))
        .map_err(|_| Reason::Refused { bytes: size })?;
    // A block's pointer is never null; C gets it as a raw pointer only.
    let start = NonNull::from(bytes).cast::<u8>();
    handle.handed_out(start, size.max(1));
    Ok(start)
}

/// Creates an arena whose first page holds `size_hint` bytes of payload (at least
/// 64 KiB with its header, rounded up to the OS page). Never returns NULL: it ends
/// the process if memory cannot be had.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(100_000);
/// assert!(!owa.is_null());
/// // The first page counts (other arenas of this process may count too).
/// assert!(onewayalloc_allocated_memory() >= 100_000 || SEPARATE_BLOCKS);
/// // SAFETY: a live handle, destroyed once.
/// unsafe { onewayalloc_destroy(owa) };
/// ```
#[unsafe(no_mangle)]
pub extern "C" fn onewayalloc_create(size_hint: usize) -> *mut ONEWAYALLOC {
    entry(
        move |line| write!(line, "onewayalloc_create(size_hint={size_hint})"),
        || {
            // The first page: at least 64 KiB, and the hint after the header (before
            // rounding to the OS page).
            let first_page = size_hint
                .saturating_add(onewayalloc::PAGE_HEADER_SIZE)
                .max(64 * 1024);
            // Large pages from the process's page heap, shared with the Rust arenas
            // (an arena created per query reuses the pages of the previous one).
            let arena = Arena::try_with_size_hint_and_page_heap_in(size_hint, Counting)
                .map_err(|_| Reason::Refused { bytes: first_page })?;
            let handle = Box::try_new(Handle::new(arena)).map_err(|_| Reason::Refused {
                bytes: size_of::<Handle>(),
            })?;
            // At its final address: the cursor may point at itself.
            handle.sync_out();
            Ok(Box::into_raw(handle).cast::<ONEWAYALLOC>())
        },
    )
}

/// Releases every page of the arena (every outstanding block in the sanitizer mode)
/// and the arena itself. NULL does nothing.
///
/// # Safety
/// `owa` must be NULL or a live handle, not used again (by any thread) afterwards,
/// and none of its blocks may be used again.
///
/// ```
/// # use onewayalloc_capi::*;
/// // SAFETY: NULL is accepted.
/// unsafe { onewayalloc_destroy(core::ptr::null_mut()) };
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_destroy(owa: *mut ONEWAYALLOC) {
    entry(
        move |line| write!(line, "onewayalloc_destroy(owa={})", Ptr(owa)),
        || {
            // SAFETY: the caller's guarantee: a live handle. The cleanups run
            // through a shared reference first (see `onewayalloc_reset`).
            if let Some(handle) = unsafe { handle(owa) } {
                // SAFETY: the caller's guarantee: no block is used after destroy,
                // and the arena is dropped right after.
                unsafe { handle.run_cleanups("onewayalloc_destroy") }?;
            }
            if !owa.is_null() {
                // SAFETY: the caller's guarantee: a live handle from
                // `onewayalloc_create`, that is `Box::into_raw` of a `Handle`, given
                // back once; the cleanups have returned (a destroy from one of them
                // was refused above), so no reference to it is held. A trim they
                // asked for is dropped with it: every page goes back.
                drop(unsafe { Box::from_raw(owa.cast::<Handle>()) });
            }
            Ok(())
        },
    )
}

/// Invalidates every block and makes every page available again, in constant time;
/// keeps every page (unlike Netdata's reset at 04b1cf5, which unmaps all but the
/// first). In the sanitizer mode it releases every outstanding block. NULL does
/// nothing.
///
/// # Safety
/// `owa` must be NULL or a live handle used by this thread only; no block of it may
/// be used afterwards.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; the block is not used after the reset.
/// unsafe {
///     onewayalloc_mallocz(owa, 100_000);
///     onewayalloc_reset(owa);
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_reset(owa: *mut ONEWAYALLOC) {
    entry(
        move |line| write!(line, "onewayalloc_reset(owa={})", Ptr(owa)),
        || {
            // SAFETY: the caller's guarantee. The cleanups run through a shared
            // reference first, so that a cleanup may call back into the arena
            // (allocate, add a cleanup, trim) through its handle.
            if let Some(handle) = unsafe { handle(owa) } {
                // SAFETY: the caller's guarantee: no block is used after the reset,
                // and the arena is reset right after.
                unsafe { handle.run_cleanups("onewayalloc_reset") }?;
            }
            // SAFETY: the caller's guarantee; C holds its blocks as raw pointers,
            // the cleanups have returned (a reset from one of them was refused
            // above, before any cleanup ran) and the shared reference above is no
            // longer used.
            if let Some(handle) = unsafe { handle_mut(owa) } {
                handle.arena.reset();
                handle.last.set(LastBlock::NONE);
                // A trim a cleanup asked for, now that the pages are unused.
                if let Some(keep_bytes) = handle.deferred_trim.take() {
                    handle.arena.trim(keep_bytes);
                }
                handle.sync_out();
            }
            Ok(())
        },
    )
}

/// Returns unused pages to the system, keeping at most `keep_bytes` of them (the
/// crate's `trim`): after a reset, `onewayalloc_trim(owa, 0)` leaves only the first
/// page. Does nothing in the sanitizer mode and for NULL.
///
/// Called by a cleanup of the arena while `onewayalloc_reset` runs it, it frees
/// nothing at once (every page is still in use): the reset trims after its last
/// cleanup, once the pages are available, with the smallest `keep_bytes` its
/// cleanups asked for. While `onewayalloc_destroy` runs the cleanups it does
/// nothing: every page goes back anyway.
///
/// # Safety
/// `owa` must be NULL or a live handle used by this thread only.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; the block is not used after the reset.
/// unsafe {
///     onewayalloc_mallocz(owa, 1 << 20);
///     onewayalloc_reset(owa);
///     onewayalloc_trim(owa, 0);
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_trim(owa: *mut ONEWAYALLOC, keep_bytes: usize) {
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_trim(owa={}, keep_bytes={keep_bytes})",
                Ptr(owa)
            )
        },
        || {
            // SAFETY: the caller's guarantee: NULL or a live handle.
            let Some(shared) = (unsafe { handle(owa) }) else {
                return Ok(());
            };
            if shared.cleaning.get().is_some() {
                // A cleanup of this arena: the reset or destroy running it holds
                // the handle, and every page is still in use. The reset trims when
                // it has made the pages available (the smallest `keep_bytes` asked
                // for); a destroy returns every page anyway.
                let keep = shared
                    .deferred_trim
                    .get()
                    .map_or(keep_bytes, |k| k.min(keep_bytes));
                shared.deferred_trim.set(Some(keep));
                return Ok(());
            }
            // SAFETY: the caller's guarantee; no cleanup of this arena runs, so no
            // reference to the handle is held up the stack (`shared` is not used
            // again); unused pages hold no live block.
            if let Some(handle) = unsafe { handle_mut(owa) } {
                handle.sync_in()?;
                handle.arena.trim(keep_bytes);
                handle.sync_out();
            }
            Ok(())
        },
    )
}

/// The C type of a cleanup: `void (*)(void *arg)`.
pub type CleanupFn = unsafe extern "C" fn(arg: *mut c_void);

/// A cleanup the arena runs as the destructor of this value (the crate's
/// `alloc_owned`): `cleanup(arg)`, once. `None` until registered, so that a
/// registration that fails runs nothing.
struct Cleanup {
    cleanup: Option<CleanupFn>,
    arg: *mut c_void,
}

// SAFETY: the arena runs the cleanup on the thread that resets or destroys it; the
// header's contract (one thread at a time per arena, hand-overs synchronized)
// makes `arg` the caller's to use there, as any block of the arena is.
unsafe impl Send for Cleanup {}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(cleanup) = self.cleanup {
            // SAFETY: the header's contract for cleanups: a C function that takes
            // `arg` and does not unwind.
            unsafe { cleanup(self.arg) }
        }
    }
}

/// Registers `cleanup(arg)` to run at the next `onewayalloc_reset` or at
/// `onewayalloc_destroy`, most recent first, in both modes. The record lives in
/// the arena (a block of 32 bytes on 64-bit targets). NULL `owa` or `cleanup` is
/// fatal.
///
/// A cleanup may make any call on its own arena but a reset or destroy: allocate
/// (the block is valid until the reset or destroy that runs the cleanup
/// completes), `freez`, `doublesize`, add cleanups, which run in the same reset or
/// destroy, before the older ones, and trim, which the reset carries out once it
/// has made the pages available (see [`onewayalloc_trim`]). A reset or destroy of
/// an arena from one of its own cleanups is fatal, before anything is reset or
/// freed. (While the cleanups run, the reset or destroy holds the handle: every
/// call a cleanup makes on it takes it through shared references only.)
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal);
/// `cleanup` a C function that does not unwind, called with `arg`.
///
/// ```
/// # use onewayalloc_capi::*;
/// use core::ffi::c_void;
/// unsafe extern "C" fn count(arg: *mut c_void) {
///     // SAFETY: `arg` is the `u32` registered below, alive until the destroy.
///     unsafe { *arg.cast::<u32>() += 1 };
/// }
/// let mut runs = 0u32;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; `runs` outlives the arena.
/// unsafe {
///     onewayalloc_add_cleanup(owa, Some(count), (&raw mut runs).cast());
///     onewayalloc_reset(owa);
///     onewayalloc_add_cleanup(owa, Some(count), (&raw mut runs).cast());
///     onewayalloc_destroy(owa);
/// }
/// assert_eq!(runs, 2);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_add_cleanup(
    owa: *mut ONEWAYALLOC,
    cleanup: Option<CleanupFn>,
    arg: *mut c_void,
) {
    entry(
        move |line| {
            let function = cleanup.map_or(ptr::null(), |f| f as *const c_void);
            write!(
                line,
                "onewayalloc_add_cleanup(owa={}, cleanup={}, arg={})",
                Ptr(owa),
                Ptr(function),
                Ptr(arg)
            )
        },
        || {
            let call = |handle: &Handle| {
                let cleanup = cleanup.ok_or(Reason::NullCleanup)?;
                // The record goes after the most recent C block (an inline one
                // included: `with_live` took them in), which then no longer ends at
                // the cursor: a later `doublesize` of it copies (the arena's grow
                // checks the cursor itself), so the record is never grown over.
                let slot = handle
                    .arena
                    .try_alloc_owned(Cleanup { cleanup: None, arg })
                    .map_err(|_| Reason::Refused {
                        bytes: size_of::<Cleanup>(),
                    })?;
                slot.cleanup = Some(cleanup);
                Ok(())
            };
            // SAFETY: the caller's guarantee.
            unsafe { with_live(owa, call) }
        },
    )
}

/// `size` uninitialized bytes, 16-byte aligned; 0 is served as 1 byte, a distinct
/// block. Never returns NULL.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal).
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle.
/// unsafe {
///     let (a, b) = (onewayalloc_mallocz(owa, 0), onewayalloc_mallocz(owa, 0));
///     assert_ne!(a, b);
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_mallocz(owa: *mut ONEWAYALLOC, size: usize) -> *mut c_void {
    // SAFETY: the caller's guarantee for `owa` (the header's contract).
    if let Some(block) = unsafe { bump(owa, size) } {
        return block.as_ptr().cast();
    }
    // SAFETY: as above.
    unsafe { mallocz(owa, size) }
}

/// The out-of-line path of the header's inline `onewayalloc_mallocz` (ABI version
/// 1 of `struct onewayalloc_cursor`), taken when the current page has no room, for
/// a size of 0, in the sanitizer mode, and for a NULL arena (fatal): the same as
/// [`onewayalloc_mallocz`], whose name the fatal line gives. C programs call
/// `onewayalloc_mallocz`; the header calls this one.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal).
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle.
/// unsafe {
///     let block = onewayalloc_mallocz_slow_v1(owa, 100_000).cast::<u8>();
///     assert_eq!(block as usize % 16, 0);
///     *block.add(99_999) = 1;
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_mallocz_slow_v1(
    owa: *mut ONEWAYALLOC,
    size: usize,
) -> *mut c_void {
    // SAFETY: the caller's guarantee for `owa` (the header's contract).
    unsafe { mallocz(owa, size) }
}

/// The body of [`onewayalloc_mallocz`] and [`onewayalloc_mallocz_slow_v1`].
///
/// # Safety
/// `owa` must be NULL (fatal) or a live handle used by this thread only.
unsafe fn mallocz(owa: *mut ONEWAYALLOC, size: usize) -> *mut c_void {
    entry(
        move |line| write!(line, "onewayalloc_mallocz(owa={}, size={size})", Ptr(owa)),
        || {
            let call = |handle: &Handle| Ok(block(handle, size)?.as_ptr().cast());
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            unsafe { with_live(owa, call) }
        },
    )
}

/// `nmemb * size` zeroed bytes, 16-byte aligned (0 bytes are served as 1). The
/// product overflowing is fatal. Never returns NULL.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal).
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; 4 * 8 bytes are read.
/// unsafe {
///     let zeros = onewayalloc_callocz(owa, 4, 8).cast::<u64>();
///     assert_eq!(*zeros.add(3), 0);
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_callocz(
    owa: *mut ONEWAYALLOC,
    nmemb: usize,
    size: usize,
) -> *mut c_void {
    if let Some(total) = nmemb.checked_mul(size) {
        // SAFETY: the caller's guarantee for `owa` (the header's contract).
        if let Some(block) = unsafe { bump(owa, total) } {
            // SAFETY: the block holds `total` bytes.
            unsafe { block.write_bytes(0, total) };
            return block.as_ptr().cast();
        }
    }
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_callocz(owa={}, nmemb={nmemb}, size={size})",
                Ptr(owa)
            )
        },
        || {
            let total = nmemb
                .checked_mul(size)
                .ok_or(Reason::Overflow("nmemb * size"))?;
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            let zeroed = unsafe { with_live(owa, |handle| block(handle, total)) }?;
            // SAFETY: the block holds at least `total` bytes.
            unsafe { zeroed.write_bytes(0, total) };
            Ok(zeroed.as_ptr().cast())
        },
    )
}

/// A copy of the string `s` with its terminating NUL, 16-byte aligned. A NULL `s`
/// is fatal. Never returns NULL.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal); `s` must be
/// a NUL-terminated string.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle and a C string.
/// unsafe {
///     let copy = onewayalloc_strdupz(owa, c"cpu.user".as_ptr());
///     assert_eq!(core::ffi::CStr::from_ptr(copy), c"cpu.user");
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_strdupz(
    owa: *mut ONEWAYALLOC,
    s: *const c_char,
) -> *mut c_char {
    if !s.is_null() {
        // SAFETY: the caller's guarantee: `s` is NUL-terminated.
        let with_nul = unsafe { CStr::from_ptr(s) }.to_bytes_with_nul();
        // SAFETY: the caller's guarantee for `owa` (the header's contract).
        if let Some(copy) = unsafe { bump(owa, with_nul.len()) } {
            // SAFETY: the block holds `with_nul.len()` bytes and is fresh.
            unsafe { ptr::copy_nonoverlapping(with_nul.as_ptr(), copy.as_ptr(), with_nul.len()) };
            return copy.as_ptr().cast();
        }
    }
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_strdupz(owa={}, s={})",
                Ptr(owa),
                Ptr(s.cast())
            )
        },
        || {
            let call = |handle: &Handle| {
                if s.is_null() {
                    return Err(Reason::NullString);
                }
                // SAFETY: the caller's guarantee: `s` is NUL-terminated.
                let with_nul = unsafe { CStr::from_ptr(s) }.to_bytes_with_nul();
                let copy = block(handle, with_nul.len())?;
                // SAFETY: the block holds `with_nul.len()` bytes and is fresh, so it does
                // not overlap the source.
                unsafe {
                    ptr::copy_nonoverlapping(with_nul.as_ptr(), copy.as_ptr(), with_nul.len())
                };
                Ok(copy.as_ptr().cast())
            };
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            unsafe { with_live(owa, call) }
        },
    )
}

/// A copy of the `size` bytes at `src`, 16-byte aligned (0 bytes are served as 1).
/// A NULL `src` with `size > 0` is fatal. Never returns NULL.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal); `src` must
/// be valid for reads of `size` bytes.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// let values = [1.5f64, 2.5];
/// // SAFETY: a live handle and 16 readable bytes.
/// unsafe {
///     let copy = onewayalloc_memdupz(owa, values.as_ptr().cast(), 16).cast::<f64>();
///     assert_eq!(*copy.add(1), 2.5);
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_memdupz(
    owa: *mut ONEWAYALLOC,
    src: *const c_void,
    size: usize,
) -> *mut c_void {
    if let Some(from) = NonNull::new(src.cast_mut().cast::<u8>()) {
        // SAFETY: the caller's guarantee for `owa` (the header's contract).
        if let Some(copy) = unsafe { bump(owa, size) } {
            // SAFETY: `from` is valid for reads of `size` bytes (the caller's
            // guarantee); the block holds `size` bytes and is fresh.
            unsafe { ptr::copy_nonoverlapping(from.as_ptr(), copy.as_ptr(), size) };
            return copy.as_ptr().cast();
        }
    }
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_memdupz(owa={}, src={}, size={size})",
                Ptr(owa),
                Ptr(src)
            )
        },
        || {
            let call = |handle: &Handle| {
                if src.is_null() && size > 0 {
                    return Err(Reason::NullSource);
                }
                let copy = block(handle, size)?;
                // A NULL source has no bytes to copy (refused above otherwise); the
                // copy is never given NULL, which Rust before 1.88 (this crate's
                // rust-version is 1.85) forbids even for 0 bytes.
                if let Some(src) = NonNull::new(src.cast_mut().cast::<u8>()) {
                    // SAFETY: `src` is valid for reads of `size` bytes (the caller's
                    // guarantee) and not NULL; `u8` needs no alignment; the block is
                    // fresh and holds `size` bytes.
                    unsafe { ptr::copy_nonoverlapping(src.as_ptr(), copy.as_ptr(), size) };
                }
                Ok(copy.as_ptr().cast())
            };
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            unsafe { with_live(owa, call) }
        },
    )
}

/// Frees a block: in the page mode nothing happens (the block stays valid until
/// reset or destroy); in the sanitizer mode the block is released at once, and a
/// pointer the arena does not hold is fatal. `ptr` NULL does nothing; a NULL arena
/// with a non-NULL `ptr` is fatal in both modes.
///
/// # Safety
/// `owa` must be a live handle used by this thread only; `ptr` NULL or a block of
/// it (the page mode cannot tell another pointer), not used afterwards.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; the block is not used after `freez`.
/// unsafe {
///     let block = onewayalloc_mallocz(owa, 64);
///     onewayalloc_freez(owa, block);
///     onewayalloc_freez(owa, core::ptr::null());
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_freez(owa: *mut ONEWAYALLOC, ptr: *const c_void) {
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_freez(owa={}, ptr={})",
                Ptr(owa),
                Ptr(ptr)
            )
        },
        || {
            let Some(block) = NonNull::new(ptr.cast_mut().cast::<u8>()) else {
                return Ok(());
            };
            if !SEPARATE_BLOCKS {
                // The page mode frees nothing: the arena is not touched, so the
                // inline blocks need not be taken in.
                // SAFETY: the caller's guarantee for `owa` (the header's contract).
                return unsafe { handle(owa) }.map(drop).ok_or(Reason::NullArena);
            }
            let call = |handle: &Handle| {
                // SAFETY: the caller's guarantee: the block is not used afterwards.
                unsafe { handle.arena.free_by_address(block) }
                    .map_err(|error| by_address_reason(error, 0))?;
                // The sanitizer mode released it: it is no block to grow any more. (The
                // page mode keeps it valid until reset, and it stays the most recent.)
                if SEPARATE_BLOCKS && handle.last.get().start == block.addr().get() {
                    handle.last.set(LastBlock::NONE);
                }
                Ok(())
            };
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            unsafe { with_live(owa, call) }
        },
    )
}

/// A block of `2 * oldsize` bytes whose first `oldsize` bytes are those at `src`.
///
/// In the page mode it grows in place (the same pointer comes back) only the
/// arena's most recent block, the last one any call of this arena returned, and
/// only when `oldsize` is exactly its size and its page has room; an `oldsize`
/// larger than that block is fatal. Any other `src` is copied to a new block, as
/// Netdata's always does, so no `oldsize` can make two blocks overlap; an `oldsize`
/// that runs from below the end of the most recent block past it is fatal (no
/// block but the most recent one reaches that end). In the sanitizer mode the block
/// is resized like `realloc()`, and an `oldsize` larger than the block or a `src`
/// the arena does not hold is fatal.
///
/// `2 * oldsize` overflowing is fatal; so is a NULL `src` with `oldsize > 0`. A
/// NULL `src` with `oldsize == 0` gives a fresh block, like `mallocz(owa, 0)`.
/// Never returns NULL.
///
/// # Safety
/// `owa` must be a live handle used by this thread only (NULL is fatal); `src` must
/// be NULL (with `oldsize == 0`) or the start of a block of `owa` at least `oldsize`
/// bytes long, not used afterwards except through the returned pointer.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// // SAFETY: a live handle; `series` holds 8 doubles and is reassigned.
/// unsafe {
///     let mut series = onewayalloc_mallocz(owa, 8 * 8).cast::<f64>();
///     *series = 42.0;
///     series = onewayalloc_doublesize(owa, series.cast(), 8 * 8).cast();
///     assert_eq!(*series, 42.0);
///     *series.add(15) = 1.0; // 16 doubles now
///     onewayalloc_destroy(owa);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_doublesize(
    owa: *mut ONEWAYALLOC,
    src: *const c_void,
    oldsize: usize,
) -> *mut c_void {
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_doublesize(owa={}, src={}, oldsize={oldsize})",
                Ptr(owa),
                Ptr(src)
            )
        },
        || {
            let call = |handle: &Handle| {
                let new_size = oldsize
                    .checked_mul(2)
                    .ok_or(Reason::Overflow("2 * oldsize"))?;
                let Some(src) = NonNull::new(src.cast_mut().cast::<u8>()) else {
                    return if oldsize == 0 {
                        Ok(block(handle, 0)?.as_ptr().cast())
                    } else {
                        Err(Reason::NullSource)
                    };
                };
                // SAFETY: the caller's guarantee: `src` starts a block of this arena of
                // at least `oldsize` bytes, used only through the result afterwards.
                Ok(unsafe { doublesize(handle, src, oldsize, new_size) }?
                    .as_ptr()
                    .cast())
            };
            // SAFETY: the caller's guarantee for `owa` (the header's contract).
            unsafe { with_live(owa, call) }
        },
    )
}

/// The body of [`onewayalloc_doublesize`] for a non-NULL `src`: a block of
/// `new_size >= oldsize` bytes whose first `oldsize` bytes are those at `src`,
/// remembered as the most recent block.
///
/// # Safety
/// `src` must start a live block of the arena at least `oldsize` bytes long, used
/// only through the result afterwards (the header's contract). In the page mode
/// the checks below only catch what the handle can tell of a wrong `oldsize`.
unsafe fn doublesize(
    handle: &Handle,
    src: NonNull<u8>,
    oldsize: usize,
    new_size: usize,
) -> Result<NonNull<u8>, Reason> {
    let grow = |keep| {
        // SAFETY: forwarded from the caller: `src` starts a live block of at least
        // `keep` bytes (in the page mode `keep` is then the exact size of the most
        // recent block, checked below), used only through the result afterwards.
        unsafe { handle.arena.grow_by_address(src, keep, new_size) }
            .map_err(|error| by_address_reason(error, new_size))
    };
    let grown = if SEPARATE_BLOCKS {
        // Every block is its own block of the system allocator, whose size the
        // arena records: `realloc()`, with `oldsize` and `src` checked exactly.
        grow(oldsize)?
    } else {
        // A size no block can have is refused first, as the sanitizer mode does.
        core::alloc::Layout::from_size_align(new_size.max(1), 16)
            .map_err(|_| Reason::Refused { bytes: new_size })?;
        let last = handle.last.get();
        let at = src.addr().get();
        let last_end = last.start + last.size;
        if last.start != 0 && at == last.start {
            if oldsize > last.size {
                return Err(Reason::KeepExceedsBlock {
                    block_size: last.size,
                });
            }
            if oldsize == last.size {
                // The most recent block, whole: in place when its page has room
                // (the crate's grow; it moves it by SPEC §1.3's growing-buffer rule
                // otherwise).
                let grown = grow(oldsize)?;
                handle.handed_out(grown, new_size.max(1));
                return Ok(grown);
            }
        } else if at < last_end && oldsize > last_end - at {
            // Every other block of the arena ends at or before the most recent
            // one starts (the same page: blocks are bumped upwards; another page:
            // pages are disjoint), so these bytes run past a block of `src`.
            return Err(Reason::RunsPastLastBlock {
                bytes: last_end - at,
            });
        }
        // Any other block is copied, as Netdata's always does: the new block is
        // fresh, so it overlaps no block, whatever `oldsize` says.
        let copy = block(handle, new_size)?;
        // SAFETY: `src` is valid for reads of `oldsize` bytes (the caller's
        // guarantee), `copy` is a fresh block of `new_size >= oldsize` bytes, and a
        // fresh block never overlaps a live one.
        unsafe { ptr::copy_nonoverlapping(src.as_ptr(), copy.as_ptr(), oldsize) };
        return Ok(copy);
    };
    handle.handed_out(grown, new_size.max(1));
    Ok(grown)
}

/// The fatal reason for a refused by-address call that asked for `bytes`.
fn by_address_reason(error: ByAddressError, bytes: usize) -> Reason {
    match error {
        ByAddressError::KeepExceedsBlock { block_size } => Reason::KeepExceedsBlock { block_size },
        ByAddressError::Alloc => Reason::Refused { bytes },
        _ => Reason::NotHeld,
    }
}

/// The bytes that all arenas created by [`onewayalloc_create`] hold from the
/// system allocator now, page headers included (the arena handles themselves not
/// counted). In the sanitizer mode, the bytes of their outstanding blocks. Read
/// with a relaxed atomic: any thread may call it at any time.
///
/// ```
/// # use onewayalloc_capi::*;
/// let owa = onewayalloc_create(0);
/// assert!(onewayalloc_allocated_memory() > 0 || SEPARATE_BLOCKS);
/// // SAFETY: a live handle, destroyed once.
/// unsafe { onewayalloc_destroy(owa) };
/// ```
#[unsafe(no_mangle)]
pub extern "C" fn onewayalloc_allocated_memory() -> usize {
    entry(
        move |line| line.write_str("onewayalloc_allocated_memory()"),
        || Ok(counting::allocated()),
    )
}

/// `nmemb * size`, or the fatal path with a message containing `context` when the
/// product overflows `size_t`. `mul_or_fatal(n, 0)` is 0.
///
/// # Safety
/// `context` must be NULL or a NUL-terminated string.
///
/// ```
/// # use onewayalloc_capi::*;
/// // SAFETY: a C string.
/// assert_eq!(unsafe { onewayalloc_mul_or_fatal(30, 8, c"points".as_ptr()) }, 240);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_mul_or_fatal(
    nmemb: usize,
    size: usize,
    context: *const c_char,
) -> usize {
    entry(
        move |line| write!(line, "onewayalloc_mul_or_fatal(nmemb={nmemb}, size={size})"),
        || {
            nmemb
                .checked_mul(size)
                .ok_or(Reason::ProductOverflow("nmemb * size", context))
        },
    )
}

/// `nmemb1 * nmemb2 * size`, or the fatal path with a message containing `context`
/// when the product overflows `size_t`. A zero factor makes it 0.
///
/// # Safety
/// `context` must be NULL or a NUL-terminated string.
///
/// ```
/// # use onewayalloc_capi::*;
/// // SAFETY: a C string.
/// let bytes = unsafe { onewayalloc_mul3_or_fatal(30, 100, 8, c"result".as_ptr()) };
/// assert_eq!(bytes, 24_000);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_mul3_or_fatal(
    nmemb1: usize,
    nmemb2: usize,
    size: usize,
    context: *const c_char,
) -> usize {
    entry(
        move |line| {
            write!(
                line,
                "onewayalloc_mul3_or_fatal(nmemb1={nmemb1}, nmemb2={nmemb2}, size={size})"
            )
        },
        || {
            // A zero anywhere makes the product 0, without overflow: a zero `nmemb1`
            // or `nmemb2` makes the first product 0, and a zero `size` is tested
            // before that product may overflow.
            let product = if size == 0 {
                Some(0)
            } else {
                nmemb1.checked_mul(nmemb2).and_then(|n| n.checked_mul(size))
            };
            product.ok_or(Reason::ProductOverflow("nmemb1 * nmemb2 * size", context))
        },
    )
}

/// Sets the function the fatal path calls, after writing its line to stderr and
/// before `abort()`, with that line (NUL-terminated, without the newline); NULL
/// removes it. Stored atomically: any thread may set it at any time.
///
/// # Safety
/// The handler must not unwind (throw) or `longjmp` back into the library; it may
/// return (the process then aborts) or end the process itself.
///
/// ```
/// # use onewayalloc_capi::*;
/// unsafe extern "C" fn log_fatal(_message: *const core::ffi::c_char) {}
/// // SAFETY: the handler returns normally.
/// unsafe {
///     onewayalloc_set_fatal_handler(Some(log_fatal));
///     onewayalloc_set_fatal_handler(None);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn onewayalloc_set_fatal_handler(handler: Option<FatalHandler>) {
    entry(
        move |line| line.write_str("onewayalloc_set_fatal_handler()"),
        || {
            fatal::set_handler(handler);
            Ok(())
        },
    )
}
