//! `owned_values_1m`: 1,000,000 values that each hold a std `String`, placed so that
//! their destructors run, then all dropped, per iteration:
//!
//! - `onewayalloc_alloc_owned`: `alloc_owned`, then `reset` (which runs the
//!   destructors, most recent first); the arena's pages are warm;
//! - `std_box`: `Box::new` (malloc) kept in a `Vec`, then the `Vec` cleared;
//! - `bumpalo_box`: `bumpalo::boxed::Box::new_in` kept in a `Vec`, dropped by hand
//!   (the `Vec` cleared), then `Bump::reset`;
//! - `bump-scope_bumpbox`: bump-scope's `BumpBox` from `Bump::alloc`, kept and dropped
//!   the same way, then `reset_to_start`;
//! - `typed-arena`: `typed_arena::Arena<T>::alloc`, then the arena dropped (it has no
//!   reset, so each iteration makes a new one);
//! - `strings_only`: the `String`s alone in a `Vec<String>` (no box, no arena): the
//!   cost of making and freeing the strings that every contender pays, to subtract;
//! - `strings_only_reverse`: the same, the strings freed most recent first, the
//!   order in which the arena runs destructors (glibc's `free` is slower in that
//!   order: this row, not the arena's list, accounts for `alloc_owned`'s gap to
//!   the contenders that drop front to back).
//!
//! The `Vec`s that keep the boxes are created once with room for every value and
//! reused, so they cost a store per value and nothing else. Each value's `String`
//! is made by `String::from` (one `malloc`), and freed by its destructor.

use std::hint::black_box;

use criterion::Criterion;

use onewayalloc_harness::owned_value::{Value, value};

use crate::contenders::group;

/// Values per iteration.
const COUNT: usize = 1_000_000;

/// A contender whose boxes are kept in a reused `Vec`, dropped by hand (the `Vec`
/// cleared), then the arena reset: `by_hand!(group, name, new arena, |arena, i|
/// make a box, |arena| reset)`.
macro_rules! by_hand {
    ($g:expr, $name:literal, $new:expr, |$arena:ident, $i:ident| $make:expr,
     |$arena_mut:ident| $reset:expr) => {
        $g.bench_function($name, |b| {
            let mut bump = $new;
            let mut kept = Vec::with_capacity(COUNT);
            b.iter(|| {
                {
                    let mut boxes = std::mem::take(&mut kept);
                    for $i in 0..COUNT {
                        let $arena = &bump;
                        let v = $make;
                        black_box(&v.id);
                        boxes.push(v);
                    }
                    boxes.clear(); // drops every box by hand
                    kept = recycle(boxes);
                }
                let $arena_mut = &mut bump;
                $reset;
            })
        })
    };
}

pub fn bench_owned_values(c: &mut Criterion) {
    let mut g = group(c, "owned_values_1m", COUNT, 10);
    g.bench_function("onewayalloc_alloc_owned", |b| {
        let mut arena = onewayalloc::OneWayAlloc::new();
        b.iter(|| {
            for i in 0..COUNT {
                let v = arena.alloc_owned(value(i));
                black_box(&v.id);
            }
            arena.reset();
        })
    });
    g.bench_function("std_box", |b| {
        let mut kept: Vec<Box<Value>> = Vec::with_capacity(COUNT);
        b.iter(|| {
            for i in 0..COUNT {
                let v = Box::new(value(i));
                black_box(&v.id);
                kept.push(v);
            }
            kept.clear();
        })
    });
    by_hand!(
        g,
        "bumpalo_box",
        bumpalo::Bump::new(),
        |bump, i| bumpalo::boxed::Box::new_in(value(i), bump),
        |bump| bump.reset()
    );
    by_hand!(
        g,
        "bump-scope_bumpbox",
        bump_scope::Bump::<bump_scope::alloc::Global>::new(),
        |bump, i| bump.alloc(value(i)),
        |bump| bump.reset_to_start()
    );
    g.bench_function("typed-arena", |b| {
        b.iter(|| {
            let arena = typed_arena::Arena::new();
            for i in 0..COUNT {
                let v = arena.alloc(value(i));
                black_box(&v.id);
            }
            drop(arena);
        })
    });
    for (name, reverse) in [("strings_only", false), ("strings_only_reverse", true)] {
        g.bench_function(name, |b| {
            let mut kept: Vec<String> = Vec::with_capacity(COUNT);
            b.iter(|| {
                for i in 0..COUNT {
                    let v = value(i);
                    black_box(&v.id);
                    kept.push(v.name);
                }
                if reverse {
                    while let Some(s) = kept.pop() {
                        drop(s);
                    }
                } else {
                    kept.clear();
                }
            })
        });
    }
    g.finish();
}

/// An empty `Vec` of boxes borrowing one arena turned into one for the next
/// iteration's borrow, keeping its buffer (no element is alive, so no borrow is).
fn recycle<T, U>(mut boxes: Vec<T>) -> Vec<U> {
    assert!(size_of::<T>() == size_of::<U>() && align_of::<T>() == align_of::<U>());
    boxes.clear();
    let capacity = boxes.capacity();
    let ptr = boxes.as_mut_ptr();
    std::mem::forget(boxes);
    // SAFETY: the buffer was allocated by a `Vec<T>` with this capacity; `T` and `U`
    // have the same size and alignment (checked above), so the same layout; the
    // length is 0, so no element is reinterpreted.
    unsafe { Vec::from_raw_parts(ptr.cast::<U>(), 0, capacity) }
}
