//! Building and running the C programs of `capi/tests/c/` against the library that
//! cargo built for this very test run.
//!
//! # Which library
//!
//! A build script runs before its own package's library exists, so the C programs
//! are compiled here, at test time. `cargo test -p onewayalloc-capi` builds the
//! package's library with every crate type in `[lib] crate-type`, the static and
//! the shared library included, into `deps/`, the directory this test binary
//! lives in (`target[/<triple>]/<profile>/deps/`), without a hash in their names.
//! It does not copy them up to `target/<profile>/` (only `cargo build` does), so
//! the `.a` there may be an older build: it was, when this was written. [`library`]
//! therefore takes the one in `deps/`, and checks that it is the one this run
//! built: not newer than this test binary (cargo links the test after the library,
//! and relinks it whenever the library is rebuilt, for example with other
//! features), and of the mode this test was compiled for (a probe program asks the
//! library).
//!
//! # Configurations
//!
//! - the mode, from the `separate-blocks` feature (or ASan, which implies it);
//! - AddressSanitizer: when the tests are built with `-Zsanitizer=address` (the
//!   build script tells them), the C programs are compiled with
//!   `-fsanitize=address` too;
//! - ThreadSanitizer: likewise `-Zsanitizer=thread` (with `-Zbuild-std`) compiles
//!   them with `-fsanitize=thread`;
//! - Valgrind: with `ONEWAYALLOC_CAPI_VALGRIND=1`, every C program runs under
//!   `valgrind --error-exitcode=99 --leak-check=full` (a missing valgrind fails
//!   the tests; it is never skipped).
//! - Another build of the library: with `ONEWAYALLOC_CAPI_LIBRARY_DIR=dir` (relative
//!   to the workspace root), the C programs link against `dir/libonewayalloc_capi.a`
//!   instead, for example the small `no_std` library of the `capi-release` profile
//!   (`target/capi-release`); it is not checked against this test binary's build
//!   time, only for its mode.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

/// Whether the library runs the sanitizer mode.
pub const SEPARATE: bool = onewayalloc_capi::SEPARATE_BLOCKS;
/// Whether the tests (and so the library) are built with AddressSanitizer.
pub const ASAN: bool = cfg!(onewayalloc_capi_asan);
/// Whether the tests (and so the library) are built with ThreadSanitizer.
pub const TSAN: bool = cfg!(onewayalloc_capi_tsan);
/// Under ThreadSanitizer, rustc's TSan runtime archive, which the C programs link
/// with (the build script finds it in the toolchain's target library directory).
const TSAN_RUNTIME: Option<&str> = option_env!("ONEWAYALLOC_CAPI_TSAN_RUNTIME");

/// Whether the C programs run under Valgrind (`ONEWAYALLOC_CAPI_VALGRIND=1`).
pub fn valgrind() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let on = std::env::var("ONEWAYALLOC_CAPI_VALGRIND").is_ok_and(|v| v == "1");
        assert!(
            !(on && (ASAN || TSAN)),
            "Valgrind and a sanitizer do not run together"
        );
        if on {
            let found = Command::new("valgrind").arg("--version").output();
            assert!(
                found.is_ok_and(|out| out.status.success()),
                "ONEWAYALLOC_CAPI_VALGRIND=1 but valgrind cannot be run"
            );
        }
        on
    })
}

/// The exit code Valgrind gives a program in which it found errors.
pub const VALGRIND_ERROR: i32 = 99;

/// The library of this test run.
pub struct Library {
    /// `libonewayalloc_capi.a`.
    pub static_lib: PathBuf,
    /// `libonewayalloc_capi.so`.
    pub shared_lib: PathBuf,
    /// Where the C programs of this configuration are built.
    out_dir: PathBuf,
}

/// `capi/`.
pub fn package_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The library this run built, checked (see the module documentation).
pub fn library() -> &'static Library {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let test_exe = std::env::current_exe().expect("the test binary's path");
        let deps = test_exe
            .parent()
            .expect("the test binary lives in <profile>/deps/");
        let mut profile_dir = deps.parent().expect("deps/ is in the profile directory");
        let other = std::env::var_os("ONEWAYALLOC_CAPI_LIBRARY_DIR")
            .map(|dir| package_dir().parent().unwrap().join(dir));
        let lib_dir = other.as_deref().unwrap_or(deps);
        let static_lib = lib_dir.join("libonewayalloc_capi.a");
        let shared_lib = lib_dir.join("libonewayalloc_capi.so");
        for lib in [&static_lib, &shared_lib] {
            if other.is_some() {
                assert!(lib.exists(), "{} does not exist", lib.display());
                continue;
            }
            assert!(
                lib.exists(),
                "{} was not built with the tests",
                lib.display()
            );
            let modified = |path: &Path| path.metadata().and_then(|m| m.modified()).unwrap();
            assert!(
                modified(lib) <= modified(&test_exe),
                "{} is newer than this test binary: it was rebuilt since (with other \
                 features?); run the tests through `cargo test -p onewayalloc-capi`",
                lib.display()
            );
        }
        // One directory per configuration, under target/tmp: `debug-pages`,
        // `x86_64-unknown-linux-gnu-debug-separate-asan`, ...
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let target_dir = tmp.parent().expect("CARGO_TARGET_TMPDIR is <target>/tmp");
        if let Some(other) = &other {
            profile_dir = other;
        }
        let profile = profile_dir.strip_prefix(target_dir).unwrap_or(profile_dir);
        let config = format!(
            "{}-{}{}",
            profile.display().to_string().replace('/', "-"),
            if SEPARATE { "separate" } else { "pages" },
            if ASAN {
                "-asan"
            } else if TSAN {
                "-tsan"
            } else {
                ""
            }
        );
        let out_dir = tmp.join("capi-c").join(config);
        std::fs::create_dir_all(&out_dir).unwrap();
        let library = Library {
            static_lib,
            shared_lib,
            out_dir,
        };
        let probe = library.compile_with("mode_probe.c", &[]);
        let output = run_plain(&probe, &[]);
        assert!(output.status.success(), "the mode probe failed: {output:?}");
        let mode = String::from_utf8_lossy(&output.stdout);
        let expected = if SEPARATE { "separate-blocks" } else { "pages" };
        assert_eq!(
            mode.trim(),
            expected,
            "{} runs another mode than this test was built for",
            library.static_lib.display()
        );
        library
    })
}

impl Library {
    /// Compiles `source` (C, or C++ for `.cpp`; a bare file name is in
    /// `capi/tests/c/`, a path is relative to `capi/`) with the configuration's
    /// flags and then `flags`, links it against the static library, and returns the
    /// executable.
    pub fn compile_with(&self, source: &str, flags: &[&str]) -> PathBuf {
        let path = if source.contains('/') {
            package_dir().join(source)
        } else {
            package_dir().join("tests/c").join(source)
        };
        let cxx = source.ends_with(".cpp");
        let compiler = if cxx {
            std::env::var("CXX").unwrap_or_else(|_| "c++".into())
        } else {
            std::env::var("CC").unwrap_or_else(|_| "cc".into())
        };
        let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
        let exe = self.out_dir.join(stem);
        let mut command = Command::new(&compiler);
        command
            .arg(if cxx { "-std=c++11" } else { "-std=gnu11" })
            .args(["-g", "-O1", "-Wall", "-Wextra", "-Werror", "-pthread"])
            .arg(format!("-I{}", package_dir().join("include").display()))
            .arg(format!("-DSEPARATE_BLOCKS={}", u8::from(SEPARATE)))
            .arg(format!(
                "-DPAGE_HEADER_SIZE={}",
                onewayalloc::PAGE_HEADER_SIZE
            ))
            .args(flags);
        if ASAN {
            command.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
        }
        if let Some(runtime) = TSAN_RUNTIME {
            // gcc instruments the program, but it is linked with rustc's own TSan
            // runtime (the one a Rust binary built with -Zsanitizer=thread gets), not
            // gcc's libtsan, which lacks the `__tsan_memcpy` family that rustc's code
            // calls: so compile to an object first, then link without gcc's runtime.
            let object = exe.with_extension("o");
            command
                .args(["-fsanitize=thread", "-fno-omit-frame-pointer", "-c"])
                .arg(&path)
                .arg("-o")
                .arg(&object);
            run_compiler(command);
            let mut link = Command::new(&compiler);
            link.arg("-pthread")
                .arg(&object)
                .arg(&self.static_lib)
                .args(["-Wl,--whole-archive", runtime, "-Wl,--no-whole-archive"])
                .args(["-lpthread", "-ldl", "-lm", "-lrt", "-o"])
                .arg(&exe);
            run_compiler(link);
            return exe;
        }
        command
            .arg(&path)
            .arg(&self.static_lib)
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&exe);
        run_compiler(command);
        exe
    }

    /// The program built from `source` with the configuration's flags, compiled
    /// once per test run however many tests use it.
    pub fn program(&self, source: &'static str) -> PathBuf {
        /// Each program's executable, once built; the map's lock is held only to
        /// find a program's cell, so different programs build in parallel.
        type Built = Mutex<HashMap<&'static str, Arc<OnceLock<PathBuf>>>>;
        static BUILT: LazyLock<Built> = LazyLock::new(Default::default);
        let cell = BUILT.lock().unwrap().entry(source).or_default().clone();
        cell.get_or_init(|| self.compile_with(source, &[])).clone()
    }
}

/// Runs a compiler or linker command, panicking with its output if it fails.
fn run_compiler(mut command: Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `exe` with `args` directly.
fn run_plain(exe: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(exe);
    command.args(args);
    output_of(command)
}

fn output_of(mut command: Command) -> Output {
    // AddressSanitizer's own refusal of a huge malloc would end the program before
    // the library reports it; let malloc return NULL as it does without ASan.
    command.env("ASAN_OPTIONS", "allocator_may_return_null=1");
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

/// Runs `exe` with `args`, under Valgrind when the configuration asks for it.
pub fn run(exe: &Path, args: &[&str]) -> Output {
    if !valgrind() {
        return run_plain(exe, args);
    }
    let mut command = Command::new("valgrind");
    command
        .args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
        ])
        .arg(exe)
        .args(args);
    output_of(command)
}

/// Builds `source` and runs it with `args`.
pub fn run_program(source: &'static str, args: &[&str]) -> Output {
    let exe = library().program(source);
    run(&exe, args)
}

/// Stdout and stderr, for assertion messages.
pub fn show(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts that the program ran to a successful end.
pub fn assert_success(output: &Output) {
    assert!(output.status.success(), "{}", show(output));
}
