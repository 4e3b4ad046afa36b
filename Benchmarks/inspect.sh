#!/usr/bin/env bash
# What inspection costs a busy proxy: hit_1k at c=64 (proxy and origin on CPU 0, wrk on CPU 1),
# alone and while, once a second, `sluice cache list` and `stats` run and the admin API is asked
# for /cache, /stats and /metrics (on CPU 1, like a person or a scraper would add).
#   Benchmarks/inspect.sh [PAIRS]      (default 3 pairs of 6 s runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
PAIRS="${1:-3}"
ORIGIN_PORT="${ORIGIN_PORT:-24582}"
PROXY_PORT="${PROXY_PORT:-24510}"
ADMIN_PORT="${ADMIN_PORT:-24511}"
source Benchmarks/origin.sh
need_wrk_nginx
scripts/setup.sh
swift build -c release >/dev/null
bin=.build/release/sluice
make_work_directory
start_origin "$ORIGIN_PORT" "$work" "max-age=3600"
printf 'listen: 127.0.0.1:%s\nadmin: {listen: "127.0.0.1:%s"}\ncache: {path: %s/cache.sqlite}\nlog: {access: false}\n' \
  "$PROXY_PORT" "$ADMIN_PORT" "$work" > "$work/sluice.yaml"
taskset -c 0 "$bin" serve --config "$work/sluice.yaml" > "$work/logs/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
url="http://127.0.0.1:$ORIGIN_PORT/1k.bin"
for _ in $(seq 50); do curl -s -o /dev/null -x "http://127.0.0.1:$PROXY_PORT" "$url" && break; sleep 0.1; done
run() {
  TARGET="$url" taskset -c 1 wrk -t1 -c64 -d"$1"s -s Benchmarks/absolute-form.lua "http://127.0.0.1:$PROXY_PORT/" |
    grep -o "rps=[0-9]*" | cut -d= -f2
}
inspect() {
  local end=$((SECONDS + 6))
  while [ $SECONDS -lt $end ]; do
    taskset -c 1 "$bin" cache list --config "$work/sluice.yaml" > /dev/null
    taskset -c 1 "$bin" cache stats --config "$work/sluice.yaml" > /dev/null
    for path in "cache?limit=100" stats metrics; do taskset -c 1 curl -s "http://127.0.0.1:$ADMIN_PORT/$path" > /dev/null; done
    sleep 1
  done
}
run 2 > /dev/null
total_alone=0; total_inspected=0
for pair in $(seq "$PAIRS"); do
  alone=$(run 6)
  inspect & inspector=$!
  inspected=$(run 6)
  wait "$inspector"
  echo "pair $pair: alone $alone req/s, with inspection $inspected req/s"
  total_alone=$((total_alone + alone)); total_inspected=$((total_inspected + inspected))
done
awk -v a="$total_alone" -v b="$total_inspected" 'BEGIN { printf "inspection cost: %.1f %% of throughput\n", (a - b) * 100 / a }'
