#!/usr/bin/env bash
# Runs the Criterion benchmarks once per build variant, so that every stack
# lands in one report (target/criterion/report/index.html lists every
# benchmark on disk; `cargo run --release --bin report` tabulates them).
# The variants are the table in benches/src/variants.rs (`cargo run --release --bin
# variants -- list`); TLS_BENCH_VARIANTS (names, space-separated) picks some.
#
# Usage: scripts/bench-all.sh [cargo bench arguments], e.g.
#   scripts/bench-all.sh                          every benchmark, every variant
#   scripts/bench-all.sh --bench handshake -- --quick
#   scripts/bench-all.sh -- --test                each benchmark once (what CI runs)
# Extra `--config aws-lc-config/<lib>.toml` arguments apply to every variant.
# An unknown variant is an error before any benchmark runs; a failed variant
# does not stop the others; the variants run and failed are printed last,
# and the exit status is 1 when any failed. All logic is in
# src/bin/variants.rs (`variants bench`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release --quiet --bin variants -- bench "$@"
