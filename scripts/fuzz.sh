#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME (default 20s) each.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
FUZZTIME=${FUZZTIME:-20s}
for pkg in $(go list ./pkg/... ./internal/...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target ($FUZZTIME)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
  done
done
