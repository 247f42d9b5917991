//! [`SyncOneWayAlloc`]: one arena that many threads allocate into at once.
//!
//! The design is protobuf's `ThreadSafeArena`, adapted: the arena holds a list of
//! *serial arenas*, each a whole [`OneWayAlloc`] (its pages, its drop list, its
//! sanitizer mode), and each used by one thread at a time, the thread that
//! *claimed* it in the current epoch. One serial, the *home* serial, lives inside
//! the arena itself: the allocation path compares the home's owner with the calling
//! thread's identity (on x86-64 Linux the thread pointer, one instruction) and, on a
//! match, bumps in the home serial exactly as a `OneWayAlloc` bumps in itself, with
//! no atomic read-modify-write, no thread-local access and no pointer to follow. That
//! is the case of one thread at a time (an async task's arena). A *second home*
//! serial, also inside the arena but made only when a second thread first claims
//! it, serves the next thread the same way, after a second comparison: two threads
//! at once (two workers, or a task that moved once) both bump at a fixed offset
//! from `self` (second_home.rs says why that matters). Every other thread goes on
//! to a thread-local cache that holds the thread's serial for one arena and epoch;
//! on a hit it bumps in that serial, again with no atomic operation; a miss takes
//! a lock (out of line) over the list to find the serial the thread claimed, claim
//! a home serial or a free one, or create one.
//!
//! Epoch ids come from one global counter and are never reused, so the cache entry
//! of an arena that was reset or dropped never matches again. `reset` and drop take
//! the arena exclusively (`&mut self`, by value), which orders them after every use
//! of every serial.
//!
//! The lock, the thread ids and the thread-local cache come from the `sync` module,
//! which swaps in loom's models of them under `cfg(loom)`: tests/loom_sync_arena.rs
//! checks the claim, the cache and `reset` in every interleaving of a few threads.

// Every `&mut` these calls return points to a fresh block; see arena.rs.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::convert::Infallible;
use core::fmt;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU64, Ordering};

use alloc::boxed::Box;
use alloc::vec::Vec;
use std::sync::PoisonError;

use allocator_api2::alloc::{AllocError, Allocator, Global};

use crate::OneWayAlloc;
use crate::engine::failure::{Failure, infallible};
use crate::engine::page_heap::HeapUse;
use crate::stats::Stats;

mod second_home;
mod sync;
use second_home::{Claimable, SecondHome};
use sync::{Mutex, MutexGuard, ThreadId, Tracked};

/// One serial arena: a whole single-threaded arena whose pages come from the outer
/// arena's backing allocator.
type Serial<A> = OneWayAlloc<SharedBacking<A>>;

/// The source of every epoch id: ids start at 1 (0 is the empty cache) and are
/// never reused.
static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

/// A fresh epoch id.
fn next_epoch() -> u64 {
    // Relaxed: only uniqueness matters, which the atomic increment gives. At one
    // epoch per nanosecond, a u64 lasts 584 years.
    NEXT_EPOCH.fetch_add(1, Ordering::Relaxed)
}

/// The backing allocator of every serial arena: the outer arena's `A`, reached
/// through a pointer. The outer arena owns `A` (a [`BackingBox`]) and drops it
/// after every serial.
pub(crate) struct SharedBacking<A> {
    backing: NonNull<A>,
}

impl<A> SharedBacking<A> {
    /// The shared backing allocator.
    #[inline(always)]
    fn get(&self) -> &A {
        // SAFETY: `backing` points to the outer arena's `A`, which lives (unmoved, in
        // its own heap block) until every serial, and with it every `SharedBacking`,
        // is dropped (the field order of `SyncOneWayAlloc`). It is only ever used
        // through shared references, from any thread, which `A: Sync` allows (the
        // only `Send` impl below requires it).
        unsafe { self.backing.as_ref() }
    }
}

// SAFETY: a serial arena moves between threads (it is used by whichever thread
// claimed it); its `SharedBacking` only lends `&A`, possibly to several threads at
// once (one per serial), which `A: Sync` allows.
unsafe impl<A: Sync> Send for SharedBacking<A> {}

// SAFETY: every call forwards to `A` with the same arguments, so `A`'s guarantees
// hold: a block stays valid until it is deallocated or `A` is dropped, which happens
// only after every serial (and with it every user of this value) is gone.
unsafe impl<A: Allocator> Allocator for SharedBacking<A> {
    #[inline]
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        self.get().allocate(layout)
    }

    #[inline]
    fn allocate_zeroed(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        self.get().allocate_zeroed(layout)
    }

    #[inline]
    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: the caller's contract, forwarded to the same allocator.
        unsafe { self.get().deallocate(ptr, layout) }
    }

    #[inline]
    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the caller's contract, forwarded to the same allocator.
        unsafe { self.get().grow(ptr, old_layout, new_layout) }
    }

    #[inline]
    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the caller's contract, forwarded to the same allocator.
        unsafe { self.get().grow_zeroed(ptr, old_layout, new_layout) }
    }

    #[inline]
    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old_layout: Layout,
        new_layout: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: the caller's contract, forwarded to the same allocator.
        unsafe { self.get().shrink(ptr, old_layout, new_layout) }
    }
}

/// A serial arena whose pages come from `backing` (the outer arena's), with a first
/// page for `size_hint`, pages from `heap` and `limit`.
fn make_serial<A: Allocator, E: Failure>(
    backing: &BackingBox<A>,
    size_hint: usize,
    heap: HeapUse,
    limit: Option<usize>,
) -> Result<Serial<A>, E> {
    let shared = SharedBacking {
        backing: backing.ptr,
    };
    let serial = OneWayAlloc::create_in::<E>(size_hint, shared, heap)?;
    serial.set_limit(limit);
    Ok(serial)
}

/// The outer arena's backing allocator, in a heap block of its own that raw
/// pointers ([`SharedBacking`]) refer to. Held as a raw pointer, not a `Box`: moving
/// a `Box` asserts unique access to its contents, which the pointers of the serial
/// arenas would contradict.
struct BackingBox<A> {
    ptr: NonNull<A>,
}

impl<A> Drop for BackingBox<A> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `Box::into_raw` and is freed only here; the
        // serials that pointed to it were dropped before (field order of
        // `SyncOneWayAlloc`).
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

/// One serial arena of the list and the thread that claimed it in this epoch.
struct Slot<A: Allocator> {
    /// From `Box::into_raw`, freed when the slot drops. A raw pointer, not a `Box`,
    /// for the reason [`BackingBox`] gives: threads hold pointers to it.
    serial: NonNull<Tracked<Serial<A>>>,
    owner: Option<ThreadId>,
}

impl<A: Allocator> Drop for Slot<A> {
    fn drop(&mut self) {
        // SAFETY: `serial` came from `Box::into_raw` and is freed only here. Slots
        // drop only with the arena, exclusively held: no thread uses the serial.
        drop(unsafe { Box::from_raw(self.serial.as_ptr()) });
    }
}

/// A thread-safe arena: one arena that many threads allocate into at once through
/// `&SyncOneWayAlloc`, each thread in a [`OneWayAlloc`] of its own inside it (a
/// *serial arena*), all reset and dropped together.
///
/// ```
/// use onewayalloc::SyncOneWayAlloc;
///
/// let mut arena = SyncOneWayAlloc::new();
/// let names: Vec<&str> = std::thread::scope(|s| {
///     let workers: Vec<_> = (0..4)
///         .map(|i| {
///             let arena = &arena;
///             s.spawn(move || &*arena.alloc_str(&format!("worker{i}")))
///         })
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).collect()
/// });
/// assert_eq!(names, ["worker0", "worker1", "worker2", "worker3"]); // used after join
/// drop(names);
/// arena.reset(); // every thread's pages are kept for the next round
/// ```
///
/// **Cost.** The first thread to allocate after a [`reset`](Self::reset) (or after
/// creation) claims the arena's *home* serial, which lives inside the arena: its
/// allocations cost what they cost in a `OneWayAlloc` plus a comparison of the
/// home's owner with the thread's identity (the thread pointer, on x86-64 Linux),
/// with no atomic operation, no lock and no thread-local access. That is the case
/// of one thread at a time, an async task's arena included. The second thread to
/// allocate at once (or the worker a task moved to) claims the *second home*, also
/// inside the arena, made when first claimed: one comparison more. Further threads
/// allocate at once in serials of their own, found after those comparisons in a
/// thread-local cache, again with no atomic operation and no lock. A thread's
/// first allocation after a reset (or after it used another `SyncOneWayAlloc`,
/// since each thread caches one) takes a lock to claim a serial: the one it
/// claimed before in this epoch, else a home serial if no thread claimed it, else
/// one no thread claimed, else a new one (with a first page of the size hint, 64
/// KiB by default, growing to 1 MiB as a `OneWayAlloc`'s).
///
/// **Memory.** A block stays valid until `reset` or drop, whichever thread allocated
/// it and whether that thread is still running. A serial arena claimed by a thread
/// stays its own until `reset` (a thread started after it exited may take its home
/// serials over, as it would take over an exited thread's `thread_local!` memory),
/// which frees every serial for any thread to claim, with every page kept: after a
/// reset, threads reuse the pages of the previous round instead of obtaining new
/// ones.
///
/// **Freeing and growing.** `deallocate`, `grow` and `shrink` (of a `Vec` or a
/// `Box` in the arena) work on the calling thread's serial arena: the most recent
/// block of this thread's serial rolls back or grows in place, any other block (one
/// from another thread included) is left in place (its bytes come back at reset)
/// and a growth moves it to a fresh block, as in a `OneWayAlloc`. So a `Vec` built
/// on one thread may be grown on another.
///
/// Everything that takes an arena takes `&SyncOneWayAlloc`: `collect_in`,
/// [`vec![in &arena; ..]`](crate::vec), [`format_in!`](crate::format_in), the arena
/// [`String`](crate::collections::String) and (feature `serde`)
/// `deserialize` with `#[derive(DeserializeIn)]`. The
/// collections have the names of [`collections`](crate::collections) in
/// [`collections::sync`](crate::collections::sync), so
/// `use onewayalloc::collections::sync as arena;` and `arena::Vec<'a, T>`,
/// `arena::String<'a>`, `arena::HashMap<'a, K, V>` name them:
///
/// ```
/// use onewayalloc::collections::sync as arena;
/// use onewayalloc::{SyncOneWayAlloc, format_in};
///
/// let arena = SyncOneWayAlloc::new();
/// let mut by_name: arena::HashMap<arena::String, u32> = arena::HashMap::new_in(&arena);
/// std::thread::scope(|s| {
///     let named = s.spawn(|| format_in!(&arena, "dim{}", 7)).join().unwrap();
///     by_name.insert(named, 7);
/// });
/// assert_eq!(by_name["dim7"], 7); // Send + Sync: built on a thread, read on another
/// ```
///
/// The C API's by-address calls and [`scope`](OneWayAlloc::scope) have no
/// counterpart here.
///
/// `reset` takes `&mut self`, so nothing allocated in the arena is alive across it:
///
/// ```compile_fail,E0502
/// let mut arena = onewayalloc::SyncOneWayAlloc::new();
/// let x = arena.alloc(5u64);
/// arena.reset(); // error: `x` still borrows the arena
/// *x += 1;
/// ```
pub struct SyncOneWayAlloc<A: Allocator = Global> {
    /// The identity ([`sync::thread_identity`]) of the thread that claimed the home
    /// serial in this epoch, 0 if none: set once per epoch under the lock, cleared
    /// by `reset` (`&mut self`). Read with `Relaxed` on the allocation path: the only
    /// thread that can read its own identity here is the one that stored it, whose
    /// program order orders its uses of the home, or a thread started after that
    /// one exited and given the same identity. Such a thread takes the home over,
    /// which is sound: the exited thread never uses it again, and everything it did
    /// happens before the new thread starts, since the C library gives a thread's
    /// control block (the thread pointer) or its thread-local block (the address
    /// identity) to a new thread only after the old one is gone: the joiner, or a
    /// detached thread itself on its way out, puts the block in glibc's stack
    /// cache under a lock that the next `pthread_create` takes to reuse it, and
    /// creating a thread synchronizes with its start. (ThreadSanitizer does not see
    /// that lock, so its builds use identities never reused: see
    /// [`sync::thread_identity`].) (std's reentrant lock relied on the same property of thread-local
    /// addresses for its owner, and Miri models it: reusing an address
    /// synchronizes with its release.) Its memory stays valid as ever.
    home_owner: sync::AtomicUsize,
    /// The home serial: the first thread of each epoch allocates here, reached from
    /// `&self` without a pointer. Dropped before `backing`.
    home: Tracked<Serial<A>>,
    /// The identity of the thread that claimed the second home serial in this
    /// epoch, 0 if none: as `home_owner` (set under the lock once the serial is
    /// made, cleared by `reset`), for a second thread.
    second_owner: sync::AtomicUsize,
    /// The second home serial, made by the first thread that claims it: a second
    /// thread allocates here as the first does in `home`. Dropped before `backing`.
    second: SecondHome<A>,
    /// The current epoch's id: changed only through `&mut self`.
    epoch: u64,
    /// Every other serial arena, with its claim. Dropped before `backing`.
    slots: Mutex<Vec<Slot<A>>>,
    /// The backing allocator every serial shares. Dropped after `slots`.
    backing: BackingBox<A>,
    /// The first page of every serial fits this many bytes.
    size_hint: usize,
    /// Which of the serials' pages come from the page heap (`new()`: all).
    heap: HeapUse,
    /// The limit every serial has (see [`set_limit`](Self::set_limit)).
    limit: Option<usize>,
}

// SAFETY: the arena owns its serials and its backing allocator outright; moving it
// moves them (`A: Send`). Serials lend `&A` to the threads that use them, hence
// `A: Sync`. The values whose destructors it runs (`alloc_owned`) are `Send`.
unsafe impl<A: Allocator + Send + Sync> Send for SyncOneWayAlloc<A> {}

// SAFETY: through `&SyncOneWayAlloc`, each thread allocates in the serial it
// claimed in this epoch (the home serial or the second home, whose owner identity
// it matches, or one of the list), and no other running thread touches that serial
// until the next `reset` (claims change under the lock, and are dropped only by
// `reset`, which holds `&mut self`; see `home_owner` for a thread that inherits an
// exited thread's identity; the second home is written, when made, by the one
// thread that marked it as being made under the lock, before its owner is set):
// the serials' unsynchronized state is never shared. A serial
// moves between threads (claimed by one, then after a reset by another), which the
// lock orders; the backing allocator is shared by every serial (`A: Sync`). The
// other `&self` calls read fields that change only through `&mut self`.
unsafe impl<A: Allocator + Send + Sync> Sync for SyncOneWayAlloc<A> {}

impl SyncOneWayAlloc {
    /// Creates an arena whose serial arenas take their pages as
    /// [`OneWayAlloc::new`]'s do (the large ones from the process's page heap where
    /// the platform has one): each serial's first page is 64 KiB. The first serial
    /// is created at once.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if the first page cannot be obtained.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
    /// assert_eq!(arena.stats().capacity, if onewayalloc::SEPARATE_BLOCKS { 0 } else { 64 * 1024 });
    /// ```
    pub fn new() -> Self {
        Self::with_size_hint(0)
    }

    /// Creates an arena whose serial arenas' first pages fit `size_hint` bytes of
    /// payload (see [`OneWayAlloc::with_size_hint`]).
    ///
    /// # Panics
    /// Panics with "overflow" if the page size overflows `isize::MAX`; calls
    /// `handle_alloc_error` if the page cannot be obtained.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::SyncOneWayAlloc::with_size_hint(1 << 20);
    /// arena.alloc_bytes(1 << 20); // fits in the calling thread's first page
    /// ```
    pub fn with_size_hint(size_hint: usize) -> Self {
        infallible(Self::create(size_hint, Global, HeapUse::AllPages))
    }

    /// Like [`with_size_hint`](Self::with_size_hint), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the page size overflows or the first page cannot be obtained.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::SyncOneWayAlloc;
    /// assert!(SyncOneWayAlloc::try_with_size_hint(4096).is_ok());
    /// assert!(SyncOneWayAlloc::try_with_size_hint(usize::MAX).is_err());
    /// ```
    pub fn try_with_size_hint(size_hint: usize) -> Result<Self, AllocError> {
        Self::create(size_hint, Global, HeapUse::AllPages)
    }
}

impl Default for SyncOneWayAlloc {
    fn default() -> Self {
        Self::new()
    }
}

/// Generates the calls that allocate in the calling thread's serial arena: each is
/// the [`OneWayAlloc`] call of the same name, `plain` ones panicking as it does
/// (and calling `handle_alloc_error` if the thread's serial cannot be created),
/// `try_` ones returning [`AllocError`] instead.
macro_rules! delegate {
    ($(
        $kind:ident
        $(#[$doc:meta])*
        $(examples { $(#[$ex:meta])* })?
        fn $name:ident $([$($generic:tt)*])? ($($arg:ident: $ty:ty),*) -> $ret:ty
        $(where [$($bound:tt)*])?;
    )*) => {$(
        delegate!(@fn $kind [
            $(#[$doc])*
            #[doc = ""]
            #[doc = concat!("[`OneWayAlloc::", stringify!($name), "`] in the calling thread's serial arena.")]
        ] [$(#[doc = ""] #[doc = "# Examples"] $(#[$ex])*)?] $name [$($($generic)*)?] ($($arg: $ty),*) -> $ret
            [$($($bound)*)?]);
    )*};
    (@fn plain [$($doc:tt)*] [$($ex:tt)*] $name:ident [$($generic:tt)*] ($($arg:ident: $ty:ty),*) -> $ret:ty
        [$($bound:tt)*]) => {
        $($doc)*
        #[doc = ""]
        #[doc = "# Panics"]
        #[doc = concat!("As [`OneWayAlloc::", stringify!($name), "`]; also calls `handle_alloc_error` if the")]
        #[doc = "calling thread has no serial arena yet and a new one's first page is refused."]
        $($ex)*
        #[inline]
        pub fn $name<$($generic)*>(&self, $($arg: $ty),*) -> $ret
        where $($bound)*
        {
            infallible(self.on_serial::<Infallible, _>(move |serial| serial.$name($($arg),*)))
        }
    };
    (@fn fallible [$($doc:tt)*] [$($ex:tt)*] $name:ident [$($generic:tt)*] ($($arg:ident: $ty:ty),*) -> $ret:ty
        [$($bound:tt)*]) => {
        $($doc)*
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = concat!("As [`OneWayAlloc::", stringify!($name), "`]; also [`AllocError`] if the calling")]
        #[doc = "thread has no serial arena yet and a new one's first page is refused."]
        $($ex)*
        #[inline]
        pub fn $name<$($generic)*>(&self, $($arg: $ty),*) -> $ret
        where $($bound)*
        {
            self.on_serial::<AllocError, _>(move |serial| serial.$name($($arg),*))?
        }
    };
}

impl<A: Allocator> SyncOneWayAlloc<A> {
    /// Creates an arena whose serial arenas obtain their pages from `backing`; each
    /// serial's first page is 64 KiB.
    ///
    /// # Panics
    /// Calls `handle_alloc_error` if `backing` refuses the first page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::{Global, SyncOneWayAlloc};
    /// let arena = SyncOneWayAlloc::new_in(Global);
    /// assert_eq!(*arena.alloc(7u8), 7);
    /// ```
    pub fn new_in(backing: A) -> Self {
        Self::with_size_hint_in(0, backing)
    }

    /// Creates an arena whose serial arenas obtain their pages from `backing`, each
    /// first page fitting `size_hint` bytes of payload.
    ///
    /// # Panics
    /// Panics with "overflow" if the page size overflows `isize::MAX`; calls
    /// `handle_alloc_error` if `backing` refuses the page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::{Global, SyncOneWayAlloc};
    /// let mut arena = SyncOneWayAlloc::with_size_hint_in(200_000, Global);
    /// assert!(onewayalloc::SEPARATE_BLOCKS || arena.stats().capacity >= 200_000);
    /// ```
    pub fn with_size_hint_in(size_hint: usize, backing: A) -> Self {
        infallible(Self::create(size_hint, backing, HeapUse::Off))
    }

    /// Like [`with_size_hint_in`](Self::with_size_hint_in), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if the page size overflows or `backing` refuses the page.
    ///
    /// # Examples
    /// ```
    /// use onewayalloc::{Global, SyncOneWayAlloc};
    /// assert!(SyncOneWayAlloc::try_with_size_hint_in(0, Global).is_ok());
    /// assert!(SyncOneWayAlloc::try_with_size_hint_in(usize::MAX, Global).is_err());
    /// ```
    pub fn try_with_size_hint_in(size_hint: usize, backing: A) -> Result<Self, AllocError> {
        Self::create(size_hint, backing, HeapUse::Off)
    }

    /// The arena, with its first serial (unclaimed) made at once so that a bad size
    /// hint or a refused first page fails here, as for a `OneWayAlloc`.
    fn create<E: Failure>(size_hint: usize, backing: A, heap: HeapUse) -> Result<Self, E> {
        let backing = BackingBox {
            ptr: NonNull::from(Box::leak(Box::new(backing))),
        };
        let home = make_serial::<A, E>(&backing, size_hint, heap, None)?;
        Ok(SyncOneWayAlloc {
            home_owner: sync::AtomicUsize::new(0),
            home: Tracked::new(home),
            second_owner: sync::AtomicUsize::new(0),
            second: SecondHome::new(),
            epoch: next_epoch(),
            slots: Mutex::new(Vec::new()),
            backing,
            size_hint,
            heap,
            limit: None,
        })
    }

    /// A new serial arena with the arena's size hint, page source and limit.
    fn fresh_serial<E: Failure>(&self) -> Result<Serial<A>, E> {
        make_serial::<A, E>(&self.backing, self.size_hint, self.heap, self.limit)
    }

    /// A new serial arena of the list ([`fresh_serial`](Self::fresh_serial), boxed).
    fn new_serial<E: Failure>(&self) -> Result<NonNull<Tracked<Serial<A>>>, E> {
        let serial = self.fresh_serial::<E>()?;
        Ok(NonNull::from(Box::leak(Box::new(Tracked::new(serial)))))
    }

    /// The list of serials, locked (a panic while it was held leaves it consistent:
    /// poisoning is ignored).
    fn lock(&self) -> MutexGuard<'_, Vec<Slot<A>>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The list of serials, through exclusive access (no lock).
    fn slots_mut(&mut self) -> &mut Vec<Slot<A>> {
        self.slots.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calling thread's serial arena if its cache holds it for this epoch.
    #[inline(always)]
    fn cached_serial(&self) -> Option<&Serial<A>> {
        let (epoch, serial) = sync::cached();
        if epoch == self.epoch {
            // SAFETY: the cache holds this epoch's id, which is unique to this arena
            // and epoch, so the pointer was stored by `claim` on this thread for this
            // arena in this epoch: a serial of this arena (a `Tracked<Serial<A>>`) that this
            // thread claimed. Serials are freed only when the arena drops, and the
            // claim holds until the next `reset`, which changes the epoch: until then
            // no other thread uses that serial. The returned reference borrows
            // `self`, so it ends before any `reset` or drop.
            Some(unsafe { &*serial.cast::<Tracked<Serial<A>>>() }.access())
        } else {
            None
        }
    }

    /// The second home serial if the thread whose identity is `me` claimed it in
    /// this epoch.
    #[inline(always)]
    fn second_serial(&self, me: usize) -> Option<&Serial<A>> {
        if self.second_owner.load(Ordering::Relaxed) == me {
            // SAFETY: a nonzero owner is stored only once the serial is made (under
            // the lock, in `claim` or `make_second`) and cleared by `reset`; `me`
            // (never 0: see `sync::thread_identity`) is the calling
            // thread's identity, so it claimed the second home (or inherited it from
            // an exited thread: see `home_owner`), and no other running thread uses
            // that serial.
            Some(unsafe { self.second.get() })
        } else {
            None
        }
    }

    /// `call` on the calling thread's serial arena: on the home serial if it is the
    /// thread's (the `OneWayAlloc` call on a field of `self`), else on the second
    /// home, the thread's cached serial or one claimed under the lock (out of line).
    #[inline(always)]
    fn on_serial<'s, E: Failure, R>(
        &'s self,
        call: impl FnOnce(&'s Serial<A>) -> R,
    ) -> Result<R, E> {
        let me = sync::thread_identity();
        if self.home_owner.load(Ordering::Relaxed) == me {
            return Ok(call(self.home.access()));
        }
        self.on_other_serial(me, call)
    }

    /// [`on_serial`](Self::on_serial) for a thread that does not own the home
    /// serial: the second home if it is the thread's, else its cached serial (a
    /// thread-local read), else one claimed under the lock (out of line). Inline:
    /// an out-of-line call here costs the threads that allocate at once more than
    /// the code it keeps out of the home's path (measured: `harness sync-arena`'s
    /// two-thread rows, 1.7 against 1.1 ns). One `call` for the second home and the
    /// cache, through the serial chosen: a third copy of `call` made the harness's
    /// context query 18.74 M instructions a query against 18.35 M (Callgrind), LLVM
    /// no longer inlining a caller's `alloc` of a large value.
    #[inline(always)]
    fn on_other_serial<'s, E: Failure, R>(
        &'s self,
        me: usize,
        call: impl FnOnce(&'s Serial<A>) -> R,
    ) -> Result<R, E> {
        let serial = match self.second_serial(me) {
            Some(serial) => serial,
            None => match self.cached_serial() {
                Some(serial) => serial,
                None => self.claim()?,
            },
        };
        Ok(call(serial))
    }

    /// The calling thread's serial if it has one in this epoch (a home or its
    /// cached one), without claiming: for `deallocate`.
    #[inline(always)]
    fn own_serial(&self) -> Option<&Serial<A>> {
        let me = sync::thread_identity();
        if self.home_owner.load(Ordering::Relaxed) == me {
            return Some(self.home.access());
        }
        self.other_own_serial(me)
    }

    /// [`own_serial`](Self::own_serial) past the home: the second home, else the
    /// cached serial. Out of line: inline in `deallocate`, the thread-local access
    /// took a register in the code around every drop (the harness's context query:
    /// 20.4 M instructions against 18.4 M, Callgrind).
    #[inline(never)]
    fn other_own_serial(&self, me: usize) -> Option<&Serial<A>> {
        self.second_serial(me).or_else(|| self.cached_serial())
    }

    /// The slow path: finds the serial of the list this thread claimed in this
    /// epoch, else claims the home serial if no thread did, else the second home
    /// (making it if nobody did), else a free serial of the list, else creates one;
    /// caches a serial of the list.
    #[cold]
    #[inline(never)]
    fn claim<E: Failure>(&self) -> Result<&Serial<A>, E> {
        let me = sync::current_thread_id();
        let mut slots = self.lock();
        let mine = slots.iter().position(|slot| slot.owner == Some(me));
        // Under the lock: the owner changes only here, under it, and through
        // `&mut self`.
        if mine.is_none() && self.home_owner.load(Ordering::Relaxed) == 0 {
            self.home_owner
                .store(sync::thread_identity(), Ordering::Relaxed);
            drop(slots);
            return Ok(self.home.access());
        }
        if mine.is_none() && self.second_owner.load(Ordering::Relaxed) == 0 {
            match self.second.claimable() {
                Claimable::Made => {
                    self.second_owner
                        .store(sync::thread_identity(), Ordering::Relaxed);
                    drop(slots);
                    // SAFETY: made, and this thread now owns it (under the lock).
                    return Ok(unsafe { self.second.get() });
                }
                Claimable::Absent => {
                    self.second.begin();
                    drop(slots);
                    return self.make_second();
                }
                // Another thread is making it: a serial of the list.
                Claimable::Busy => {}
            }
        }
        let found = mine.or_else(|| slots.iter().position(|slot| slot.owner.is_none()));
        let serial = match found {
            Some(i) => {
                slots[i].owner = Some(me);
                slots[i].serial
            }
            None => {
                // Not under the lock: the backing allocator may take its time.
                drop(slots);
                let serial = self.new_serial::<E>()?;
                self.lock().push(Slot {
                    serial,
                    owner: Some(me),
                });
                serial
            }
        };
        sync::set_cached((self.epoch, serial.as_ptr().cast_const().cast::<()>()));
        // SAFETY: the serial is in the list (freed only when the arena drops) and
        // claimed by this thread for this epoch, under the lock: no other thread
        // uses it until the next `reset`, which cannot happen while `self` is
        // borrowed.
        Ok(unsafe { serial.as_ref() }.access())
    }

    /// Makes the second home serial, which the calling thread marked as its to make
    /// (under the lock), and claims it. Outside the lock: the backing allocator may
    /// take its time, or allocate in this very arena (on this thread: that claim
    /// sees the second home busy and takes a serial of the list). If making it
    /// fails or panics, the second home is left for another thread to make.
    #[cold]
    #[inline(never)]
    fn make_second<E: Failure>(&self) -> Result<&Serial<A>, E> {
        /// Gives the second home up unless forgotten.
        struct GiveUp<'a, A: Allocator>(&'a SyncOneWayAlloc<A>);
        impl<A: Allocator> Drop for GiveUp<'_, A> {
            fn drop(&mut self) {
                let _slots = self.0.lock();
                self.0.second.abandon();
            }
        }
        let give_up = GiveUp(self);
        let serial = self.fresh_serial::<E>()?;
        // SAFETY: this thread marked the second home as being made (`begin`, under
        // the lock), and nothing filled or abandoned it since.
        unsafe { self.second.fill(serial) };
        core::mem::forget(give_up);
        let slots = self.lock();
        self.second.finish();
        self.second_owner
            .store(sync::thread_identity(), Ordering::Relaxed);
        drop(slots);
        // SAFETY: made, and this thread owns it (under the lock).
        Ok(unsafe { self.second.get() })
    }

    /// Every serial, exclusively: the home serial, the second home if it was made,
    /// then the list's.
    fn serials_mut(&mut self) -> impl Iterator<Item = &mut Serial<A>> + '_ {
        let home = self.home.access_mut();
        let second = self.second.get_mut();
        let slots = self.slots.get_mut().unwrap_or_else(PoisonError::into_inner);
        core::iter::once(home)
            .chain(second)
            .chain(slots.iter_mut().map(|slot| {
                // SAFETY: `&mut self` is held for as long as the iterator and its items
                // live: no thread uses any serial (every reference to one borrows the
                // arena), and the serial is alive (in the list).
                unsafe { slot.serial.as_mut() }.access_mut()
            }))
    }

    /// Runs `f` on every serial, exclusively; if a call panics, on the others too
    /// while the panic unwinds.
    fn each_serial(&mut self, f: fn(&mut Serial<A>)) {
        /// The serials not visited yet, visited when dropped.
        struct Rest<I: Iterator, F: FnMut(I::Item)>(I, F);
        impl<I: Iterator, F: FnMut(I::Item)> Drop for Rest<I, F> {
            fn drop(&mut self) {
                for serial in &mut self.0 {
                    (self.1)(serial);
                }
            }
        }
        let mut rest = Rest(self.serials_mut(), f);
        for serial in rest.0.by_ref() {
            f(serial);
        }
    }

    /// Sums `f` of every serial, through exclusive access.
    fn sum_serials(&mut self, mut f: impl FnMut(&Serial<A>) -> Stats) -> Stats {
        let mut total = Stats::default();
        for serial in self.serials_mut() {
            let stats = f(serial);
            total.pages += stats.pages;
            total.capacity += stats.capacity;
            total.used += stats.used;
            total.page_allocations = total
                .page_allocations
                .saturating_add(stats.page_allocations);
            total.pending_drops += stats.pending_drops;
        }
        total
    }

    /// The backing allocator the serial arenas obtain their pages from.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::SyncOneWayAlloc::new();
    /// let _: &onewayalloc::Global = arena.backing();
    /// ```
    pub fn backing(&self) -> &A {
        // SAFETY: the backing allocator lives as long as the arena and is only used
        // through shared references.
        unsafe { self.backing.ptr.as_ref() }
    }

    delegate! {
        plain
        /// Moves `value` into the arena; its destructor never runs.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// let total = std::thread::scope(|s| {
            ///     let a = s.spawn(|| &*arena.alloc(1u64));
            ///     let b = s.spawn(|| &*arena.alloc(2u64));
            ///     *a.join().unwrap() + *b.join().unwrap()
            /// });
            /// assert_eq!(total, 3);
            /// ```
        }
        fn alloc[T](value: T) -> &mut T;
        fallible
        /// Like [`alloc`](Self::alloc), returning an error instead.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert_eq!(*arena.try_alloc(3u16).unwrap(), 3);
            /// ```
        }
        fn try_alloc[T](value: T) -> Result<&mut T, AllocError>;
        plain
        /// Allocates room for a `T` and writes `f()` into it.
        fn alloc_with[T](f: impl FnOnce() -> T) -> &mut T;
        fallible
        /// Like [`alloc_with`](Self::alloc_with), returning an error instead.
        fn try_alloc_with[T](f: impl FnOnce() -> T) -> Result<&mut T, AllocError>;
        plain
        /// Moves `value` into the arena, which drops it at `reset` or drop (on the
        /// thread that resets or drops the arena, hence `T: Send`).
        examples {
            /// ```
            /// use std::sync::Arc;
            /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
            /// let token = Arc::new(());
            /// std::thread::scope(|s| {
            ///     s.spawn(|| arena.alloc_owned(Arc::clone(&token)));
            /// });
            /// assert_eq!(Arc::strong_count(&token), 2);
            /// arena.reset(); // dropped here
            /// assert_eq!(Arc::strong_count(&token), 1);
            /// ```
        }
        fn alloc_owned[T: Send + 'static](value: T) -> &mut T;
        fallible
        /// Like [`alloc_owned`](Self::alloc_owned), returning an error instead.
        fn try_alloc_owned[T: Send + 'static](value: T) -> Result<&mut T, AllocError>;
        plain
        /// Allocates `size` uninitialized bytes, 16-byte aligned: Netdata's
        /// `onewayalloc_mallocz`.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert_eq!(arena.alloc_bytes(100).len(), 100);
            /// ```
        }
        fn alloc_bytes(size: usize) -> &mut [MaybeUninit<u8>];
        fallible
        /// Like [`alloc_bytes`](Self::alloc_bytes), returning an error instead.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert!(arena.try_alloc_bytes(usize::MAX).is_err());
            /// ```
        }
        fn try_alloc_bytes(size: usize) -> Result<&mut [MaybeUninit<u8>], AllocError>;
        plain
        /// Allocates `nmemb * size` zeroed bytes, 16-byte aligned: Netdata's
        /// `onewayalloc_callocz`.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert!(arena.alloc_zeroed(4, 8).iter().all(|&b| b == 0));
            /// ```
        }
        fn alloc_zeroed(nmemb: usize, size: usize) -> &mut [u8];
        fallible
        /// Like [`alloc_zeroed`](Self::alloc_zeroed), returning an error instead.
        fn try_alloc_zeroed(nmemb: usize, size: usize) -> Result<&mut [u8], AllocError>;
        plain
        /// Copies `s` into the arena: Netdata's `onewayalloc_strdupz`.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert_eq!(arena.alloc_str("cpu"), "cpu");
            /// ```
        }
        fn alloc_str(s: &str) -> &mut str;
        fallible
        /// Like [`alloc_str`](Self::alloc_str), returning an error instead.
        fn try_alloc_str(s: &str) -> Result<&mut str, AllocError>;
        plain
        /// Copies `src` into the arena: Netdata's `onewayalloc_memdupz`, typed.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert_eq!(arena.alloc_slice_copy(&[1u32, 2]), &[1, 2]);
            /// ```
        }
        fn alloc_slice_copy[T: Copy](src: &[T]) -> &mut [T];
        fallible
        /// Like [`alloc_slice_copy`](Self::alloc_slice_copy), returning an error
        /// instead.
        fn try_alloc_slice_copy[T: Copy](src: &[T]) -> Result<&mut [T], AllocError>;
        plain
        /// Clones every element of `src` into the arena.
        fn alloc_slice_clone[T: Clone](src: &[T]) -> &mut [T];
        fallible
        /// Like [`alloc_slice_clone`](Self::alloc_slice_clone), returning an error
        /// instead.
        fn try_alloc_slice_clone[T: Clone](src: &[T]) -> Result<&mut [T], AllocError>;
        plain
        /// A slice of `len` copies of `value`.
        fn alloc_slice_fill_copy[T: Copy](len: usize, value: T) -> &mut [T];
        fallible
        /// Like [`alloc_slice_fill_copy`](Self::alloc_slice_fill_copy), returning an
        /// error instead.
        fn try_alloc_slice_fill_copy[T: Copy](len: usize, value: T) -> Result<&mut [T], AllocError>;
        plain
        /// A slice of `len` clones of `value`.
        fn alloc_slice_fill_clone[T: Clone](len: usize, value: &T) -> &mut [T];
        fallible
        /// Like [`alloc_slice_fill_clone`](Self::alloc_slice_fill_clone), returning
        /// an error instead.
        fn try_alloc_slice_fill_clone[T: Clone](len: usize, value: &T) -> Result<&mut [T], AllocError>;
        plain
        /// A slice of `len` default values.
        fn alloc_slice_fill_default[T: Default](len: usize) -> &mut [T];
        fallible
        /// Like [`alloc_slice_fill_default`](Self::alloc_slice_fill_default),
        /// returning an error instead.
        fn try_alloc_slice_fill_default[T: Default](len: usize) -> Result<&mut [T], AllocError>;
        plain
        /// A slice of `len` elements, the `i`-th being `f(i)`.
        fn alloc_slice_fill_with[T](len: usize, f: impl FnMut(usize) -> T) -> &mut [T];
        fallible
        /// Like [`alloc_slice_fill_with`](Self::alloc_slice_fill_with), returning an
        /// error instead.
        fn try_alloc_slice_fill_with[T](len: usize, f: impl FnMut(usize) -> T) -> Result<&mut [T], AllocError>;
        plain
        /// A slice of the items of an iterator of known length.
        fn alloc_slice_fill_iter[T, I](iter: I) -> &mut [T]
        where [I: IntoIterator<Item = T>, I::IntoIter: ExactSizeIterator];
        fallible
        /// Like [`alloc_slice_fill_iter`](Self::alloc_slice_fill_iter), returning an
        /// error instead.
        fn try_alloc_slice_fill_iter[T, I](iter: I) -> Result<&mut [T], AllocError>
        where [I: IntoIterator<Item = T>, I::IntoIter: ExactSizeIterator];
        plain
        /// A slice of the items of any iterator, grown in place.
        examples {
            /// ```
            /// let arena = onewayalloc::SyncOneWayAlloc::new();
            /// assert_eq!(arena.alloc_iter((0..4).filter(|n| n % 2 == 0)), &[0, 2]);
            /// ```
        }
        fn alloc_iter[T](iter: impl IntoIterator<Item = T>) -> &mut [T];
        fallible
        /// Like [`alloc_iter`](Self::alloc_iter), returning an error instead.
        fn try_alloc_iter[T](iter: impl IntoIterator<Item = T>) -> Result<&mut [T], AllocError>;
        plain
        /// Room for a `T`, uninitialized.
        fn alloc_uninit[T]() -> &mut MaybeUninit<T>;
        fallible
        /// Like [`alloc_uninit`](Self::alloc_uninit), returning an error instead.
        fn try_alloc_uninit[T]() -> Result<&mut MaybeUninit<T>, AllocError>;
        plain
        /// Room for `len` values of `T`, uninitialized.
        fn alloc_uninit_slice[T](len: usize) -> &mut [MaybeUninit<T>];
        fallible
        /// Like [`alloc_uninit_slice`](Self::alloc_uninit_slice), returning an error
        /// instead.
        fn try_alloc_uninit_slice[T](len: usize) -> Result<&mut [MaybeUninit<T>], AllocError>;
        plain
        /// A block for `layout`, uninitialized.
        fn alloc_layout(layout: Layout) -> NonNull<u8>;
        fallible
        /// Like [`alloc_layout`](Self::alloc_layout), returning an error instead.
        fn try_alloc_layout(layout: Layout) -> Result<NonNull<u8>, AllocError>;
    }

    /// Invalidates every allocation of every thread and makes every page of every
    /// serial arena available again; no page is freed.
    ///
    /// Each serial is reset as [`OneWayAlloc::reset`] does (its
    /// [`alloc_owned`](Self::alloc_owned) destructors run, most recent first, then
    /// its pages rewind in constant time), every serial becomes free for any thread
    /// to claim, and the arena enters a new epoch, so each thread's next allocation
    /// claims a serial again (one lock per thread). The cost is O(number of
    /// serials), i.e. of the threads that allocated since the arena was created, plus
    /// the destructors: constant in the memory allocated.
    ///
    /// If a destructor panics, the other destructors of every serial still run,
    /// every serial is reset, and the panic goes on afterwards (a second panic while
    /// it unwinds aborts the process).
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| arena.alloc_bytes(200_000));
    /// });
    /// let held = arena.stats();
    /// arena.reset();
    /// assert_eq!(arena.stats().used, 0);
    /// assert_eq!(arena.stats().capacity, held.capacity); // pages are kept
    /// ```
    pub fn reset(&mut self) {
        // The new epoch first: whatever happens below, no cache entry matches.
        self.epoch = next_epoch();
        self.home_owner.store(0, Ordering::Relaxed);
        self.second_owner.store(0, Ordering::Relaxed);
        for slot in self.slots_mut() {
            slot.owner = None;
        }
        self.each_serial(|serial| serial.reset());
    }

    /// What the arena holds: the sum over its serial arenas of their
    /// [`OneWayAlloc::stats`] (pages, capacity, used bytes, page allocations and
    /// pending destructors). It takes `&mut self` because the serials' figures are
    /// kept, without synchronization, by the threads that use them; exclusive access
    /// orders the reading after every allocation. In O(number of serials).
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
    /// std::thread::scope(|s| {
    ///     for _ in 0..2 {
    ///         s.spawn(|| arena.alloc_bytes(1008)); // a multiple of the alignment, 16
    ///     }
    /// });
    /// assert_eq!(arena.stats().used, 2016);
    /// ```
    pub fn stats(&mut self) -> Stats {
        self.sum_serials(|serial| serial.stats())
    }

    /// Returns unused pages to where they came from: each serial arena keeps at
    /// most `keep` bytes of its unused pages (see [`OneWayAlloc::trim`]), so the
    /// arena keeps at most `keep` times the number of serials. After a
    /// [`reset`](Self::reset), `trim(0)` leaves each serial its first page.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| arena.alloc_bytes(5 << 20));
    /// });
    /// arena.reset();
    /// arena.trim(0);
    /// assert!(onewayalloc::SEPARATE_BLOCKS || arena.stats().capacity == 64 * 1024);
    /// ```
    pub fn trim(&mut self, keep: usize) {
        for serial in self.serials_mut() {
            serial.trim(keep);
        }
    }

    /// Gives the free room of each serial's current page back to the OS (see
    /// `BumpCore::discard_free_room`): after a reset, their first pages' payload but
    /// for the OS page of each header. For the pool.
    pub(crate) fn discard_free_room(&mut self) {
        self.each_serial(|serial| serial.core_mut().discard_free_room());
    }

    /// Caps the memory each serial arena holds, as [`OneWayAlloc::set_limit`] does
    /// for one arena (`None` removes the cap): the limit bounds each thread's
    /// share, not the arena's total, which is at most the limit times the number of
    /// serials. Serials created later get the same limit. It takes `&mut self`
    /// because the serials' limits are read, without synchronization, by the threads
    /// that allocate in them.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::SyncOneWayAlloc::new();
    /// arena.set_limit(Some(1 << 20));
    /// std::thread::scope(|s| {
    ///     s.spawn(|| assert!(arena.try_alloc_bytes(2 << 20).is_err()));
    /// });
    /// assert_eq!(arena.limit(), Some(1 << 20));
    /// ```
    pub fn set_limit(&mut self, limit: Option<usize>) {
        self.limit = limit;
        for serial in self.serials_mut() {
            serial.set_limit(limit);
        }
    }

    /// The limit set by [`set_limit`](Self::set_limit), if any.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::SyncOneWayAlloc::new();
    /// assert_eq!(arena.limit(), None);
    /// ```
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }
}

impl<A: Allocator> fmt::Debug for SyncOneWayAlloc<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let second_home_made = self.second.is_made();
        f.debug_struct("SyncOneWayAlloc")
            .field(
                "serial_arenas",
                &(1 + usize::from(second_home_made) + self.lock().len()),
            )
            .field("second_home_made", &second_home_made)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// In the sanitizer mode, whether `ptr` (a live block of this arena with `layout`)
/// belongs to another serial arena than `serial`: a serial's record knows only its
/// own blocks, and must not release or move another's (whose serial would release
/// it again at reset).
#[cfg(onewayalloc_separate_blocks)]
fn foreign<A: Allocator>(serial: &Serial<A>, ptr: NonNull<u8>, layout: Layout) -> bool {
    layout.size() != 0 && serial.core().recorded_block(ptr.addr().get()).is_none()
}

/// In the sanitizer mode, resizes a block of another serial arena: a fresh block of
/// `serial` with the leading bytes copied; the old block stays recorded by its own
/// serial, which releases it at reset.
///
/// # Safety
/// `ptr` is a live block with `old`.
#[cfg(onewayalloc_separate_blocks)]
unsafe fn move_foreign<A: Allocator, E: Failure>(
    serial: &Serial<A>,
    ptr: NonNull<u8>,
    old: Layout,
    new: Layout,
) -> Result<NonNull<[u8]>, E> {
    let moved = serial
        .core()
        .alloc::<E>(new, crate::engine::arith::Known::NOTHING)?;
    // SAFETY: `moved` is a fresh block of `new.size()` bytes; `ptr` is live for
    // `old.size()` bytes (the caller's guarantee); a fresh block never overlaps a
    // live one.
    unsafe { ptr::copy_nonoverlapping(ptr.as_ptr(), moved.as_ptr(), old.size().min(new.size())) };
    Ok(NonNull::slice_from_raw_parts(moved, new.size()))
}

/// Implements an `Allocator` trait (allocator-api2 0.2's, or 0.4's) for
/// `&SyncOneWayAlloc<A>`, forwarding to the same trait of the calling thread's
/// `&OneWayAlloc` serial.
macro_rules! impl_allocator {
    ($(#[$attr:meta])* $trait:path, $error:ty) => {
        $(#[$attr])*
        // SAFETY: every block comes from a serial arena of this arena and stays
        // valid, unmoved, until `reset` or drop, which need the arena exclusively
        // and so cannot happen while a `&SyncOneWayAlloc` is in use. Copies of the
        // reference all allocate in this arena.
        //
        // `deallocate`, `grow` and `shrink` act on the calling thread's serial
        // (the trait allows any copy of the allocator, on any thread, to free a
        // block). With pages, that serial only ever rolls back or grows in place
        // its own most recent block: `last_block` (bump.rs) takes a block as the
        // most recent one only if it ends at the serial's cursor, and a non-empty
        // block of another serial cannot: it lies in a page of that serial,
        // disjoint from this serial's current page, whereas the cursor is at least
        // a header past the current page's start and at most its end, so the
        // block's last byte would be in both pages. (An empty block at the cursor
        // grows from the cursor, in this serial's page, copying nothing.) Any other
        // block is left in place (`deallocate`), kept (a shrink that keeps its
        // alignment) or copied into a fresh block of this serial (`move_older`,
        // `resize`), which only reads it. In the sanitizer mode a serial knows its
        // own blocks only, so another serial's block is left to its serial (freed
        // at reset) and a resize copies it (`move_foreign`).
        unsafe impl<A: Allocator> $trait for &SyncOneWayAlloc<A> {
            #[inline(always)]
            fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, $error> {
                self.on_serial::<$error, _>(|serial| <&Serial<A> as $trait>::allocate(&serial, layout))?
            }

            #[inline]
            unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
                // A thread without a serial in this epoch allocated nothing since:
                // the block cannot be its most recent one; nothing to roll back.
                let Some(serial) = self.own_serial() else {
                    return;
                };
                #[cfg(onewayalloc_separate_blocks)]
                if foreign(serial, ptr, layout) {
                    return;
                }
                // SAFETY: the trait's contract; see the impl's comment for a block
                // of another serial.
                unsafe { <&Serial<A> as $trait>::deallocate(&serial, ptr, layout) }
            }

            #[inline(always)]
            unsafe fn grow(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                self.on_serial::<$error, _>(|serial| {
                    #[cfg(onewayalloc_separate_blocks)]
                    if foreign(serial, ptr, old_layout) {
                        // SAFETY: the trait's contract: `ptr` is live with `old_layout`.
                        return unsafe { move_foreign(serial, ptr, old_layout, new_layout) };
                    }
                    // SAFETY: the trait's contract; see the impl's comment for a
                    // block of another serial.
                    unsafe { <&Serial<A> as $trait>::grow(&serial, ptr, old_layout, new_layout) }
                })?
            }

            #[inline]
            unsafe fn grow_zeroed(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                // SAFETY: the trait's contract, which `grow` has too.
                let block = unsafe { <Self as $trait>::grow(self, ptr, old_layout, new_layout)? };
                let old = old_layout.size();
                // SAFETY: the block holds `new_layout.size() >= old` bytes, so the
                // tail `old..new` is inside it.
                unsafe {
                    ptr::write_bytes(block.cast::<u8>().as_ptr().add(old), 0, new_layout.size() - old)
                };
                Ok(block)
            }

            #[inline]
            unsafe fn shrink(
                &self,
                ptr: NonNull<u8>,
                old_layout: Layout,
                new_layout: Layout,
            ) -> Result<NonNull<[u8]>, $error> {
                self.on_serial::<$error, _>(|serial| {
                    #[cfg(onewayalloc_separate_blocks)]
                    if foreign(serial, ptr, old_layout) {
                        if new_layout.size() == 0 {
                            return Ok(NonNull::slice_from_raw_parts(
                                crate::engine::arith::dangling(new_layout.align()),
                                0,
                            ));
                        }
                        // SAFETY: the trait's contract: `ptr` is live with `old_layout`.
                        return unsafe { move_foreign(serial, ptr, old_layout, new_layout) };
                    }
                    // SAFETY: the trait's contract; see the impl's comment for a
                    // block of another serial.
                    unsafe { <&Serial<A> as $trait>::shrink(&serial, ptr, old_layout, new_layout) }
                })?
            }
        }
    };
}

impl_allocator!(Allocator, AllocError);

impl_allocator!(
    /// allocator-api2 0.4's `Allocator` (feature `allocator-api2-04`): the same
    /// calls as the 0.2 impl.
    #[cfg(feature = "allocator-api2-04")]
    allocator_api2_04::alloc::Allocator,
    allocator_api2_04::alloc::AllocError
);

impl<A: Allocator> SyncOneWayAlloc<A> {
    /// Every serial arena, through exclusive access: what the pool's policy reads
    /// (their pages) after the arena comes back (pool.rs).
    pub(crate) fn serial_arenas(&mut self) -> impl Iterator<Item = &Serial<A>> + '_ {
        self.serials_mut().map(|serial| &*serial)
    }
}
