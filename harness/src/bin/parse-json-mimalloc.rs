//! The JSON parse benchmark (`onewayalloc-harness parse-json`) with mimalloc as the
//! global allocator, so the `std` types allocate from it (the arena's pages too).
//!
//! `cargo run --release -p onewayalloc-harness --bin parse-json-mimalloc [-- --quick]`

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rows = onewayalloc_harness::parse_json::run(quick);
    onewayalloc_harness::parse_json::print(&rows, "mimalloc");
}
