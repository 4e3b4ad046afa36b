#!/usr/bin/env bash
# JSON null stripping through the proxy: a 64 KiB JSON document with many nulls, fetched through
# `sluice serve` at c=64 with stripping (a rule on /strip/**, and the Sluice-Strip-Nulls header)
# and without (/plain/**, the same file). Prints req/s, p50/p99 and the ratio strip/plain.
# Proxy and origin share CPU 0, wrk runs on CPU 1. Loopback only.
#   Benchmarks/strip-through.sh          # DURATION=5 CONNS=64 ROUNDS=3
#   SLUICE_BIN=/path/to/sluice Benchmarks/strip-through.sh   # a given binary (A/B runs), no build
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
DURATION="${DURATION:-5}"
CONNS="${CONNS:-64}"
ROUNDS="${ROUNDS:-3}"
ORIGIN_PORT="${ORIGIN_PORT:-24581}"
PROXY_PORT="${PROXY_PORT:-24509}"
source Benchmarks/origin.sh
need_wrk_nginx
BIN=$(release_binary)
make_work_directory
start_origin "$ORIGIN_PORT" "$work" no-store "default_type application/json;
    location /plain/ { alias $work/www/; add_header Cache-Control no-store; }
    location /strip/ { alias $work/www/; add_header Cache-Control no-store; }"
python3 - "$work/www/doc.json" <<'PY'
import json, sys
rows, i = [], 0
while len(json.dumps({"rows": rows}, separators=(",", ":"))) < 65536 - 200:
    rows.append({"id": i, "a": None if i % 2 else "v", "b": None, "c": {"d": None, "e": i, "f": [1, None, {"g": None}]},
                 "h": None if i % 3 else [None], "name": f"row-{i}"})
    i += 1
open(sys.argv[1], "w").write(json.dumps({"meta": {"count": i, "next": None}, "rows": rows, "tail": None},
                                        separators=(",", ":")))
PY
chmod 644 "$work/www/doc.json"
cat > "$work/sluice.yaml" <<YAML
listen: 127.0.0.1:$PROXY_PORT
admin: { listen: "" }
log: { access: false }
rules:
  - name: strip
    match: { path: "/strip/**" }
    strip_json_nulls: true
YAML
taskset -c 0 "$BIN" serve --config "$work/sluice.yaml" > "$work/logs/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/plain/doc.json" && curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" && break
  sleep 0.1
done
plain=$(curl -s -x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:$ORIGIN_PORT/plain/doc.json" | wc -c)
stripped=$(curl -s -x "http://127.0.0.1:$PROXY_PORT" "http://127.0.0.1:$ORIGIN_PORT/strip/doc.json" | wc -c)
echo "document: $plain bytes, $stripped after stripping"
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
run() { # label url [extra header]
  local out
  out=$(TARGET="$2" EXTRA_HEADER="${3:-}" taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" \
    -s Benchmarks/absolute-form.lua "http://127.0.0.1:$PROXY_PORT/" | grep RESULT)
  printf '%-14s %5s %10s %8s %8s %7s\n' "$1" "$CONNS" "$(field "$out" rps)" "$(field "$out" p50_ms)" \
    "$(field "$out" p99_ms)" "$(field "$out" errors)" >&2
  field "$out" rps
}
printf '%-14s %5s %10s %8s %8s %7s\n' case conns req/s p50_ms p99_ms errors >&2
for round in $(seq "$ROUNDS"); do
  p=$(run plain "http://127.0.0.1:$ORIGIN_PORT/plain/doc.json")
  s=$(run strip-rule "http://127.0.0.1:$ORIGIN_PORT/strip/doc.json")
  h=$(run strip-header "http://127.0.0.1:$ORIGIN_PORT/plain/doc.json" "Sluice-Strip-Nulls: 1")
  echo "round $round: strip/plain $(awk -v a="$s" -v b="$p" 'BEGIN{printf "%.2f", a/b}')," \
    "header/plain $(awk -v a="$h" -v b="$p" 'BEGIN{printf "%.2f", a/b}')"
done
echo "sluice peak RSS: $(awk '/VmHWM/{printf "%.1f MiB", $2/1024}' /proc/"$(cat "$work/sluice.pid")"/status)"
