#!/usr/bin/env bash
# Builds the release binary (.build/release/sluice) and says so: the first build takes minutes.
# The static Swift runtime's Foundation carries a call to mktemp(3); the linker warns about it on
# every link ("the use of `mktemp' is dangerous"). Sluice never calls it, so that one line is
# dropped from the output; anything else the build says is shown.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .build/release/sluice ]; then
  echo "build: compiling the release binary (a few minutes the first time; later builds are quick)" >&2
fi
set +e
swift build -c release 2>&1 | { grep -v "the use of \`mktemp' is dangerous" || true; }
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || { echo "build: failed (above)" >&2; exit "$status"; }
echo "build: $(pwd)/.build/release/sluice" >&2
