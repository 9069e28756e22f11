#!/usr/bin/env bash
# Heap per TLS connection and allocations per handshake and per write, for
# every library of every build variant (variants.sh), then the graph.
#
#   memory/bench-memory.sh [memory measure options]
#     target/memory/<variant>.{json,csv} and target/memory/memory.svg
#   memory/bench-memory.sh --quick [options]
#     10 pairs: the same under target/memory/quick/
#   memory/bench-memory.sh --update-committed
#     a complete run (every variant, no other option, TLS_BENCH_VARIANTS
#     unset), then its reports replace memory/data/<variant>.json and
#     memory/memory.svg is redrawn from exactly those (refused, before any
#     work, for anything less)
#   memory/bench-memory.sh -h | --help
#     this text, nothing else
#
# Options (see `cargo run --release --bin memory -- measure --help`):
# --libraries, --kinds, --chains, -n, --write-sizes, --writes. They apply to
# every variant: with --libraries, pick the variants holding those libraries
# with TLS_BENCH_VARIANTS, e.g. TLS_BENCH_VARIANTS=default ... --libraries rustls.
# `cargo run --release --bin memory -- plot` redraws memory/memory.svg from
# memory/data/ without measuring.
set -euo pipefail
cd "$(dirname "$0")/.."

update=0 options=()
for arg in "$@"; do
  case $arg in
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    --update-committed) update=1 ;;
    *) options+=("$arg") ;;
  esac
done
# What makes a run partial: any option, or TLS_BENCH_VARIANTS picking variants.
partial=(${options[@]+"${options[@]}"})
if [ -n "${TLS_BENCH_VARIANTS:-}" ]; then partial+=("TLS_BENCH_VARIANTS=$TLS_BENCH_VARIANTS"); fi
if ((update)) && [ ${#partial[@]} -gt 0 ]; then
  echo "memory/bench-memory.sh: --update-committed needs a complete run (every variant, no other option);" \
    "refused for: ${partial[*]}" >&2
  exit 2
fi
# shellcheck source=../variants.sh
source ./variants.sh

out=target/memory
if [[ " ${options[*]:-} " == *" --quick "* ]]; then out=target/memory/quick; fi
# Without glibc's per-thread cache, mallinfo2 (the cross-check in each
# report) counts exactly; the figures themselves do not depend on it.
export GLIBC_TUNABLES=glibc.malloc.tcache_count=0

reports=()
for v in "${variants[@]}"; do
  name=${v%%|*} features=${v#*|}
  echo "=== memory, variant $name" >&2
  # shellcheck disable=SC2086  # $features is a list of words
  cargo run --release $features --bin memory -- measure --json "$out/$name.json" --csv "$out/$name.csv" ${options[@]+"${options[@]}"}
  reports+=("$out/$name.json")
done
if ((update)); then
  mkdir -p memory/data
  rm -f memory/data/*.json
  cp "${reports[@]}" memory/data/
  cargo run --release --bin memory -- plot --svg memory/memory.svg memory/data
else
  cargo run --release --bin memory -- plot --svg "$out/memory.svg" "${reports[@]}"
  echo "memory/memory.svg and memory/data/ unchanged (memory/bench-memory.sh --update-committed replaces them)" >&2
fi
