#!/usr/bin/env bash
# Fuzzes Sluice's input-facing code with libFuzzer (clang's, from the Swift toolchain) under
# AddressSanitizer: the request parser, the chunked decoder, the MIME matcher, the config loader
# and the null stripper, each for a fixed time budget.
#   Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
# Corpora grow in .build/fuzz/corpus/<target>; a crash leaves its input in .build/fuzz/crashes/
# and fails the run (turn it into a regression test, then fix it).
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request-parser chunked mime config null-stripper)
bash scripts/setup.sh
work=.build/fuzz
mkdir -p "$work/crashes"
echo "fuzz: building (release, -sanitize=fuzzer,address)"
# lld from the toolchain: gold fails on libFuzzer's runtime next to SwiftPM's entry-point alias.
lld="$(dirname "$(readlink -f "$(command -v swift)")")/ld.lld"
printf '{"schemaVersion": "1.0", "linker": {"path": "%s"}}\n' "$lld" > "$work/toolset.json"
SLUICE_FUZZ=1 swift build -c release --product SluiceFuzz --scratch-path "$work/build" --toolset "$work/toolset.json" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing 2>&1 |
  grep -E "error|warning: |Build complete" || true
binary="$work/build/release/SluiceFuzz"

[ -x "$binary" ] || { echo "fuzz: build failed" >&2; exit 1; }

# Seeds: a few well-formed inputs per target, so the fuzzer starts from the interesting paths.
seed() { mkdir -p "$work/corpus/$1"; printf '%b' "$3" > "$work/corpus/$1/$2"; }
seed request-parser get 'GET http://example.com/a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n'
seed request-parser post 'POST http://h:8080/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello'
seed request-parser chunked 'PUT http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive, X-A\r\n\r\n'
seed request-parser connect 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nProxy-Authorization: Basic eDp5\r\n\r\n'
seed chunked simple '5\r\nhello\r\n0\r\n\r\n'
seed chunked extensions '3;name=value;q="a\\\\"b"\r\nabc\r\n0\r\nTrailer-A: 1\r\n\r\n'
seed mime json 'application/json; charset=utf-8'
seed mime suffix 'application/problem+json'
seed mime wildcard 'text/*'
seed config rules 'listen: 127.0.0.1:8080\nrules:\n  - name: api\n    match: { host: "*.example.com", path: "/v1/**", methods: [GET] }\n    accept: { status: ["200-299", 304], content_types: [application/json, "application/*+json"], on_reject: enforce }\n    strip_json_nulls: true\n    cache: { ttl: 5m }\ncache: { capacity: 1GiB, mode: shared }\n'
seed null-stripper object '{"a":null,"b":[1,null,{"c":null,"d":"\\u0041"}],"e":{"f":null},"g":-1.5e10}'
seed null-stripper nested '[[[{"x":null}]],{"y":{"z":null,"w":true}}]'

status=0
for target in "${targets[@]}"; do
  mkdir -p "$work/corpus/$target"
  log="$work/$target.log"
  echo "fuzz: $target for ${budget}s"
  if SLUICE_FUZZ_TARGET="$target" ASAN_OPTIONS="detect_leaks=0" "$binary" "$work/corpus/$target" \
      -max_total_time="$budget" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/crashes/$target-" > "$log" 2>&1; then
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    echo "fuzz: $target clean: $runs executions, corpus $(ls "$work/corpus/$target" | wc -l) inputs"
  else
    status=1
    echo "fuzz: $target FAILED (see $log; inputs in $work/crashes/):"
    grep -E "ERROR|Fatal error|Precondition|SUMMARY" "$log" | head -5
  fi
done
exit $status
