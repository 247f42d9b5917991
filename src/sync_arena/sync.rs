//! The synchronization primitives of [`SyncOneWayAlloc`](super::SyncOneWayAlloc):
//! std's, or under `cfg(loom)` the models of them that the crate loom provides, so
//! that the model tests (tests/loom_sync_arena.rs) explore every interleaving of
//! the claim, the thread-local cache and `reset`. Outside loom every item here is
//! std's own or a zero-cost wrapper: the allocation path compiles to the same code.

use core::cell::Cell;
use core::ptr;

#[cfg(loom)]
pub(super) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(super) use std::sync::{Mutex, MutexGuard};

#[cfg(not(loom))]
pub(super) use core::sync::atomic::AtomicUsize;
#[cfg(loom)]
pub(super) use loom::sync::atomic::AtomicUsize;

#[cfg(loom)]
pub(super) use loom::thread::ThreadId;
#[cfg(not(loom))]
pub(super) use std::thread::ThreadId;

/// The calling thread's id (loom's own ids under loom, whose threads share one
/// OS thread).
pub(super) fn current_thread_id() -> ThreadId {
    #[cfg(loom)]
    return loom::thread::current().id();
    #[cfg(not(loom))]
    return std::thread::current().id();
}

/// The calling thread's identity for the arena's home serials: never 0, and never
/// the same for two threads that run at the same time. A thread started after
/// another exited may get the exited one's identity (see `SyncOneWayAlloc`'s
/// `home_owner` for why that is sound).
///
/// On x86-64 Linux it is the thread pointer, one instruction without a call or a
/// register held for the thread-local block's offset (the `thread_local!` access
/// of a library costs one of each in the code around every allocation); elsewhere
/// (Miri included) the address of a thread-local; under loom, a number given to
/// each loom thread once (loom's threads share one OS thread). Under
/// ThreadSanitizer, a number given to each thread once: a detached thread's
/// control block goes to the next new thread under a lock inside the C library,
/// which TSan does not see, so it would report the new thread's use of the home
/// serial as a race with the exited thread's.
#[inline(always)]
pub(super) fn thread_identity() -> usize {
    #[cfg(all(
        target_arch = "x86_64",
        target_os = "linux",
        target_pointer_width = "64",
        not(miri),
        not(loom),
        not(onewayalloc_tsan)
    ))]
    {
        let thread_pointer: usize;
        // SAFETY: the x86-64 ELF thread-local storage ABI (which glibc and musl
        // follow) has every thread's %fs base point to its thread control block,
        // whose first word is the block's own address: a read of one word of the
        // calling thread's own memory, with no other effect.
        unsafe {
            core::arch::asm!(
                "mov {}, qword ptr fs:[0]",
                out(reg) thread_pointer,
                options(nostack, preserves_flags, readonly),
            );
        }
        thread_pointer
    }
    #[cfg(all(
        not(loom),
        not(onewayalloc_tsan),
        not(all(
            target_arch = "x86_64",
            target_os = "linux",
            target_pointer_width = "64",
            not(miri)
        ))
    ))]
    {
        std::thread_local! {
            /// One byte per thread, whose address is the thread's identity.
            static IDENTITY: u8 = const { 0 };
        }
        IDENTITY.with(|byte| ptr::from_ref(byte).addr())
    }
    #[cfg(all(onewayalloc_tsan, not(loom)))]
    {
        /// The next thread's identity (only uniqueness matters).
        static NEXT: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(1);
        std::thread_local! {
            /// This thread's identity, 0 until its first use.
            static IDENTITY: Cell<usize> = const { Cell::new(0) };
        }
        IDENTITY.with(|identity| {
            if identity.get() == 0 {
                identity.set(NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed));
            }
            identity.get()
        })
    }
    #[cfg(loom)]
    {
        /// The next loom thread's identity (a plain std atomic: only uniqueness
        /// matters, across every model run).
        static NEXT: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(1);
        loom::thread_local! {
            static IDENTITY: usize = NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
        IDENTITY.with(|identity| *identity)
    }
}

#[cfg(not(loom))]
std::thread_local! {
    /// This thread's serial arena for one arena and epoch: `(epoch id, serial)`.
    /// Const-initialized and without a destructor, so reading it is a plain
    /// thread-local access. The pointer is a `*const Tracked<Serial<A>>` of the
    /// arena whose current epoch is the id (ids are unique to one arena).
    static CURRENT: Cell<(u64, *const ())> = const { Cell::new((0, ptr::null())) };
}

#[cfg(loom)]
loom::thread_local! {
    /// As outside loom, one per loom thread (loom's thread-locals take no
    /// `const` initializer).
    static CURRENT: Cell<(u64, *const ())> = Cell::new((0, ptr::null()));
}

/// The calling thread's cache entry: `(epoch id, serial)`, `(0, null)` if empty.
#[inline(always)]
pub(super) fn cached() -> (u64, *const ()) {
    #[cfg(loom)]
    return CURRENT.with(Cell::get);
    #[cfg(not(loom))]
    return CURRENT.get();
}

/// Replaces the calling thread's cache entry.
#[inline(always)]
pub(super) fn set_cached(entry: (u64, *const ())) {
    #[cfg(loom)]
    CURRENT.with(|current| current.set(entry));
    #[cfg(not(loom))]
    CURRENT.set(entry);
}

/// A value that one thread at a time uses without synchronization, handed from
/// thread to thread by a lock or a join: a serial arena. Under loom every use is
/// recorded as a write to a loom cell, so loom reports two uses that no lock or
/// join orders (two threads in one serial) as a data race; outside loom it is the
/// value alone.
///
/// Aligned to 128 bytes (two cache lines, the unit of the adjacent-line prefetcher):
/// each serial is a heap block of its own, and two serials that malloc placed side
/// by side would otherwise share a cache line, so two threads bumping their cursors
/// would take that line from each other at every allocation (false sharing; in the
/// harness's rayon row it made the time per vector vary from 25 to 90 ns with the
/// serials' placement).
#[repr(align(128))]
pub(super) struct Tracked<T> {
    value: T,
    #[cfg(loom)]
    uses: loom::cell::UnsafeCell<()>,
}

impl<T> Tracked<T> {
    pub(super) fn new(value: T) -> Self {
        Tracked {
            value,
            #[cfg(loom)]
            uses: loom::cell::UnsafeCell::new(()),
        }
    }

    /// The value, for the calling thread's use (under loom, recorded).
    #[inline(always)]
    pub(super) fn access(&self) -> &T {
        #[cfg(loom)]
        self.uses.with_mut(|_| ());
        &self.value
    }

    /// The value, exclusively (under loom, recorded).
    pub(super) fn access_mut(&mut self) -> &mut T {
        #[cfg(loom)]
        self.uses.with_mut(|_| ());
        &mut self.value
    }
}
