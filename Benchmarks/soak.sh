#!/usr/bin/env bash
# Soak: mixed traffic through a release `sluice serve` for SOAK_SECONDS (default 600) — cache hits
# and misses, uncacheable responses, validation failures (502), JSON null stripping, POST bodies,
# CONNECT tunnels, origin resets, upstream timeouts (504), refused connections (502) — reporting
# Sluice's RSS and open descriptors every SOAK_INTERVAL seconds (default 30). Exit 0 when both
# stay flat after the first interval.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SOAK_SECONDS:-600}
interval=${SOAK_INTERVAL:-30}
bash scripts/setup.sh
swift build -c release --product sluice 2>&1 | tail -1
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
proxy=$(free_port)
origin=$(free_port)
cat > "$work/sluice.yaml" <<CONF
listen: 127.0.0.1:$proxy
connect_ports: [$origin]
timeouts: { upstream_response: 1s, upstream_idle: 2s }
cache: { path: $work/soak.sqlite, capacity: 32MiB }
admin: { listen: "" }
log: { access: false, level: error }
rules:
  - name: strict
    match: { path: "/strict/**" }
    accept: { status: ["200-299"], on_reject: enforce }
CONF
(exec .build/release/sluice serve --config "$work/sluice.yaml" > "$work/sluice.log" 2>&1) &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$proxy) 2>/dev/null && break; sleep 0.1; done
echo "soak: ${seconds}s of mixed traffic, sluice pid $pid on :$proxy, origin on :$origin"
python3 Benchmarks/soak.py "$proxy" "$origin" "$pid" "$seconds" "$interval"
kill -0 $pid || { echo "soak: sluice died"; exit 1; }
