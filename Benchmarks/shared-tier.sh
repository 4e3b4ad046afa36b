#!/usr/bin/env bash
# The shared cache tier (Redis) measured: instance A fills the tier with distinct 1 KiB URLs
# (misses), instance B then asks for the same URLs (shared-tier hits: each one read from Redis,
# copied into B's file and served), and A asks again (local hits on the same URLs), all at c=64.
# Also the peak RSS of A against an instance C without a tier doing the same work.
# Proxies, origin and Redis share CPU 0; wrk runs on CPU 1. Needs redis-server, wrk, nginx-light.
#   Benchmarks/shared-tier.sh          # FILL=8 (seconds of misses) RUN=2 (seconds per measured run)
#   CLUSTER=1 Benchmarks/shared-tier.sh   # the tier on a three-master Redis Cluster instead of one server
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
FILL="${FILL:-8}"
RUN="${RUN:-2}"
ORIGIN_PORT=24580 REDIS_PORT=24579 A_PORT=24508 B_PORT=24509 C_PORT=24510
source Benchmarks/origin.sh
need_wrk_nginx
command -v redis-server >/dev/null || { echo "needs redis-server (scripts/setup.sh --tests)" >&2; exit 1; }
swift build -c release >/dev/null
make_work_directory
start_origin "$ORIGIN_PORT" "$work" "public, max-age=3600"
redis() {  # port, extra arguments
  local port=$1; shift
  mkdir -p "$work/redis-$port"
  taskset -c 0 redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work/redis-$port" "$@" \
    > "$work/logs/redis-$port.log" 2>&1 &
  echo $! > "$work/redis-$port.pid"
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
}
tier="url: \"redis://127.0.0.1:$REDIS_PORT/0\""
if [ -n "${CLUSTER:-}" ]; then
  for port in $REDIS_PORT $((REDIS_PORT + 10)) $((REDIS_PORT + 20)); do redis "$port" --cluster-enabled yes; done
  redis-cli --cluster create 127.0.0.1:$REDIS_PORT 127.0.0.1:$((REDIS_PORT + 10)) 127.0.0.1:$((REDIS_PORT + 20)) \
    --cluster-replicas 0 --cluster-yes >/dev/null
  until redis-cli -p "$REDIS_PORT" cluster info | grep -q cluster_state:ok; do sleep 0.1; done
  tier="url: \"redis://127.0.0.1:$REDIS_PORT\", cluster: true"
else
  redis "$REDIS_PORT"
fi
start() {  # name port shared?
  local shared=""
  [ "$3" = yes ] && shared="  shared: { $tier, timeout: 50ms }"
  printf 'listen: 127.0.0.1:%s\nadmin: {listen: ""}\nlog:\n  access: false\ncache:\n  path: %s/%s.sqlite\n%s\n' \
    "$2" "$work" "$1" "$shared" > "$work/$1.yaml"
  taskset -c 0 .build/release/sluice serve --config "$work/$1.yaml" > "$work/logs/$1.log" 2>&1 &
  echo $! > "$work/$1.pid"
}
start a "$A_PORT" yes
start b "$B_PORT" yes
start c "$C_PORT" no
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/1k.bin" && curl -s -o /dev/null "http://127.0.0.1:$A_PORT/" \
    && curl -s -o /dev/null "http://127.0.0.1:$B_PORT/" && curl -s -o /dev/null "http://127.0.0.1:$C_PORT/" && break
  sleep 0.1
done
sleep 1  # the tier connects
run() {  # port seconds
  TARGET="http://127.0.0.1:$ORIGIN_PORT/1k.bin" taskset -c 1 wrk -t1 -c64 -d"$2s" -s Benchmarks/unique.lua \
    "http://127.0.0.1:$1/" | grep RESULT
}
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
fill=$(run "$A_PORT" "$FILL")
echo "A fills (misses, stored locally and shared): $fill"
if [ -n "${CLUSTER:-}" ]; then
  echo "Redis keys per master: $(for port in $REDIS_PORT $((REDIS_PORT + 10)) $((REDIS_PORT + 20)); do redis-cli -p "$port" dbsize; done | tr '\n' ' ')"
else
  echo "Redis keys: $(redis-cli -p "$REDIS_PORT" dbsize)"
fi
if [ -n "${PERF:-}" ]; then (sleep 0.5; perf record -F 2000 -g -p "$(cat "$work/b.pid")" -o "$PERF" -- sleep 1 >/dev/null 2>&1) & fi
shared=$(run "$B_PORT" "$RUN")
echo "B, the same URLs (shared-tier hits):           $shared"
local_hits=$(run "$A_PORT" "$RUN")
echo "A, the same URLs (local hits):                 $local_hits"
echo "C, no tier, fills:                             $(run "$C_PORT" "$FILL")"
echo "C, no tier, the same URLs (local hits):        $(run "$C_PORT" "$RUN")"
echo "shared-tier hits / local hits: $(awk -v a="$(field "$shared" rps)" -v b="$(field "$local_hits" rps)" 'BEGIN{printf "%.2f", a/b}')"
hwm() { awk '/VmHWM/{printf "%.1f", $2/1024}' /proc/"$(cat "$work/$1.pid")"/status; }
echo "peak RSS MiB: A (tier) $(hwm a), B (tier) $(hwm b), C (no tier, same fill and hits as A) $(hwm c)"
