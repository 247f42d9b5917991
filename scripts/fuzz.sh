#!/usr/bin/env bash
# Fuzzes the arena against the page-policy model (fuzz/fuzz_targets/ops.rs) for a
# bounded time: scripts/fuzz.sh [SECONDS] (default 60). Installs cargo-fuzz and the
# nightly toolchain it needs if they are missing. Built without a sanitizer: under
# AddressSanitizer the crate switches to its sanitizer mode, which has no pages to
# model. Crashes land in fuzz/artifacts/ops/; replay one from fuzz/ with
#   cargo +nightly fuzz run --sanitizer none ops artifacts/ops/<file>
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd fuzz
mkdir -p corpus/ops
exec cargo +nightly fuzz run --sanitizer none ops corpus/ops -- -max_total_time="$seconds" -rss_limit_mb=4096
