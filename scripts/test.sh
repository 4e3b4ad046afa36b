#!/usr/bin/env bash
# Sets up and runs every test (unit, end-to-end over loopback, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
swift build --build-tests
swift test --skip-build
scripts/browser-test.sh
