//! The contenders of the benchmarks, behind one trait per kind of work, so that each
//! measured operation is one generic body: onewayalloc, bumpalo, bump-scope (with
//! `reset` and with `reset_to_start`), and the `malloc`-like allocators (glibc's
//! malloc through `System`, mimalloc), which free what they allocated where the
//! arenas reset.
//!
//! A new contender is a type here with `Contender` and the traits of the groups it
//! takes part in, and a line in [`every_contender!`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::NonNull;

use bump_scope::traits::BumpAllocatorTyped;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::vec::Vec as ApiVec;
use onewayalloc_harness::compat::{BumpScopeApi2, Mi};

pub const OWA: &str = "onewayalloc";
pub const BUMPALO: &str = "bumpalo";
pub const BS_RESET: &str = "bump-scope_reset";
pub const BS_START: &str = "bump-scope_reset_to_start";
pub const GLOBAL: &str = "global_malloc";
pub const MIMALLOC: &str = "mimalloc";

pub type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// Calls `$bench::<C>(args)` (or `$bench::<C, T>`) for every contender of the warm
/// groups, in their table order: onewayalloc, bumpalo, bump-scope with each reset,
/// glibc's malloc, mimalloc. A new contender is one line here.
macro_rules! every_contender {
    ($bench:ident $(, $more:ty)?; $($arg:expr),*) => {{
        use $crate::contenders::*;
        $bench::<onewayalloc::OneWayAlloc $(, $more)?>($($arg),*);
        $bench::<bumpalo::Bump $(, $more)?>($($arg),*);
        $bench::<BumpScopeReset $(, $more)?>($($arg),*);
        $bench::<BumpScopeToStart $(, $more)?>($($arg),*);
        $bench::<GlobalMalloc $(, $more)?>($($arg),*);
        $bench::<MiHeap $(, $more)?>($($arg),*);
    }};
}
pub(crate) use every_contender;

/// A benchmark group with a throughput of `elements` per iteration.
pub fn group<'a>(c: &'a mut Criterion, name: &str, elements: usize, samples: usize) -> Group<'a> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(elements as u64));
    g.sample_size(samples);
    g
}

/// One contender: created once per benchmark and reset after every iteration.
pub trait Contender {
    /// Its benchmark id.
    const NAME: &'static str;
    fn new() -> Self;
    /// Takes back what was allocated since the last reset: the arenas' reset, or
    /// freeing every block one by one.
    fn reset(&mut self);
}

/// The typed calls, one allocation each.
// Every `&mut` returned points to a fresh block that nothing else reaches.
#[allow(clippy::mut_from_ref)]
pub trait Calls: Contender {
    fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8>;
    fn alloc<T: Copy>(&mut self, value: T) -> &mut T;
    fn alloc_str(&mut self, s: &str) -> &mut str;
    fn alloc_slice_copy<T: Copy>(&mut self, src: &[T]) -> &mut [T];
}

/// A vector of `u64` that can be pushed to.
pub trait Push {
    fn push(&mut self, value: u64);
}

/// The collections: each contender's own vector, and the contender as an
/// `allocator_api2` 0.2 allocator for `hashbrown`.
pub trait Collections: Contender {
    type Vec<'a>: Push
    where
        Self: 'a;
    type Api<'a>: Allocator
    where
        Self: 'a;
    fn vec(&self) -> Self::Vec<'_>;
    fn api(&self) -> Self::Api<'_>;
}

impl Push for ApiVec<u64, &OneWayAlloc> {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        ApiVec::push(self, value);
    }
}

impl Push for bumpalo::collections::Vec<'_, u64> {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        bumpalo::collections::Vec::push(self, value);
    }
}

impl Push for bump_scope::BumpVec<u64, &bump_scope::Bump> {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        bump_scope::BumpVec::push(self, value);
    }
}

impl Push for Vec<u64> {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        Vec::push(self, value);
    }
}

impl Push for ApiVec<u64, Mi> {
    #[inline(always)]
    fn push(&mut self, value: u64) {
        ApiVec::push(self, value);
    }
}

// ----- onewayalloc ---------------------------------------------------------------------

impl Contender for OneWayAlloc {
    const NAME: &'static str = OWA;
    fn new() -> Self {
        OneWayAlloc::new()
    }
    fn reset(&mut self) {
        OneWayAlloc::reset(self);
    }
}

impl Calls for OneWayAlloc {
    #[inline(always)]
    fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8> {
        OneWayAlloc::alloc_layout(self, layout)
    }
    #[inline(always)]
    fn alloc<T: Copy>(&mut self, value: T) -> &mut T {
        OneWayAlloc::alloc(self, value)
    }
    #[inline(always)]
    fn alloc_str(&mut self, s: &str) -> &mut str {
        OneWayAlloc::alloc_str(self, s)
    }
    #[inline(always)]
    fn alloc_slice_copy<T: Copy>(&mut self, src: &[T]) -> &mut [T] {
        OneWayAlloc::alloc_slice_copy(self, src)
    }
}

impl Collections for OneWayAlloc {
    type Vec<'a> = ApiVec<u64, &'a OneWayAlloc>;
    type Api<'a> = &'a OneWayAlloc;
    fn vec(&self) -> Self::Vec<'_> {
        ApiVec::new_in(self)
    }
    fn api(&self) -> &OneWayAlloc {
        self
    }
}

// ----- bumpalo -------------------------------------------------------------------------

impl Contender for bumpalo::Bump {
    const NAME: &'static str = BUMPALO;
    fn new() -> Self {
        bumpalo::Bump::new()
    }
    fn reset(&mut self) {
        bumpalo::Bump::reset(self);
    }
}

impl Calls for bumpalo::Bump {
    #[inline(always)]
    fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8> {
        bumpalo::Bump::alloc_layout(self, layout)
    }
    #[inline(always)]
    fn alloc<T: Copy>(&mut self, value: T) -> &mut T {
        bumpalo::Bump::alloc(self, value)
    }
    #[inline(always)]
    fn alloc_str(&mut self, s: &str) -> &mut str {
        bumpalo::Bump::alloc_str(self, s)
    }
    #[inline(always)]
    fn alloc_slice_copy<T: Copy>(&mut self, src: &[T]) -> &mut [T] {
        bumpalo::Bump::alloc_slice_copy(self, src)
    }
}

impl Collections for bumpalo::Bump {
    type Vec<'a> = bumpalo::collections::Vec<'a, u64>;
    type Api<'a> = &'a bumpalo::Bump;
    fn vec(&self) -> Self::Vec<'_> {
        bumpalo::collections::Vec::new_in(self)
    }
    fn api(&self) -> &bumpalo::Bump {
        self
    }
}

// ----- bump-scope ----------------------------------------------------------------------

/// bump-scope's `Bump`, reset with `reset_to_start` (keeps every chunk, like
/// onewayalloc) when `TO_START`, else with `reset` (keeps only its largest chunk).
pub struct BumpScope<const TO_START: bool>(pub bump_scope::Bump);

pub type BumpScopeReset = BumpScope<false>;
pub type BumpScopeToStart = BumpScope<true>;

impl<const TO_START: bool> Contender for BumpScope<TO_START> {
    const NAME: &'static str = if TO_START { BS_START } else { BS_RESET };
    fn new() -> Self {
        BumpScope(bump_scope::Bump::new())
    }
    fn reset(&mut self) {
        if TO_START {
            self.0.reset_to_start();
        } else {
            self.0.reset();
        }
    }
}

impl<const TO_START: bool> Calls for BumpScope<TO_START> {
    #[inline(always)]
    fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8> {
        self.0.allocate_layout(layout)
    }
    #[inline(always)]
    fn alloc<T: Copy>(&mut self, value: T) -> &mut T {
        self.0.alloc(value).into_mut()
    }
    #[inline(always)]
    fn alloc_str(&mut self, s: &str) -> &mut str {
        self.0.alloc_str(s).into_mut()
    }
    #[inline(always)]
    fn alloc_slice_copy<T: Copy>(&mut self, src: &[T]) -> &mut [T] {
        self.0.alloc_slice_copy(src).into_mut()
    }
}

impl<const TO_START: bool> Collections for BumpScope<TO_START> {
    type Vec<'a> = bump_scope::BumpVec<u64, &'a bump_scope::Bump>;
    type Api<'a> = BumpScopeApi2<'a>;
    fn vec(&self) -> Self::Vec<'_> {
        bump_scope::BumpVec::new_in(&self.0)
    }
    fn api(&self) -> BumpScopeApi2<'_> {
        BumpScopeApi2(&self.0)
    }
}

// ----- malloc-like ---------------------------------------------------------------------

/// A `malloc`-like allocator.
pub trait Malloc {
    const NAME: &'static str;
    fn new() -> Self;
    /// # Safety
    /// `layout` has a non-zero size.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8;
    /// # Safety
    /// `ptr` came from `alloc` with `layout`.
    unsafe fn free(&self, ptr: *mut u8, layout: Layout);
}

/// glibc's malloc, through `System` (no `#[global_allocator]` is set).
pub struct SystemMalloc;

impl Malloc for SystemMalloc {
    const NAME: &'static str = GLOBAL;
    fn new() -> Self {
        SystemMalloc
    }
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn free(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// mimalloc, through its `GlobalAlloc` methods.
pub struct MiMalloc;

impl Malloc for MiMalloc {
    const NAME: &'static str = MIMALLOC;
    fn new() -> Self {
        MiMalloc
    }
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }
    unsafe fn free(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
}

/// A `malloc`-like contender and the blocks it holds until the end of an iteration,
/// when [`Contender::reset`] frees them all (what the arenas' reset stands for).
pub struct Heap<M: Malloc> {
    malloc: M,
    blocks: Vec<(NonNull<u8>, Layout)>,
}

pub type GlobalMalloc = Heap<SystemMalloc>;
pub type MiHeap = Heap<MiMalloc>;

impl<M: Malloc> Heap<M> {
    /// A block of `layout` (non-zero size), recorded to be freed.
    #[inline(always)]
    fn block(&mut self, layout: Layout) -> NonNull<u8> {
        // SAFETY: every layout of these benchmarks has a non-zero size.
        let ptr = NonNull::new(unsafe { self.malloc.alloc(layout) }).expect("out of memory");
        self.blocks.push((ptr, layout));
        ptr
    }
}

impl<M: Malloc> Contender for Heap<M> {
    const NAME: &'static str = M::NAME;
    fn new() -> Self {
        Heap {
            malloc: M::new(),
            // Grows in the first (warm-up) iteration only: the reset keeps its capacity.
            blocks: Vec::new(),
        }
    }
    fn reset(&mut self) {
        for (ptr, layout) in self.blocks.drain(..) {
            // SAFETY: allocated by `block` with `layout`, freed once.
            unsafe { self.malloc.free(ptr.as_ptr(), layout) };
        }
    }
}

impl<M: Malloc> Calls for Heap<M> {
    #[inline(always)]
    fn alloc_layout(&mut self, layout: Layout) -> NonNull<u8> {
        self.block(layout)
    }
    #[inline(always)]
    fn alloc<T: Copy>(&mut self, value: T) -> &mut T {
        let block = self.block(Layout::new::<T>()).cast::<T>();
        // SAFETY: a fresh block sized and aligned for a `T`, reached by nothing else.
        unsafe {
            block.write(value);
            &mut *block.as_ptr()
        }
    }
    #[inline(always)]
    fn alloc_str(&mut self, s: &str) -> &mut str {
        let block = self.block(Layout::for_value(s));
        // SAFETY: a fresh block of `s.len()` bytes; they are a copy of a `str`.
        unsafe {
            block.copy_from_nonoverlapping(NonNull::from(s).cast(), s.len());
            let bytes = std::slice::from_raw_parts_mut(block.as_ptr(), s.len());
            std::str::from_utf8_unchecked_mut(bytes)
        }
    }
    #[inline(always)]
    fn alloc_slice_copy<T: Copy>(&mut self, src: &[T]) -> &mut [T] {
        let block = self.block(Layout::for_value(src)).cast::<T>();
        // SAFETY: a fresh block sized and aligned for `src.len()` values of `T`.
        unsafe {
            block.copy_from_nonoverlapping(NonNull::from(src).cast(), src.len());
            std::slice::from_raw_parts_mut(block.as_ptr(), src.len())
        }
    }
}

impl Collections for GlobalMalloc {
    type Vec<'a> = Vec<u64>;
    type Api<'a> = Global;
    fn vec(&self) -> Vec<u64> {
        Vec::new()
    }
    fn api(&self) -> Global {
        Global
    }
}

impl Collections for MiHeap {
    type Vec<'a> = ApiVec<u64, Mi>;
    type Api<'a> = Mi;
    fn vec(&self) -> ApiVec<u64, Mi> {
        ApiVec::new_in(Mi)
    }
    fn api(&self) -> Mi {
        Mi
    }
}
