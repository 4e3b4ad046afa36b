#!/usr/bin/env bash
# Sets up, builds (release) and runs the proxy on its defaults: conf/sluice.yaml, 127.0.0.1:8080.
# Extra arguments go to `sluice serve` (e.g. --listen 127.0.0.1:3128).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release
mkdir -p var
exec .build/release/sluice serve --config conf/sluice.yaml "$@"
