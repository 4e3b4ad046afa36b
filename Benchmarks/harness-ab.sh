#!/usr/bin/env bash
# Two Sluice builds side by side in the shared harness (../shared/bench, copied to a scratch
# folder because the original is read-only), with the origin itself in the same rounds:
#   Benchmarks/harness-ab.sh OLD_BINARY NEW_BINARY [ROUNDS]     (CELLS, DURATION: as bench.sh)
# OLD_ARGS and NEW_ARGS add `sluice serve` arguments to each side (the same binary twice with
# different settings: OLD_ARGS="" NEW_ARGS="--record rec.sluicerec").
# Each build starts fresh per round with a data directory of its own (a cold cache, like the
# harness's other peers). Rows go to $RESULTS (default: a file in the scratch folder, printed).
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); rounds=${3:-2}
scratch=$(mktemp -d)
chmod 755 "$scratch"  # the origin's workers (nobody) read its files from here
bench=$scratch/bench
cp -r "$(dirname "$0")/../../shared/bench" "$bench"
chmod -R u+w "$bench"
export RUN_DIR="$bench/run" RESULTS="${RESULTS:-$bench/ab.tsv}" HEADER=0
cd "$bench"
./origin/start.sh > /dev/null
trap './origin/stop.sh > /dev/null 2>&1 || true' EXIT
for round in $(seq "$rounds"); do
  for label in old new; do
    bin=$old; args=${OLD_ARGS:-}
    if [ "$label" = new ]; then bin=$new; args=${NEW_ARGS:-}; fi
    export XDG_DATA_HOME="$bench/data-$label-$round"
    pid=$(SLUICE_BIN=$bin SLUICE_ARGS=$args ./proxies/sluice/start.sh)
    ./bench.sh 127.0.0.1:24808 "sluice-$label-r$round" "$pid"
    ./proxies/sluice/stop.sh
  done
  ./bench.sh direct "direct-r$round" "$(cat run/origin/nginx.pid)"
done
cat "$RESULTS"
