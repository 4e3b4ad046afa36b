#!/usr/bin/env bash
# Pass-through benchmark anyone can run with Debian's wrk and nginx-light: a local nginx origin
# serving 1 KiB and 1 MiB files (no-store), `sluice serve` (release build), and wrk sending
# absolute-form requests, with and without the proxy. Prints req/s, p50/p99 and Sluice's peak RSS.
# Proxy and origin share CPU 0, wrk runs on CPU 1 (as ../shared/bench does). Loopback only.
#   Benchmarks/run.sh            # DURATION=5 CONNS="1 64"
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
DURATION="${DURATION:-5}"
CONNS="${CONNS:-1 64}"
ORIGIN_PORT="${ORIGIN_PORT:-24580}"
PROXY_PORT="${PROXY_PORT:-24508}"
source Benchmarks/origin.sh
need_wrk_nginx
scripts/setup.sh
swift build -c release >/dev/null
make_work_directory
start_origin "$ORIGIN_PORT" "$work" no-store
printf 'listen: 127.0.0.1:%s\nadmin: {listen: ""}\nlog:\n  access: false\n' "$PROXY_PORT" > "$work/sluice.yaml"
taskset -c 0 .build/release/sluice serve --config "$work/sluice.yaml" > "$work/logs/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/1k.bin" && curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" && break; sleep 0.1; done

printf '%-8s %-6s %5s %10s %8s %8s %7s %8s\n' target file conns req/s p50_ms p99_ms errors ratio
for file in 1k.bin 1m.bin; do
  for conns in $CONNS; do
    direct=$(TARGET="http://127.0.0.1:$ORIGIN_PORT/$file" taskset -c 1 wrk -t1 -c"$conns" -d"${DURATION}s" \
      -s Benchmarks/absolute-form.lua "http://127.0.0.1:$ORIGIN_PORT/" | grep RESULT)
    proxied=$(TARGET="http://127.0.0.1:$ORIGIN_PORT/$file" taskset -c 1 wrk -t1 -c"$conns" -d"${DURATION}s" \
      -s Benchmarks/absolute-form.lua "http://127.0.0.1:$PROXY_PORT/" | grep RESULT)
    field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
    d=$(field "$direct" rps); p=$(field "$proxied" rps)
    printf '%-8s %-6s %5s %10s %8s %8s %7s %8s\n' direct "$file" "$conns" "$d" "$(field "$direct" p50_ms)" \
      "$(field "$direct" p99_ms)" "$(field "$direct" errors)" 1.00
    printf '%-8s %-6s %5s %10s %8s %8s %7s %8s\n' sluice "$file" "$conns" "$p" "$(field "$proxied" p50_ms)" \
      "$(field "$proxied" p99_ms)" "$(field "$proxied" errors)" "$(awk -v a="$p" -v b="$d" 'BEGIN{printf "%.2f", a/b}')"
  done
done
echo "sluice peak RSS: $(awk '/VmHWM/{printf "%.1f MiB", $2/1024}' /proc/"$(cat "$work/sluice.pid")"/status)"
