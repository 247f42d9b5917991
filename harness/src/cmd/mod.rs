//! The subcommands, one module each.

pub mod context_query;
pub mod instructions;
pub mod linked_list;
pub mod reuse;

use clap::builder::RangedU64ValueParser;

/// Parses a number of at least 1.
pub fn positive() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..)
}
