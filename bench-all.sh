#!/usr/bin/env bash
# Runs the Criterion benchmarks once per build variant, so that every stack
# lands in one report (target/criterion/report/index.html lists every
# benchmark on disk; `cargo run --release --bin report` tabulates them).
# The variants are in variants.sh; TLS_BENCH_VARIANTS picks some.
#
# Usage: ./bench-all.sh [cargo bench arguments], e.g.
#   ./bench-all.sh                          every benchmark, every variant
#   ./bench-all.sh --bench handshake -- --quick
#   ./bench-all.sh -- --test                each benchmark once (what CI runs)
# Extra `--config aws-lc-config/<lib>.toml` arguments apply to every variant.
set -uo pipefail
cd "$(dirname "$0")"

# shellcheck source=variants.sh
source ./variants.sh

ran=() failed=()
for v in "${variants[@]}"; do
  name=${v%%|*} features=${v#*|}
  echo "=== variant $name: cargo bench $features $*" >&2
  # shellcheck disable=SC2086  # $features is a list of words
  if cargo bench $features "$@"; then ran+=("$name"); else failed+=("$name"); fi
done

echo "=== variants run: ${ran[*]:-none}" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "=== variants FAILED: ${failed[*]}" >&2
  exit 1
fi
