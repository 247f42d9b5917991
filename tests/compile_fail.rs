//! The handles and collections that collection calls must reject, with the message
//! that names the fix (`#[diagnostic::on_unimplemented]` on `ArenaHandle` and
//! `FromIteratorIn`): each case in tests/compile_fail/ must fail to compile with
//! exactly the `.stderr` beside it. `TRYBUILD=overwrite cargo test --test
//! compile_fail` writes the `.stderr` files anew after a deliberate change.
//!
//! Compiler messages are only stable for one compiler and one configuration, so the
//! test runs in plain `cargo test` on stable and is skipped (ignored) elsewhere:
//! under Miri (`cfg(miri)`: Miri cannot run rustc), under a sanitizer
//! (`onewayalloc_sanitizer`, set by build.rs from `CARGO_CFG_SANITIZE`: a nightly
//! whose messages may differ, and a rebuild for nothing), with the `nightly`
//! feature (std's `Allocator` changes the types in the messages) and with
//! `allocator-api2-04` (a second `allocator_api2` adds a note to the messages that
//! name `Allocator`; scripts/mutants.sh builds with it, so no mutant is built once
//! more for this test), and in the sanitizer mode (`separate-blocks`: the message
//! of a future that is not `Send` names that mode's own `RefCell`).

#[test]
#[cfg_attr(
    any(
        miri,
        onewayalloc_sanitizer,
        feature = "nightly",
        feature = "allocator-api2-04",
        feature = "separate-blocks"
    ),
    ignore = "compiler messages are checked on stable without sanitizers only"
)]
fn rejected_handles_name_the_fix() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
