#!/usr/bin/env bash
# Sets up and runs every test (unit, end-to-end over loopback, CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
mkdir -p .build
# The build is kept free of warnings: a new one fails the run (SwiftPM prints each with `warning:`).
swift build --build-tests 2>&1 | tee .build/build-tests.log
if grep -q 'warning: ' .build/build-tests.log; then
  echo "test: the build has warnings (above); fix them" >&2
  exit 1
fi
# A run's output is kept under .build/; when one fails, what failed is said again at the end, where
# a CI page that shows only the tail of the log still shows it.
tested() {
  local log=".build/test-$1.log" rc=0
  shift
  "$@" 2>&1 | tee "$log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "test: failed (exit $rc); what failed, from $log:" >&2
    grep -E -A4 '✘|error: |Fatal error|Test Case .* failed' "$log" | head -n 120 >&2 || true
    exit "$rc"
  fi
}
tested all swift test --skip-build
# The core end-to-end families again with libcurl carrying what the native transport carries by
# default (upstream.engine: curl): both transports keep the same behaviour.
tested curl env SLUICE_TEST_UPSTREAM_ENGINE=curl swift test --skip-build --filter \
  'ForwardingTests|KeepAliveTests|StreamingTests|RedirectTests|ErrorTests|SafetyTests|CacheConformanceTests|CacheTests|HookTests|ValidationTests|OriginMisbehaviourTests|InterceptionTests|ContractTests|TransformTests'
scripts/browser-test.sh
