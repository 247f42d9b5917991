//! Tells the tests whether they are built under AddressSanitizer, so that they
//! compile the C programs with `-fsanitize=address` to match the library.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_capi_asan)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_CFG_SANITIZE");
    let asan = std::env::var("CARGO_CFG_SANITIZE")
        .map(|list| list.split(',').any(|sanitizer| sanitizer == "address"))
        .unwrap_or(false);
    if asan {
        println!("cargo::rustc-cfg=onewayalloc_capi_asan");
    }
}
