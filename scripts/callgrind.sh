#!/usr/bin/env bash
# Instructions per call of the allocation fast paths, counted by Callgrind (so the
# figures do not depend on machine load): onewayalloc vs bumpalo vs bump-scope.
#
#   scripts/callgrind.sh [OP ...]      (default: every op of the `instructions` subcommand)
#
# For every op and allocator it runs the harness's `instructions` subcommand
# (harness/src/cmd/instructions.rs) under
# `valgrind --tool=callgrind` with N = 1,000 and N = 101,000 and prints
# (Ir(101,000) - Ir(1,000)) / 100,000, which removes process start-up and arena
# creation and leaves one call plus its loop. The `noop` row is that loop alone
# (its black_box traffic); subtract it for the bare call. Output: a Markdown table.
#
# Environment: CARGO_TARGET_DIR (default /tmp/tgt-callgrind), KEEP=1 to keep the
# callgrind.out files (in $CARGO_TARGET_DIR/callgrind/) for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/tgt-callgrind}"
# Line tables for callgrind_annotate; they do not change the code.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
cargo build --quiet --release -p onewayalloc-harness
bin="$CARGO_TARGET_DIR/release/onewayalloc-harness"
out="$CARGO_TARGET_DIR/callgrind"
mkdir -p "$out"

if [ "$#" -gt 0 ]; then
    ops=("$@")
else
    ops=(noop alloc_u8 alloc_u32 allocate_static allocate_hidden grow reset fill_iter_1k iter_1k)
fi
# ALLOCATORS="owa bumpalo bump-scope std-box typed-arena strings-only" for the
# owned_string op, whose extra contenders run with it only.
read -r -a allocators <<<"${ALLOCATORS:-owa bumpalo bump-scope}"
small=1000
large=101000

# Total instructions (Ir) of one run.
count() {
    local op=$1 alloc=$2 n=$3
    local file="$out/callgrind.out.$op.$alloc.$n"
    valgrind --tool=callgrind --callgrind-out-file="$file" "$bin" instructions "$op" "$n" "$alloc" \
        >/dev/null 2>&1 || { echo "run failed: $op $n $alloc" >&2; exit 1; }
    local ir
    ir=$(awk '/^summary:/ { print $2 }' "$file")
    [ "${KEEP:-0}" = 1 ] || rm -f "$file"
    echo "$ir"
}

printf '| op |'
printf ' %s |' "${allocators[@]}"
printf '\n|---|'
printf -- '---:|%.0s' "${allocators[@]}"
printf '\n'
for op in "${ops[@]}"; do
    row="| \`$op\` |"
    for alloc in "${allocators[@]}"; do
        a=$(count "$op" "$alloc" "$small")
        b=$(count "$op" "$alloc" "$large")
        per=$(awk -v a="$a" -v b="$b" -v d=$((large - small)) 'BEGIN { printf "%.2f", (b - a) / d }')
        row="$row $per |"
    done
    echo "$row"
done
