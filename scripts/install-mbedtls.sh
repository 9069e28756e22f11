#!/usr/bin/env bash
# Installs Mbed TLS 3.6 LTS for the `mbedtls` build variant: Debian 13
# (trixie)'s libmbedtls-dev and its three libraries, beside Debian 12's
# packages (their sonames differ from 2.28's; they need only libc6 2.33).
# Debian 12's own libmbedtls-dev is 2.28, which has no TLS 1.3. The .debs
# come from Debian's archive, checked against the SHA-256 sums in trixie's
# package index (downloaded over the same mirror; its signature is not
# checked here). Does nothing when pkg-config finds Mbed TLS 3.6.
#   scripts/install-mbedtls.sh          (as root)
set -euo pipefail
if pkg-config --atleast-version=3.6 mbedtls 2>/dev/null; then
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "error: scripts/install-mbedtls.sh installs packages: run it as root" >&2; exit 1; }
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsS --retry 3 --connect-timeout 20 --max-time 300 -o "$work/Packages.xz" "$mirror/dists/trixie/main/binary-$arch/Packages.xz"
debs=()
for p in libmbedcrypto16 libmbedx509-7 libmbedtls21 libmbedtls-dev; do
  # The package's stanza: its file and SHA-256.
  read -r file sum < <(xz -dc "$work/Packages.xz" | awk -v p="$p" '
    $0 == "Package: " p { on = 1 } on && /^Filename:/ { f = $2 } on && /^SHA256:/ { s = $2 }
    on && /^$/ { print f, s; exit }')
  [ -n "${file:-}" ] || { echo "error: no $p in trixie's index" >&2; exit 1; }
  curl -fsS --retry 3 --connect-timeout 20 --max-time 300 -o "$work/${file##*/}" "$mirror/$file"
  echo "$sum  $work/${file##*/}" | sha256sum -c --quiet
  debs+=("$work/${file##*/}")
done
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
pkg-config --atleast-version=3.6 mbedtls
echo "installed Mbed TLS $(pkg-config --modversion mbedtls) (Debian 13's packages)"
