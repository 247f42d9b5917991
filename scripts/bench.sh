#!/usr/bin/env bash
# Runs the benchmark reproductions (issue 4) in release and writes their results:
#   docs/results.md         the tables, with the date and the machine they ran on
#   docs/context_query.svg  the context query's throughput vs malloc, sequential and parallel
# It runs examples/context_query.rs, linked_list.rs and reuse.rs, and the criterion
# benchmarks `cargo bench --bench alloc` when benches/alloc.rs exists.
#
# Usage: scripts/bench.sh [--skip-criterion] [--quick] [--out DIR]
#   --skip-criterion  do not run the criterion benchmarks
#   --quick           tiny sizes, to check the script itself in seconds
#   --out DIR         write results.md and context_query.svg there (default: docs)
#
# Run it on a quiet machine: every other process shows in the numbers, and the load
# average before and after the run is recorded with them.
set -euo pipefail
cd "$(dirname "$0")/.."

criterion=1
quick=0
out=docs
while [ $# -gt 0 ]; do
    case "$1" in
    --skip-criterion) criterion=0 ;;
    --quick) quick=1 ;;
    --out)
        out=${2:?--out needs a directory}
        shift
        ;;
    -h | --help)
        sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
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
    cq_args=(--queries 4 --charts 50 --dims 20 --trials 2)
    ll_args=(--nodes 10000 --rounds 3)
    ru_args=(--queries 20 --charts 20 --dims 10)
else
    cq_args=()
    ll_args=()
    ru_args=()
fi

mkdir -p "$out"
echo "building the examples" >&2
cargo build --release --example context_query --example linked_list --example reuse

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
load_before=$(loadavg)
case "$load_before" in
[0-9].* | [0-9][0-9]*) busy=$(awk -v l="${load_before%% *}" 'BEGIN { print (l > 0.5) }') ;;
*) busy=0 ;;
esac
if [ "$busy" = 1 ]; then
    echo "warning: load average $load_before before the run; the results will be noisy" >&2
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD -- src examples 2>/dev/null; then
    commit="$commit (with uncommitted changes in src/ or examples/)"
fi

run() { # example, args...: prints the command and its Markdown output
    local example=$1
    shift
    echo "running $example $*" >&2
    printf '```sh\ncargo run --release --example %s -- %s\n```\n\n' "$example" "$*"
    cargo run --release -q --example "$example" -- "$@"
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
    echo "# Benchmark results"
    echo
    echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'):"
    echo "\`$(uname -m)\`, $(nproc) CPUs (${cpu:-unknown CPU}), load average $load_before"
    echo "before the run; $(rustc --version); commit $commit."
    if [ "$quick" = 1 ]; then
        echo
        echo "**Quick run (--quick): tiny sizes that only check the script; the numbers mean nothing.**"
    fi
    echo
    echo "## Context query (Netdata's table)"
    echo
    echo "![Context query throughput vs malloc](context_query.svg)"
    echo
    run context_query "${cq_args[@]}" --markdown --svg "$out/context_query.svg"
    echo
    echo "## Linked list (the linear-allocator article)"
    echo
    run linked_list "${ll_args[@]}" --markdown
    echo
    echo "## Reuse across queries"
    echo
    run reuse "${ru_args[@]}" --markdown
    if [ "$criterion" = 1 ] && [ -f benches/alloc.rs ]; then
        echo
        echo "## Criterion: benches/alloc.rs"
        echo
        printf '```sh\ncargo bench --bench alloc\n```\n\n'
        echo "running cargo bench --bench alloc" >&2
        crit=$(mktemp)
        if cargo bench --bench alloc >"$crit" 2>/dev/null; then
            echo '```text'
            # Keep each benchmark's name and its time line; drop progress and analysis.
            awk '
                /^Benchmarking / || /^Found / || /^ +[0-9]+ \(/ || /^Gnuplot/ || /^$/ { next }
                / time: / { print; next }
                /^[^ ]/ { print }
            ' "$crit"
            echo '```'
        else
            echo "\`cargo bench --bench alloc\` failed; run it by hand to see why."
        fi
        rm -f "$crit"
    fi
    echo
    echo "Load average after the run: $(loadavg)."
} >"$tmp"
mv "$tmp" "$out/results.md"
trap - EXIT
echo "wrote $out/results.md and $out/context_query.svg" >&2
