#!/usr/bin/env bash
# usage: scripts/s-time-check.sh [SECONDS [ROUNDS]]
#
# An independent client agrees: `openssl s_time -new` (the system's OpenSSL)
# and `load -c 1 --threads 1 --new-connection -s 0` (tls-bench's client, one
# connection on one thread as s_time, on the same system OpenSSL) against one
# `serve --library openssl` of that build, in ROUNDS rounds (default 20) of
# SECONDS each (default 1; s_time runs up to a second longer), the two
# clients taking turns and the first alternating: connections per wall-clock
# second of each, per round and in all, and the median of the rounds'
# ratios; exit 1 past 10%, or when the server's count is not both clients'.
#
# s_time's own figures are not used: "connections/user sec" divides by the
# client's user CPU time, and "N real seconds" is whole seconds; the script
# times each s_time run itself. s_time -new exits non-zero even on success
# (openssl/openssl#27856): its exit status is ignored, its count is checked
# against the server's.
#
# TLS_BENCH_S_TIME_FEATURES: the cargo features of that build (default
# openssl,tools; any set with openssl and tools, e.g. CI's test build).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
secs=${1:-1}
rounds=${2:-20}
bound=10
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "error: SECONDS must be a whole number of seconds, not \"$secs\"" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS must be a whole number, not \"$rounds\"" >&2; exit 2; }
command -v openssl >/dev/null || { echo "error: no openssl command (apt-get install openssl)" >&2; exit 1; }
dir=target/s-time-check
mkdir -p "$dir"
# The system OpenSSL build (variant system-openssl): s_time's library.
features=${TLS_BENCH_S_TIME_FEATURES:-openssl,tools}
cargo build --release --quiet --no-default-features --features "$features" --bin serve --bin load
cp target/release/serve target/release/load "$dir/"
"$dir/serve" --library openssl --listen 127.0.0.1:0 > "$dir/serve.log" 2>&1 &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^serving' "$dir/serve.log" && break; sleep 0.1; done
addr=$(grep -o '127\.0\.0\.1:[0-9]*' "$dir/serve.log" | head -1)
[ -n "$addr" ] || { cat "$dir/serve.log" >&2; echo "error: serve did not start" >&2; exit 1; }

# Rounds, each client in turn (the first one alternating), so a change in
# the machine's speed during the run reaches both clients alike; the verdict
# is the median of the rounds' ratios.
: > "$dir/rounds.txt"
s_time_round() {
  local t0 t1 n
  t0=$(date +%s.%N)
  openssl s_time -connect "$addr" -new -time "$secs" -ciphersuites TLS_AES_128_GCM_SHA256 \
    -CAfile certs/ecdsa-p256/ca-cert.pem -verify 2 > "$dir/s_time.log" 2>&1 || true
  t1=$(date +%s.%N)
  n=$(grep -oE '^[0-9]+ connections in [0-9.]+s' "$dir/s_time.log" | head -1 | cut -d' ' -f1)
  [ -n "$n" ] || { cat "$dir/s_time.log" >&2; echo "error: s_time reported no count" >&2; exit 1; }
  s_time_n=$n s_time_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
}
load_round() {
  "$dir/load" --library openssl --connect "$addr" -c 1 --threads 1 --new-connection -s 0 -d "${secs}s" --quiet \
    --json "$dir/load.json" > "$dir/load.md"
  load_n=$(grep -o '"handshakes_full": [0-9]*' "$dir/load.json" | grep -o '[0-9]*$')
  load_rate=$(grep -o '"full_handshakes_per_s": [0-9.]*' "$dir/load.json" | grep -o '[0-9.]*$')
}
for r in $(seq "$rounds"); do
  if ((r % 2)); then s_time_round; load_round; else load_round; s_time_round; fi
  echo "$r $s_time_n $s_time_s $load_n $load_rate" >> "$dir/rounds.txt"
done
kill -INT "$server"
for _ in $(seq 100); do grep -q '^served' "$dir/serve.log" && break; sleep 0.1; done
trap - EXIT
served=$(grep -o 'handshakes [0-9]* full' "$dir/serve.log" | grep -o '[0-9]*')
lib=$(grep -o '^served [^ ]*' "$dir/serve.log" | cut -d' ' -f2)
sort -k1,1n "$dir/rounds.txt" | awk -v served="$served" -v lib="$lib" -v bound="$bound" '
{ st = $2 / $3; ratio[NR] = $5 / st; n += $2; t += $3; lc += $4; lt += $4 / $5
  printf "round %d: openssl s_time %.1f connections/s, load %.1f: %.3f\n", $1, st, $5, ratio[NR] }
END {
  printf "server %s, TLS 1.3 TLS_AES_128_GCM_SHA256 x25519 ECDSA-P256, one connection at a time\n", lib
  printf "openssl s_time -new: %d connections in %.2f s wall: %.1f connections/s\n", n, t, n / t
  printf "load -c 1 --threads 1 --new-connection -s 0: %d handshakes in %.2f s: %.1f connections/s\n", lc, lt, lc / lt
  for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (ratio[j] < ratio[i]) { x = ratio[i]; ratio[i] = ratio[j]; ratio[j] = x }
  m = NR % 2 ? ratio[(NR + 1) / 2] : (ratio[NR / 2] + ratio[NR / 2 + 1]) / 2
  printf "load / s_time: %.3f (the median of %d rounds; %.3f to %.3f)\n", m, NR, ratio[1], ratio[NR]
  if (served != n + lc) { printf "error: the server counted %d handshakes, the clients %d\n", served, n + lc; exit 1 }
  if (m < 1 - bound / 100 || m > 1 + bound / 100) { printf "error: more than %d%% apart\n", bound; exit 1 }
}'
