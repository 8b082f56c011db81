#!/usr/bin/env bash
# Installs the Bluesky test peer (a real @atproto/pds + @did-plc/server under a pinned Node 22) into
# test/peers/bluesky/node_modules. Called by scripts/test-setup.sh; safe to run again (it skips work already done).
# The recipe (Node 22 from npm, better-sqlite3 compiled against its headers) is test/peers/node22-peer.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEER=bluesky
PEER_MODULES_JS="import('@atproto/pds').then(() => import('@did-plc/server')).catch((e) => { console.error(e); process.exit(1) });"
source "$HERE/../node22-peer.sh"
install_node22_peer
