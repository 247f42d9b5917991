//! Turns on the sanitizer mode (every allocation its own block of the backing
//! allocator) under AddressSanitizer or with the `separate-blocks` feature.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_separate_blocks)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_CFG_SANITIZE");
    let asan = std::env::var("CARGO_CFG_SANITIZE")
        .map(|list| list.split(',').any(|sanitizer| sanitizer == "address"))
        .unwrap_or(false);
    let feature = std::env::var_os("CARGO_FEATURE_SEPARATE_BLOCKS").is_some();
    if asan || feature {
        println!("cargo::rustc-cfg=onewayalloc_separate_blocks");
    }
}
