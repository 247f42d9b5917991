//! Turns on the sanitizer mode (every allocation its own block of the backing
//! allocator) under AddressSanitizer or with the `separate-blocks` feature, and
//! marks a build under any sanitizer (`onewayalloc_sanitizer`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_separate_blocks)");
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_sanitizer)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_CFG_SANITIZE");
    let sanitizers = std::env::var("CARGO_CFG_SANITIZE").unwrap_or_default();
    // Any sanitizer (address, thread, ...): tests/compile_fail.rs is skipped there.
    if !sanitizers.is_empty() {
        println!("cargo::rustc-cfg=onewayalloc_sanitizer");
    }
    let asan = sanitizers
        .split(',')
        .any(|sanitizer| sanitizer == "address");
    let feature = std::env::var_os("CARGO_FEATURE_SEPARATE_BLOCKS").is_some();
    if asan || feature {
        println!("cargo::rustc-cfg=onewayalloc_separate_blocks");
    }
}
