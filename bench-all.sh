#!/usr/bin/env bash
# Runs the Criterion benchmarks once per build variant, so that every stack
# lands in one report (target/criterion/report/index.html lists every
# benchmark on disk; `cargo run --release --bin report` tabulates them):
#
#   default         s2n-tls, rustls (aws-lc-rs, ring), OpenSSL 3.6 (vendored), plaintext floor
#   system-openssl  the system's OpenSSL (Debian's libssl-dev, 3.0.x)
#   boringssl       BoringSSL (the `boring` crate)
#
# OpenSSL, the system's OpenSSL and BoringSSL cannot share one cargo build
# (one openssl-sys per build; boring-sys shadows libssl), hence one cargo
# invocation each, sharing one target directory.
#
# Usage: ./bench-all.sh [cargo bench arguments], e.g.
#   ./bench-all.sh                          every benchmark, every variant
#   ./bench-all.sh --bench handshake -- --quick
#   ./bench-all.sh -- --test                each benchmark once (what CI runs)
# Extra `--config aws-lc-config/<lib>.toml` arguments apply to every variant.
set -uo pipefail
cd "$(dirname "$0")"

variants=(
  "default|"
  "system-openssl|--no-default-features --features openssl"
  "boringssl|--no-default-features --features boring"
)

ran=() failed=()
for v in "${variants[@]}"; do
  name=${v%%|*} features=${v#*|}
  echo "=== variant $name: cargo bench $features $*" >&2
  # shellcheck disable=SC2086  # $features is a list of words
  if cargo bench $features "$@"; then ran+=("$name"); else failed+=("$name"); fi
done

echo "=== variants run: ${ran[*]:-none}" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "=== variants FAILED: ${failed[*]}" >&2
  exit 1
fi
