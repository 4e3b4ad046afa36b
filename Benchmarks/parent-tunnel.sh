#!/usr/bin/env bash
# Blind CONNECT tunnels through a parent proxy, measured: curl downloads SIZE MiB through a
# tunnel from Sluice (the child) straight to the origin, through an http:// parent (another
# Sluice), and through an https:// parent (Debian's stunnel terminating TLS in front of that
# Sluice: the child speaks TLS to it and relays the tunnel's bytes inside). Proxies, stunnel and
# nginx share CPU 0; curl runs on CPU 1. Needs nginx-light, stunnel4, openssl.
#   Benchmarks/parent-tunnel.sh        # SIZE=256 (MiB) ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
SIZE="${SIZE:-256}"
ROUNDS="${ROUNDS:-3}"
ORIGIN_PORT=24680 CHILD=24601 VIA_HTTP=24602 VIA_HTTPS=24603 PARENT=24604 STUNNEL=24605
source Benchmarks/origin.sh
need_wrk_nginx
command -v stunnel4 >/dev/null || { echo "needs stunnel4 (scripts/setup.sh --tests)" >&2; exit 1; }
swift build -c release >/dev/null
make_work_directory
start_origin "$ORIGIN_PORT" "$work" "no-store"
head -c $((SIZE << 20)) /dev/urandom > "$work/www/big.bin"
chmod 644 "$work/www/big.bin"
# A CA and a certificate for 127.0.0.1 for the https:// parent.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench CA" \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$work/parent.key" -out "$work/parent.csr" 2>/dev/null
openssl x509 -req -in "$work/parent.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1') -out "$work/parent.pem" 2>/dev/null
start() {  # name port upstream-lines
  printf 'listen: 127.0.0.1:%s\nadmin: {listen: ""}\nlog:\n  access: false\ncache:\n  enabled: false\nconnect_ports: [%s]\n%s\n' \
    "$2" "$ORIGIN_PORT" "$3" > "$work/$1.yaml"
  taskset -c 0 .build/release/sluice serve --config "$work/$1.yaml" > "$work/logs/$1.log" 2>&1 &
  echo $! > "$work/$1.pid"
}
start parent "$PARENT" ""
start direct "$CHILD" ""
start via-http "$VIA_HTTP" "upstream:
  proxy: http://127.0.0.1:$PARENT"
start via-https "$VIA_HTTPS" "upstream:
  proxy: https://127.0.0.1:$STUNNEL
  proxy_ca_file: $work/ca.pem"
printf 'foreground = yes\npid =\n[parent]\naccept = 127.0.0.1:%s\nconnect = 127.0.0.1:%s\ncert = %s\nkey = %s\n' \
  "$STUNNEL" "$PARENT" "$work/parent.pem" "$work/parent.key" > "$work/stunnel.conf"
taskset -c 0 stunnel4 "$work/stunnel.conf" > "$work/logs/stunnel.log" 2>&1 &
echo $! > "$work/stunnel.pid"
for port in "$ORIGIN_PORT" "$CHILD" "$VIA_HTTP" "$VIA_HTTPS" "$PARENT" "$STUNNEL"; do
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
done
url="http://127.0.0.1:$ORIGIN_PORT/big.bin"
echo "curl -p (a CONNECT tunnel) of $SIZE MiB, MB/s per round (origin: curl straight to nginx):"
for name in origin:0 direct:$CHILD via-http:$VIA_HTTP via-https:$VIA_HTTPS; do
  printf '%-10s' "${name%%:*}"
  proxy=(-p -x "http://127.0.0.1:${name##*:}")
  [ "${name##*:}" = 0 ] && proxy=()  # curl straight to nginx, for reference
  for _ in $(seq "$ROUNDS"); do
    taskset -c 1 curl -s "${proxy[@]}" -o "$work/got" -w ' %{speed_download}' "$url" \
      | awk '{printf " %.0f", $1 / 1e6}'
    cmp -s "$work/got" "$work/www/big.bin" || { echo " (the bytes differ!)"; exit 1; }
  done
  echo
done
