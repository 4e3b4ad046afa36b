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
swift test --skip-build
# The core end-to-end families again with libcurl carrying what the native transport carries by
# default (upstream.engine: curl): both transports keep the same behaviour.
SLUICE_TEST_UPSTREAM_ENGINE=curl swift test --skip-build --filter \
  'ForwardingTests|KeepAliveTests|StreamingTests|RedirectTests|ErrorTests|SafetyTests|CacheConformanceTests|CacheTests|HookTests|ValidationTests|OriginMisbehaviourTests|InterceptionTests'
scripts/browser-test.sh
