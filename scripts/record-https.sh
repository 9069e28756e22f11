#!/usr/bin/env bash
# Records the HTTPS results the README's "HTTPS" lines and results/README.md
# tables (`report results` renders them): into results/https/DATE/ (DATE:
# today, UTC):
#   compare/   `https-compare --variants all -t 5s` (5-s slices, 3 rounds,
#              to keep the recording near 30 minutes), else its defaults: every
#              library's server (the other builds' as child processes),
#              plaintext HTTP and nginx in interleaved rounds (RSA-4096 and
#              ECDSA-P256; new connection per request and keep-alive), wrk,
#              siege and h2load beside, servers and clients on separate
#              cores;
#   soak/      `https-soak` (10 minutes, every server and nginx at once);
#   attack/    `https-attack --kind mTLS` of every TLS library (good clients
#              alone, then beside every kind of attacker), LIBRARY.json;
#   env.txt    date, kernel, cores and CPU model.
# Run it on an idle machine: nothing else may run while it measures (the
# variants' builds come first). HTTPS_VARIANTS=NAMES picks other variants
# than all (e.g. "system-openssl boringssl").
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
out=results/https/$(date -u +%F)
mkdir -p "$out/attack"
{
  echo "date: $(date -u '+%F %R UTC')"
  echo "kernel: $(uname -sr)"
  echo "cores: $(nproc)"
  echo "cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
} > "$out/env.txt"
cargo build --release --quiet --bin https-compare --bin https-soak --bin https-attack --bin https-serve --bin serve
variants=$(echo "${HTTPS_VARIANTS:-all}" | tr ' ' ',')
target/release/https-compare --variants "$variants" -t 5s --out "$out/compare" > "$out/compare.md"
# Exit 1 with its results written is a server flagged as still growing: kept,
# as the table says; any other failure stops the recording.
target/release/https-soak --out "$out/soak" > "$out/soak.md" || test -s "$out/soak/results.json"
for lib in $(target/release/serve --list | grep -v '^plaintext'); do
  target/release/https-attack --library "$lib" --kind mTLS -t 10s --json "$out/attack/$lib.json" > /dev/null
done
rm -rf "$out/work" # the tools' nginx config, rc files and logs
echo "record-https: wrote $out"
