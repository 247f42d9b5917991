//! The migration guide's two programs (`src/guide/`): the ported one differs from the
//! bumpalo original only in imports, type names and the lines it marks
//! `// ported:`, and each marked exception is in the guide's tables. (The ported
//! program runs as a doctest of the guide; the original runs with bumpalo in
//! `tests/outside`; both assert the same report.)

const ORIGINAL: &str = include_str!("../src/guide/bumpalo_original.rs");
const PORTED: &str = include_str!("../src/guide/ported.rs");
const GUIDE: &str = include_str!("../src/guide/from_bumpalo.md");

/// The renames that are not exceptions: the crate path, and the arena type.
fn renamed(line: &str) -> String {
    line.replace("bumpalo::", "onewayalloc::")
        .replace("Bump::", "OneWayAlloc::")
        .replace("&'a Bump", "&'a OneWayAlloc")
        .replace("use onewayalloc::Bump;", "use onewayalloc::OneWayAlloc;")
}

#[test]
fn the_ported_program_differs_only_in_renames_and_marked_lines() {
    let (original, ported): (Vec<&str>, Vec<&str>) =
        (ORIGINAL.lines().collect(), PORTED.lines().collect());
    assert_eq!(
        original.len(),
        ported.len(),
        "the programs have the same lines"
    );
    let mut exceptions = Vec::new();
    for (number, (from, to)) in original.iter().zip(&ported).enumerate() {
        if renamed(from) == *to {
            continue;
        }
        let Some((_, note)) = to.split_once("// ported: ") else {
            panic!(
                "line {}: {to:?} differs from {from:?} but is not marked",
                number + 1
            );
        };
        exceptions.push(note);
    }
    assert!(exceptions.len() >= 5, "{exceptions:?}");
    // Each exception names the bumpalo call, which the guide's tables mark with ⚠.
    for note in exceptions {
        let call = note.split(' ').next().unwrap().trim_end_matches('!');
        let marked = GUIDE
            .lines()
            .any(|line| line.starts_with("| ⚠") && line.contains(call));
        assert!(marked, "the guide marks no exception for `{call}`");
    }
}

#[test]
fn both_programs_assert_the_same_report() {
    let report = |program: &str| {
        let start = program
            .find("assert_eq!(\n        report,")
            .expect("the report check");
        program[start..].to_string()
    };
    assert_eq!(report(ORIGINAL), report(PORTED));
    assert!(ORIGINAL.contains("use bumpalo::") && !PORTED.contains("bumpalo::"));
}
