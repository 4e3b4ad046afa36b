#!/usr/bin/env bash
# The contract validator alone, from the bytes, one core, on the documents of
# ../shared/bench/validators (a GitHub-issue-like schema; 64 MiB, 1 KiB and three invalid
# variants), beside that harness's peers (jsonschema-rs, ajv, fastjsonschema, jsonschema) run the
# same way (pinned to CPU 1, one process at a time, peak RSS from /usr/bin/time).
#   Benchmarks/contract.sh [ROUNDS]            # PEERS=0 skips the peers
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS="${1:-5}"
SHARED="${SHARED_BENCH:-$(cd ../.. && pwd)/shared/bench/validators}"
[ -d "$SHARED" ] || { echo "no validator harness at $SHARED (set SHARED_BENCH)" >&2; exit 66; }
work="${WORK:-/tmp/sluice-contract-bench}"
mkdir -p "$work"
cp -r "$SHARED"/. "$work"/ 2>/dev/null || true
chmod -R u+w "$work"
[ -f "$work/data/issues-64MiB.json" ] || (cd "$work" && python3 gen.py >/dev/null)
(cd ContractBench && swift build -c release >/dev/null)
bin=$(cd ContractBench && swift build -c release --show-bin-path)/ContractBench
schema="$work/schema-2020-12.json"
echo "== sluice (Contract module, streaming from the bytes in 64 KiB pieces, best of $ROUNDS)"
for doc in issues-64MiB invalid-missing-deep invalid-type invalid-enum; do
  /usr/bin/time -f "   peak RSS %M KiB (the 64 MiB file is read into memory first: 2 copies)" \
    taskset -c 1 "$bin" "$schema" "$work/data/$doc.json" "$ROUNDS" 2>&1
done
taskset -c 1 "$bin" "$schema" "$work/data/issues-1KiB.json" "$ROUNDS"
if [ "${PEERS:-1}" = 1 ]; then
  if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q jsonschema-rs jsonschema fastjsonschema orjson
  fi
  command -v node >/dev/null && [ -d /usr/share/nodejs/ajv ] || {
    [ "$(id -u)" -eq 0 ] && s=() || s=(sudo); "${s[@]}" apt-get install -y -qq node-ajv >/dev/null; }
  echo "== peers (../shared/bench/validators/run_all.py 1, then summarize.py)"
  (cd "$work" && rm -f results/runs.jsonl && python3 run_all.py 1 >/dev/null && python3 summarize.py results/runs.jsonl)
fi
