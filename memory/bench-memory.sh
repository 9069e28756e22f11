#!/usr/bin/env bash
# Heap per TLS connection and allocations per handshake and per write, for
# every library of every build variant (variants.sh), then the graph.
#
#   memory/bench-memory.sh [memory measure options]
#     full run: target/memory/<variant>.{json,csv}, graph memory/memory.svg
#   memory/bench-memory.sh --quick
#     10 pairs: target/memory/quick/<variant>.{json,csv} and memory.svg there
#
# Options (see `cargo run --release --bin memory -- measure --help`):
# --libraries, --kinds, --chains, -n, --write-sizes, --writes. They apply to
# every variant: with --libraries, pick the variants holding those libraries
# with TLS_BENCH_VARIANTS, e.g. TLS_BENCH_VARIANTS=default ... --libraries rustls.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../variants.sh
source ./variants.sh

out=target/memory svg=memory/memory.svg
if [[ " $* " == *" --quick "* ]]; then out=target/memory/quick svg=target/memory/quick/memory.svg; fi
# Without glibc's per-thread cache, mallinfo2 (the cross-check in each
# report) counts exactly; the figures themselves do not depend on it.
export GLIBC_TUNABLES=glibc.malloc.tcache_count=0

reports=()
for v in "${variants[@]}"; do
  name=${v%%|*} features=${v#*|}
  echo "=== memory, variant $name" >&2
  # shellcheck disable=SC2086  # $features is a list of words
  cargo run --release $features --bin memory -- measure --json "$out/$name.json" --csv "$out/$name.csv" "$@"
  reports+=("$out/$name.json")
done
cargo run --release --bin memory -- plot --svg "$svg" "${reports[@]}"
