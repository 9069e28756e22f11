#!/usr/bin/env bash
# An independent client agrees: `openssl s_time -new` (the system's OpenSSL)
# and `load -c 1 --threads 1 --new-connection -s 0` (tls-bench's client, one
# connection on one thread as s_time, on the same system OpenSSL) against one
# `serve --library openssl` of that build, each for SECONDS (default 10):
# connections per wall-clock second of each, their ratio; exit 1 past 15%.
#
# s_time's own figures are not used: "connections/user sec" divides by the
# client's user CPU time, and "N real seconds" is whole seconds; the script
# times s_time's run itself. s_time -new exits non-zero even on success
# (openssl/openssl#27856): its exit status is ignored, its count is checked
# against the server's.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
secs=${1:-10}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "error: SECONDS must be a whole number of seconds, not \"$secs\"" >&2; exit 2; }
command -v openssl >/dev/null || { echo "error: no openssl command (apt-get install openssl)" >&2; exit 1; }
dir=target/s-time-check
mkdir -p "$dir"
# The system OpenSSL build (variant system-openssl): s_time's library.
cargo build --release --quiet --no-default-features --features openssl,tools --bin serve --bin load
cp target/release/serve target/release/load "$dir/"
"$dir/serve" --library openssl --listen 127.0.0.1:0 > "$dir/serve.log" 2>&1 &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^serving' "$dir/serve.log" && break; sleep 0.1; done
addr=$(grep -o '127\.0\.0\.1:[0-9]*' "$dir/serve.log" | head -1)
[ -n "$addr" ] || { cat "$dir/serve.log" >&2; echo "error: serve did not start" >&2; exit 1; }

start=$(date +%s.%N)
openssl s_time -connect "$addr" -new -time "$secs" -ciphersuites TLS_AES_128_GCM_SHA256 \
  -CAfile certs/ecdsa-p256/ca-cert.pem -verify 2 > "$dir/s_time.log" 2>&1 || true
end=$(date +%s.%N)
s_time_count=$(grep -oE '^[0-9]+ connections in [0-9.]+s' "$dir/s_time.log" | head -1 | cut -d' ' -f1)
[ -n "$s_time_count" ] || { cat "$dir/s_time.log" >&2; echo "error: s_time reported no count" >&2; exit 1; }

"$dir/load" --library openssl --connect "$addr" -c 1 --threads 1 --new-connection -s 0 -d "${secs}s" --quiet \
  --json "$dir/load.json" > "$dir/load.md"
kill -INT "$server"
for _ in $(seq 100); do grep -q '^served' "$dir/serve.log" && break; sleep 0.1; done
trap - EXIT
load_count=$(grep -o '"handshakes_full": [0-9]*' "$dir/load.json" | grep -o '[0-9]*$')
load_rate=$(grep -o '"full_handshakes_per_s": [0-9.]*' "$dir/load.json" | grep -o '[0-9.]*$')
served=$(grep -o 'handshakes [0-9]* full' "$dir/serve.log" | grep -o '[0-9]*')
awk -v n="$s_time_count" -v t0="$start" -v t1="$end" -v load="$load_rate" -v lc="$load_count" -v served="$served" \
  -v lib="$(grep -o '^served [^ ]*' "$dir/serve.log" | cut -d' ' -f2)" 'BEGIN {
  st = n / (t1 - t0); ratio = load / st
  printf "server %s, TLS 1.3 TLS_AES_128_GCM_SHA256 x25519 ECDSA-P256, one connection at a time\n", lib
  printf "openssl s_time -new: %d connections in %.2f s wall: %.1f connections/s\n", n, t1 - t0, st
  printf "load -c 1 --threads 1 --new-connection -s 0: %d handshakes: %.1f connections/s\n", lc, load
  printf "load / s_time: %.3f\n", ratio
  if (served != n + lc) { printf "error: the server counted %d handshakes, the clients %d\n", served, n + lc; exit 1 }
  # 15%: on 2026-11-26 the ratio was 1.05-1.13 on an idle machine at this
  # commit and at the one before (docs/sockets.md); it was 1.00-1.03 when
  # the check was written. Which client-side cost moved is not known yet.
  if (ratio < 0.85 || ratio > 1.15) { printf "error: more than 15%% apart\n"; exit 1 }
}'
