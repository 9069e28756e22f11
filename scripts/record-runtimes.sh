#!/usr/bin/env bash
# Records the Erlang seed's table that results/README.md's "Other runtimes"
# section shows (`report results` renders it): into
# results/runtimes/DATE/erlang-seed/ (DATE: today, UTC), a `compare
# --sockets` run of the seed's rows alone (50 clients, 30 KiB messages,
# TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256 and
# TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) with every runtime's echo server
# (Erlang's ssl and gen_tcp, Go, Node.js, SunJSSE, JSS) beside the default
# and boringssl builds' libraries and plaintext TCP, in one interleaved run.
# Run it on an idle machine: nothing else may run while it measures.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
out=results/runtimes/$(date -u +%F)
mkdir -p "$out"
cargo run --release --bin compare -- --sockets --runtimes all --variants default,boringssl \
  --filter '^echo/.*,50conns,30720B/' --out "$out/erlang-seed" > "$out/erlang-seed.md"
echo "record: wrote $out"
