//! The hand-written header against the libraries: its prototypes are Netdata's (and
//! the additions), every function it declares is exported by the static and the
//! shared library, and the shared library exports nothing else.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The 12 prototypes of Netdata's `onewayalloc.h` (04b1cf5), the three additions,
/// and the out-of-line path of the inline `onewayalloc_mallocz`, with single spaces.
const PROTOTYPES: [&str; 16] = [
    "ONEWAYALLOC *onewayalloc_create(size_t size_hint)",
    "void onewayalloc_destroy(ONEWAYALLOC *owa)",
    "void onewayalloc_reset(ONEWAYALLOC *owa)",
    "void *onewayalloc_mallocz(ONEWAYALLOC *owa, size_t size)",
    "void *onewayalloc_callocz(ONEWAYALLOC *owa, size_t nmemb, size_t size)",
    "char *onewayalloc_strdupz(ONEWAYALLOC *owa, const char *s)",
    "void *onewayalloc_memdupz(ONEWAYALLOC *owa, const void *src, size_t size)",
    "void onewayalloc_freez(ONEWAYALLOC *owa, const void *ptr)",
    "void *onewayalloc_doublesize(ONEWAYALLOC *owa, const void *src, size_t oldsize)",
    "size_t onewayalloc_allocated_memory(void)",
    "size_t onewayalloc_mul_or_fatal(size_t nmemb, size_t size, const char *context)",
    "size_t onewayalloc_mul3_or_fatal(size_t nmemb1, size_t nmemb2, size_t size, const char *context)",
    "void onewayalloc_trim(ONEWAYALLOC *owa, size_t keep_bytes)",
    "void onewayalloc_set_fatal_handler(void (*handler)(const char *message))",
    "void onewayalloc_add_cleanup(ONEWAYALLOC *owa, void (*cleanup)(void *), void *arg)",
    "void *onewayalloc_mallocz_slow_v1(ONEWAYALLOC *owa, size_t size)",
];

/// The region of the header that `ONEWAYALLOC_NO_INLINE` leaves out: the inline
/// calls (definitions, not declarations) and their macros. It starts at the last
/// `#ifndef ONEWAYALLOC_NO_INLINE` (the first guards `#include <string.h>`).
const INLINE_START: &str = "#ifndef ONEWAYALLOC_NO_INLINE";
const INLINE_END: &str = "#endif /* ONEWAYALLOC_NO_INLINE */";

/// The header's text.
fn header_text() -> String {
    std::fs::read_to_string(common::package_dir().join("include/onewayalloc.h"))
        .expect("the header")
}

/// The header's text without its comments and without the inline region.
fn header_code() -> String {
    let text = header_text();
    let start = text.rfind(INLINE_START).expect("the inline region");
    let end = text[start..].find(INLINE_END).expect("its end") + start + INLINE_END.len();
    let text = format!("{}{}", &text[..start], &text[end..]);
    let mut code = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("comments are closed") + start + 2;
        rest = &rest[end..];
    }
    code.push_str(rest);
    code
}

/// The function declarations of the header, whitespace collapsed.
fn declarations() -> Vec<String> {
    header_code()
        .split(';')
        .map(|statement| {
            statement
                .lines()
                .filter(|line| !line.trim_start().starts_with('#'))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .map(|statement| statement.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|statement| statement.contains("onewayalloc_") && statement.contains('('))
        .map(|statement| {
            // Drop what precedes the declaration in the same statement
            // (`extern "C" {` in C++).
            match statement.rfind('{') {
                Some(brace) => statement[brace + 1..].trim().to_owned(),
                None => statement,
            }
        })
        .collect()
}

/// The function name of a declaration.
fn name_of(declaration: &str) -> &str {
    let start = declaration.find("onewayalloc_").expect("a name");
    let end = declaration[start..].find('(').expect("a parameter list") + start;
    &declaration[start..end]
}

/// The names of the global functions `nm` finds defined in `library`.
fn exported(library: &Path, dynamic: bool) -> BTreeSet<String> {
    let mut command = Command::new("nm");
    command.arg("--defined-only").arg("-g");
    if dynamic {
        command.arg("-D");
    }
    let output = command.arg(library).output().expect("nm (binutils) runs");
    assert!(
        output.status.success(),
        "nm {}: {output:?}",
        library.display()
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [_, "T", name] => Some((*name).to_owned()),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn the_header_declares_netdatas_prototypes_and_the_two_additions() {
    let found: BTreeSet<String> = declarations().into_iter().collect();
    let expected: BTreeSet<String> = PROTOTYPES.iter().map(|p| (*p).to_owned()).collect();
    assert_eq!(found, expected);
    assert_eq!(declarations().len(), PROTOTYPES.len(), "each declared once");
}

#[test]
fn the_header_declares_the_handle_type_as_netdata_does() {
    assert!(header_code().contains("typedef void ONEWAYALLOC;"));
}

/// The inline region defines the four inlined calls as macros over inline
/// functions of the ABI version, after their prototypes (which the macros would
/// otherwise rewrite); on a miss each calls the library by the function's own name
/// (parenthesized, so the macro does not expand), `mallocz` through its versioned
/// out-of-line path.
#[test]
fn the_inline_region_defines_the_four_calls_as_macros_over_versioned_functions() {
    let text = header_text();
    let start = text.rfind(INLINE_START).expect("the inline region");
    let region = &text[start..];
    let region = &region[..region.find(INLINE_END).expect("its end")];
    assert!(text.contains("#define ONEWAYALLOC_CURSOR_ABI 1"));
    let calls = [
        ("mallocz", "(owa, size)", "((owa), (size))"),
        ("callocz", "(owa, nmemb, size)", "((owa), (nmemb), (size))"),
        ("strdupz", "(owa, s)", "((owa), (s))"),
        ("memdupz", "(owa, src, size)", "((owa), (src), (size))"),
    ];
    for (name, parameters, arguments) in calls {
        let prototype = text
            .find(&format!("onewayalloc_{name}(ONEWAYALLOC *owa"))
            .expect("the prototype");
        assert!(
            prototype < start,
            "{name}: the prototype comes before the macro"
        );
        let define = format!(
            "#define onewayalloc_{name}{parameters} onewayalloc_{name}_inline_v1{arguments}"
        );
        assert!(region.contains(&define), "{define}");
        let miss = if name == "mallocz" {
            "return onewayalloc_mallocz_slow_v1(owa, size);".to_owned()
        } else {
            format!(
                "return (onewayalloc_{name})({})",
                &parameters[1..parameters.len() - 1]
            )
        };
        assert!(region.contains(&miss), "{miss}");
    }
}

#[test]
fn every_declared_function_is_exported_by_the_static_library() {
    let library = common::library();
    let symbols = exported(&library.static_lib, false);
    for declaration in declarations() {
        let name = name_of(&declaration);
        assert!(
            symbols.contains(name),
            "{name} is not in {}",
            library.static_lib.display()
        );
    }
}

#[test]
fn the_shared_library_exports_exactly_the_declared_functions() {
    let library = common::library();
    let symbols: BTreeSet<String> = exported(&library.shared_lib, true);
    let declared: BTreeSet<String> = declarations()
        .iter()
        .map(|declaration| name_of(declaration).to_owned())
        .collect();
    let ours: BTreeSet<String> = symbols
        .iter()
        .filter(|symbol| !symbol.starts_with("__") && !symbol.starts_with('_'))
        .cloned()
        .collect();
    assert_eq!(ours, declared, "{}", library.shared_lib.display());
}
