#!/usr/bin/env bash
# What recording and replaying cost, side by side in the shared harness (harness-ab.sh):
#   Benchmarks/record-replay.sh [SLUICE_BINARY] [ROUNDS]
# 1. pass_1k with `--record` (every exchange written into a recording) against the same binary
#    without it;
# 2. hit_1k answered by `--replay` from a recording of /json/1k.json against the same binary
#    answering it from its cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-$here/../.build/release/sluice}"); rounds=${2:-3}
work=$(mktemp -d); chmod 755 "$work"
# The origin's deterministic content, made the way the harness makes it.
cp -r "$here/../../shared/bench/origin" "$work/origin"; chmod -R u+w "$work/origin"
python3 "$work/origin/gen-content.py" > /dev/null
python3 - "$work/origin/www/json/1k.json" "$work/hit.har" <<'PY'
import json, sys
body = open(sys.argv[1]).read()
entry = {"startedDateTime": "2026-11-26T00:00:00.000Z", "time": 1,
         "request": {"method": "GET", "url": "http://127.0.0.1:24080/json/1k.json", "headers": []},
         "response": {"status": 200, "statusText": "OK",
                      "headers": [{"name": "Date", "value": "Thu, 26 Nov 2026 00:00:00 GMT"},
                                  {"name": "Content-Type", "value": "application/json"},
                                  {"name": "Cache-Control", "value": "max-age=3600"}],
                      "content": {"size": len(body), "mimeType": "application/json", "text": body}}}
json.dump({"log": {"version": "1.2", "creator": {"name": "bench", "version": "1"}, "entries": [entry]}},
          open(sys.argv[2], "w"))
PY
"$bin" record import "$work/hit.har" "$work/hit.sluicerec" > /dev/null
echo "== recording: pass_1k, old = no recording, new = --record" >&2
OLD_ARGS="" NEW_ARGS="--record rec.sluicerec" CELLS="pass_1k" RESULTS="$work/record.tsv" \
  "$here/harness-ab.sh" "$bin" "$bin" "$rounds"
echo "== replay: hit_1k, old = cache hits, new = --replay" >&2
OLD_ARGS="" NEW_ARGS="--replay $work/hit.sluicerec" CELLS="hit_1k" RESULTS="$work/replay.tsv" \
  "$here/harness-ab.sh" "$bin" "$bin" "$rounds"
