#!/usr/bin/env bash
# Mutation testing with cargo-mutants: every mutant of src/ must be caught by the
# tests, or recorded in .cargo/mutants.toml with the reason it is not a bug.
#
#   scripts/mutants.sh [MODE] [ARGS...]
#
# MODE:
#   all (default)    the three runs below, one after the other: the full run
#   default          the page mode, over every file it compiles
#   separate-blocks  the sanitizer mode (--features separate-blocks), over the
#                    files only that build compiles (SEPARATE_ONLY below) and the
#                    files with code of their own for it (BOTH_MODES below)
#   capi             the C API (capi/src, package onewayalloc-capi), with its
#                    tests: the C programs, driven by Rust tests
#   ci               the small fixed set .ci/run runs: the allocation fast path,
#                    rollback and in-place growth, and every mutant of the page
#                    heap (as the run page-heap), in one cargo-mutants run with
#                    the tests of both
#   page-heap        every mutant of src/engine/page_heap/, with the heap's tests
#
# ARGS go to cargo mutants, e.g. `--shard 2/4` (split a run across machines or
# sessions), `--file src/engine/bump.rs`, `--re 'BumpCore<A>::bump'`, `--list`,
# `--iterate` (skip what an earlier run of the same mode caught).
#
# The tests: the unit and integration tests (`cargo test --tests`), without the
# doctests, which would double the build of every mutant and catch nothing more
# here, with the additive features `serde` and `allocator-api2-04` on, so that their
# code is built and tested too (`nightly` needs the nightly toolchain: it adds no
# code of its own, only std's `Allocator` trait).
#
# cargo-mutants does not understand conditional compilation, so code compiled out
# of a build shows as missed: each build is run on the files it compiles. A file
# with code for each mode (`#[cfg(onewayalloc_separate_blocks)]` blocks) is run in
# both, and in `all` a mutant of it counts as missed only if neither run caught it.
#
# cargo-mutants never mutates an `unsafe fn`, and the arena's resizing, rollback
# and release live in `unsafe fn`s, as do the C API's entry points
# (`unsafe extern "C" fn`). So the run works on a copy of the tree in which the
# inherent `unsafe fn`s are plain `fn`s (their bodies keep their `unsafe` blocks;
# trait methods keep their `unsafe`): the same code, every function of it mutated.
# (Callers' `unsafe` blocks then warn as unused; warnings do not fail.)
#
# Results: target/mutants/<mode>/mutants.out/ (missed.txt, timeout.txt,
# caught.txt, unviable.txt, outcomes.json). Runs CARGO_MUTANTS_JOBS jobs (default
# 2) at once, each in its own copy. Exits non-zero if a mutant was missed or timed
# out, or the unmutated tree fails its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# Pinned, so that the mutants generated (and the names .cargo/mutants.toml matches)
# do not change under a run.
MUTANTS_VERSION=27.1.0

# Files compiled only in the sanitizer mode: the default run leaves them out, the
# separate-blocks run examines only them. Every other file of src/ is compiled in
# the default build and mutated there (code shared by both modes is caught if
# either mode's tests catch it; the default run is the one that tests it).
SEPARATE_ONLY=(src/engine/separate.rs)
# Files of both builds with code for one mode only (a `cfg` naming
# `onewayalloc_separate_blocks`, or its `not`): both runs examine them (found by
# their `cfg`, so new ones join by themselves).
mapfile -t BOTH_MODES < <(grep -rlE --include='*.rs' 'cfg\((not\()?onewayalloc_separate_blocks' src |
    grep -vxF -e src/lib.rs "${SEPARATE_ONLY[@]/#/-e}" | sort)
FEATURES=serde,allocator-api2-04

# The CI set: the fast path of every allocation, its arithmetic, and rollback and
# in-place growth of the most recent block, named by function so it does not
# shift as the code around it changes; with the tests that state their rules.
CI_FILES=(src/engine/bump.rs src/engine/arith.rs)
CI_RE='BumpCore<A>::(alloc|bump|dealloc|grow_inline|last_block)\b|in (align_up_in_page|bump_offset|bump_padding|ends_at)\b'
# Given to every cargo call of the run (`--cargo-arg`), the build too: each mutant
# then builds the library and these two test binaries only, not the ~30 targets of
# the package that it would build and never run.
CI_TESTS=(--cargo-arg=--lib --cargo-arg=--test=typed_values)
# Mutants that return a made-up `NonNull` (`NonNull::new(0)`, `NonNull::from(1)`, ...)
# never compile: the CI runs leave them out rather than spend a build on each.
CI_UNVIABLE='with ((Some|Ok)\()?NonNull::'
# The page heap (src/engine/page_heap/, the source of every arena's large pages): every
# mutant of its files, with the tests that state its rules, its unit tests and the
# two test binaries that drive the process's heap.
PAGE_HEAP_FILES=(src/engine/page_heap/mod.rs src/engine/page_heap/slots.rs src/engine/page_heap/small_pages.rs
    src/engine/page_heap/linux.rs)
# (With the unit tests: `--lib`, which the CI set's tests include.)
PAGE_HEAP_TESTS=(--cargo-arg=--test=page_heap --cargo-arg=--test=page_heap_threads)

export CARGO_MUTANTS_JOBS="${CARGO_MUTANTS_JOBS:-2}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if [[ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]]; then
    echo "installing cargo-mutants $MUTANTS_VERSION" >&2
    # A debug build: cargo-mutants spends its time waiting for cargo, and the debug
    # build compiles in a fraction of the release build's time (CI installs it on
    # every run).
    cargo install cargo-mutants --locked --debug --version "$MUTANTS_VERSION"
fi

mode="${1:-all}"
[[ $# -gt 0 ]] && shift
case "$mode" in
    all | default | separate-blocks | capi | ci | page-heap) ;;
    *)
        echo "unknown mode '$mode': all, default, separate-blocks, capi, ci or page-heap" >&2
        exit 64
        ;;
esac

# The copy of the tree the runs mutate, with the inherent `unsafe fn`s made plain.
tree=$(mktemp -d "${TMPDIR:-/tmp}/onewayalloc-mutants.XXXXXX")
trap 'rm -rf "$tree"' EXIT
tar --exclude=./target --exclude=./fuzz/target --exclude=./.git -cf - . | tar -xf - -C "$tree"
find "$tree/src" "$tree/capi/src" -name '*.rs' -print0 | while IFS= read -r -d '' file; do
    # Outside `unsafe impl` blocks (whose trait methods must stay unsafe), a line
    # that declares an `unsafe fn` loses the `unsafe`. The brace depth tells where
    # an `unsafe impl` block ends.
    awk '
        /^[ \t]*unsafe impl/ { pending = 1 }
        {
            line = $0
            if (!pending && !inside && match(line, /^[ \t]*(pub(\([a-z]+\))? )?unsafe (extern "C" )?fn /)) {
                sub(/unsafe /, "", line)
            }
            opens = gsub(/\{/, "{", $0); closes = gsub(/\}/, "}", $0)
            if (pending && opens > 0) { inside = 1; base = depth; pending = 0 }
            depth += opens - closes
            if (inside && depth <= base) { inside = 0 }
            print line
        }' "$file" >"$file.tmp"
    mv "$file.tmp" "$file"
done

status=0
summaries=()
# A listing runs nothing: it has no outcomes to report.
listing=false
for arg in "$@"; do [[ "$arg" == --list* ]] && listing=true; done

# run NAME [cargo mutants args...]: one cargo-mutants run over the copy, its
# output in target/mutants/NAME; records the summary and a failing status.
run() {
    local name="$1"
    shift
    local out="$root/target/mutants/$name"
    mkdir -p "$out"
    echo "=== cargo mutants ($name): $*" >&2
    local start=$SECONDS rc=0
    cargo mutants --dir "$tree" --output "$out" --profile mutants "$@" || rc=$?
    local took=$((SECONDS - start))
    local results="$out/mutants.out"
    local summary="$name: exit $rc in ${took}s"
    if [[ $listing == false && -f "$results/outcomes.json" ]]; then
        local counts=""
        for kind in caught missed unviable timeout; do
            local n=0
            [[ -f "$results/$kind.txt" ]] && n=$(grep -c . "$results/$kind.txt" || true)
            counts+=" $kind=$n"
        done
        summary+=":$counts"
        for kind in missed timeout; do
            if [[ -s "$results/$kind.txt" ]]; then
                summary+=$'\n'"  $kind:"$'\n'"$(sed 's/^/    /' "$results/$kind.txt")"
            fi
        done
    fi
    summaries+=("$summary")
    # 0: every mutant caught; 2: missed, 3: timeouts, 4: the unmutated tree fails.
    if [[ $rc -ne 0 ]]; then status=$rc; fi
}

excluded=()
for file in "${SEPARATE_ONLY[@]}"; do excluded+=(--exclude "$file"); done
examined=()
for file in "${SEPARATE_ONLY[@]}" "${BOTH_MODES[@]}"; do examined+=(--file "$file"); done
ci_files=()
for file in "${CI_FILES[@]}"; do ci_files+=(--file "$file"); done
page_heap_files=()
for file in "${PAGE_HEAP_FILES[@]}"; do page_heap_files+=(--file "$file"); done

run_default() { run default --features "$FEATURES" "${excluded[@]}" "$@" -- --tests; }
run_separate() {
    run separate-blocks --features "separate-blocks,$FEATURES" "${examined[@]}" "$@" -- --tests
}
# The C API in the page mode: its code is the same in both modes (the crate's calls
# behind it differ, and the runs above test those).
run_capi() { run capi --package onewayalloc-capi "$@" -- --tests; }
run_page_heap() {
    run page-heap "${page_heap_files[@]}" --exclude-re "$CI_UNVIABLE" --cargo-arg=--lib \
        "${PAGE_HEAP_TESTS[@]}" "$@"
}

case "$mode" in
    all)
        run_default "$@"
        run_separate "$@"
        run_capi "$@"
        ;;
    default) run_default "$@" ;;
    separate-blocks) run_separate "$@" ;;
    capi) run_capi "$@" ;;
    ci)
        # One cargo-mutants run (one baseline build and test instead of two): the
        # fast path's functions and every mutant of the page heap's files (a mutant's
        # name starts with its file), with the tests of both.
        run ci "${ci_files[@]}" "${page_heap_files[@]}" --re "$CI_RE|^src/engine/page_heap/" \
            --exclude-re "$CI_UNVIABLE" "${CI_TESTS[@]}" "${PAGE_HEAP_TESTS[@]}" "$@"
        ;;
    page-heap) run_page_heap "$@" ;;
esac

echo
echo "=== mutation testing summary"
printf '%s\n' "${summaries[@]}"

# The full run: a mutant missed (or timed out) in one run counts only if no other
# run caught it (files of both builds are examined twice).
if [[ "$mode" == all && $listing == false ]]; then
    outcomes() { cat "$root"/target/mutants/{default,separate-blocks,capi}/mutants.out/"$1".txt 2>/dev/null | sort -u; }
    caught=$(outcomes caught)
    missed=$(comm -23 <(outcomes missed) <(echo "$caught"))
    timeouts=$(comm -23 <(outcomes timeout) <(printf '%s\n' "$caught" "$missed" | sort -u))
    count() { grep -c . <<<"$1" || true; }
    echo "all runs: caught=$(count "$caught") missed=$(count "$missed") unviable=$(outcomes unviable | grep -c .) timeout=$(count "$timeouts")"
    [[ -n "$missed" ]] && printf '  missed:\n%s\n' "$(sed 's/^/    /' <<<"$missed")"
    [[ -n "$timeouts" ]] && printf '  timeout:\n%s\n' "$(sed 's/^/    /' <<<"$timeouts")"
    if [[ -n "$missed" || -n "$timeouts" ]]; then
        status=2
    elif [[ $status -eq 2 || $status -eq 3 ]]; then
        status=0
    fi
fi
exit "$status"
