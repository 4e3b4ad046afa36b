#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer, then ThreadSanitizer (each in its own build
# directory under .build/, so the normal build stays untouched). Usage: scripts/sanitize.sh [address|thread]...
# A report from either makes the run fail; the log of each is kept in .build/<sanitizer>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address thread)
status=0
for sanitizer in "${sanitizers[@]}"; do
  log=".build/$sanitizer.log"
  mkdir -p .build
  echo "sanitize: $sanitizer (log: $log)"
  # halt_on_error=0 keeps going after a report so one run shows them all; a small quarantine
  # keeps the memory-bound tests meaningful (freed memory is otherwise held back by the hundred MiB).
  export ASAN_OPTIONS="detect_leaks=0:halt_on_error=0:quarantine_size_mb=4:thread_local_quarantine_size_kb=64" TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1"
  rc=0
  swift test --sanitize="$sanitizer" --scratch-path ".build/$sanitizer" > "$log" 2>&1 || rc=$?
  grep -E "Test run with|✘ Test" "$log" || true
  if [ $rc -ne 0 ]; then
    echo "sanitize: $sanitizer: the build or a test failed (exit $rc); see $log"
    status=1
  fi
  if grep -qE "ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:" "$log"; then
    echo "sanitize: $sanitizer reported problems:"
    grep -E "ERROR: AddressSanitizer|WARNING: ThreadSanitizer|SUMMARY" "$log" | sort | uniq -c | head -20
    status=1
  elif [ $rc -eq 0 ]; then
    echo "sanitize: $sanitizer clean"
  fi
done
exit $status
