#!/usr/bin/env bash
# Heap per TLS connection and allocations per handshake and per write, for
# every library of every build variant (benches/src/variants.rs), then the graph.
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
#     the full text, nothing else
#
# Options (see `cargo run --release --bin memory -- measure --help`):
# --libraries, --kinds, --chains, -n, --write-sizes, --writes, --protocols,
# --dtls. They apply to every variant: with --libraries, pick the variants
# holding those libraries with TLS_BENCH_VARIANTS, e.g.
# TLS_BENCH_VARIANTS=default ... --libraries rustls.
# `cargo run --release --bin memory -- plot` redraws memory/memory.svg from
# memory/data/ without measuring. All logic is in benches/src/bin/memory/
# (`memory variants`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release --quiet --bin memory -- variants "$@"
