#!/usr/bin/env bash
# Everything the test suite needs besides the project's own npm packages, installed only when missing:
# - the Bluesky test peer (a real PDS under Node 22, from npm) in test/peers/bluesky;
# - the Nostr test peer (a real relay, @nostr-relay/core on SQLite, under Node 22, from npm) in test/peers/nostr;
# - Chromium from Debian's packages (playwright-core drives /usr/bin/chromium; it downloads no browser);
# - openssl (the tests make a throwaway CA);
# - Ceph's radosgw, mon and osd from Debian (test/helpers/radosgw.ts runs a one-node memstore cluster: an S3 store
#   that checks SigV4 signatures, for MEDIA_STORE=s3).
# - PostgreSQL 15 from Debian, with postgresql-contrib for `unaccent` (test/helpers/postgres.ts runs a cluster in a
#   temp dir; the package's own cluster is not used).
# - docs/examples, the typed client example's own npm project (openapi-typescript needs TypeScript 5).
# Runs as `pretest`, so `npm test` works on a fresh machine. Needs root for apt-get when a Debian package is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf 'test setup: %s\n' "$*" >&2; }

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# Emoji in screenshots render as boxes without a colour emoji font.
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || need_apt+=(fonts-noto-color-emoji)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# --no-install-recommends keeps Ceph at about 257 MB (no mgr, no dashboards).
for tool in radosgw ceph-mon ceph-osd; do command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool"); done
[[ -x /usr/lib/postgresql/15/bin/initdb ]] || need_apt+=(postgresql-15)
[[ -f /usr/share/postgresql/15/extension/unaccent.control ]] || need_apt+=(postgresql-contrib)
command -v psql >/dev/null 2>&1 || need_apt+=(postgresql-client-15)
for tool in python3 make g++; do command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool"); done
if ((${#need_apt[@]} > 0)); then
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    log "missing ${need_apt[*]}: install them (Debian: apt-get install -y ${need_apt[*]}) and run again"
    exit 1
  fi
  log "installing ${need_apt[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The two peers install side by side: each spends most of its time compiling better-sqlite3 on one core (about 90 s
# and 75 s on a fresh 2-core machine), and they share no folder. Each one's own exit status is checked.
bash test/peers/bluesky/install.sh &
bluesky=$!
bash test/peers/nostr/install.sh &
nostr=$!
failed=0
wait "$bluesky" || { log "the Bluesky peer did not install (its lines above say why)"; failed=1; }
wait "$nostr" || { log "the Nostr peer did not install (its lines above say why)"; failed=1; }
((failed == 0)) || exit 1

if [[ ! -x docs/examples/node_modules/.bin/openapi-typescript || docs/examples/package-lock.json -nt docs/examples/node_modules/.package-lock.json ]]; then
  log "installing docs/examples (openapi-typescript, openapi-fetch, TypeScript 5)"
  npm ci --prefix docs/examples --no-audit --no-fund --loglevel=error
fi
