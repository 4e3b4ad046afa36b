#!/usr/bin/env bash
# Instructions per request of two Sluice builds, counted by callgrind (repeatable, unlike
# wall-clock figures on a shared 2-core box): each binary serves a warm-up, then N and M requests
# of one path from the shared harness's origin; (Ir(M) - Ir(N)) / (M - N) is the cost of one.
#   Benchmarks/callgrind-ab.sh OLD_BINARY NEW_BINARY [PATH] [N] [M]
# PATH written `https:/json/1k.json`: the same requests intercepted (CONNECT to the harness's
# HTTPS origin, localhost:24443, then TLS with Sluice's local CA on one kept-alive connection);
# ORIGIN_CA names the harness's CA (default ../shared/bench/run/pki/ca.pem). PATH written
# `h2:/json/1k.json`: the same, with HTTP/2 inside the TLS (one stream per request, in turn).
# OLD_CONFIG and NEW_CONFIG name a configuration file for each side (plain paths only), e.g. the
# same binary with and without a breakpoint that matches nothing.
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
if path.startswith("h2:"):  # intercepted, HTTP/2 inside: frames written by hand (RFC 9113, RFC 7541)
    import struct
    path = path[len("h2:"):]
    s.sendall(b"CONNECT localhost:24443 HTTP/1.1\r\nHost: localhost:24443\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += s.recv(4096)
    context = ssl.create_default_context(cafile=sys.argv[4])
    context.set_alpn_protocols(["h2"])
    s = context.wrap_socket(s, server_hostname="localhost")
    assert s.selected_alpn_protocol() == "h2"
    def frame(kind, flags, stream, payload=b""):
        return struct.pack("!I", len(payload))[1:] + bytes([kind, flags]) + struct.pack("!I", stream) + payload
    def literal(name, value):
        return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
    block = (literal(b":method", b"GET") + literal(b":scheme", b"https") + literal(b":authority", b"localhost:24443")
             + literal(b":path", path.encode()))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0))
    buf, stream = b"", 1
    for _ in range(n):
        s.sendall(frame(1, 0x5, stream, block))  # END_STREAM | END_HEADERS
        done = False
        while not done:
            while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
                buf += s.recv(65536)
            length, kind, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            sid = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            buf = buf[9 + length:]
            if kind == 4 and not flags & 1:
                s.sendall(frame(4, 1, 0))  # SETTINGS ACK
            if kind == 0 and length:  # the windows stay open
                inc = struct.pack("!I", length)
                s.sendall(frame(8, 0, 0, inc) + frame(8, 0, sid, inc))
            if sid == stream and kind in (0, 1) and flags & 1:
                done = True
        stream += 2
    sys.exit(0)
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
instructions() {  # binary count [config] -> total Ir
  local dir="$work/run-$RANDOM"; mkdir -p "$dir"
  local config=() ca="$dir/ca.pem"
  [ -n "${3:-}" ] && config=(--config "$3")
  case "$path" in
    https:*|h2:*)
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
    { [[ "$path" != https:* && "$path" != h2:* ]] || [ -f "$ca" ]; } && (exec 3<>/dev/tcp/127.0.0.1/24809) 2>/dev/null && break
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
  cfg=${OLD_CONFIG:-}; [ "$label" = new ] && cfg=${NEW_CONFIG:-}
  a=$(instructions "$work/$label" "$n" "$cfg"); b=$(instructions "$work/$label" "$m" "$cfg")
  echo "$label $path: $(( (b - a) / (m - n) )) instructions per request"
done
