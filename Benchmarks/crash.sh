#!/usr/bin/env bash
# Crash safety of the cache: `sluice serve` is killed with SIGKILL at a random moment while four
# clients store and fetch 100 B - 4 MiB bodies, ROUNDS times over one SQLite file; then
# `PRAGMA integrity_check` must say ok and every stored URL must come back byte-identical.
#   Benchmarks/crash.sh [ROUNDS]      (default 200; CI runs the same test with 6)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-200}"
scripts/setup.sh
start=$(date +%s)
SLUICE_CRASH_ROUNDS="$ROUNDS" swift test --filter CrashSafetyTests 2>&1 | grep -E "crash-safety:|✔|✘|passed|failed|error" | tail -5
echo "rounds=$ROUNDS seconds=$(( $(date +%s) - start ))"
