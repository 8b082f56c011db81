#!/usr/bin/env bash
# Installs the Nostr test peer (a real relay: @nostr-relay/core with its SQLite event repository, under a pinned
# Node 22) into test/peers/nostr/node_modules. Called by scripts/test-setup.sh; safe to run again (it skips work
# already done). The recipe (Node 22 from npm, better-sqlite3 compiled against its headers) is
# test/peers/node22-peer.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEER=nostr
PEER_MODULES_JS="Promise.all([import('@nostr-relay/core'), import('@nostr-relay/event-repository-sqlite'), import('@nostr-relay/validator'), import('ws')]).catch((e) => { console.error(e); process.exit(1) });"
source "$HERE/../node22-peer.sh"
install_node22_peer
