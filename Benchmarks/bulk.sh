#!/usr/bin/env bash
# Bulk bytes through the proxy, against Debian's Squid when it is installed: a CONNECT tunnel
# carrying a SIZE MiB download (`curl -p`), and a SIZE MiB upload (`curl -T`, a plain PUT that
# nginx reads and discards). Proxies and nginx share CPU 0; curl runs on CPU 1. MB/s per round;
# "origin" is curl straight to nginx, for reference.
#   Benchmarks/bulk.sh        # SIZE=256 (MiB) ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
SIZE="${SIZE:-256}"
ROUNDS="${ROUNDS:-3}"
ORIGIN_PORT=24980 SLUICE=24901 SQUID=24902
source Benchmarks/origin.sh
need_wrk_nginx
swift build -c release >/dev/null
make_work_directory
start_origin "$ORIGIN_PORT" "$work" "no-store" 'client_max_body_size 0; location /upload { return 200 "ok\n"; }'
head -c $((SIZE << 20)) /dev/urandom > "$work/www/big.bin"
chmod 644 "$work/www/big.bin"
printf 'listen: 127.0.0.1:%s\nadmin: {listen: ""}\nlog:\n  access: false\ncache:\n  enabled: false\nconnect_ports: [%s]\nlimits:\n  max_request_body: 4GiB\n' \
  "$SLUICE" "$ORIGIN_PORT" > "$work/sluice.yaml"
taskset -c 0 .build/release/sluice serve --config "$work/sluice.yaml" > "$work/logs/sluice.log" 2>&1 &
echo $! > "$work/sluice.pid"
proxies="origin:0 sluice:$SLUICE"
if [ -x /usr/sbin/squid ]; then
  chmod 777 "$work" "$work/logs"
  cat > "$work/squid.conf" <<CONF
http_port 127.0.0.1:$SQUID
http_access allow localhost
http_access deny all
pid_filename $work/squid.pid
cache_log $work/logs/squid.log
access_log none
cache deny all
pinger_enable off
netdb_filename none
shutdown_lifetime 0 seconds
coredump_dir $work
CONF
  taskset -c 0 /usr/sbin/squid -N -f "$work/squid.conf" > "$work/logs/squid.out" 2>&1 &
  proxies="$proxies squid:$SQUID"
fi
for port in "$ORIGIN_PORT" "$SLUICE" $([ -x /usr/sbin/squid ] && echo "$SQUID"); do
  for _ in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
done
row() {  # label: the rounds of one curl command (its -w prints the speed)
  printf '%-8s' "$1"; shift
  for _ in $(seq "$ROUNDS"); do
    taskset -c 1 curl -s "$@" | awk '{printf " %5.0f", $1 / 1e6}' || printf ' failed'
  done
  echo
}
for direction in tunnel upload; do
  echo "$direction, $SIZE MiB, MB/s per round:"
  for name in $proxies; do
    port=${name##*:}; proxy=(-x "http://127.0.0.1:$port")
    [ "$port" = 0 ] && proxy=()
    if [ "$direction" = tunnel ]; then
      [ "$port" = 0 ] || proxy+=(-p)
      row "${name%%:*}" "${proxy[@]}" -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$ORIGIN_PORT/big.bin"
    else
      row "${name%%:*}" "${proxy[@]}" -T "$work/www/big.bin" -o /dev/null -w '%{speed_upload}' \
        "http://127.0.0.1:$ORIGIN_PORT/upload"
    fi
  done
done
