# Sourced by bench-all.sh and memory/bench-memory.sh, and read by the
# compare binary (src/bin/compare/variants.rs): the build variants, one
# cargo invocation each ("name|cargo arguments"). OpenSSL, the system's
# OpenSSL and BoringSSL cannot share one build (one openssl-sys per build;
# boring-sys shadows libssl). TLS_BENCH_VARIANTS (names, space-separated)
# picks some; default all.
#
#   default         s2n-tls, rustls (aws-lc-rs, ring), OpenSSL 3.6 (vendored), plaintext floor
#   system-openssl  the system's OpenSSL (Debian's libssl-dev, 3.0.x)
#   boringssl       BoringSSL (the `boring` crate)
all_variants=(
  "default|"
  "system-openssl|--no-default-features --features openssl"
  "boringssl|--no-default-features --features boring"
)
# Variants only `compare` builds, each in a target directory of its own (an
# aws-lc-config file changes rustflags, which would rebuild every crate of
# the default build each time):
#   openssl-aws-lc  AWS-LC under the `openssl` crate (aws-lc-config/openssl.toml)
compare_variants=(
  "openssl-aws-lc|--config aws-lc-config/openssl.toml --no-default-features --features openssl --target-dir target/aws-lc-openssl"
)
variants=()
known=()
for v in "${all_variants[@]}"; do known+=("${v%%|*}"); done
read -ra wanted <<< "${TLS_BENCH_VARIANTS:-}"
for name in "${wanted[@]}"; do
  if [[ " ${known[*]} " != *" $name "* ]]; then
    echo "TLS_BENCH_VARIANTS: unknown variant \"$name\"; valid: ${known[*]}" >&2
    exit 1
  fi
done
for v in "${all_variants[@]}"; do
  if [ -z "${TLS_BENCH_VARIANTS:-}" ] || [[ " $TLS_BENCH_VARIANTS " == *" ${v%%|*} "* ]]; then variants+=("$v"); fi
done
if [ ${#variants[@]} -eq 0 ]; then
  echo "TLS_BENCH_VARIANTS=\"$TLS_BENCH_VARIANTS\" names no variant; valid: ${known[*]}" >&2
  exit 1
fi
