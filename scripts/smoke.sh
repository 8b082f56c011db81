#!/usr/bin/env bash
# Smoke-tests a built binary the way a self-hoster first runs it: from / (no source tree, no node_modules in reach),
# with an empty temp data dir: create an account and a key with the CLI, call the API, then stop it with SIGTERM.
set -euo pipefail
BIN="$(cd "$(dirname "${1:-dist/seedcast}")" && pwd)/$(basename "${1:-dist/seedcast}")"
DATA="$(mktemp -d)"
PORT="${SMOKE_PORT:-$((20000 + RANDOM % 20000))}"
LOG="$DATA/serve.log"
cleanup() { [[ -n "${PID:-}" ]] && kill -9 "$PID" 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
fail() { echo "smoke: FAIL: $*" >&2; [[ -f "$LOG" ]] && tail -20 "$LOG" >&2; exit 1; }

cd /
export DATA_DIR="$DATA/data" PORT HOST=127.0.0.1 LOG_LEVEL=info
"$BIN" version
ACCOUNT=$("$BIN" account create --name Smoke --email smoke@example.test --password smoke-password --json)
ACCOUNT_ID=$(printf '%s' "$ACCOUNT" | sed -n 's/.*"accountId":"\([^"]*\)".*/\1/p')
[[ -n "$ACCOUNT_ID" ]] || fail "account create answered: $ACCOUNT"
MINTED=$("$BIN" keys mint --account "$ACCOUNT_ID" --name smoke --groups read,create --json)
KEY=$(printf '%s' "$MINTED" | sed -n 's/.*"key":"\(svc_[^"]*\)".*/\1/p')
[[ -n "$KEY" ]] || fail "keys mint answered: $MINTED"

START=$(date +%s%N)
"$BIN" serve >"$LOG" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.05
done
READY_MS=$((($(date +%s%N) - START) / 1000000))
HEALTH=$(curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/api/v1/health") || fail "health call failed"
[[ "$HEALTH" == *'"ok":true'* && "$HEALTH" == *'"scopes":["read","create"]'* ]] || fail "health answered: $HEALTH"
UNAUTH=$(curl -s "http://127.0.0.1:$PORT/api/v1/health")
[[ "$UNAUTH" == '{"error":"Invalid API key"}' ]] || fail "unauthenticated health answered: $UNAUTH"
curl -sf "http://127.0.0.1:$PORT/openapi.json" >/dev/null || fail "openapi.json"
grep -q "$KEY" "$LOG" && fail "the key appears in the log"

kill -TERM "$PID"
for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$PID" 2>/dev/null && fail "still running 5 s after SIGTERM"
wait "$PID" && CODE=0 || CODE=$?
PID=""
[[ "$CODE" == 0 ]] || fail "exit code $CODE after SIGTERM"
grep -q '"msg":"stopped"' "$LOG" || fail "no clean stop in the log"
echo "smoke: OK (ready in ${READY_MS} ms, health $HEALTH, clean SIGTERM exit)"
