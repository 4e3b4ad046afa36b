#!/usr/bin/env bash
# Instructions per request of two Sluice builds, counted by callgrind (repeatable, unlike
# wall-clock figures on a shared 2-core box): each binary serves a warm-up, then N and M requests
# of one path from the shared harness's origin; (Ir(M) - Ir(N)) / (M - N) is the cost of one.
#   Benchmarks/callgrind-ab.sh OLD_BINARY NEW_BINARY [PATH] [N] [M]
# Needs valgrind, python3 and the harness's origin on 127.0.0.1:24080
# (../shared/bench/origin/start.sh). Debug info is stripped first: valgrind 3.19 cannot read
# the DWARF 5 Swift writes.
set -euo pipefail
old=$1; new=$2; path=${3:-/json/1k.json}; n=${4:-200}; m=${5:-1200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/requests.py" <<'PY'
import socket, sys
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
req = ("GET http://127.0.0.1:24080%s HTTP/1.1\r\nHost: 127.0.0.1:24080\r\n\r\n" % path).encode()
buf = b""
for _ in range(n):
    s.sendall(req)
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(rest) < length:
        rest += s.recv(65536)
    buf = rest[length:]
PY
instructions() {  # binary count -> total Ir
  local dir="$work/run-$RANDOM"; mkdir -p "$dir"
  XDG_DATA_HOME="$dir" valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$1" serve \
    --listen 127.0.0.1:24809 --admin-listen "" > "$dir/log" 2>&1 &
  local pid=$!
  for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/24809) 2>/dev/null && break; sleep 0.2; done
  python3 "$work/requests.py" 24809 50 "$path"
  python3 "$work/requests.py" 24809 "$2" "$path"
  kill -TERM "$pid"; wait "$pid" || true
  awk '/^summary:/ {print $2}' "$dir/out"
}
for label in old new; do
  bin=$old; [ "$label" = new ] && bin=$new
  strip --strip-debug -o "$work/$label" "$bin"
  a=$(instructions "$work/$label" "$n"); b=$(instructions "$work/$label" "$m")
  echo "$label $path: $(( (b - a) / (m - n) )) instructions per request"
done
