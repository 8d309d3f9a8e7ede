#!/usr/bin/env bash
# make run: starts `toolgate up` (embedded NATS + every stage) with the example
# tools and executor, publishes sample responses and prints each call's outcome.
# The pipeline then keeps running until Ctrl-C; publish more with bin/toolgate.
# It runs authenticated, as plain `toolgate up` does: the NATS passwords are
# made once in .toolgate/secrets (TOOLGATE_SECRETS), where bin/toolgate and
# the example executor find theirs.
# The terminal shows each outcome once, as publish reports it; the server's
# log and the executor's output go to files (RUN_LOGS, default .toolgate:
# up.log, executor.log): on one terminal every failed call was printed twice,
# as the server's warning and as publish's outcome, and every executed one
# as the executor's line and publish's result.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
BIN=${BIN:-bin}
LISTEN=${RUN_LISTEN:-127.0.0.1:4322}
HTTP=${RUN_HTTP:-127.0.0.1:18080}
DATA=${RUN_DATA:-.toolgate/data}
LOGS=${RUN_LOGS:-.toolgate}
INGEST=${RUN_INGEST_HTTP-127.0.0.1:18090}   # empty: no HTTP ingest
export TOOLGATE_NATS_URL="nats://$LISTEN"
export TOOLGATE_SECRETS=${TOOLGATE_SECRETS:-.toolgate/secrets}
mkdir -p .toolgate "$LOGS"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# --identity-assert-users producer: the demo's publishes below name their
# roles (--roles), which count only from a user allowed to assert them.
"$BIN/toolgate" up --listen "$LISTEN" --http "$HTTP" --data "$DATA" --secrets "$TOOLGATE_SECRETS" --tools examples/tools.yaml --ingest-http "$INGEST" --log-level info --identity-assert-users producer 2>"$LOGS/up.log" &
pids+=($!)
for _ in $(seq 100); do "$BIN/toolgate" probe "http://$HTTP/readyz" 2>/dev/null && break; sleep 0.1; done
if ! "$BIN/toolgate" probe "http://$HTTP/readyz"; then
  echo "toolgate up is not ready; the end of $LOGS/up.log:" >&2
  tail -n 20 "$LOGS/up.log" >&2
  exit 1
fi
"$BIN/executor" >"$LOGS/executor.log" 2>&1 &
pids+=($!)
echo "toolgate up logs to $LOGS/up.log, the example executor to $LOGS/executor.log (tail -f them beside this)"
sleep 0.5

run=$(date +%s)
echo
echo "== a valid create_invoice call (OpenAI chat completion)"
"$BIN/toolgate" publish --provider openai-chat --response-id "demo-valid-$run" --wait 10s examples/responses/valid-invoice.json
echo
echo "== a call cut off by the token limit (finish_reason: length)"
"$BIN/toolgate" publish --provider openai-chat --response-id "demo-truncated-$run" --wait 10s examples/responses/truncated-invoice.json || true
echo
echo "== a call that violates the schema"
"$BIN/toolgate" publish --provider openai-chat --response-id "demo-schema-$run" --wait 10s examples/responses/schema-invalid-invoice.json || true
echo
echo "== an Anthropic stream, published event by event"
"$BIN/toolgate" publish --provider anthropic --response-id "demo-stream-$run" --wait 10s examples/responses/anthropic-weather.sse
echo
echo "== a tool call a local model wrote as text (tolerant recovery)"
"$BIN/toolgate" publish --provider ollama --tolerant --response-id "demo-text-$run" --wait 10s examples/responses/ollama-text-call.json
echo
echo "== an irreversible tool called by a support agent, then by an admin"
"$BIN/toolgate" publish --provider openai-chat --principal agent-7 --roles support --response-id "demo-delete-$run" --wait 5s examples/responses/delete-account.json || true
"$BIN/toolgate" publish --provider openai-chat --principal ops-1 --roles admin --response-id "demo-admin-$run" examples/responses/delete-account.json || true
sleep 1
"$BIN/toolgate" status "demo-admin-$run-0" | sed -n '1,8p'
echo "   (an admin's call waits for a human: $BIN/toolgate approve demo-admin-$run-0 --by you)"
echo
echo "Inspect a call:   $BIN/toolgate status demo-valid-$run-0"
echo "Operator console: http://$HTTP/console/   (approvals, dead letters, every call's story)"
echo "  log in with the operator's token from ${TOOLGATE_CONSOLE_TOKENS:-$TOOLGATE_SECRETS/console-tokens} (toolgate up writes it there on its first start)"
echo "  (print it: awk '\$1 == \"operator\" {print \$3; exit}' ${TOOLGATE_CONSOLE_TOKENS:-$TOOLGATE_SECRETS/console-tokens})"
echo "Publish more:     TOOLGATE_NATS_URL=$TOOLGATE_NATS_URL TOOLGATE_SECRETS=$TOOLGATE_SECRETS $BIN/toolgate publish --provider P --wait 5s FILE"
echo
# The README's examples are written for plain toolgate up (4222, 8080,
# 8090); this environment points them, the CLI, an executor and the
# TypeScript producer (NATS_URL) at this one.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
echo "To use this toolgate from another terminal (the CLI, your executor, the README's examples), paste:"
echo "  export TOOLGATE_NATS_URL=$TOOLGATE_NATS_URL NATS_URL=$TOOLGATE_NATS_URL TOOLGATE_SECRETS=$(abs "$TOOLGATE_SECRETS") PATH=\"$(abs "$BIN"):\$PATH\""
if [ -n "$INGEST" ]; then
  echo "HTTP ingest:      http://$INGEST/v1/responses   (the README's curl examples say localhost:8090)"
  echo "Over HTTP:        curl -H \"Authorization: Bearer \$(cat $TOOLGATE_SECRETS/ingest-http-producer.token)\" 'http://$INGEST/v1/responses/demo-valid-$run/outcomes'"
fi
if [ -n "${RUN_ONCE:-}" ]; then exit 0; fi
echo "toolgate is running on $TOOLGATE_NATS_URL; Ctrl-C to stop."
wait "${pids[0]}"
