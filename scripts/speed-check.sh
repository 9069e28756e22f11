#!/usr/bin/env bash
# An independent tool agrees with the crypto floor: `openssl speed` of the
# system's OpenSSL (ecdsap256 sign and verify, ecdhx25519, aes-128-gcm on
# 16 KiB, hmac sha256 on 32 bytes) beside the floor of the system-openssl build, which calls the same
# libcrypto through the openssl crate, in interleaved rounds; exits 1 when a
# primitive's median ratio lies more than 10% from 1.
#   scripts/speed-check.sh [ROUNDS]   (default 3; about 50 s a round)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
rounds=${1-3} # an empty ROUNDS is refused below, not taken as the default
# Checked before the build (the binary checks it too, but only after it).
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds < 1 || rounds > 20)); then
  echo "error: ROUNDS \"$rounds\": valid from 1 to 20" >&2
  exit 1
fi
command -v openssl >/dev/null || { echo "error: openssl is not installed (apt-get install openssl)" >&2; exit 1; }
args=$(cargo run --release --quiet --bin variants -- list | awk -F'\t' '$1 == "system-openssl" { print $2 }')
# The variant's build lands in target/release/crypto-floor, where the
# default build's is: that one is kept aside by a hard link and put back,
# the variant's copied to target/speed-check/ and run from there.
mkdir -p target/speed-check
kept=target/release/.crypto-floor.kept-$$
if [ -e target/release/crypto-floor ]; then
  ln -f target/release/crypto-floor "$kept"
  trap 'mv -f "$kept" target/release/crypto-floor' EXIT
fi
# shellcheck disable=SC2086  # the variant's cargo arguments, split
cargo build --release --quiet --bin crypto-floor $args
cp target/release/crypto-floor target/speed-check/crypto-floor
target/speed-check/crypto-floor speed --against-openssl-speed --rounds "$rounds"
