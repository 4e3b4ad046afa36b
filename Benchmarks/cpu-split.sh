#!/usr/bin/env bash
# User and system CPU time per request of the proxy process itself (Sluice, or nginx's worker), in
# one wrk cell through the shared harness (../shared/bench: its origin must be running,
# origin/start.sh). Read from /proc/PID/stat before and after the cell: where a proxy's time goes,
# beside the harness's requests per second.
#   Benchmarks/cpu-split.sh sluice [BINARY] [PATH] [CONNECTIONS] [SECONDS]
#   Benchmarks/cpu-split.sh nginx - [PATH] [CONNECTIONS] [SECONDS]
# Defaults: .build/release/sluice, /nocache/json/1k.json (pass_1k), 64 connections, 5 s.
set -euo pipefail
kind=$1; bin=${2:-$PWD/.build/release/sluice}; path=${3:-/nocache/json/1k.json}; conns=${4:-64}; seconds=${5:-5}
bench=$(realpath "$(dirname "$0")/../../shared/bench")
[ "$bin" = - ] || bin=$(realpath "$bin")
cd "$bench"
# shellcheck disable=SC1091
source env.sh
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat > "$script" <<'LUA'
local target = os.getenv("TARGET")
request = function() return wrk.format("GET", target, {["Host"]="127.0.0.1:24080"}) end
LUA
if [ "$kind" = sluice ]; then
  main=$(SLUICE_BIN=$bin proxies/sluice/start.sh 2>/dev/null); worker=$main; port=$SLUICE_PORT
else
  main=$(proxies/nginx/start.sh 2>/dev/null); sleep 0.3; worker=$(pgrep -P "$main" | head -1); port=$NGINX_PROXY_PORT
fi
export TARGET=http://127.0.0.1:24080$path
taskset -c 1 wrk -t1 -c"$conns" -d2s -s "$script" "http://127.0.0.1:$port" >/dev/null 2>&1  # warm-up
before=$(awk '{print $14, $15}' "/proc/$worker/stat")
out=$(taskset -c 1 wrk -t1 -c"$conns" -d"${seconds}s" -s "$script" "http://127.0.0.1:$port" 2>&1)
after=$(awk '{print $14, $15}' "/proc/$worker/stat")
"proxies/$kind/stop.sh" >/dev/null 2>&1 || true
requests=$(echo "$out" | awk '/requests in/ {print $1}')
python3 - "$kind" "$requests" "$seconds" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import sys
kind, requests, seconds, before, after, tick = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split(), float(sys.argv[6])
user = (int(after[0]) - int(before[0])) / tick
system = (int(after[1]) - int(before[1])) / tick
print("%-7s %6.0f requests/s  user %5.1f µs/request  system %5.1f µs/request  total %5.1f" % (
    kind, requests / seconds, user * 1e6 / requests, system * 1e6 / requests, (user + system) * 1e6 / requests))
PY
