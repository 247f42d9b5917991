//! `slice_from_iter_1k`: a slice of 1,000 `u32` from a `map` iterator, 1,000 slices
//! per reset, by each arena's own call: onewayalloc's `alloc_slice_fill_iter` (an
//! `ExactSizeIterator`) and `alloc_iter` (any iterator), bumpalo's
//! `alloc_slice_fill_iter` (and, for any iterator, what a bumpalo user writes:
//! `Vec::from_iter_in(..).into_bump_slice()`), bump-scope's `alloc_iter` and
//! `alloc_iter_exact` (its `ExactSizeIterator` call). One generic body
//! ([`from_iter`]) times each.

use std::hint::black_box;

use criterion::Criterion;
use onewayalloc::OneWayAlloc;

use crate::contenders::{BUMPALO, BumpScopeToStart, Contender, Group, OWA, group};

const LEN: u32 = 1_000;
const SLICES: usize = 1_000;

/// The items of one slice: `LEN` values mapped from a range (exact size).
#[inline(always)]
fn items(seed: u32) -> impl ExactSizeIterator<Item = u32> {
    (0..LEN).map(move |i| i.wrapping_mul(3) ^ seed)
}

/// Times `SLICES` calls of `call` (with a fresh seed each) and a reset, on `C`
/// created once.
fn from_iter<C: Contender>(g: &mut Group, name: &str, call: impl Fn(&C, u32)) {
    g.bench_function(name, |b| {
        let mut c = C::new();
        b.iter(|| {
            for k in 0..SLICES as u32 {
                call(&c, black_box(k));
            }
            c.reset();
        })
    });
}

pub fn bench_slice_from_iter(c: &mut Criterion) {
    let mut g = group(c, "slice_from_iter_1k", SLICES, 20);
    from_iter(
        &mut g,
        &format!("{OWA}_alloc_slice_fill_iter"),
        |a: &OneWayAlloc, k| {
            black_box(a.alloc_slice_fill_iter(items(k)));
        },
    );
    from_iter(
        &mut g,
        &format!("{OWA}_alloc_iter"),
        |a: &OneWayAlloc, k| {
            black_box(a.alloc_iter(items(k)));
        },
    );
    from_iter(
        &mut g,
        &format!("{BUMPALO}_alloc_slice_fill_iter"),
        |b: &bumpalo::Bump, k| {
            black_box(b.alloc_slice_fill_iter(items(k)));
        },
    );
    from_iter(
        &mut g,
        &format!("{BUMPALO}_vec_from_iter_in"),
        |b: &bumpalo::Bump, k| {
            black_box(bumpalo::collections::Vec::from_iter_in(items(k), b).into_bump_slice());
        },
    );
    // bump-scope reset with `reset_to_start`, which keeps every chunk as onewayalloc
    // does.
    from_iter(
        &mut g,
        "bump-scope_alloc_iter",
        |b: &BumpScopeToStart, k| {
            black_box(b.0.alloc_iter(items(k)).into_mut());
        },
    );
    from_iter(
        &mut g,
        "bump-scope_alloc_iter_exact",
        |b: &BumpScopeToStart, k| {
            black_box(b.0.alloc_iter_exact(items(k)).into_mut());
        },
    );
    g.finish();
}
