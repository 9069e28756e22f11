#!/usr/bin/env bash
# Records what results/README.md's "Other runtimes" section shows (`report
# results` renders it), into results/runtimes/DATE/ (DATE: today, UTC):
#   erlang-seed/    the Erlang seed's table: a `compare --sockets` run of its
#                   rows alone (50 clients, 30 KiB messages,
#                   TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256,
#                   TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) with every runtime's
#                   echo server (Erlang's ssl and gen_tcp, Go, Node.js,
#                   SunJSSE, JSS) beside the default and boringssl builds'
#                   libraries and plaintext TCP, in one interleaved run;
#   jss-seed-soak/  the JSS seed's memory figure: `https-soak` at its load
#                   (RSA-4096, 100 users, a new connection per request, 5
#                   minutes), the JVMs' heap bounded (-Xmx256m, through
#                   JAVA_TOOL_OPTIONS, which every JVM reads).
# Run it on an idle machine: nothing else may run while it measures.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
out=results/runtimes/$(date -u +%F)
mkdir -p "$out"
cargo run --release --bin compare -- --sockets --runtimes all --variants default,boringssl \
  --filter '^echo/.*,50conns,30720B/' --out "$out/erlang-seed" > "$out/erlang-seed.md"
# https-soak exits 1 when it flags a server whose RSS grows: a finding, its
# results written (into a directory emptied first); any other failure stops.
rm -rf "$out/jss-seed-soak"
JAVA_TOOL_OPTIONS=-Xmx256m cargo run --release --bin https-soak -- --cert RSA-4096 -c 100 -t 5m \
  --runtimes java,jss --out "$out/jss-seed-soak" > "$out/jss-seed-soak.md" || test -s "$out/jss-seed-soak/results.json"
rm -rf "$out/work" # the soak's nginx config and logs
echo "record: wrote $out"
