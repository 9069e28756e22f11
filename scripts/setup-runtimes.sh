#!/usr/bin/env bash
# Installs what this machine lacks for the other runtimes' servers
# (`https-compare --runtimes`, `https-soak --runtimes`, `https-attack
# --runtime`; docs/https.md, "Other runtimes"), then checks every toolchain:
#
#   scripts/setup-runtimes.sh          install (as root, Debian's apt) and check
#   scripts/setup-runtimes.sh --check  check only
#
# Debian's packages: Erlang/OTP (erlang-nox: erlc, erl and the ssl
# application), Node.js (nodejs), a JDK (openjdk-17-jdk-headless), Mozilla
# JSS (libjss-java, and libslf4j-java, which its jar loads but the package
# does not pull in) and NSS's tools (libnss3-tools: certutil, pk12util),
# each only when its program or file is missing. Go comes from https://go.dev/dl into
# /usr/local/go (Debian's golang-go, 1.19, is older than the server's 1.25),
# so a missing Go is an error naming it. Exit 1 when a toolchain is still
# missing after the install, naming each.
set -euo pipefail
check_only=
case "${1:-}" in
  --check) check_only=1 ;;
  "") ;;
  *) echo "error: unknown option '$1'; valid: --check" >&2; exit 2 ;;
esac

# program-or-file:package, what each runtime needs of Debian's packages.
wanted=(erlc:erlang-nox erl:erlang-nox node:nodejs javac:openjdk-17-jdk-headless java:openjdk-17-jdk-headless
  /usr/share/java/jss.jar:libjss-java /usr/lib/jss/libjss.so:libjss-java
  /usr/share/java/slf4j-api.jar:libslf4j-java /usr/share/java/slf4j-nop.jar:libslf4j-java
  certutil:libnss3-tools pk12util:libnss3-tools)
has() { case "$1" in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null ;; esac; }
missing=()
for w in "${wanted[@]}"; do
  has "${w%%:*}" || missing+=("${w#*:}")
done
if [ -z "$check_only" ] && [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "error: installing ${missing[*]} needs root (or run with --check)" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
fi

failed=0
need() { echo "error: $1 is missing: $2" >&2; failed=1; }
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] ||
  need go "Go 1.25 or later, from https://go.dev/dl into /usr/local/go"
for w in "${wanted[@]}"; do
  has "${w%%:*}" || need "${w%%:*}" "apt-get install ${w#*:}"
done
exit $failed
