#!/usr/bin/env bash
# Records the socket results the README's "Real sockets" section and
# results/README.md table (`report results` renders them): into
# results/sockets/DATE/ (DATE: today, UTC):
#   compare/   `compare --sockets` of the default, system-openssl and
#              boringssl builds in one interleaved run;
#   scaling/   `handshake-scaling` of every library of those builds;
#   s-time.txt `scripts/s-time-check.sh` (20 rounds of 1 s a client);
#   baseline.txt `load` against `serve`, plaintext TCP, taking turns with the
#              plain tokio echo pair of examples/tokio_echo_pair.rs (the
#              client's own cost).
# Run it on an idle machine: nothing else may run while it measures.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
out=results/sockets/$(date -u +%F)
mkdir -p "$out/scaling"
cargo run --release --bin compare -- --sockets --variants default,system-openssl,boringssl --out "$out/compare" \
  > "$out/compare.md"
# Each build's libraries, one scaling run each (built first, then run).
for build in default "openssl,tools" "boring,tools"; do
  if [ "$build" = default ]; then args=(); else args=(--no-default-features --features "$build"); fi
  cargo build --release --quiet "${args[@]}" --bin handshake-scaling --bin serve
  for lib in $(target/release/serve --list | grep -v '^plaintext'); do
    target/release/handshake-scaling --library "$lib" -d 2s --out "target/handshake-scaling/$lib" > /dev/null
    cp "target/handshake-scaling/$lib/results.json" "$out/scaling/$lib.json"
  done
done
scripts/s-time-check.sh > "$out/s-time.txt"
cargo build --release --quiet --bin serve --bin load --bin handshake-scaling # back to the default build
cargo build --release --quiet --example tokio_echo_pair
target/release/examples/tokio_echo_pair 10 16384 3 8 > "$out/baseline.txt"
echo "record: wrote $out"
