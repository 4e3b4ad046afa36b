#!/usr/bin/env bash
# The JSON null stripper on a 64 MiB document with many nulls: Sluice's NullStripper, Foundation's
# JSONSerialization (parse + strip + serialise) and jq's walk, side by side on the same file.
#   Benchmarks/strip.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS="${1:-5}"
command -v jq >/dev/null || {
  [ "$(id -u)" -eq 0 ] && s=() || s=(sudo)
  "${s[@]}" apt-get update -qq && "${s[@]}" apt-get install -y -qq jq >/dev/null
}
../scripts/setup.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd StripBench && swift build -c release >/dev/null)
bin=$(cd StripBench && swift build -c release --show-bin-path)/StripBench
"$bin" "$work/doc.json" "$ROUNDS" | tee "$work/result.txt"
start=$(date +%s.%N)
jq -c 'walk(if type == "object" then with_entries(select(.value != null)) else . end)' "$work/doc.json" > "$work/jq.out"
end=$(date +%s.%N)
jq_s=$(echo "$end - $start" | bc -l)
sluice_s=$(grep -o 'sluice_s=[0-9.e-]*' "$work/result.txt" | cut -d= -f2)
printf 'jq walk (Debian jq %s): %.3f s (sluice is %.0fx faster)\n' "$(jq --version)" "$jq_s" "$(echo "$jq_s / $sluice_s" | bc -l)"
# The outputs must mean the same thing.
if [ "$(jq -c . "$work/doc.json.sluice.out" | md5sum)" = "$(md5sum < "$work/jq.out")" ]; then
  echo "outputs agree (compared as values with jq -c)"
else
  echo "OUTPUTS DIFFER" >&2; exit 1
fi
