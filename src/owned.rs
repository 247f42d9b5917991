//! Values the arena drops: [`OneWayAlloc::alloc_owned`] and the list of destructors
//! waiting to run.
//!
//! A value with drop glue is placed in one block together with a small record in
//! front of it: the link to the previous record and the function that drops the
//! value (the value sits at a fixed offset after its record, so the record needs
//! no separate address). The records form a singly linked list, most recent first,
//! threaded through the arena's own blocks: registering obtains nothing from the
//! backing allocator beyond what any allocation does, and the list's head and
//! length live in the arena value. `reset`, the end of a scope and drop pop the
//! list down to where it was (empty, or the scope's start) and run each
//! destructor, most recent first, before the memory is reused. With nothing
//! registered that is one comparison of the head against its saved value.
//!
//! A destructor that panics does not stop the others: a guard runs the rest of
//! the list while the panic unwinds (as `Vec`'s drop does), and the panic goes on
//! afterwards. A second destructor that panics while the first panic unwinds ends
//! the process, as it does in std.

// Every `&mut` these calls return points to a fresh block; see arena.rs.
#![allow(clippy::mut_from_ref)]

use core::alloc::Layout;
use core::cell::Cell;
use core::mem;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};

use crate::OneWayAlloc;
use crate::engine::arith::Known;
use crate::engine::failure::{Failure, infallible};

/// The record in front of every value the arena drops.
#[repr(C)]
struct Record {
    /// The record registered before this one (`None` for the oldest).
    next: Option<NonNull<Record>>,
    /// Drops the value that follows this record in its [`Owned`] block.
    drop: unsafe fn(NonNull<Record>),
}

/// One block of [`OneWayAlloc::alloc_owned`]: the record, then the value.
#[repr(C)]
struct Owned<T> {
    record: Record,
    value: T,
}

/// Drops the `T` of the [`Owned<T>`] block whose record is `record`.
///
/// # Safety
/// `record` must be the record of a live `Owned<T>` block (pointer derived from the
/// block, with its provenance) whose value was not dropped yet and is not used
/// again.
unsafe fn drop_value<T>(record: NonNull<Record>) {
    let owned = record.cast::<Owned<T>>().as_ptr();
    // SAFETY: the caller's guarantee: `owned` points to a live `Owned<T>` whose
    // value is initialized and dropped here once. The field pointer is derived from
    // the block pointer, so it keeps the block's provenance.
    unsafe { ptr::drop_in_place(&raw mut (*owned).value) }
}

/// The destructors waiting to run: the head of the record list and its length.
///
/// Invariant: `head` is `None` or the most recent record of a list of `len`
/// records (while `run_to` runs, `len` may count records it popped already), each in
/// a live block of this arena whose value is initialized, linked
/// from the most recent to the oldest.
pub(crate) struct DropList {
    head: Cell<Option<NonNull<Record>>>,
    len: Cell<usize>,
}

/// Where the list stood at a scope's start (see [`OneWayAlloc::drops_checkpoint`]).
#[derive(Clone, Copy)]
pub(crate) struct DropsCheckpoint {
    head: Option<NonNull<Record>>,
    len: usize,
}

impl DropList {
    pub(crate) const fn new() -> Self {
        DropList {
            head: Cell::new(None),
            len: Cell::new(0),
        }
    }

    /// The number of values waiting to be dropped.
    pub(crate) fn len(&self) -> usize {
        self.len.get()
    }

    /// Whether no value waits to be dropped.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.head.get().is_none()
    }

    /// Whether the list is at `checkpoint` (nothing registered since): the one
    /// branch of `reset` and of a scope's end when no value was registered.
    #[inline(always)]
    fn is_at(&self, checkpoint: DropsCheckpoint) -> bool {
        self.head.get() == checkpoint.head
    }

    /// Pops records down to `to` and runs their destructors, most recent first;
    /// the length is set to `to`'s at the end (while the destructors run it still
    /// counts the popped records: the loop keeps no count).
    /// A destructor may register more values (the C API's cleanups may): they are
    /// popped and run too. If a destructor panics, the rest still run while the
    /// panic unwinds, and the panic goes on afterwards.
    ///
    /// # Safety
    /// `to` must be a checkpoint of this list (or the empty one) taken with no
    /// `reset` since, the records above it must not have been popped by anyone
    /// else, and no value above it may be used again.
    #[cold]
    #[inline(never)]
    unsafe fn run_to(&self, to: DropsCheckpoint) {
        /// Runs the rest of the list when a destructor unwinds.
        struct Rest<'a> {
            list: &'a DropList,
            to: DropsCheckpoint,
        }
        impl Drop for Rest<'_> {
            fn drop(&mut self) {
                // SAFETY: the same list and checkpoint, as the caller of `run_to`
                // guaranteed; the record that panicked was popped before its
                // destructor ran, so it is not run twice.
                unsafe { self.list.run_to(self.to) }
            }
        }
        // One guard for the whole loop (not one per record): if a destructor
        // panics, it runs the records still in the list.
        let rest = Rest { list: self, to };
        while let Some(record) = self.head.get() {
            if Some(record) == to.head {
                break;
            }
            // SAFETY: the list invariant: `record` is the record of a live block
            // whose value is still initialized.
            let (next, drop_fn) = unsafe { ((*record.as_ptr()).next, (*record.as_ptr()).drop) };
            self.head.set(next);
            // SAFETY: `record` was just popped, so its value is dropped once, here;
            // the caller guarantees the value is not used again. `drop` is the
            // `drop_value::<T>` of the `T` that `alloc_owned` placed after it.
            unsafe { drop_fn(record) };
        }
        mem::forget(rest);
        self.len.set(to.len);
    }
}

impl<A: Allocator> OneWayAlloc<A> {
    /// Moves `value` into the arena and returns a reference to it, like
    /// [`alloc`](Self::alloc), and has the arena run its destructor: at
    /// [`reset`](Self::reset), at the end of the [scope](Self::scope) that allocated
    /// it, when the arena drops, and so also when a [`Pool`](crate::Pool) guard
    /// drops and when [`with_scratch`](crate::with_scratch) returns (both reset).
    /// Destructors run most recent first, before the memory is reused. A `String`,
    /// a `Vec`, an `Arc`, a file handle or a lock guard handed to the arena this way
    /// is released when the arena's work ends, not leaked.
    ///
    /// A `T` without drop glue (`!mem::needs_drop::<T>()`) is placed as `alloc`
    /// places it and registers nothing. Otherwise the value shares its block with a
    /// two-word record (the link to the previous record and the drop function),
    /// threaded through the arena's own memory: no other allocation is made, and
    /// [`Stats::pending_drops`](crate::Stats::pending_drops) counts the values
    /// waiting.
    ///
    /// # Why `T: Send + 'static`
    ///
    /// The destructor runs later, when the compiler no longer sees what it may
    /// reach (std's own collections tell it with the unstable `#[may_dangle]`).
    /// Without `'static`, a value could borrow something that is gone by then:
    /// - a local dropped before the `reset`:
    ///
    /// ```compile_fail,E0597
    /// // Rejected by `'static`: `Reads` borrows `local`, which is dropped before
    /// // the arena runs `Reads`'s destructor (at the arena's drop).
    /// struct Reads<'a>(&'a String);
    /// impl Drop for Reads<'_> {
    ///     fn drop(&mut self) { println!("{}", self.0) } // would read freed memory
    /// }
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let local = String::from("gone before the arena");
    /// arena.alloc_owned(Reads(&local));
    /// ```
    ///
    /// - another arena value, dropped first (most recent first), reached through a
    ///   `Cell<Option<&T>>` or, here, its thread-safe twin `OnceLock<&T>` (with a
    ///   `Cell` the value is also not `Send`, which rejects it too):
    ///
    /// ```compile_fail,E0597
    /// // Rejected by `'static` (the value is `Send`): `a` would borrow `b`, and
    /// // `b`'s destructor runs first, so `a`'s destructor would read a dropped
    /// // `String`.
    /// use std::sync::OnceLock;
    /// struct Node<'a> { name: String, peer: OnceLock<&'a Node<'a>> }
    /// impl Drop for Node<'_> {
    ///     fn drop(&mut self) {
    ///         if let Some(peer) = self.peer.get() { println!("{}", peer.name) }
    ///     }
    /// }
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let a = arena.alloc_owned(Node { name: "a".into(), peer: OnceLock::new() });
    /// let b = arena.alloc_owned(Node { name: "b".into(), peer: OnceLock::new() });
    /// let _ = a.peer.set(b);
    /// ```
    ///
    /// (With [`alloc`](Self::alloc), which never runs destructors, the same two
    /// nodes compile: the bound is what rejects them.)
    ///
    /// ```
    /// use std::sync::OnceLock;
    /// struct Node<'a> { name: &'static str, peer: OnceLock<&'a Node<'a>> }
    /// impl Drop for Node<'_> {
    ///     fn drop(&mut self) {
    ///         if let Some(peer) = self.peer.get() { println!("{}", peer.name) }
    ///     }
    /// }
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let a = arena.alloc(Node { name: "a", peer: OnceLock::new() });
    /// let b = arena.alloc(Node { name: "b", peer: OnceLock::new() });
    /// let _ = a.peer.set(b); // fine: `alloc` never drops them
    /// ```
    ///
    /// And without `Send`: the arena is `Send` (a pool guard moves between
    /// threads), so a value could be dropped on another thread than the one that
    /// made it, racing with its clones, as an `Rc` would:
    ///
    /// ```compile_fail,E0277
    /// // Rejected by `Send`: this clone of the `Rc` would be dropped (its count
    /// // decremented without synchronization) on whichever thread resets the arena.
    /// use std::rc::Rc;
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let shared = Rc::new(5);
    /// arena.alloc_owned(Rc::clone(&shared));
    /// ```
    ///
    /// The same with `Arc`, which is `Send`, and with an owned `String` (which is
    /// `'static`), compiles and drops them:
    ///
    /// ```
    /// use std::sync::Arc;
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// let shared = Arc::new(5);
    /// arena.alloc_owned(Arc::clone(&shared));
    /// arena.alloc_owned(String::from("owned, not borrowed"));
    /// assert_eq!(Arc::strong_count(&shared), 2);
    /// arena.reset();
    /// assert_eq!(Arc::strong_count(&shared), 1);
    /// ```
    ///
    /// # Panics
    ///
    /// Calls `handle_alloc_error` if a page is refused (`value` is dropped).
    ///
    /// A destructor that panics when the arena runs it does not stop the others:
    /// every other registered destructor still runs, the arena ends reset (or
    /// rolled back) and usable, and the panic then goes on from `reset`, the
    /// scope or the drop, as `Vec` drops its other elements when one panics. If a
    /// second destructor panics while the first panic unwinds, or a destructor
    /// panics while a scope is rolled back because its closure panicked, the
    /// process aborts, as std does for a panic during unwinding.
    ///
    /// # Examples
    /// ```
    /// let mut arena = onewayalloc::OneWayAlloc::new();
    /// let names = arena.alloc_owned(vec![String::from("cpu"), String::from("mem")]);
    /// names.push(String::from("disk"));
    /// assert_eq!(arena.stats().pending_drops, 1);
    /// arena.reset(); // the Vec and its Strings are dropped here
    /// assert_eq!(arena.stats().pending_drops, 0);
    /// ```
    #[inline]
    pub fn alloc_owned<T: Send + 'static>(&self, value: T) -> &mut T {
        infallible(self.alloc_owned_in(value))
    }

    /// Like [`alloc_owned`](Self::alloc_owned), returning an error instead.
    ///
    /// # Errors
    /// [`AllocError`] if a page is refused; `value` is dropped.
    ///
    /// # Examples
    /// ```
    /// let arena = onewayalloc::OneWayAlloc::new();
    /// let s = arena.try_alloc_owned(String::from("x")).unwrap();
    /// assert_eq!(s, "x");
    /// ```
    #[inline]
    pub fn try_alloc_owned<T: Send + 'static>(&self, value: T) -> Result<&mut T, AllocError> {
        self.alloc_owned_in(value)
    }

    #[inline(always)]
    fn alloc_owned_in<E: Failure, T>(&self, value: T) -> Result<&mut T, E> {
        if !mem::needs_drop::<T>() {
            return self.try_alloc_generic(value);
        }
        let block = self
            .core()
            .alloc::<E>(Layout::new::<Owned<T>>(), Known::TYPE)?
            .cast::<Owned<T>>();
        // Read the head only now: the backing allocator may have used this arena.
        let list = &self.owned;
        // SAFETY: `block` is a fresh block, aligned and sized for an `Owned<T>`,
        // that nothing else refers to. The record pointer and the value reference
        // are derived from it, so they carry its provenance. Pushing it makes the
        // list invariant hold again: the record is initialized and its value too.
        unsafe {
            block.write(Owned {
                record: Record {
                    next: list.head.get(),
                    drop: drop_value::<T>,
                },
                value,
            });
            list.head.set(Some(block.cast::<Record>()));
            // One record per live block of at least 2 words: no overflow.
            list.len.set(list.len.get() + 1);
            Ok(&mut (*block.as_ptr()).value)
        }
    }

    /// Where the list of destructors stands, for a scope to roll back to.
    pub(crate) fn drops_checkpoint(&self) -> DropsCheckpoint {
        DropsCheckpoint {
            head: self.owned.head.get(),
            len: self.owned.len.get(),
        }
    }

    /// Runs the destructors registered since `checkpoint`, most recent first (one
    /// branch when there are none).
    ///
    /// # Safety
    /// `checkpoint` must come from this arena with no `reset` since, and no value
    /// registered after it may be used again.
    #[inline]
    pub(crate) unsafe fn run_drops_to(&self, checkpoint: DropsCheckpoint) {
        if !self.owned.is_at(checkpoint) {
            // SAFETY: the caller's guarantee.
            unsafe { self.owned.run_to(checkpoint) }
        }
    }

    /// Runs every registered destructor, most recent first.
    ///
    /// # Safety
    /// No value registered with `alloc_owned` may be used again (their blocks stay
    /// allocated until the reset or drop that follows).
    #[inline]
    pub(crate) unsafe fn run_all_drops(&self) {
        // SAFETY: the empty checkpoint is this list's start; the caller's guarantee.
        unsafe { self.run_drops_to(DropsCheckpoint { head: None, len: 0 }) }
    }

    /// Runs every registered destructor, most recent first, through a shared
    /// reference: for the C API, whose cleanups may call back into the arena
    /// (allocate, register more cleanups) while they run, before it resets or
    /// destroys the arena. Hidden: not part of the Rust API.
    ///
    /// # Safety
    /// No value registered with `alloc_owned` may be used afterwards; the caller
    /// resets or drops the arena next.
    #[doc(hidden)]
    pub unsafe fn run_owned_drops(&self) {
        // SAFETY: the caller's guarantee.
        unsafe { self.run_all_drops() }
    }

    /// `alloc` for a `T` without drop glue, generic over the failure.
    #[inline(always)]
    fn try_alloc_generic<E: Failure, T>(&self, value: T) -> Result<&mut T, E> {
        let block = self
            .core()
            .alloc::<E>(Layout::new::<T>(), Known::TYPE)?
            .cast::<T>();
        // SAFETY: `block` is a fresh block, aligned and sized for a `T`, that
        // nothing else refers to.
        unsafe {
            block.write(value);
            Ok(&mut *block.as_ptr())
        }
    }
}
