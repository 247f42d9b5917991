//! `parse-json`: the JSON parse benchmark of `onewayalloc_harness::parse_json`, with
//! glibc malloc as the global allocator of the `std` types.

use onewayalloc_harness::parse_json;

/// The options of `parse-json`.
#[derive(clap::Args)]
pub struct Args {
    /// Small bodies and few rounds, a run of about a second
    #[arg(long)]
    quick: bool,
}

pub fn run(args: &Args) {
    parse_json::print(&parse_json::run(args.quick), "glibc malloc");
}
