#!/usr/bin/env bash
# Builds the release binary and installs it as `sluice`:
#   scripts/install.sh [--prefix DIR]     # default ~/.local/bin
# The binary carries its Swift runtime; it needs the Debian libraries scripts/setup.sh installs.
set -euo pipefail
prefix="$HOME/.local/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h | --help) echo "usage: scripts/install.sh [--prefix DIR]   (default ~/.local/bin)"; exit 0 ;;
    *) echo "install: unknown argument $1 (usage: scripts/install.sh [--prefix DIR])" >&2; exit 64 ;;
  esac
done
# A prefix is read from where you are (and `~/` as your home), before moving to the repository.
case "$prefix" in "~/"*) prefix="$HOME/${prefix#\~/}" ;; esac
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build-release.sh
mkdir -p "$prefix"
install -m 0755 .build/release/sluice "$prefix/sluice"
echo "installed $prefix/sluice ($("$prefix/sluice" --version))"
case ":$PATH:" in
  *":$prefix:"*) ;;
  *) echo "note: $prefix is not on PATH; add it: export PATH=\"$prefix:\$PATH\"" ;;
esac
