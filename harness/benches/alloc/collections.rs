//! The collections: `vec_push_1m` (1,000,000 `u64` pushes into a vector that starts
//! empty, in each contender's own vector type, which grows in place in the arenas),
//! `vec_push_1m_cold` (the same in a fresh allocator each time) and
//! `hashmap_insert_100k` (100,000 inserts into a `hashbrown::HashMap<u64, u64>` with
//! its default hasher).

use std::hint::black_box;

use criterion::Criterion;
use onewayalloc::OneWayAlloc;
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};

use crate::contenders::{
    BumpScopeReset, Collections, Contender, GlobalMalloc, Group, Push, every_contender, group,
};

const PUSHES: usize = 1_000_000;
const INSERTS: usize = 100_000;

/// The pushes of one iteration.
#[inline(always)]
fn pushes<C: Collections>(c: &C) {
    let mut v = c.vec();
    for i in 0..PUSHES as u64 {
        v.push(black_box(i));
    }
    black_box(&v);
}

/// `pushes` into `C`, created once and reset after every iteration.
fn vec_push<C: Collections>(g: &mut Group) {
    g.bench_function(C::NAME, |b| {
        let mut c = C::new();
        b.iter(|| {
            pushes(&c);
            c.reset();
        })
    });
}

/// `pushes` into a fresh `C` each time (created, used, dropped), named `name`.
fn vec_push_cold<C: Collections>(g: &mut Group, name: &str) {
    g.bench_function(name, |b| {
        b.iter(|| {
            let c = C::new();
            pushes(&c);
            drop(c);
        })
    });
}

#[inline(always)]
fn key(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The inserts into a map in `C`, created once and reset after every iteration.
fn hashmap_insert<C: Collections>(g: &mut Group) {
    g.bench_function(C::NAME, |b| {
        let mut c = C::new();
        b.iter(|| {
            let mut map = HashMap::with_hasher_in(DefaultHashBuilder::default(), c.api());
            for i in 0..INSERTS {
                map.insert(key(black_box(i)), i as u64);
            }
            black_box(&map);
            drop(map);
            c.reset();
        })
    });
}

pub fn bench_vec_push(c: &mut Criterion) {
    let mut g = group(c, "vec_push_1m", PUSHES, 10);
    every_contender!(vec_push; &mut g);
    g.finish();
}

/// The cold case, where every page or chunk is new memory (bump-scope's two resets
/// are one here).
pub fn bench_vec_push_cold(c: &mut Criterion) {
    let mut g = group(c, "vec_push_1m_cold", PUSHES, 10);
    vec_push_cold::<OneWayAlloc>(&mut g, OneWayAlloc::NAME);
    vec_push_cold::<bumpalo::Bump>(&mut g, bumpalo::Bump::NAME);
    vec_push_cold::<BumpScopeReset>(&mut g, "bump-scope");
    vec_push_cold::<GlobalMalloc>(&mut g, GlobalMalloc::NAME);
    g.finish();
}

/// bump-scope takes part through an adapter that forwards to its own `Allocator`
/// trait exactly as its `allocator-api2-02` feature does (see
/// `onewayalloc_harness::compat`); mimalloc through its `GlobalAlloc`.
pub fn bench_hashmap_insert(c: &mut Criterion) {
    let mut g = group(c, "hashmap_insert_100k", INSERTS, 10);
    every_contender!(hashmap_insert; &mut g);
    g.finish();
}
