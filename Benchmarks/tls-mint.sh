#!/usr/bin/env bash
# Leaf minting for HTTPS interception: N intercepted handshakes, each for a new host name (SNI),
# through `sluice serve`; prints the mean minting time (from /stats) and the proxy's peak RSS.
# Loopback only; no origin is contacted (the handshakes end before any request).
#   Benchmarks/tls-mint.sh            # N=1000
#   SLUICE_BIN=/path/to/sluice Benchmarks/tls-mint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
N="${N:-1000}"
PROXY_PORT="${PROXY_PORT:-24519}"
ADMIN_PORT="${ADMIN_PORT:-24520}"
BIN=$(release_binary)
make_work_directory
cat > "$work/sluice.yaml" <<YAML
listen: 127.0.0.1:$PROXY_PORT
admin: { listen: 127.0.0.1:$ADMIN_PORT }
log: { access: false }
tls: { intercept: ["*.test"], ca_cert: $work/ca.pem, ca_key: $work/ca.key, leaf_cache: $N }
YAML
taskset -c 0 "$BIN" serve --config "$work/sluice.yaml" > "$work/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$ADMIN_PORT/health" && break; sleep 0.1; done
base=$(awk '/VmRSS/{print $2}' /proc/"$(cat "$work/sluice.pid")"/status)
taskset -c 1 python3 - "$PROXY_PORT" "$N" <<'PY'
import socket, ssl, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
context = ssl.create_default_context(); context.check_hostname = False; context.verify_mode = ssl.CERT_NONE
start = time.time()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"CONNECT h{i}.test:443 HTTP/1.1\r\nHost: h{i}.test:443\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply: reply += s.recv(4096)
    t = context.wrap_socket(s, server_hostname=f"h{i}.test"); t.close()
print(f"{n} handshakes, each with a new leaf: {(time.time() - start) * 1000 / n:.2f} ms per handshake (client side)")
PY
curl -s "http://127.0.0.1:$ADMIN_PORT/stats" | python3 -c 'import json,sys; t=json.load(sys.stdin)["tls"]; print("leaves minted", t["leaves_minted"], "kept", t["leaves_kept"], "mean minting time", t["leaf_mint_ms_mean"], "ms")'
pid=$(cat "$work/sluice.pid")
echo "sluice RSS before $((base / 1024)) MiB, peak $(awk '/VmHWM/{printf "%.1f", $2/1024}' /proc/$pid/status) MiB"
