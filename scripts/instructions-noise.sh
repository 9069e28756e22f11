#!/usr/bin/env bash
# Runs the instruction-count suite (cargo bench --bench instructions) twice
# and prints, per count, the difference between the two runs, largest
# first, with the largest overall and at the sweep centre against the goals
# (0.3% and 0.1%). The runs write to target/instructions-noise (emptied
# first), so target/gungraun and its history are left alone.
#
# Usage: scripts/instructions-noise.sh [GUNGRAUN_FILTER]
#   e.g. scripts/instructions-noise.sh '*openssl*'
# TLS_BENCH_INSTRUCTIONS=quick counts one iteration per figure (noisier).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h | --help)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
[ $# -le 1 ] || { echo "error: at most one filter (got $#)" >&2; exit 2; }

home=$PWD/target/instructions-noise
# The filter checked first (an error if it selects nothing), before the
# previous run's counts are removed.
GUNGRAUN_HOME=$home cargo bench --bench instructions -- --list "$@" >/dev/null
rm -rf "$home"
for run in 1 2; do
  echo "=== run $run of 2" >&2
  GUNGRAUN_HOME=$home cargo bench --bench instructions -- "$@"
done
cargo run --release --quiet --bin report -- --instructions --noise --gungraun-dir "$home"
