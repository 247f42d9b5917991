//! Runs programs of arena operations decoded from the fuzzer's bytes against the
//! page-policy model, with the checks of `tests/model.rs` (the model and the runner
//! are the same file). Only the decoding lives here.
//!
//! Run it with `--sanitizer none` (as scripts/fuzz.sh does) to check the page
//! policy: under AddressSanitizer (cargo-fuzz's default) the crate switches to its
//! sanitizer mode, every allocation its own block, where there are no pages to model
//! and the runner checks block contents only, with ASan watching every access.
#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/model/runner.rs"]
#[allow(dead_code)] // `Hits` is read by tests/model.rs only
mod runner;

use runner::Op;

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

fn op(u: &mut Unstructured) -> Result<Op> {
    Ok(match u.int_in_range(0..=17u8)? {
        0..=2 => Op::Layout {
            size: size(u)?,
            align_log2: align_log2(u)?,
        },
        3 => Op::Bytes { size: size(u)? },
        4 => {
            let (nmemb, size) = if u.ratio(1, 20)? {
                (usize::MAX / 2, 3)
            } else {
                (u.int_in_range(0..=64)?, u.int_in_range(0..=1024)?)
            };
            Op::Zeroed { nmemb, size }
        }
        5 => Op::Str {
            len: u.int_in_range(0..=4096)?,
        },
        6 | 7 => Op::Allocate {
            size: size(u)?,
            align_log2: align_log2(u)?,
        },
        8 => Op::Grow {
            block: index(u)?,
            extra: if u.ratio(4, 5)? {
                u.int_in_range(0..=256)?
            } else {
                size(u)?
            },
            align_log2: new_align_log2(u)?,
            zeroed: u.arbitrary()?,
        },
        9 => Op::Shrink {
            block: index(u)?,
            size: u.int_in_range(0..=MAX_SIZE)?,
            align_log2: new_align_log2(u)?,
        },
        10 => Op::Deallocate { block: index(u)? },
        11 => Op::VecPush {
            vec: index(u)?,
            count: u.int_in_range(1..=64)?,
        },
        12 => match u.int_in_range(0..=2u8)? {
            0 => Op::VecShrink { vec: index(u)? },
            1 => Op::VecDrop { vec: index(u)? },
            _ => Op::MapDrop { map: index(u)? },
        },
        13 => Op::BoxNew {
            big: u.arbitrary()?,
        },
        14 => Op::BoxDrop { index: index(u)? },
        15 => Op::MapInsert {
            map: index(u)?,
            count: u.int_in_range(1..=32)?,
        },
        16 => Op::Reset,
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
    runner::run(&program.0);
});
