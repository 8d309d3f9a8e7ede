#!/usr/bin/env bash
# make test's preflight: the programs the tests start, checked before any
# test runs. Each missing one is named with the command that installs it on
# Debian/Ubuntu and on macOS; the exit status is 1 when any is missing.
# The tests start them themselves: redis-server and redis-cli (idempotency
# store, its TLS, Sentinel and Cluster tests), chromium (the console's
# browser tests), node and npm (the TypeScript producer example) and
# prometheus (the metrics are scraped by a real Prometheus).
# PREFLIGHT_PATH replaces PATH for the lookups (the preflight's own test).
set -uo pipefail

lookup_path=${PREFLIGHT_PATH:-$PATH}
have() { PATH="$lookup_path" command -v "$1" >/dev/null 2>&1; }

missing=() apt=() brew=()
need() { # need NAME APT-PACKAGE BREW-FORMULA [ALTERNATIVE-NAME...]
  local name=$1 pkg=$2 formula=$3
  shift 3
  for alt in "$name" "$@"; do
    if have "$alt"; then return; fi
  done
  missing+=("$name")
  [[ " ${apt[*]} " == *" $pkg "* ]] || apt+=("$pkg")
  [[ " ${brew[*]} " == *" $formula "* ]] || brew+=("$formula")
}

# Go 1.21 or later fetches the 1.27 that go.mod needs (GOTOOLCHAIN).
need go golang-go go
need redis-server redis-server redis
need redis-cli redis-server redis
need chromium chromium "--cask chromium" chromium-browser google-chrome google-chrome-stable headless_shell
need node nodejs node
need npm npm node
need prometheus prometheus prometheus

# A Go older than 1.21 cannot switch toolchains (Debian 12's golang-go is 1.19).
old_go=""
if have go; then
  v=$(PATH="$lookup_path" GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true)
  if [[ $v =~ ^go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -lt 21 ]; then
    old_go=$v
  fi
fi
if [ -n "$old_go" ]; then
  echo "make test: $old_go cannot fetch the Go 1.27 that go.mod needs (GOTOOLCHAIN needs Go 1.21 or later); install a newer Go from https://go.dev/dl/ (or brew install go)" >&2
fi
if [ ${#missing[@]} -eq 0 ]; then
  [ -z "$old_go" ] || exit 1
  exit 0
fi
{
  echo "make test: missing ${missing[*]}; no test was run. Install:"
  echo "  Debian/Ubuntu: sudo apt-get install -y ${apt[*]}"
  casks=() formulae=()
  for f in "${brew[@]}"; do
    case $f in --cask*) casks+=("${f#--cask }") ;; *) formulae+=("$f") ;; esac
  done
  line=""
  [ ${#formulae[@]} -gt 0 ] && line="brew install ${formulae[*]}"
  if [ ${#casks[@]} -gt 0 ]; then
    [ -n "$line" ] && line="$line && "
    line="${line}brew install --cask ${casks[*]}"
  fi
  echo "  macOS:         $line"
} >&2
exit 1
