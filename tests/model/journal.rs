//! The journal: everything that happened to the arena and to its backing allocator,
//! in order, for the model to replay.
//!
//! The arena obtains its pages from [`Backing`], which forwards to the global
//! allocator, journals each page it hands out or takes back and counts the bytes it
//! holds for the arena; collections use the arena through [`Rec`], which forwards
//! every `Allocator` call to `&arena` and journals it. The runner journals its own
//! direct calls the same way, and the calls that move the arena as a whole (scopes,
//! `trim`, `reset`, `set_limit`).

use core::alloc::Layout;
use core::cell::{Cell, RefCell};
use core::ptr::NonNull;

use allocator_api2::alloc::{AllocError, Allocator, Global};
use onewayalloc::OneWayAlloc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Allocate,
    Deallocate,
    Grow,
    Shrink,
}

/// One call to the arena: the block it was given (`ptr`, `old`), what was asked
/// (`new`) and what came back (the block's address; `None` for an error).
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub kind: Kind,
    pub ptr: usize,
    pub old: Layout,
    pub new: Layout,
    pub out: Option<usize>,
}

#[derive(Debug)]
pub enum Event {
    /// The backing allocator handed out a block (a page, or in sanitizer mode a
    /// block of its own).
    PageIn(usize, Layout),
    /// The backing allocator took a block back.
    PageOut(usize, Layout),
    Call(Call),
    /// A scope was opened (journaled just before its checkpoint is taken).
    ScopeEnter,
    /// The innermost scope ended (journaled after its rollback).
    ScopeExit,
    /// `set_limit` (journaled after the call).
    Limit(Option<usize>),
    /// `trim(keep)` (journaled after the call, so its `PageOut`s come first).
    Trim(usize),
    Reset,
}

/// The events since the model last replayed them, and the bytes the backing
/// allocator holds for the arena now.
#[derive(Default)]
pub struct Journal {
    events: RefCell<Vec<Event>>,
    held: Cell<usize>,
}

impl Journal {
    pub fn push(&self, event: Event) {
        self.events.borrow_mut().push(event);
    }

    pub fn call(&self, kind: Kind, ptr: usize, old: Layout, new: Layout, out: Option<usize>) {
        self.push(Event::Call(Call {
            kind,
            ptr,
            old,
            new,
            out,
        }));
    }

    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.borrow_mut())
    }

    /// Bytes the backing allocator holds for the arena.
    pub fn held(&self) -> usize {
        self.held.get()
    }
}

/// The arena's backing allocator: the global one, journaled. (`grow` and `shrink`,
/// which the sanitizer mode uses, are the trait's defaults: allocate, copy,
/// deallocate, journaled as such.)
#[derive(Clone, Copy)]
pub struct Backing<'j>(pub &'j Journal);

// SAFETY: forwards to `Global`, which upholds the contract.
unsafe impl Allocator for Backing<'_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Global.allocate(layout)?;
        let journal = self.0;
        journal.held.set(journal.held.get() + layout.size());
        journal.push(Event::PageIn(block.cast::<u8>().addr().get(), layout));
        Ok(block)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        let journal = self.0;
        journal.held.set(journal.held.get() - layout.size());
        journal.push(Event::PageOut(ptr.addr().get(), layout));
        // SAFETY: forwarded from the caller.
        unsafe { Global.deallocate(ptr, layout) }
    }
}

pub type Arena<'j> = OneWayAlloc<Backing<'j>>;

/// `&arena` as an allocator for collections, journaling every call it forwards.
#[derive(Clone, Copy)]
pub struct Rec<'a, 'j> {
    pub arena: &'a Arena<'j>,
    pub journal: &'j Journal,
}

pub fn addr(block: &Result<NonNull<[u8]>, AllocError>) -> Option<usize> {
    block.as_ref().ok().map(|b| b.cast::<u8>().addr().get())
}

// SAFETY: forwards every call unchanged to `&OneWayAlloc`'s implementation.
unsafe impl Allocator for Rec<'_, '_> {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let block = Allocator::allocate(&self.arena, layout);
        let out = addr(&block);
        self.journal.call(Kind::Allocate, 0, layout, layout, out);
        block
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { Allocator::deallocate(&self.arena, ptr, layout) };
        let at = ptr.addr().get();
        self.journal
            .call(Kind::Deallocate, at, layout, layout, None);
    }

    unsafe fn grow(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::grow(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Grow, ptr.addr().get(), old, new, out);
        block
    }

    unsafe fn grow_zeroed(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::grow_zeroed(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Grow, ptr.addr().get(), old, new, out);
        block
    }

    unsafe fn shrink(
        &self,
        ptr: NonNull<u8>,
        old: Layout,
        new: Layout,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: forwarded from the caller.
        let block = unsafe { Allocator::shrink(&self.arena, ptr, old, new) };
        let out = addr(&block);
        self.journal
            .call(Kind::Shrink, ptr.addr().get(), old, new, out);
        block
    }
}
