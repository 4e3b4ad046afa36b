#!/usr/bin/env bash
# Contracts through the proxy: JSON pass-through of a 1 KiB and a 64 KiB document (arrays of
# issue-like objects) without a contract (/plain/**), with one in report mode (/report/**) and in
# enforce mode (/enforce/**), at c=64. Prints req/s, p50/p99 and the ratios to plain. Proxy and
# origin (nginx) share CPU 0, wrk runs on CPU 1. Also times loading a 3,000-file document.
#   Benchmarks/contract-through.sh            # DURATION=5 CONNS=64 ROUNDS=3
#   SLUICE_BIN=/path/to/sluice Benchmarks/contract-through.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
DURATION="${DURATION:-5}"
CONNS="${CONNS:-64}"
ROUNDS="${ROUNDS:-3}"
ORIGIN_PORT="${ORIGIN_PORT:-24681}"
PROXY_PORT="${PROXY_PORT:-24609}"
source Benchmarks/origin.sh
need_wrk_nginx
BIN=$(release_binary)
make_work_directory
start_origin "$ORIGIN_PORT" "$work" no-store "default_type application/json;
    location /plain/ { alias $work/www/; add_header Cache-Control no-store; }
    location /report/ { alias $work/www/; add_header Cache-Control no-store; }
    location /enforce/ { alias $work/www/; add_header Cache-Control no-store; }"
python3 - "$work" <<'PY'
import json, random, sys, os
work = sys.argv[1]
rng = random.Random(7)
def issue(i):
    return {"id": i + 1, "number": i + 1, "title": "issue %d: the parser fails on deep input" % i,
            "state": rng.choice(["open", "closed"]), "locked": False, "comments": rng.randint(0, 40),
            "body": rng.choice([None, "Steps to reproduce: run it twice. " * rng.randint(1, 4)]),
            "user": {"login": "user%d" % rng.randint(1, 99), "id": rng.randint(1, 10**6), "site_admin": False},
            "labels": [{"id": j + 1, "name": rng.choice(["bug", "docs", "perf"]), "color": "d73a4a"}
                       for j in range(rng.randint(0, 3))],
            "created_at": "2026-11-2%dT10:00:00Z" % rng.randint(0, 9)}
def doc(limit):
    items, i = [], 0
    while True:
        candidate = items + [issue(i)]
        if len(json.dumps(candidate, separators=(",", ":"))) > limit and items:
            return json.dumps(items, separators=(",", ":"))
        items, i = candidate, i + 1
open(os.path.join(work, "www", "1k.json"), "w").write(doc(1024))
open(os.path.join(work, "www", "64k.json"), "w").write(doc(65536))
user = {"type": "object", "additionalProperties": False, "required": ["login", "id", "site_admin"],
        "properties": {"login": {"type": "string", "minLength": 1, "maxLength": 39},
                       "id": {"type": "integer", "minimum": 1}, "site_admin": {"type": "boolean"}}}
schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array", "items": {
    "type": "object", "required": ["id", "number", "title", "state", "locked", "comments", "body", "user", "labels",
                                   "created_at"],
    "properties": {"id": {"type": "integer", "minimum": 1}, "number": {"type": "integer", "minimum": 1},
                   "title": {"type": "string", "minLength": 1, "maxLength": 256},
                   "state": {"enum": ["open", "closed"]}, "locked": {"type": "boolean"},
                   "comments": {"type": "integer", "minimum": 0}, "body": {"type": ["string", "null"]},
                   "user": {"$ref": "#/$defs/user"},
                   "labels": {"type": "array", "items": {"type": "object", "required": ["id", "name", "color"],
                              "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                                             "color": {"type": "string", "minLength": 6, "maxLength": 6}}}},
                   "created_at": {"type": "string", "maxLength": 32}}},
    "$defs": {"user": user}}
json.dump(schema, open(os.path.join(work, "issues.schema.json"), "w"))
# A 3,000-file OpenAPI document: one path file and one schema file per operation.
os.makedirs(os.path.join(work, "big", "paths")); os.makedirs(os.path.join(work, "big", "schemas"))
paths = {}
for n in range(1500):
    open(os.path.join(work, "big", "schemas", "s%d.yaml" % n), "w").write(
        "S:\n  type: object\n  required: [id]\n  properties:\n    id: {type: integer}\n    next: {$ref: 's%d.yaml#/S'}\n" % ((n + 1) % 1500))
    open(os.path.join(work, "big", "paths", "p%d.yaml" % n), "w").write(
        "get:\n  operationId: op%d\n  responses:\n    '200':\n      description: ok\n      content:\n        application/json:\n          schema: {$ref: '../schemas/s%d.yaml#/S'}\n" % (n, n))
    paths["/r%d/{id}" % n] = {"$ref": "paths/p%d.yaml" % n}
open(os.path.join(work, "big", "api.json"), "w").write(json.dumps(
    {"openapi": "3.0.3", "info": {"title": "big", "version": "1"}, "paths": paths}))
PY
chmod -R a+r "$work/www"
cat > "$work/sluice.yaml" <<YAML
listen: 127.0.0.1:$PROXY_PORT
admin: { listen: "" }
log: { access: false }
rules:
  - name: report
    match: { path: "/report/**" }
    contract: { schema: issues.schema.json, on_violation: report }
  - name: enforce
    match: { path: "/enforce/**" }
    contract: { schema: issues.schema.json, on_violation: enforce }
YAML
cat > "$work/big.yaml" <<YAML
rules:
  - name: big
    match: { host: "big.example" }
    contract: { openapi: big/api.json }
YAML
files=$(find "$work/big" -type f | wc -l)
start=$(date +%s.%N)
"$BIN" check-config --config "$work/big.yaml" >/dev/null
end=$(date +%s.%N)
printf 'a %d-file OpenAPI document: check-config loads and compiles it in %.2f s\n' "$files" "$(echo "$end - $start" | bc -l)"
taskset -c 0 "$BIN" serve --config "$work/sluice.yaml" > "$work/logs/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/plain/1k.json" && curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" && break
  sleep 0.1
done
for size in 1k 64k; do
  verdict=$(curl -s -D - -o /dev/null -x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:$ORIGIN_PORT/report/$size.json" | grep -i sluice-validation || true)
  echo "$size: $(stat -c %s "$work/www/$size.json") bytes; $verdict"
done
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
run() { # label url
  local out
  out=$(TARGET="$2" taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" \
    -s Benchmarks/absolute-form.lua "http://127.0.0.1:$PROXY_PORT/" | grep RESULT)
  printf '%-12s %5s %10s %8s %8s %7s\n' "$1" "$CONNS" "$(field "$out" rps)" "$(field "$out" p50_ms)" \
    "$(field "$out" p99_ms)" "$(field "$out" errors)" >&2
  field "$out" rps
}
printf '%-12s %5s %10s %8s %8s %7s\n' case conns req/s p50_ms p99_ms errors >&2
for round in $(seq "$ROUNDS"); do
  for size in 1k 64k; do
    p=$(run "plain-$size" "http://127.0.0.1:$ORIGIN_PORT/plain/$size.json")
    r=$(run "report-$size" "http://127.0.0.1:$ORIGIN_PORT/report/$size.json")
    e=$(run "enforce-$size" "http://127.0.0.1:$ORIGIN_PORT/enforce/$size.json")
    echo "round $round $size: report/plain $(awk -v a="$r" -v b="$p" 'BEGIN{printf "%.3f", a/b}')," \
      "enforce/plain $(awk -v a="$e" -v b="$p" 'BEGIN{printf "%.3f", a/b}')"
  done
done
echo "sluice peak RSS: $(awk '/VmHWM/{printf "%.1f MiB", $2/1024}' /proc/"$(cat "$work/sluice.pid")"/status)"
