//! Runs programs of arena operations decoded from the fuzzer's bytes against the
//! page-policy model, with the checks of `tests/model.rs` (the kit in
//! `tests/model/` is shared). Only the decoding lives here: the same operations,
//! with about the same weights, as the proptest strategies.
//!
//! Run it with `--sanitizer none` (as scripts/fuzz.sh does) to check the page
//! policy: under AddressSanitizer (cargo-fuzz's default) the crate switches to its
//! sanitizer mode, every allocation its own block, where there are no pages to model
//! and the runner checks contents, overlap, alignment and rollbacks only, with ASan
//! watching every access.
#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/model/mod.rs"]
#[allow(dead_code, unused_imports)] // `Hits` is read by tests/model.rs only
mod model;

use model::{Op, TYPED_CLASSES};

const KIB: usize = 1024;
const MAX_SIZE: usize = 2 * KIB * KIB;
const MAX_HINT: usize = 3 * KIB * KIB;
const MAX_OPS: usize = 256;

/// A program: operations until the input runs out.
#[derive(Debug)]
struct Program(Vec<Op>);

impl<'a> Arbitrary<'a> for Program {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            ops.push(op(u)?);
        }
        Ok(Program(ops))
    }
}

/// Mostly small sizes, some up to 64 KiB, a few up to 2 MiB (as in tests/model.rs).
fn size(u: &mut Unstructured) -> Result<usize> {
    Ok(match u.int_in_range(0..=99u8)? {
        0..=1 => 0,
        2..=79 => u.int_in_range(1..=256)?,
        80..=93 => u.int_in_range(257..=64 * KIB)?,
        _ => u.int_in_range(64 * KIB + 1..=MAX_SIZE)?,
    })
}

/// Alignments 1..=4096, rarely up to 64 KiB.
fn align_log2(u: &mut Unstructured) -> Result<u8> {
    match u.int_in_range(0..=99u8)? {
        0..=69 => u.int_in_range(0..=4),
        70..=97 => u.int_in_range(5..=12),
        _ => u.int_in_range(13..=16),
    }
}

fn new_align_log2(u: &mut Unstructured) -> Result<Option<u8>> {
    Ok(if u.ratio(1, 4)? {
        Some(align_log2(u)?)
    } else {
        None
    })
}

fn index(u: &mut Unstructured) -> Result<usize> {
    u.int_in_range(0..=15)
}

/// Room left under a limit: none, a little, or more than a few pages; often a
/// multiple of 64 KiB, which page sizes add up to exactly.
fn headroom(u: &mut Unstructured) -> Result<Option<usize>> {
    Ok(match u.int_in_range(0..=6u8)? {
        0..=1 => None,
        2 => Some(0),
        3..=4 => Some(u.int_in_range(0..=32usize)? * 64 * KIB),
        _ => Some(u.int_in_range(0..=2 * MAX_SIZE)?),
    })
}

/// Bytes of unused pages `trim` may keep: often a multiple of 64 KiB, which page
/// sizes add up to exactly.
fn keep(u: &mut Unstructured) -> Result<usize> {
    Ok(match u.int_in_range(0..=6u8)? {
        0..=1 => 0,
        2..=3 => u.int_in_range(0..=64usize)? * 64 * KIB,
        4..=5 => u.int_in_range(0..=4 * KIB * KIB)?,
        _ => usize::MAX,
    })
}

/// One operation, with the weights of the proptest strategy (out of 120).
fn op(u: &mut Unstructured) -> Result<Op> {
    Ok(match u.int_in_range(0..=119u8)? {
        0..=19 => Op::Layout {
            size: size(u)?,
            align_log2: align_log2(u)?,
        },
        20..=27 => Op::Bytes { size: size(u)? },
        28..=31 => {
            let (nmemb, size) = if u.ratio(1, 20)? {
                (usize::MAX / 2, 3)
            } else {
                (u.int_in_range(0..=64)?, u.int_in_range(0..=1024)?)
            };
            Op::Zeroed { nmemb, size }
        }
        32..=35 => Op::Str {
            len: u.int_in_range(0..=4096)?,
        },
        36..=45 => Op::Allocate {
            size: size(u)?,
            align_log2: align_log2(u)?,
        },
        46..=55 => Op::Grow {
            block: index(u)?,
            extra: if u.ratio(4, 5)? {
                u.int_in_range(0..=256)?
            } else {
                size(u)?
            },
            align_log2: new_align_log2(u)?,
            zeroed: u.arbitrary()?,
        },
        56..=60 => Op::Shrink {
            block: index(u)?,
            size: u.int_in_range(0..=MAX_SIZE)?,
            align_log2: new_align_log2(u)?,
        },
        61..=68 => Op::Deallocate { block: index(u)? },
        69..=71 => Op::GrowBuffer {
            doublings: u.int_in_range(1..=10)?,
        },
        72..=79 => Op::VecPush {
            vec: index(u)?,
            count: u.int_in_range(1..=64)?,
        },
        80..=81 => Op::VecShrink { vec: index(u)? },
        82..=84 => Op::VecDrop { vec: index(u)? },
        85..=88 => Op::BoxNew {
            big: u.arbitrary()?,
        },
        89..=90 => Op::BoxDrop { index: index(u)? },
        91..=95 => Op::MapInsert {
            map: index(u)?,
            count: u.int_in_range(1..=32)?,
        },
        96..=97 => Op::MapDrop { map: index(u)? },
        98..=103 => Op::ScopeEnter,
        104..=108 => Op::ScopeExit {
            panic: u.ratio(3, 10)?,
        },
        109 => Op::SetLimit {
            headroom: headroom(u)?,
        },
        110 => Op::Trim { keep: keep(u)? },
        111..=112 => Op::Reset,
        113..=118 => Op::Typed {
            class: u.int_in_range(0..=TYPED_CLASSES - 1)?,
            with: u.arbitrary()?,
        },
        _ => Op::NewArena {
            size_hint: if u.arbitrary()? {
                0
            } else {
                u.int_in_range(0..=MAX_HINT)?
            },
        },
    })
}

fuzz_target!(|program: Program| {
    model::run(&program.0);
});
