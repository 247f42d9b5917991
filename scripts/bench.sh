#!/usr/bin/env bash
# Runs the benchmark reproductions (issue 4) in release and writes their results:
#   docs/results.md         the tables, with the date and the machine they ran on
#   docs/context_query.svg  the context query's throughput vs malloc, sequential and parallel
# It runs the harness's (harness/, the onewayalloc-harness crate) context-query,
# linked-list, reuse and http subcommands with the benchmark notes (--notes: the
# targets, met or missed), and the criterion benchmarks
# `cargo bench -p onewayalloc-harness --bench alloc`, saved as the criterion baseline
# "bench-sh" and compared contender by contender with critcmp (installed with
# `cargo install --locked critcmp` when missing).
#
# Usage: scripts/bench.sh [--skip-criterion] [--quick] [--out DIR] [--wait SECONDS]
#   --skip-criterion  do not run the criterion benchmarks
#   --quick           small sizes and short criterion runs, to check the script itself
#   --out DIR         write results.md and context_query.svg there (default: docs)
#   --wait SECONDS    wait up to this long for the machine to be quiet first (default 300)
#
# Every other process shows in the numbers, so the script waits for a quiet machine
# and records, for each command, how many CPUs other processes kept busy meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."

criterion=1
quick=0
out=docs
wait_max=300
while [ $# -gt 0 ]; do
    case "$1" in
    --skip-criterion) criterion=0 ;;
    --quick) quick=1 ;;
    --wait)
        wait_max=${2:?--wait needs a number of seconds}
        shift
        ;;
    --out)
        out=${2:?--out needs a directory}
        shift
        ;;
    -h | --help)
        sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "unknown option: $1 (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done

if [ "$quick" = 1 ]; then
    sizes=(--quick)
    crit_args=(--warm-up-time 1 --measurement-time 1)
else
    sizes=()
    crit_args=()
fi
baseline=bench-sh

mkdir -p "$out"
echo "building the harness" >&2
cargo build --release -p onewayalloc-harness
if [ "$criterion" = 1 ] && ! command -v critcmp >/dev/null; then
    echo "installing critcmp" >&2
    env -u CARGO_TARGET_DIR cargo install --locked critcmp
fi

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }

# Clock ticks the whole machine spent busy, and those of this shell's finished
# children; "other" CPU use is the first minus the second.
ticks() {
    local busy=0 ours=0
    if [ -r /proc/stat ]; then
        busy=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat)
        ours=$(awk '{ print $16 + $17 }' "/proc/$$/stat")
    fi
    echo "$busy $ours $EPOCHREALTIME"
}
# CPUs that other processes kept busy on average between two `ticks`.
others() {
    awk -v a="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN {
        split(a, x, " "); split(b, y, " ");
        wall = y[3] - x[3]; if (wall <= 0) { print "0.00"; exit }
        busy = (y[1] - x[1]) - (y[2] - x[2]); if (busy < 0) busy = 0;
        printf "%.2f", busy / hz / wall }'
}

# Wait for a quiet machine: others below 0.1 CPU over 5 seconds.
waited=0
while :; do
    t0=$(ticks)
    sleep 5
    load=$(others "$t0" "$(ticks)")
    if awk -v l="$load" 'BEGIN { exit !(l < 0.1) }'; then
        break
    fi
    if [ "$waited" -ge "$wait_max" ]; then
        echo "warning: other processes still use $load CPUs; the results will be noisy" >&2
        break
    fi
    echo "waiting for a quiet machine (others use $load CPUs)" >&2
    waited=$((waited + 5))
done
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
load_before=$(loadavg)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD -- src harness 2>/dev/null; then
    commit="$commit (with uncommitted changes in src/ or harness/)"
fi

run() { # subcommand and its args: prints the command and its Markdown output
    echo "running $*" >&2
    printf '```sh\ncargo run --release -p onewayalloc-harness -- %s\n```\n\n' "$*"
    local t0
    t0=$(ticks)
    cargo run --release -q -p onewayalloc-harness -- "$@"
    printf '_While it ran, other processes kept %s of %s CPUs busy on average._\n' \
        "$(others "$t0" "$(ticks)")" "$(nproc)"
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
    echo "# Benchmark results"
    echo
    echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'):"
    echo "\`$(uname -m)\`, $(nproc) CPUs (${cpu:-unknown CPU}), load average $load_before"
    echo "before the run (other processes: $load CPUs over the 5 s before it);"
    echo "$(rustc --version); commit $commit."
    if [ "$quick" = 1 ]; then
        echo
        echo "**Quick run (--quick): small sizes and 1 s criterion runs, to check the script; not numbers to quote.**"
    fi
    echo
    echo "## Context query (Netdata's table)"
    echo
    echo "![Context query throughput vs malloc](context_query.svg)"
    echo
    run context-query "${sizes[@]}" --markdown --notes --svg "$out/context_query.svg"
    echo
    echo "## Linked list (the linear-allocator article)"
    echo
    run linked-list "${sizes[@]}" --markdown --notes
    echo
    echo "## Reuse across queries"
    echo
    run reuse "${sizes[@]}" --markdown --notes
    echo
    echo "## Context query over HTTP (per-request strategies)"
    echo
    run http "${sizes[@]}" --markdown --notes
    if [ "$criterion" = 1 ]; then
        bench=(cargo bench -p onewayalloc-harness --bench alloc -- "${crit_args[@]}")
        bench+=(--save-baseline "$baseline")
        compare=(critcmp "$baseline" -g "'^([^/]+/)'" --list)
        echo
        echo "## Criterion: harness/benches/alloc/"
        echo
        printf '```sh\n%s\n%s\n```\n\n' "${bench[*]}" "${compare[*]}"
        echo "running ${bench[*]}" >&2
        crit=$(mktemp)
        t0=$(ticks)
        if "${bench[@]}" >"$crit" 2>/dev/null; then
            echo "Each group's contenders, fastest first: time over the fastest's, then"
            echo "criterion's mean time (± its standard deviation) and the rate."
            echo
            echo '```text'
            critcmp --target-dir "${CARGO_TARGET_DIR:-target}" --color never "$baseline" \
                -g '^([^/]+/)' --list
            echo '```'
            echo
            # The bench's own table, printed after criterion's results.
            sed -n '/^## Reset right after use/,$p' "$crit" | sed 's/^## /### /'
            printf '\n_While it ran, other processes kept %s of %s CPUs busy on average._\n' \
                "$(others "$t0" "$(ticks)")" "$(nproc)"
        else
            echo "\`${bench[*]}\` failed; run it by hand to see why."
        fi
        rm -f "$crit"
    fi
    echo
    echo "Load average after the run: $(loadavg)."
} >"$tmp"
mv "$tmp" "$out/results.md"
chmod 644 "$out/results.md" # mktemp made it private
trap - EXIT
echo "wrote $out/results.md and $out/context_query.svg" >&2
