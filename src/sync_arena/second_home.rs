//! The second home serial of a [`SyncOneWayAlloc`](super::SyncOneWayAlloc): a serial
//! arena inside the arena, like the home serial, made by the first thread that
//! claims it (an arena that one thread at a time uses never pays its first page).
//!
//! Why a second one: a thread reaches a serial of the list through a pointer (its
//! thread-local cache), loaded again at every allocation, and the cursor behind a
//! freshly loaded pointer is read and written through a new base register each
//! time, where the home's cursor is at a fixed offset from `self`. Measured in
//! `harness sync-arena`'s two-thread row (each thread's own time, 100,000
//! allocations): the thread in the home serial 138-145 us, the other 158-167 us
//! through the list (a pointer to a list serial kept in the arena: 158 us); with
//! two homes, both alike. Two threads at once is the common case on the machines
//! this crate is measured on, and a task that moves once between two workers.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::Ordering;

use allocator_api2::alloc::Allocator;

use super::Serial;
use super::sync::{self, Tracked};

/// No serial in the cell.
const ABSENT: usize = 0;
/// A thread is making the serial, outside the lock.
const MAKING: usize = 1;
/// The cell holds the serial.
const MADE: usize = 2;

/// A serial arena made on first claim. The state changes under the arena's lock
/// (or through `&mut`), from `ABSENT` to `MAKING` (one thread, which then makes
/// the serial outside the lock), then to `MADE` once the cell holds it, or back to
/// `ABSENT` if making it failed; it never leaves `MADE` but by drop.
pub(super) struct SecondHome<A: Allocator> {
    cell: UnsafeCell<MaybeUninit<Tracked<Serial<A>>>>,
    state: sync::AtomicUsize,
}

/// What the claim may do with the second home (read under the lock).
pub(super) enum Claimable {
    /// It holds a serial: the claiming thread can take it.
    Made,
    /// Nobody made it: the claiming thread makes it.
    Absent,
    /// Another thread is making it.
    Busy,
}

impl<A: Allocator> SecondHome<A> {
    pub(super) fn new() -> Self {
        SecondHome {
            cell: UnsafeCell::new(MaybeUninit::uninit()),
            state: sync::AtomicUsize::new(ABSENT),
        }
    }

    /// Its state, read under the arena's lock.
    pub(super) fn claimable(&self) -> Claimable {
        match self.state.load(Ordering::Relaxed) {
            MADE => Claimable::Made,
            ABSENT => Claimable::Absent,
            _ => Claimable::Busy,
        }
    }

    /// Marks it as being made by the calling thread (under the lock, when
    /// [`claimable`](Self::claimable) said `Absent`).
    pub(super) fn begin(&self) {
        self.state.store(MAKING, Ordering::Relaxed);
    }

    /// Gives up making it (under the lock): another thread may try.
    pub(super) fn abandon(&self) {
        self.state.store(ABSENT, Ordering::Relaxed);
    }

    /// Stores the serial the calling thread made.
    ///
    /// # Safety
    /// The calling thread called [`begin`](Self::begin) and neither `fill` nor
    /// [`abandon`](Self::abandon) since: no other thread reads or writes the cell
    /// (readers wait for `MADE`).
    pub(super) unsafe fn fill(&self, serial: Serial<A>) {
        // SAFETY: the caller's contract: the cell is ours alone while `MAKING`, and
        // empty (`ABSENT` before `begin`).
        unsafe { (*self.cell.get()).write(Tracked::new(serial)) };
    }

    /// Marks it made (under the lock, after [`fill`](Self::fill)).
    pub(super) fn finish(&self) {
        self.state.store(MADE, Ordering::Relaxed);
    }

    /// The serial, for the thread that owns the second home in this epoch.
    ///
    /// # Safety
    /// The state is `MADE`, and the calling thread owns the second home (no other
    /// running thread uses the serial; see the arena's `second_owner`).
    #[inline(always)]
    pub(super) unsafe fn get(&self) -> &Serial<A> {
        // SAFETY: `MADE`: the cell holds the serial, written before the state was
        // set (by the owner itself, or by a thread whose writes happen before the
        // owner's claim, under the lock). It lives until `self` drops.
        unsafe { (*self.cell.get()).assume_init_ref() }.access()
    }

    /// The serial if it was made, exclusively.
    pub(super) fn get_mut(&mut self) -> Option<&mut Serial<A>> {
        if self.state.load(Ordering::Relaxed) == MADE {
            // SAFETY: `MADE`: the cell holds the serial; `&mut self` excludes
            // every other use.
            Some(unsafe { self.cell.get_mut().assume_init_mut() }.access_mut())
        } else {
            None
        }
    }

    /// Whether it was made: for `Debug` (a snapshot: another thread may be making
    /// it meanwhile).
    pub(super) fn is_made(&self) -> bool {
        self.state.load(Ordering::Relaxed) == MADE
    }
}

impl<A: Allocator> Drop for SecondHome<A> {
    fn drop(&mut self) {
        if self.state.load(Ordering::Relaxed) == MADE {
            // SAFETY: `MADE`: the cell holds the serial, dropped once, here.
            unsafe { self.cell.get_mut().assume_init_drop() };
        }
    }
}
