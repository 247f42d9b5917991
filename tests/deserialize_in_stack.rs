//! Feature `derive`: the stack that `DeserializeIn` uses per nesting level, against
//! serde's `Deserialize` for the same shape with `std` types (issue 30).
//!
//! The shape is a list nested through `Option<Box<Node>>`: with a compact format
//! (bincode) nothing bounds the depth but the stack, so the stack per level decides
//! which inputs parse. A probe field (a `u64` whose deserialization records the
//! lowest stack address it runs at) marks the deepest level; the depth in bytes is
//! measured for `N` and `2N` levels, and the difference over `N` is the stack per
//! level (what does not depend on the depth, the caller's and the leaf's frames,
//! cancels out). Each measurement runs in a thread of its own with a large stack.
//!
//! The bound of the `serde` module's docs, at most 1.25 times serde's, is asserted for
//! release builds (`cargo test --release --features serde,derive --test
//! deserialize_in_stack`; .ci/run runs it). The figures of a release build depend on
//! the compiler's inlining, which the rest of the binary sways (how its code is split
//! into codegen units): one added test can move serde's figure or this one by tens of
//! bytes. After a change on a level's path (the derive's visitors, `Option`, `Box`,
//! the strings), check the bound with one codegen unit and with fat LTO too, the other
//! rows of the module's table: `CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1` or
//! `CARGO_PROFILE_RELEASE_LTO=fat` before the command (each with a `CARGO_TARGET_DIR`
//! of its own, to keep the default build). Unoptimized builds inline nothing but the
//! `#[inline(always)]` functions, so their figures are steady, and a looser bound
//! (1.5 times) catches a frame that grows there (the arena's allocation expanded in
//! `Box`'s frame, once 1.5 KiB).
//! Run with `-- --nocapture` to see the figures. Not under Miri nor AddressSanitizer,
//! which keep locals elsewhere than on the native stack.
#![cfg(feature = "derive")]

use std::cell::Cell;
use std::hint::black_box;

use bincode::Options as _;
use onewayalloc::collections::Box as ArenaBox;
use onewayalloc::serde::DeserializeIn;
use onewayalloc::{DeserializeIn, OneWayAlloc};
use serde::{Deserialize, Deserializer, Serialize};

thread_local! {
    /// The lowest stack address a `Probe` was deserialized at.
    static LOWEST: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The address of a local of the calling frame.
#[inline(always)]
fn stack_address() -> usize {
    let here = 0u8;
    black_box(&here) as *const u8 as usize
}

/// A `u64` that records the lowest stack address its deserialization runs at.
#[derive(Serialize)]
struct Probe(u64);

impl<'de> Deserialize<'de> for Probe {
    #[inline(never)]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let here = stack_address();
        LOWEST.with(|lowest| lowest.set(lowest.get().min(here)));
        u64::deserialize(deserializer).map(Probe)
    }
}

impl<'a> DeserializeIn<'a> for Probe {
    fn deserialize_in<'de, D: Deserializer<'de>>(
        deserializer: D,
        _arena: &'a OneWayAlloc,
    ) -> Result<Self, D::Error> {
        Probe::deserialize(deserializer)
    }
}

/// The `std` shape, deserialized by serde's own derive.
#[derive(Serialize, Deserialize)]
struct StdNode {
    value: Probe,
    name: String,
    next: Option<Box<StdNode>>,
}

/// The same shape in the arena.
#[derive(DeserializeIn)]
struct ArenaNode<'a> {
    value: Probe,
    name: &'a str,
    next: Option<ArenaBox<'a, ArenaNode<'a>>>,
}

/// How many nodes a list has, without recursion.
fn std_len(mut node: Option<&StdNode>) -> usize {
    let mut len = 0;
    while let Some(n) = node {
        assert_eq!(n.value.0, len as u64);
        assert_eq!(n.name, format!("node {len}"));
        len += 1;
        node = n.next.as_deref();
    }
    len
}

fn arena_len(mut node: Option<&ArenaNode>) -> usize {
    let mut len = 0;
    while let Some(n) = node {
        assert_eq!(n.value.0, len as u64);
        assert_eq!(n.name, format!("node {len}"));
        len += 1;
        node = n.next.as_deref();
    }
    len
}

/// A list of `levels` nodes, built without recursion.
fn list(levels: usize) -> StdNode {
    let mut node: Option<Box<StdNode>> = None;
    for i in (0..levels).rev() {
        node = Some(Box::new(StdNode {
            value: Probe(i as u64),
            name: format!("node {i}"),
            next: node,
        }));
    }
    *node.expect("at least one level")
}

/// Drops a list without recursion.
fn drop_list(node: StdNode) {
    let mut next = node.next;
    while let Some(mut n) = next {
        next = n.next.take();
    }
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Bincode,
    Json,
}

#[derive(Clone, Copy, Debug)]
enum Side {
    Serde,
    Arena,
}

fn bincode_options() -> impl bincode::Options + Copy {
    bincode::DefaultOptions::new()
}

fn encode(format: Format, levels: usize) -> Vec<u8> {
    let value = list(levels);
    let bytes = match format {
        Format::Bincode => bincode_options().serialize(&value).unwrap(),
        Format::Json => serde_json::to_vec(&value).unwrap(),
    };
    drop_list(value);
    bytes
}

/// How deep (in bytes below this function's frame) deserializing `bytes` reaches.
#[inline(never)]
fn depth(format: Format, side: Side, bytes: &[u8], levels: usize) -> usize {
    let base = stack_address();
    LOWEST.with(|lowest| lowest.set(usize::MAX));
    let arena = OneWayAlloc::new();
    match (format, side) {
        (Format::Bincode, Side::Serde) => {
            let mut de = bincode::Deserializer::from_slice(bytes, bincode_options());
            let node = StdNode::deserialize(&mut de).unwrap();
            assert_eq!(std_len(Some(&node)), levels);
            drop_list(node);
        }
        (Format::Bincode, Side::Arena) => {
            let mut de = bincode::Deserializer::from_slice(bytes, bincode_options());
            let node: ArenaNode = arena.deserialize(&mut de).unwrap();
            assert_eq!(arena_len(Some(&node)), levels);
            // The arena boxes need no drop (`&str` and `u64` inside): leaked, so the
            // drop does not recurse either.
            std::mem::forget(node);
        }
        (Format::Json, Side::Serde) => {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            let node = StdNode::deserialize(&mut de).unwrap();
            de.end().unwrap();
            assert_eq!(std_len(Some(&node)), levels);
            drop_list(node);
        }
        (Format::Json, Side::Arena) => {
            let mut de = serde_json::Deserializer::from_slice(bytes);
            let node: ArenaNode = arena.deserialize(&mut de).unwrap();
            de.end().unwrap();
            assert_eq!(arena_len(Some(&node)), levels);
            std::mem::forget(node);
        }
    }
    let lowest = LOWEST.with(Cell::get);
    assert!(lowest < base, "the probe ran");
    base - lowest
}

/// The stack bytes per nesting level: the depth of `2 * levels` less that of
/// `levels`, over `levels`, in a thread with a 256 MiB stack.
fn per_level(format: Format, side: Side, levels: usize) -> f64 {
    let short = encode(format, levels);
    let long = encode(format, 2 * levels);
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let d1 = depth(format, side, &short, levels);
            let d2 = depth(format, side, &long, 2 * levels);
            // The same depth twice: nothing but the input decides it.
            assert_eq!(d1, depth(format, side, &short, levels));
            assert!(
                d2 > d1,
                "{format:?} {side:?}: {d2} bytes for 2N, {d1} for N"
            );
            (d2 - d1) as f64 / levels as f64
        })
        .unwrap()
        .join()
        .unwrap()
}

/// What the arena may use per level, relative to serde: 1.25 times in release
/// builds (the `serde` module's rule), 1.5 times in unoptimized ones (1.24 times
/// through bincode, 1.13 through serde_json when this was written).
fn bound() -> f64 {
    if cfg!(debug_assertions) { 1.5 } else { 1.25 }
}

fn check(format: Format, levels: usize) {
    let serde = per_level(format, Side::Serde, levels);
    let arena = per_level(format, Side::Arena, levels);
    let ratio = arena / serde;
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{format:?} ({build}): serde {serde:.1} bytes per level, DeserializeIn {arena:.1} \
         ({ratio:.2}x)"
    );
    // A level is a struct, an option and a box: never free.
    assert!(serde >= 32.0, "{format:?}: serde's {serde} bytes per level");
    assert!(
        ratio <= bound(),
        "{format:?} ({build}): DeserializeIn uses {arena:.1} bytes per level, serde \
         {serde:.1}: {ratio:.2}x, above {}x",
        bound()
    );
}

#[test]
#[cfg_attr(
    any(miri, onewayalloc_sanitizer),
    ignore = "measures the native stack (AddressSanitizer moves locals to a fake stack)"
)]
fn bincode_stack_per_level_is_near_serde() {
    check(Format::Bincode, 1000);
}

#[test]
#[cfg_attr(
    any(miri, onewayalloc_sanitizer),
    ignore = "measures the native stack (AddressSanitizer moves locals to a fake stack)"
)]
fn json_stack_per_level_is_near_serde() {
    // serde_json's recursion limit is 128 nested values: 2N must stay below it.
    check(Format::Json, 50);
}

/// Input deeper than the thread's stack could hold: parsed through serde_stacker,
/// which runs the deserializer on stack segments of its own (on the heap) once the
/// thread's stack is near its end, as the `serde` module recommends.
#[test]
#[cfg_attr(
    any(miri, onewayalloc_sanitizer),
    ignore = "switches stacks, which Miri cannot and AddressSanitizer does not follow"
)]
fn deep_input_parses_through_serde_stacker() {
    const LEVELS: usize = 10_000;
    const STACK: usize = 256 << 10;
    // Serialized on a large stack: serde's serializer recurses too.
    let bytes = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| encode(Format::Bincode, LEVELS))
        .unwrap()
        .join()
        .unwrap();
    // Plain, the parse would need ~LEVELS times the bytes per level measured above
    // (1 MiB and more): four times this thread's stack.
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let arena = OneWayAlloc::new();
            let mut de = bincode::Deserializer::from_slice(&bytes, bincode_options());
            let node: ArenaNode = arena
                .deserialize(serde_stacker::Deserializer::new(&mut de))
                .unwrap();
            assert_eq!(arena_len(Some(&node)), LEVELS);
            // Dropped link by link: a recursive drop would need a deep stack too.
            let mut next = node.next;
            while let Some(mut n) = next {
                next = n.next.take();
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
