#!/usr/bin/env bash
# Cache lookup cost as the cache grows: a file with N stored 100-byte responses (N = 1k, 100k,
# 1M by default), then the time `sluice serve` takes to open it and hits on random URLs among
# the N at c=64 and c=1: once with the memory tier (cache.memory 8 MiB: at 100k and more, most
# hits miss it), once without (memory: 0: every hit is an indexed SQLite lookup).
#   Benchmarks/cache-scale.sh [N ...]
#   BODY=65536 Benchmarks/cache-scale.sh 16384     # entries of BODY bytes instead (here a 1 GiB file)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1000 100000 1000000}")
read -r -a sizes <<< "${sizes[*]}"
scripts/setup.sh
command -v wrk >/dev/null || { [ "$(id -u)" -eq 0 ] && s=() || s=(sudo); "${s[@]}" apt-get install -y -qq wrk >/dev/null; }
swift build -c release >/dev/null
bin=$(swift build -c release --show-bin-path)/sluice
work=$(mktemp -d)
port=24508
trap 'pkill -f "serve --listen 127.0.0.1:$port" || true; rm -rf "$work"' EXIT
printf '| entries | memory | file | open (ms) | hits c64 req/s | p50 c64 | hits c1 req/s | p50 c1 | peak RSS |\n|---|---|---|---|---|---|---|---|---|\n'
for n in "${sizes[@]}"; do
  dir="$work/$n"; mkdir -p "$dir"
  printf 'listen: 127.0.0.1:%s\ncache: { path: %s/cache.sqlite, capacity: 8GiB }\nlog: { access: false }\n' "$port" "$dir" > "$dir/sluice.yaml"
  # Let sluice create the schema, then fill it directly.
  "$bin" serve --config "$dir/sluice.yaml" >/dev/null 2>&1 & pid=$!
  for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
  kill -TERM $pid; wait $pid || true
  python3 - "$dir/cache.sqlite" "$n" "${BODY:-100}" <<'PY'
import sqlite3, sys, time
path, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = sqlite3.connect(path)
now = time.time()
headers = f"Content-Type: text/plain\r\nCache-Control: max-age=31536000\r\nContent-Length: {size}\r\n"
body = b"x" * size
db.execute("BEGIN")
for start in range(0, n, 50000):
    rows = [(i, f"http://127.0.0.1:24999/scale/{i}", headers, now, size) for i in range(start, min(n, start + 50000))]
    db.executemany("INSERT INTO entries(id, key, variant, vary, method, url, host, status, reason, headers, request_time, response_time, size, last_access, complete) VALUES(?1+1, ?2, '', '', 'GET', ?2, '127.0.0.1', 200, 'OK', ?3, ?4, ?4, ?5, ?4, 1)", rows)
    db.executemany("INSERT INTO chunks(entry, seq, data) VALUES(?, 0, ?)", [(r[0] + 1, body) for r in rows])
db.execute("COMMIT")
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
PY
  size=$(du -h "$dir/cache.sqlite" | cut -f1)
  sync
  for memory in 8MiB 0; do
  printf 'listen: 127.0.0.1:%s\ncache: { path: %s/cache.sqlite, capacity: 8GiB, memory: %s }\nlog: { access: false }\n' "$port" "$dir" "$memory" > "$dir/sluice.yaml"
  t0=$(date +%s%N)
  taskset -c 0 "$bin" serve --config "$dir/sluice.yaml" >/dev/null 2>&1 & pid=$!
  until (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do sleep 0.005; done
  open_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  N=$n taskset -c 1 wrk -t1 -c64 -d2s -s Benchmarks/scale.lua "http://127.0.0.1:$port/" >/dev/null
  r64=$(N=$n taskset -c 1 wrk -t1 -c64 -d5s -s Benchmarks/scale.lua "http://127.0.0.1:$port/" | grep RESULT)
  r1=$(N=$n taskset -c 1 wrk -t1 -c1 -d5s -s Benchmarks/scale.lua "http://127.0.0.1:$port/" | grep RESULT)
  rss=$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' /proc/$pid/status)
  kill -TERM $pid; wait $pid || true
  f() { echo "$1" | grep -o "$2=[0-9.]*" | cut -d= -f2; }
  echo "| $n | $memory | $size | $open_ms | $(f "$r64" rps) | $(f "$r64" p50_ms) ms | $(f "$r1" rps) | $(f "$r1" p50_ms) ms | $rss |"
  [ "$(f "$r64" errors)" = "0" ] || echo "  errors at c64: $r64"
  done
  rm -rf "$dir"
done
