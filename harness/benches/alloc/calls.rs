//! The allocation calls, many per reset: `small_mixed` (100,000 `alloc_layout` of 8
//! to 64 bytes), `alloc_struct32`, `alloc_str` (10,000 each) and
//! `alloc_slice_copy_1k` (1,000). One generic body ([`calls`]) runs each on every
//! contender.

use std::alloc::Layout;
use std::hint::black_box;

use criterion::Criterion;

use crate::contenders::{Calls, Group, every_contender, group};

/// One measured operation: its calls of one iteration, on any contender.
pub trait Op {
    fn run<C: Calls>(&self, c: &mut C);
}

/// Creates `C` once, then times `op` followed by a reset.
fn calls<C: Calls, O: Op>(g: &mut Group, op: &O) {
    g.bench_function(C::NAME, |b| {
        let mut c = C::new();
        b.iter(|| {
            op.run(&mut c);
            c.reset();
        })
    });
}

/// A group of `elements` calls of `op` per iteration, on every contender.
fn bench(c: &mut Criterion, name: &str, elements: usize, op: impl Op) {
    let mut g = group(c, name, elements, 20);
    every_contender!(calls, _; &mut g, &op);
    g.finish();
}

const SMALL_COUNT: usize = 100_000;
const TYPED_COUNT: usize = 10_000;
const SLICE_COUNT: usize = 1_000;

/// `alloc_layout` of 8-aligned layouts of 8..=64 bytes from a fixed xorshift seed.
struct SmallMixed(Vec<Layout>);

impl SmallMixed {
    fn new() -> Self {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let layouts = (0..SMALL_COUNT)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                Layout::from_size_align(8 + (x % 57) as usize, 8).unwrap()
            })
            .collect();
        SmallMixed(layouts)
    }
}

impl Op for SmallMixed {
    #[inline(always)]
    fn run<C: Calls>(&self, c: &mut C) {
        for &layout in &self.0 {
            black_box(c.alloc_layout(black_box(layout)));
        }
    }
}

/// A 32-byte value (written, never read back).
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct Point {
    time: u64,
    value: f64,
    min: f32,
    max: f32,
    flags: u64,
}

const _: () = assert!(size_of::<Point>() == 32);

#[inline(always)]
fn point(i: usize) -> Point {
    Point {
        time: i as u64,
        value: i as f64,
        min: 0.0,
        max: 1.0,
        flags: 7,
    }
}

/// The typed `alloc` of a 32-byte struct.
struct Struct32;

impl Op for Struct32 {
    #[inline(always)]
    fn run<C: Calls>(&self, c: &mut C) {
        for i in 0..TYPED_COUNT {
            black_box(c.alloc(point(black_box(i))));
        }
    }
}

/// Names of the length metric names have (9 to 31 bytes).
const NAMES: [&str; 8] = [
    "system.cpu",
    "system.load.load1",
    "disk.sda.reads",
    "net.eth0.received.kilobits",
    "apps.cpu.user",
    "mem.available",
    "cgroup_docker_1234.cpu_limit",
    "system.interrupts.timer",
];

/// `alloc_str` of metric names.
struct Str;

impl Op for Str {
    #[inline(always)]
    fn run<C: Calls>(&self, c: &mut C) {
        for i in 0..TYPED_COUNT {
            black_box(c.alloc_str(black_box(NAMES[i % NAMES.len()])));
        }
    }
}

/// `alloc_slice_copy` of 1 KiB.
struct SliceCopy(Vec<u8>);

impl Op for SliceCopy {
    #[inline(always)]
    fn run<C: Calls>(&self, c: &mut C) {
        for _ in 0..SLICE_COUNT {
            black_box(c.alloc_slice_copy(black_box(&self.0[..])));
        }
    }
}

pub fn bench_calls(c: &mut Criterion) {
    bench(c, "small_mixed", SMALL_COUNT, SmallMixed::new());
    bench(c, "alloc_struct32", TYPED_COUNT, Struct32);
    bench(c, "alloc_str", TYPED_COUNT, Str);
    let src = (0..1024).map(|i| i as u8).collect();
    bench(c, "alloc_slice_copy_1k", SLICE_COUNT, SliceCopy(src));
}
