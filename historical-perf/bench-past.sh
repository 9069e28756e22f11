#!/usr/bin/env bash
# tls-bench's handshake and throughput benchmarks across past releases:
#
#   historical-perf/bench-past.sh [s2n-tls|openssl|rustls|all] [--quick] [--versions v1,v2] [--all-releases] [--newest N]
#
# Each release is built on its own, its Criterion medians kept in
# target/historical-perf/<library>/<release>.json, and one graph per
# benchmark drawn into historical-perf/graphs/<library>/ (with --quick:
# target/historical-perf/quick/). `... plot [library]` redraws them from
# the kept results. All logic is in src/bin/historical-perf/.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  plot|list) exec cargo run --release --quiet --bin historical-perf -- "$@" ;;
  *) exec cargo run --release --quiet --bin historical-perf -- run "$@" ;;
esac
