//! Tells the tests whether they are built under AddressSanitizer or
//! ThreadSanitizer, so that they compile the C programs with `-fsanitize=address`
//! or `-fsanitize=thread` to match the library; and gives the shared library the
//! SONAME that cargo-c gives it.

fn main() {
    soname();
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_capi_asan)");
    println!("cargo::rustc-check-cfg=cfg(onewayalloc_capi_tsan)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CARGO_CFG_SANITIZE");
    let sanitizers = std::env::var("CARGO_CFG_SANITIZE").unwrap_or_default();
    let on = |name: &str| sanitizers.split(',').any(|sanitizer| sanitizer == name);
    if on("address") {
        println!("cargo::rustc-cfg=onewayalloc_capi_asan");
    }
    if on("thread") {
        println!("cargo::rustc-cfg=onewayalloc_capi_tsan");
        println!(
            "cargo::rustc-env=ONEWAYALLOC_CAPI_TSAN_RUNTIME={}",
            tsan_runtime()
        );
    }
}

/// The shared library's SONAME, in every build (`cargo build` too): the one
/// `cargo cinstall` installs, `lib<[package.metadata.capi.library] name>.so.<v>`,
/// with `v` the major version, or `0.<minor>` before 1.0 (for 0.1.0:
/// `libonewayalloc.so.0.1`). A program linked against `libonewayalloc_capi.so` of a
/// plain `cargo build` then needs that name at run time (the README's link commands
/// make it a symlink beside the library) and runs against a cargo-c install too.
fn soname() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if !matches!(os.as_str(), "linux" | "freebsd" | "dragonfly" | "netbsd") {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets it");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets it");
    let version = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,libonewayalloc.so.{version}");
}

/// rustc's ThreadSanitizer runtime for the target (`librustc-<channel>_rt.tsan.a` in
/// the toolchain's target library directory): the C programs link with it.
fn tsan_runtime() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let out = std::process::Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", &target])
        .output()
        .expect("rustc runs");
    assert!(out.status.success(), "rustc --print target-libdir failed");
    let dir = std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let runtime = std::fs::read_dir(&dir)
        .expect("the target library directory")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("librustc-") && name.ends_with("_rt.tsan.a"))
        })
        .unwrap_or_else(|| panic!("no TSan runtime in {}", dir.display()));
    runtime.display().to_string()
}
