#!/usr/bin/env bash
# One cell of the shared harness against a fresh Sluice, with the profile of that cell:
#   Benchmarks/profile.sh [CELL] [CONNS] [SECONDS]      (default: pass_1k 64 5)
# CELL: a bench.sh cell (hit_1k, hit_64k, pass_1k, pass_1m, ...) or ihit_1k / ipass_1k (HTTPS
# through interception, driven by the harness's tlsbench). Sluice and the origin run pinned to
# one core and the load to the other, as in the harness. Prints the load's figures, the proxy's
# CPU per request, context switches and system calls per request (perf stat, strace -c -f over
# a second run), and the top of a `perf report` (perf record -g over a third run) by shared
# object and by symbol. PROFILE=0 skips perf and strace; SLUICE_BIN: the binary under test.
# Needs ../shared/bench (copied to a scratch folder: the original is read-only), wrk, perf, strace.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
cell=${1:-pass_1k} conns=${2:-64} seconds=${3:-5}
bin=$(realpath "$(release_binary)")
make_work_directory
chmod 755 "$work"  # the origin's workers read its files from here
cp -r ../shared/bench "$work/bench"
chmod -R u+w "$work/bench"
export RUN_DIR="$work/bench/run" XDG_DATA_HOME="$work/data"
source "$work/bench/env.sh"
"$work/bench/origin/start.sh" >/dev/null
trap '"$work/bench/origin/stop.sh" >/dev/null 2>&1 || true; kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

config="$work/sluice.yaml"
case "$cell" in
  i*)
    cat > "$config" <<YAML
tls: { intercept: ["localhost:$TLS_ORIGIN_PORT"], ca_cert: "$work/ca.pem", ca_key: "$work/ca.key" }
defaults: { tls: { ca_file: "$RUN_DIR/pki/ca.pem" } }
YAML
    ;;
  *) : > "$config" ;;
esac
SLUICE_BIN=$bin SLUICE_ARGS="--config $config" "$work/bench/proxies/sluice/start.sh" > "$work/sluice.pid"
pid=$(cat "$work/sluice.pid")

load() { # seconds [direct] -> the load's figures
  local target=127.0.0.1:$SLUICE_PORT
  case "$cell" in
    ihit_1k | ipass_1k)
      local path=/json/1k.json ca=$work/ca.pem proxy=(-x "127.0.0.1:$SLUICE_PORT")
      [ "$cell" = ipass_1k ] && path=/nocache/json/1k.json
      [ "${2:-}" = direct ] && { ca=$RUN_DIR/pki/ca.pem; proxy=(); }
      pin_loadgen "$tlsbench" "${proxy[@]}" -k "$ca" -c "$conns" -d "$1" -w 1 "https://localhost:$TLS_ORIGIN_PORT$path"
      ;;
    *)
      [ "${2:-}" = direct ] && target=direct
      DURATION=$1 WARMUP=1 CONCS=$conns CELLS=$cell HEADER=0 "$work/bench/bench.sh" "$target" "${2:-sluice}" "$pid"
      ;;
  esac
}
ticks() { sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12+$13}'; }

case "$cell" in
  i*)
    tlsbench=$RUN_DIR/tlsbench
    cc -O2 -o "$tlsbench" "$work/bench/tlsbench/tlsbench.c" -lssl -lcrypto
    curl -s -o /dev/null -x "127.0.0.1:$SLUICE_PORT" --cacert "$work/ca.pem" "https://localhost:$TLS_ORIGIN_PORT/json/1k.json"
    ;;
esac
echo "the origin itself: $(load "$seconds" direct)"
t0=$(ticks)
load "$seconds" | tee "$work/load.txt"
echo "cpu: $(( ($(ticks) - t0) * 10 )) ms of the proxy's core over the cell (warm-up included)"
[ "${PROFILE:-1}" = 1 ] || exit 0

perf stat -e task-clock,context-switches,cpu-migrations -p "$pid" -o "$work/stat.txt" -- sleep "$((seconds + 1))" &
load "$seconds" > "$work/load2.txt"
wait
echo "perf stat over: $(cat "$work/load2.txt")"; grep -E 'task-clock|context-switches' "$work/stat.txt"

timeout "$((seconds + 1))" strace -c -f -p "$pid" -o "$work/strace.txt" &
sleep 0.5
load "$seconds" > "$work/load3.txt"
wait || true
echo "system calls (strace -c -f; the load under strace is slower):"; head -20 "$work/strace.txt"

perf record -e cpu-clock -g -p "$pid" -o "$work/perf.data" -- sleep "$seconds" 2>/dev/null &
load "$seconds" > /dev/null
wait
set +o pipefail  # head closes the pipes early
echo "by shared object:"
perf report -i "$work/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -8
echo "by symbol:"
perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -40
if [ -n "${PERF_DATA:-}" ]; then cp "$work/perf.data" "$PERF_DATA"; echo "perf data kept in $PERF_DATA"; fi
