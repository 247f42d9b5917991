//! The C programs of `capi/tests/c/`, compiled with the system C compiler against
//! the static library this test run built, each run as a child process: one test
//! per program, per fatal case and per misuse case (see `common` for how the
//! library is found and checked, and for the configurations).
//!
//! ```text
//! cargo test -p onewayalloc-capi                                   # page mode
//! cargo test -p onewayalloc-capi --features separate-blocks        # sanitizer mode
//! ONEWAYALLOC_CAPI_VALGRIND=1 cargo test -p onewayalloc-capi [--features separate-blocks]
//! RUSTFLAGS=-Zsanitizer=address cargo +nightly test -p onewayalloc-capi \
//!     --target x86_64-unknown-linux-gnu                           # ASan (sanitizer mode)
//! ```

mod common;

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::Output;

use common::{
    ASAN, SEPARATE, VALGRIND_ERROR, assert_success, library, run_program, show, valgrind,
};

/// SIGABRT, the signal `abort()` raises.
const SIGABRT: i32 = 6;

// ----- Every function and rule ----------------------------------------------------

#[test]
fn every_block_is_aligned_sized_and_zeroed_where_asked() {
    assert_success(&run_program("blocks.c", &[]));
}

#[test]
fn null_handles_do_nothing_and_products_are_exact() {
    assert_success(&run_program("null_and_products.c", &[]));
}

#[test]
fn doublesize_grows_in_place_or_moves_keeping_the_bytes() {
    let output = run_program("doublesize.c", &[]);
    assert_success(&output);
    println!("{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn allocated_memory_through_create_reset_trim_and_destroy() {
    assert_success(&run_program("memory.c", &[]));
}

// ----- The header's inline onewayalloc_mallocz ------------------------------------

#[test]
fn inline_mallocz_places_blocks_like_the_library_and_syncs_with_every_call() {
    assert_success(&run_program("inline_path.c", &[]));
}

#[test]
fn without_inline_the_same_rules_hold_through_the_library() {
    let exe = library().compile_with("inline_path.c", &["-DONEWAYALLOC_NO_INLINE"]);
    assert_success(&common::run(&exe, &[]));
}

/// An inline block is the most recent block with its exact size, also after a
/// cleanup record was placed after it: keeping a byte more is fatal in both modes.
#[test]
fn fatal_doublesize_of_an_inline_block_keeping_more_than_its_size() {
    expect_fatal_in(
        "inline_path.c",
        "keep_exceeds_after_cleanup",
        &doublesize_line(25, "oldsize exceeds the block's 24 bytes"),
    );
}

#[test]
fn fatal_when_the_program_overwrote_the_cursor() {
    expect_fatal_in(
        "inline_path.c",
        "bad_cursor",
        "fatal: onewayalloc_strdupz(owa={owa}, s={s}): the handle's struct \
         onewayalloc_cursor points outside the arena's current page (the handle was \
         overwritten, or is not a live handle)",
    );
}

// ----- Netdata's usage patterns -------------------------------------------------

#[test]
fn a_new_arena_takes_the_resident_pages_of_a_destroyed_one() {
    // Valgrind and ASan fault on their own account, and the small no_std library
    // (given by ONEWAYALLOC_CAPI_LIBRARY_DIR) has no page heap, only malloc: the
    // figures are printed only.
    let other_library = std::env::var_os("ONEWAYALLOC_CAPI_LIBRARY_DIR").is_some();
    let args: &[&str] = if valgrind() || ASAN || other_library {
        &["measure"]
    } else {
        &[]
    };
    let output = run_program("page_reuse.c", args);
    assert_success(&output);
    println!("{}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn netdata_query_one_arena_per_query() {
    // Charts, dimensions, points, queries: smaller under Valgrind, same paths.
    let args: &[&str] = if valgrind() {
        &["20", "10", "30", "2"]
    } else {
        &[]
    };
    assert_success(&run_program("query_pattern.c", args));
}

#[test]
fn netdata_health_loop_one_arena_reset_per_alert() {
    // Three of the large alerts (every 250th) under Valgrind, eight otherwise.
    let args: &[&str] = if valgrind() { &["600"] } else { &[] };
    assert_success(&run_program("alerts_pattern.c", args));
}

#[test]
fn parallel_queries_one_arena_per_thread() {
    // Threads, queries per thread.
    let args: &[&str] = if valgrind() { &["4", "3"] } else { &[] };
    assert_success(&run_program("parallel_queries.c", args));
}

// ----- The header from C++ and from strict C89 -----------------------------------

#[test]
fn the_header_works_from_cxx() {
    let output = run_program("header_cxx.cpp", &[]);
    assert_success(&output);
    assert!(String::from_utf8_lossy(&output.stdout).contains("c++: ok"));
}

#[test]
fn the_header_is_strict_c89() {
    let exe = library().compile_with("header_c89.c", &["-std=c89", "-pedantic"]);
    assert_success(&common::run(&exe, &[]));
}

// ----- The seed programs, at small sizes --------------------------------------------

#[test]
fn seed_memory_latency_runs() {
    let exe = library().compile_with("examples/memory_latency.c", &[]);
    let output = common::run(&exe, &["20000"]);
    assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for contender in ["malloc", "simple_alloc", "onewayalloc_mallocz"] {
        assert!(stdout.contains(contender), "{}", show(&output));
    }
}

#[test]
fn seed_context_query_runs() {
    let exe = library().compile_with("examples/context_query.c", &[]);
    let output = common::run(
        &exe,
        &[
            "--queries",
            "4",
            "--charts",
            "10",
            "--dims",
            "10",
            "--threads",
            "2",
        ],
    );
    assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for row in ["malloc()", "OWA create/destroy", "OWA reset"] {
        assert!(stdout.contains(row), "{}", show(&output));
    }
}

// ----- Cleanups (onewayalloc_add_cleanup) --------------------------------------------

#[test]
fn cleanups_run_most_recent_first_at_reset_and_destroy() {
    assert_success(&run_program("cleanup.c", &[]));
}

#[test]
fn fatal_add_cleanup_null_arena() {
    expect_fatal_in(
        "cleanup.c",
        "null_owa",
        "fatal: onewayalloc_add_cleanup(owa=NULL, cleanup={cleanup}, arg={arg}): NULL arena",
    );
}

#[test]
fn fatal_add_cleanup_null_cleanup() {
    expect_fatal_in(
        "cleanup.c",
        "null_cleanup",
        "fatal: onewayalloc_add_cleanup(owa={owa}, cleanup=NULL, arg={arg}): NULL cleanup",
    );
}

/// Issue 30: a cleanup must not reset or destroy its own arena (the header's rule);
/// doing so takes the fatal path before anything is reset or freed, whether a reset
/// or a destroy runs the cleanup. `call` is what the cleanup calls, `running` what
/// runs it.
fn expect_own_arena_fatal(case: &str, call: &str, running: &str) {
    expect_fatal_in(
        "cleanup.c",
        case,
        &format!(
            "fatal: {call}(owa={{owa}}): called by a cleanup of this arena while {running} \
             runs its cleanups (a cleanup must not reset or destroy its own arena)"
        ),
    );
}

#[test]
fn fatal_reset_of_its_own_arena_in_a_cleanup_at_reset() {
    expect_own_arena_fatal("reset_in_reset", "onewayalloc_reset", "onewayalloc_reset");
}

#[test]
fn fatal_destroy_of_its_own_arena_in_a_cleanup_at_reset() {
    expect_own_arena_fatal(
        "destroy_in_reset",
        "onewayalloc_destroy",
        "onewayalloc_reset",
    );
}

#[test]
fn fatal_reset_of_its_own_arena_in_a_cleanup_at_destroy() {
    expect_own_arena_fatal(
        "reset_in_destroy",
        "onewayalloc_reset",
        "onewayalloc_destroy",
    );
}

#[test]
fn fatal_destroy_of_its_own_arena_in_a_cleanup_at_destroy() {
    expect_own_arena_fatal(
        "destroy_in_destroy",
        "onewayalloc_destroy",
        "onewayalloc_destroy",
    );
}

// ----- The fatal paths ----------------------------------------------------------------

/// Runs `fatal CASE`; returns the output and the `name=address` lines it printed.
fn fatal_case(case: &str) -> (Output, HashMap<String, String>) {
    program_case("fatal.c", case)
}

/// Runs `PROGRAM CASE`; returns the output and the `name=address` lines it printed.
fn program_case(program: &'static str, case: &str) -> (Output, HashMap<String, String>) {
    let output = run_program(program, &[case]);
    let addresses = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    (output, addresses)
}

/// `template` with `{name}` replaced by the addresses the case printed.
fn fill(template: &str, addresses: &HashMap<String, String>) -> String {
    addresses
        .iter()
        .fold(template.to_owned(), |line, (name, value)| {
            line.replace(&format!("{{{name}}}"), value)
        })
}

/// The case must end by `abort()` after writing exactly the line `template` (filled)
/// once on stderr; returns the filled line and the output.
fn expect_fatal(case: &str, template: &str) -> (String, Output) {
    expect_fatal_in("fatal.c", case, template)
}

/// [`expect_fatal`] for a case of another program.
fn expect_fatal_in(program: &'static str, case: &str, template: &str) -> (String, Output) {
    let (output, addresses) = program_case(program, case);
    let line = fill(template, &addresses);
    assert!(!line.contains('{'), "unfilled {line} for {}", show(&output));
    assert_eq!(output.status.signal(), Some(SIGABRT), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let fatal_lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("fatal: "))
        .collect();
    assert_eq!(fatal_lines, [line.as_str()], "{}", show(&output));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("survived"));
    (line, output)
}

/// Fatal in the sanitizer mode; the page mode cannot tell (the header says so), and
/// the case runs to its end.
fn expect_fatal_when_separate(case: &str, template: &str) {
    if SEPARATE {
        expect_fatal(case, template);
    } else {
        let (output, _) = fatal_case(case);
        assert_success(&output);
        assert!(String::from_utf8_lossy(&output.stdout).contains("survived"));
    }
}

/// One test per fatal case: `name => case, expected line`.
macro_rules! fatal_tests {
    ($($name:ident => $case:literal, $line:expr;)*) => {
        $(
            #[test]
            fn $name() {
                expect_fatal($case, $line);
            }
        )*
    };
}

const NOT_HELD: &str = "not a block this arena holds (freed already, released by \
                        onewayalloc_reset, from another arena, or not the start of a block)";
const CANNOT: &str = "(out of memory, or too large for an arena)";

fatal_tests! {
    fatal_callocz_overflow => "callocz_overflow",
        "fatal: onewayalloc_callocz(owa={owa}, nmemb=9223372036854775808, size=2): \
         nmemb * size overflows size_t";
    fatal_mul_or_fatal_overflow => "mul_overflow",
        "fatal: onewayalloc_mul_or_fatal(nmemb=18446744073709551615, size=2): \
         nmemb * size overflows size_t, in points of chart system.cpu";
    fatal_mul3_or_fatal_overflow => "mul3_overflow",
        "fatal: onewayalloc_mul3_or_fatal(nmemb1=4294967296, nmemb2=4294967296, size=8): \
         nmemb1 * nmemb2 * size overflows size_t, in query results";
    fatal_mul_or_fatal_without_context => "mul_overflow_no_context",
        "fatal: onewayalloc_mul_or_fatal(nmemb=4294967296, size=4294967296): \
         nmemb * size overflows size_t, in (no context)";
    fatal_doublesize_overflow => "doublesize_overflow",
        "fatal: onewayalloc_doublesize(owa={owa}, src={ptr}, oldsize=9223372036854775808): \
         2 * oldsize overflows size_t";
    fatal_doublesize_too_large => "doublesize_too_large",
        &format!("fatal: onewayalloc_doublesize(owa={{owa}}, src={{ptr}}, oldsize=4611686018427387903): \
                  cannot allocate 9223372036854775806 bytes {CANNOT}");
    fatal_mallocz_refused => "mallocz_refused",
        &format!("fatal: onewayalloc_mallocz(owa={{owa}}, size=4611686018427387903): \
                  cannot allocate 4611686018427387903 bytes {CANNOT}");
    fatal_mallocz_too_large => "mallocz_too_large",
        &format!("fatal: onewayalloc_mallocz(owa={{owa}}, size=18446744073709551615): \
                  cannot allocate 18446744073709551615 bytes {CANNOT}");
    fatal_create_too_large => "create_too_large",
        &format!("fatal: onewayalloc_create(size_hint=18446744073709551615): \
                  cannot allocate 18446744073709551615 bytes {CANNOT}");
    fatal_mallocz_null_arena => "mallocz_null_arena",
        "fatal: onewayalloc_mallocz(owa=NULL, size=8): NULL arena";
    fatal_callocz_null_arena => "callocz_null_arena",
        "fatal: onewayalloc_callocz(owa=NULL, nmemb=2, size=8): NULL arena";
    fatal_strdupz_null_arena => "strdupz_null_arena",
        "fatal: onewayalloc_strdupz(owa=NULL, s={s}): NULL arena";
    fatal_memdupz_null_arena => "memdupz_null_arena",
        "fatal: onewayalloc_memdupz(owa=NULL, src={src}, size=1): NULL arena";
    fatal_doublesize_null_arena => "doublesize_null_arena",
        "fatal: onewayalloc_doublesize(owa=NULL, src=NULL, oldsize=0): NULL arena";
    fatal_freez_null_arena => "freez_null_arena",
        "fatal: onewayalloc_freez(owa=NULL, ptr={ptr}): NULL arena";
    fatal_strdupz_null_string => "strdupz_null",
        "fatal: onewayalloc_strdupz(owa={owa}, s=NULL): NULL string";
    fatal_memdupz_null_source => "memdupz_null_source",
        "fatal: onewayalloc_memdupz(owa={owa}, src=NULL, size=8): NULL source with bytes to copy";
    fatal_doublesize_null_source => "doublesize_null_source",
        "fatal: onewayalloc_doublesize(owa={owa}, src=NULL, oldsize=8): NULL source with bytes to copy";
}

/// One test per case that is fatal in the sanitizer mode only.
macro_rules! fatal_when_separate_tests {
    ($($name:ident => $case:literal, $line:expr;)*) => {
        $(
            #[test]
            fn $name() {
                expect_fatal_when_separate($case, $line);
            }
        )*
    };
}

fatal_when_separate_tests! {
    fatal_freez_twice_when_separate => "freez_twice",
        &format!("fatal: onewayalloc_freez(owa={{owa}}, ptr={{ptr}}): {NOT_HELD}");
    fatal_freez_after_reset_when_separate => "freez_after_reset",
        &format!("fatal: onewayalloc_freez(owa={{owa}}, ptr={{ptr}}): {NOT_HELD}");
    fatal_freez_of_another_arenas_block_when_separate => "freez_foreign",
        &format!("fatal: onewayalloc_freez(owa={{owa}}, ptr={{ptr}}): {NOT_HELD}");
    fatal_freez_of_the_middle_of_a_block_when_separate => "freez_middle",
        &format!("fatal: onewayalloc_freez(owa={{owa}}, ptr={{ptr}}): {NOT_HELD}");
    fatal_doublesize_of_another_arenas_block_when_separate => "doublesize_foreign",
        &format!("fatal: onewayalloc_doublesize(owa={{owa}}, src={{ptr}}, oldsize=24): {NOT_HELD}");
}

/// Issue 23: `a`, `b`, `doublesize(a, 32)` never grows `a` in place over `b`. The
/// sanitizer mode knows `a` is 16 bytes (fatal); the page mode copies the 32 bytes
/// to a block that overlaps neither, and `b` keeps its bytes (the case checks it and
/// runs to its end).
#[test]
fn doublesize_of_an_older_block_never_grows_over_the_next_one() {
    expect_fatal_when_separate(
        "doublesize_over_the_next_block",
        &doublesize_line(32, EXCEEDS_16),
    );
}

/// The fatal line of `doublesize(owa, ptr, oldsize)` for `reason`.
fn doublesize_line(oldsize: usize, reason: &str) -> String {
    format!("fatal: onewayalloc_doublesize(owa={{owa}}, src={{ptr}}, oldsize={oldsize}): {reason}")
}

/// Why keeping more than a 16-byte block is fatal.
const EXCEEDS_16: &str = "oldsize exceeds the block's 16 bytes";

#[test]
fn fatal_doublesize_running_past_the_most_recent_block() {
    let reason = if SEPARATE {
        EXCEEDS_16
    } else {
        "oldsize runs past the end of the arena's most recent block, 32 bytes after src"
    };
    expect_fatal(
        "doublesize_past_the_most_recent_block",
        &doublesize_line(48, reason),
    );
}

#[test]
fn fatal_doublesize_keeping_more_than_the_most_recent_block() {
    expect_fatal("doublesize_keep_exceeds", &doublesize_line(32, EXCEEDS_16));
}

/// Like [`expect_fatal`], and the marking handler of `fatal.c` got the same line
/// after it was written to stderr.
fn expect_handled(case: &str, template: &str) {
    let (line, output) = expect_fatal(case, template);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let written = stderr.find(&format!("{line}\n")).expect("the line");
    let handled = stderr.find(&format!("handler got [{line}]\n"));
    assert!(
        handled.is_some_and(|handled| written < handled),
        "the line on stderr, then the handler with it: {stderr}"
    );
}

#[test]
fn fatal_handler_is_called_with_the_line_then_abort() {
    expect_handled(
        "handler_returns",
        "fatal: onewayalloc_callocz(owa={owa}, nmemb=9223372036854775808, size=2): \
         nmemb * size overflows size_t",
    );
}

#[test]
fn fatal_handler_may_end_the_process_itself() {
    let (output, _) = fatal_case("handler_exits");
    let line = "fatal: onewayalloc_mul_or_fatal(nmemb=18446744073709551615, size=3): \
                nmemb * size overflows size_t, in exit";
    assert_eq!(output.status.code(), Some(42), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{line}\nexiting handler got [{line}]\n")),
        "{stderr}"
    );
}

#[test]
fn fatal_handler_set_by_another_thread_is_called() {
    expect_handled(
        "handler_set_by_another_thread",
        "fatal: onewayalloc_mul_or_fatal(nmemb=18446744073709551615, size=3): \
         nmemb * size overflows size_t, in thread",
    );
}

#[test]
fn fatal_handler_that_fails_again_is_not_called_twice() {
    let (output, _) = fatal_case("handler_fails_again");
    assert_eq!(output.status.signal(), Some(SIGABRT), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = "fatal: onewayalloc_mul_or_fatal(nmemb=18446744073709551615, size=3): \
                 nmemb * size overflows size_t, in again";
    let second = "fatal: onewayalloc_mallocz(owa=NULL, size=7): NULL arena";
    let expected = format!("{first}\nreentrant handler got [{first}]\n{second}\n");
    assert!(stderr.contains(&expected), "{stderr}");
    assert_eq!(
        stderr.matches("reentrant handler got").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn fatal_handler_removed_is_not_called() {
    let (_, output) = expect_fatal(
        "handler_removed",
        "fatal: onewayalloc_mul_or_fatal(nmemb=18446744073709551615, size=3): \
         nmemb * size overflows size_t, in removed",
    );
    assert!(!String::from_utf8_lossy(&output.stderr).contains("handler got"));
}

#[test]
fn fatal_in_a_worker_thread_ends_the_process() {
    expect_handled(
        "fatal_in_a_thread",
        "fatal: onewayalloc_callocz(owa={owa}, nmemb=18446744073709551615, \
         size=18446744073709551615): nmemb * size overflows size_t",
    );
}

// ----- Misuse that the tools report -------------------------------------------------

/// Runs `misuse CASE` and checks what this configuration must say about it:
/// AddressSanitizer reports `asan`; Valgrind reports `valgrind_error` whenever the
/// block is a malloc() block of its own (the sanitizer mode, or after destroy, when
/// the pages are gone); in the page mode a bug inside a page the arena still holds
/// runs silently, printing `silent`. Without a tool, the sanitizer mode's bugs are
/// not run: reading freed memory proves nothing.
fn misuse(case: &str, asan: &str, valgrind_error: &str, silent: Option<&str>) {
    let blocks_of_their_own = SEPARATE || silent.is_none();
    if ASAN {
        let output = run_program("misuse.c", &[case]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{}", show(&output));
        assert!(
            stderr.contains(&format!("ERROR: AddressSanitizer: {asan}")),
            "{}",
            show(&output)
        );
    } else if valgrind() && blocks_of_their_own {
        let output = run_program("misuse.c", &[case]);
        assert_eq!(
            output.status.code(),
            Some(VALGRIND_ERROR),
            "{}",
            show(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(valgrind_error), "{}", show(&output));
    } else if let (false, Some(silent)) = (SEPARATE, silent) {
        let output = run_program("misuse.c", &[case]);
        assert_success(&output);
        assert!(
            String::from_utf8_lossy(&output.stdout).contains(silent),
            "{}",
            show(&output)
        );
    } else {
        eprintln!("note: misuse {case} runs under AddressSanitizer or Valgrind only");
    }
}

#[test]
fn misuse_use_after_reset_is_reported_in_the_sanitizer_mode() {
    misuse(
        "use_after_reset",
        "heap-use-after-free",
        "Invalid read of size 8",
        Some("read 1234 after reset"),
    );
}

#[test]
fn misuse_use_after_freez_is_reported_in_the_sanitizer_mode() {
    // In the page mode a freez'd block stays valid until reset: not even a bug.
    misuse(
        "use_after_freez",
        "heap-use-after-free",
        "Invalid read of size 8",
        Some("read 1234 after freez"),
    );
}

#[test]
fn misuse_use_after_destroy_is_reported_in_both_modes() {
    misuse(
        "use_after_destroy",
        "heap-use-after-free",
        "Invalid read of size 8",
        None,
    );
}

#[test]
fn misuse_write_past_a_block_is_reported_in_the_sanitizer_mode() {
    misuse(
        "write_past_the_end",
        "heap-buffer-overflow",
        "Invalid write of size 1",
        Some("wrote past the end"),
    );
}
