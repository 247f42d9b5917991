//! The model-based test kit shared by `tests/model.rs` (proptest) and
//! `fuzz/fuzz_targets/ops.rs` (cargo-fuzz), which differ only in how they generate
//! programs of [`Op`]s. One file per job:
//!
//! - `ops.rs`: the operations, and the paths of the policy a run took ([`Hits`]);
//! - `journal.rs`: the arena's backing allocator and the recording `Allocator` that
//!   collections use, which write every page and every call into a journal;
//! - `policy.rs`: a second implementation of SPEC §1's page policy that replays the
//!   journal and predicts every block address, every new page's size and alignment,
//!   the page order, the current page, every refusal by the limit and every page
//!   trimmed, and compares `pages()` and `stats()` with its own;
//! - `contents.rs`: the fill patterns that show a block kept its contents;
//! - `runner.rs`: runs a program against a real arena, scopes nested and some left
//!   by a panic, and checks the invariants that hold whatever the policy after every
//!   step (no overlap, alignment, contents, figures that agree with the pages and
//!   with the backing allocator, rollbacks to the exact position).
//!
//! In sanitizer mode (every allocation its own block) there are no pages: the
//! policy model is off and the runner checks what holds in both modes.

mod contents;
mod journal;
mod ops;
mod policy;
mod runner;

pub use contents::TYPED_CLASSES;
pub use ops::{Hits, Op};
pub use runner::run;
