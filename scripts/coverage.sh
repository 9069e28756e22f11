#!/usr/bin/env bash
# Do compare's intervals hold on a rerun? Runs `compare --filter FILTER` N
# times one after the other (default settings, or the compare options
# given after the filter), each into target/coverage/run-I, then `compare
# coverage` over them: per group, the share of (run, other run, cell)
# triples whose other-run ratio lies inside the run's 95% interval, beside
# the share calibrated intervals give, and each ratio's spread over the
# runs beside its interval's width (docs/compare.md, "Do the intervals
# hold?"). Run it on a quiet machine.
#   scripts/coverage.sh N FILTER [COMPARE OPTIONS...]
#   scripts/coverage.sh 6 'server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256'
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if (($# < 2)); then
  echo "error: give N (runs, 2 to 50) and a --filter regular expression; see --help" >&2
  exit 2
fi
n=$1 filter=$2
shift 2
if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2 || n > 50)); then
  echo "error: N \"$n\": valid from 2 to 50" >&2
  exit 2
fi
out=${CARGO_TARGET_DIR:-target}/coverage
cargo build --release --quiet --bin compare
compare=${CARGO_TARGET_DIR:-target}/release/compare
rm -rf "$out"
mkdir -p "$out"
runs=()
for i in $(seq 1 "$n"); do
  # The first run builds the workers; the others use them.
  build=(); ((i == 1)) || build=(--no-build)
  echo "coverage: run $i of $n" >&2
  "$compare" --filter "$filter" "${build[@]}" --out "$out/run-$i" "$@" >/dev/null
  runs+=("$out/run-$i")
done
"$compare" coverage "${runs[@]}"
