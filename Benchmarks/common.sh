# What the benchmark scripts share; source it from the repository root.

# The binary under test: $SLUICE_BIN when set (A/B runs, no build), else a release build made now.
release_binary() {
  if [ -n "${SLUICE_BIN:-}" ]; then echo "$SLUICE_BIN"; return; fi
  scripts/setup.sh >&2 || return 1
  swift build -c release >/dev/null || return 1
  echo .build/release/sluice
}

# $work: a temporary directory, removed on exit after the processes of its *.pid files are killed.
make_work_directory() {
  work=$(mktemp -d)
  trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
}
