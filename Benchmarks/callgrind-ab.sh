#!/usr/bin/env bash
# Instructions per request of two Sluice builds, counted by callgrind (repeatable, unlike
# wall-clock figures on a shared 2-core box): each binary serves a warm-up, then N and M requests
# of one path from the shared harness's origin; (Ir(M) - Ir(N)) / (M - N) is the cost of one.
#   Benchmarks/callgrind-ab.sh OLD_BINARY NEW_BINARY [PATH] [N] [M]
# PATH written `https:/json/1k.json`: the same requests intercepted (CONNECT to the harness's
# HTTPS origin, localhost:24443, then TLS with Sluice's local CA on one kept-alive connection);
# ORIGIN_CA names the harness's CA (default ../shared/bench/run/pki/ca.pem).
# Needs valgrind, python3 and the harness's origin on 127.0.0.1:24080
# (../shared/bench/origin/start.sh). Debug info is stripped first: valgrind 3.19 cannot read
# the DWARF 5 Swift writes.
set -euo pipefail
old=$1; new=$2; path=${3:-/json/1k.json}; n=${4:-200}; m=${5:-1200}
origin_ca=$(realpath "${ORIGIN_CA:-$(dirname "$0")/../../shared/bench/run/pki/ca.pem}" 2>/dev/null || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/requests.py" <<'PY'
import socket, ssl, sys
port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
if path.startswith("https:"):  # intercepted: CONNECT, then TLS trusting Sluice's CA (argv[4])
    path = path[len("https:"):]
    s.sendall(b"CONNECT localhost:24443 HTTP/1.1\r\nHost: localhost:24443\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += s.recv(4096)
    s = ssl.create_default_context(cafile=sys.argv[4]).wrap_socket(s, server_hostname="localhost")
    req = ("GET %s HTTP/1.1\r\nHost: localhost:24443\r\n\r\n" % path).encode()
else:
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
  local config=() ca="$dir/ca.pem"
  case "$path" in
    https:*)
      [ -f "$origin_ca" ] || { echo "callgrind-ab: no harness CA at ${ORIGIN_CA:-../shared/bench/run/pki/ca.pem} (set ORIGIN_CA)" >&2; exit 1; }
      printf 'tls: { intercept: ["localhost:24443"], ca_cert: "%s", ca_key: "%s" }\ndefaults: { tls: { ca_file: "%s" } }\n' \
        "$ca" "$dir/ca.key" "$origin_ca" > "$dir/sluice.yaml"
      config=(--config "$dir/sluice.yaml")
      ;;
  esac
  XDG_DATA_HOME="$dir" valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$1" serve "${config[@]}" \
    --listen 127.0.0.1:24809 --admin-listen "" > "$dir/log" 2>&1 &
  local pid=$!
  # Under valgrind, making the local CA's key takes a while.
  for _ in $(seq 900); do
    { [ ${#config[@]} -eq 0 ] || [ -f "$ca" ]; } && (exec 3<>/dev/tcp/127.0.0.1/24809) 2>/dev/null && break
    sleep 0.2
  done
  python3 "$work/requests.py" 24809 50 "$path" "$ca"
  python3 "$work/requests.py" 24809 "$2" "$path" "$ca"
  kill -TERM "$pid"; wait "$pid" || true
  awk '/^summary:/ {print $2}' "$dir/out"
}
for label in old new; do
  bin=$old; [ "$label" = new ] && bin=$new
  strip --strip-debug -o "$work/$label" "$bin"
  a=$(instructions "$work/$label" "$n"); b=$(instructions "$work/$label" "$m")
  echo "$label $path: $(( (b - a) / (m - n) )) instructions per request"
done
