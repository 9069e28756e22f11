#!/usr/bin/env bash
# tls-bench's handshake and throughput benchmarks across past releases:
#
#   historical-perf/bench-past.sh [run] [s2n-tls|openssl|rustls|all] [--quick] [--versions v1,v2] ...
#   historical-perf/bench-past.sh [run] LIBRARY --instructions ...   instruction counts (Callgrind)
#   historical-perf/bench-past.sh [run] openssl --dtls ...   DTLS 1.2 vs TLS 1.2 send loop, allocations per write
#   historical-perf/bench-past.sh plot [library] [--kept [--instructions|--dtls]] [--update-committed] ...
#   historical-perf/bench-past.sh list [library] ...
#   historical-perf/bench-past.sh --help     every subcommand and option
#
# Without a subcommand the arguments go to `run`. Runs keep their results in
# target/historical-perf/<library>/<release>.json (--quick:
# target/historical-perf/quick/; --instructions: under
# target/historical-perf/instructions/; --dtls: under
# target/historical-perf/dtls/) and draw graphs beside them; the
# committed results and graphs (historical-perf/data/,
# historical-perf/graphs/) change only with --update-committed (never with
# --instructions or --dtls). All logic is in src/bin/historical-perf/.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  run|plot|list|help|-h|--help) exec cargo run --release --quiet --bin historical-perf -- "$@" ;;
  *) exec cargo run --release --quiet --bin historical-perf -- run "$@" ;;
esac
