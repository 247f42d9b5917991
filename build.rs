//! Turns on the sanitizer mode (every allocation its own block of the backing
//! allocator) under AddressSanitizer or with the `separate-blocks` feature, and
//! marks a build under any sanitizer (`onewayalloc_sanitizer`) and one with the
//! page heap (`onewayalloc_page_heap`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_separate_blocks)");
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_sanitizer)");
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_page_heap)");
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_tsan)");
    // The loom model tests of `SyncOneWayAlloc` (tests/loom_sync_arena.rs).
    println!("cargo::rustc-check-cfg=cfg(loom)");
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
    // ThreadSanitizer: `SyncOneWayAlloc` identifies threads by a number never
    // reused (src/sync_arena/sync.rs), since TSan cannot see the C library's lock
    // that orders a thread's exit before another thread gets its thread pointer.
    if sanitizers.split(',').any(|sanitizer| sanitizer == "thread") {
        println!("cargo::rustc-cfg=onewayalloc_tsan");
    }
    let feature = std::env::var_os("CARGO_FEATURE_SEPARATE_BLOCKS").is_some();
    if asan || feature {
        println!("cargo::rustc-cfg=onewayalloc_separate_blocks");
    }
    // The page heap of `OneWayAlloc::new()` (src/engine/page_heap/): 64-bit Linux with std,
    // in the page mode, outside Miri (which cannot run mmap).
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let page_heap = !(asan || feature)
        && std::env::var_os("CARGO_FEATURE_STD").is_some()
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_POINTER_WIDTH") == "64"
        && std::env::var_os("CARGO_CFG_MIRI").is_none();
    if page_heap {
        println!("cargo::rustc-cfg=onewayalloc_page_heap");
    }
}
