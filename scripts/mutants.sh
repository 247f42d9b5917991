#!/usr/bin/env bash
# Mutation testing with cargo-mutants: every mutant of src/ must be caught by the
# tests, or recorded in .cargo/mutants.toml with the reason it is equivalent.
#
#   scripts/mutants.sh [MODE] [ARGS...]
#
# MODE:
#   all (default)    both runs below, one after the other
#   default          the default build (page mode), over every file it compiles
#   separate-blocks  the sanitizer mode (--features separate-blocks), over the
#                    files only that build compiles (SEPARATE_ONLY below)
#   ci               the small fixed set .ci/run runs: the bump fast path
#
# ARGS go to cargo mutants, e.g. `--shard 2/4` (split a run across machines or
# sessions), `--file src/bump.rs`, `--re 'BumpCore<A>::bump'`, `--list`,
# `--iterate` (skip what an earlier run in the same output directory caught).
#
# cargo-mutants does not understand conditional compilation, so code compiled out
# of a build shows as missed: each build is run on the files it compiles. Results
# go to target/mutants/<mode>/mutants.out/ (missed.txt, timeout.txt, caught.txt,
# unviable.txt, outcomes.json). Runs CARGO_MUTANTS_JOBS jobs (default 2) at once,
# each in its own copy of the tree. Exits non-zero if a mutant was missed or timed
# out.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned, so that the mutants generated (and the names .cargo/mutants.toml matches)
# do not change under a run.
MUTANTS_VERSION=27.1.0

# Files compiled only in the sanitizer mode: the default run leaves them out, the
# separate-blocks run examines only them. Every other file of src/ is compiled in
# the default build and mutated there (code that is shared by both modes is caught
# if either mode's tests catch it; the default run is the one that tests it).
SEPARATE_ONLY=(src/separate.rs)

# The CI set: the fast path of every allocation and the arithmetic it relies on,
# named by function so it does not shift as the code around it changes.
CI_FILES=(src/bump.rs src/arith.rs)
CI_RE='BumpCore<A>::(alloc|bump|dealloc|grow_in_place|last_block)\b|in (align_up_in_page|bump_padding|ends_at)\b'

export CARGO_MUTANTS_JOBS="${CARGO_MUTANTS_JOBS:-2}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if [[ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]]; then
    echo "installing cargo-mutants $MUTANTS_VERSION" >&2
    cargo install cargo-mutants --locked --version "$MUTANTS_VERSION"
fi

mode="${1:-all}"
[[ $# -gt 0 ]] && shift

status=0
summaries=()

# run NAME [cargo mutants args...]: one cargo-mutants run, its output in
# target/mutants/NAME; records the summary and a failing status.
run() {
    local name="$1"
    shift
    local out="target/mutants/$name"
    mkdir -p "$out"
    echo "=== cargo mutants ($name): $*" >&2
    local start=$SECONDS rc=0
    cargo mutants --output "$out" "$@" || rc=$?
    local took=$((SECONDS - start))
    local mutants_out="$out/mutants.out"
    local summary="$name: exit $rc in ${took}s"
    if [[ -f "$mutants_out/outcomes.json" ]]; then
        local counts=""
        for kind in caught missed unviable timeout; do
            local n=0
            [[ -f "$mutants_out/$kind.txt" ]] && n=$(grep -c . "$mutants_out/$kind.txt" || true)
            counts+=" $kind=$n"
        done
        summary+=":$counts"
        for kind in missed timeout; do
            if [[ -s "$mutants_out/$kind.txt" ]]; then
                summary+=$'\n'"  $kind:"$'\n'"$(sed 's/^/    /' "$mutants_out/$kind.txt")"
            fi
        done
    fi
    summaries+=("$summary")
    # 0: all caught; anything else (2 missed, 3 timeouts, 4 baseline failed, ...)
    # fails the script, except a listing, which has no outcomes.
    if [[ $rc -ne 0 ]]; then status=$rc; fi
}

excluded=()
for file in "${SEPARATE_ONLY[@]}"; do excluded+=(--exclude "$file"); done
examined=()
for file in "${SEPARATE_ONLY[@]}"; do examined+=(--file "$file"); done
ci_files=()
for file in "${CI_FILES[@]}"; do ci_files+=(--file "$file"); done

case "$mode" in
    all)
        run default "${excluded[@]}" "$@"
        run separate-blocks --features separate-blocks "${examined[@]}" "$@"
        ;;
    default) run default "${excluded[@]}" "$@" ;;
    separate-blocks) run separate-blocks --features separate-blocks "${examined[@]}" "$@" ;;
    ci) run ci "${ci_files[@]}" --re "$CI_RE" "$@" ;;
    *)
        echo "unknown mode '$mode': all, default, separate-blocks or ci" >&2
        exit 64
        ;;
esac

echo
echo "=== mutation testing summary"
printf '%s\n' "${summaries[@]}"
exit "$status"
