#!/usr/bin/env bash
# The admin page's tests in a real headless Chromium (Tests/Browser): Debian's chromium and
# chromium-driver (installed by scripts/setup.sh) and Selenium from PyPI in a venv under .build/.
# Needs the debug binary (swift build). Screenshots and logs go to .build/ui-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import selenium" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "selenium>=4.20,<5"
fi
# Chromium leaves its singleton folders (org.chromium.Chromium.*) in TMPDIR: one of ours, removed.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
SLUICE_BIN="${SLUICE_BIN:-$PWD/.build/debug/sluice}" TMPDIR=$scratch "$venv/bin/python" Tests/Browser/admin_page_test.py
