#!/usr/bin/env bash
# Sets up, builds (release) and runs the proxy on its defaults: conf/sluice.yaml, 127.0.0.1:8080.
# Extra arguments go to `sluice serve` (e.g. --listen 127.0.0.1:3128); `--config my.yaml` runs
# your file instead of conf/sluice.yaml. Paths in the arguments are read from where you are.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$root" && scripts/setup.sh && scripts/build-release.sh)
mkdir -p "$root/var"
config=(--config "$root/conf/sluice.yaml")
for argument in "$@"; do
  case "$argument" in --config | --config=*) config=() ;; esac
done
echo "run: $root/.build/release/sluice serve ${config[*]} $* (scripts/install.sh puts sluice on PATH)" >&2
exec "$root/.build/release/sluice" serve "${config[@]}" "$@"
