/**
 * A Blossom server stand-in for tests of the Nostr connector, written from the Blossom specification
 * (hzrd149/blossom, buds/01.md "Server requirements and blob retrieval" and buds/02.md "Blob upload and management"),
 * never from our client:
 * - `PUT /upload` takes the raw bytes, requires `Authorization: Nostr <base64 of a kind-24242 event>` and checks it
 *   as BUD-01 lists: kind 24242, a valid signature, `created_at` in the past, an `expiration` tag in the future, a `t`
 *   tag of `upload`, and (BUD-02) an `x` tag equal to the body's sha256. It stores the bytes unchanged and answers a
 *   blob descriptor `{url, sha256, size, type, uploaded}` whose URL is `<base>/<sha256>.<ext>`.
 * - `GET /<sha256>[.ext]` answers the bytes with their type; `HEAD /<sha256>[.ext]` answers 200 or 404.
 * - Errors are JSON `{message}` (BUD-01 "Error Responses"); an upload refusal also carries `X-Reason` and the
 *   `Blossom-Upload-Message` header (BUD-02).
 * - CORS headers on every answer (BUD-01 "Cross origin headers").
 * Modes let a test make it refuse uploads (413) or fail (500).
 */
import type { Server } from "bun";
import { verifyEvent } from "nostr-tools/pure";
import type { Event } from "nostr-tools/core";

export type BlossomMode = "ok" | "too_large" | "error500";

/** One accepted upload, as the stand-in saw it. */
export interface BlossomUpload {
  sha256: string;
  size: number;
  type: string;
  pubkey: string;
}

export interface BlossomServer {
  url: string;
  server: Server<undefined>;
  /** Every accepted upload (a re-upload of the same blob is listed again). */
  uploads: BlossomUpload[];
  /** The bytes stored under a sha256, or undefined. */
  blob(sha256: string): Uint8Array | undefined;
  setMode(mode: BlossomMode): void;
  stop(): Promise<void>;
}

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "Authorization,*",
  "access-control-allow-methods": "GET, HEAD, PUT, DELETE",
};
const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };
const BLOB_PATH = /^\/([0-9a-f]{64})(\.[a-z0-9]+)?$/;

function jsonError(status: number, message: string, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ message }), { status, headers: { "content-type": "application/json", ...CORS, ...extra } });
}

function uploadRefusal(status: number, message: string): Response {
  return jsonError(status, message, { "x-reason": message, "blossom-upload-message": message });
}

/** The BUD-01 checks of an upload authorization; answers the event or the refusal's message. */
function authorize(header: string | null, sha256: string, nowSeconds: number): Event | string {
  if (!header?.startsWith("Nostr ")) return "Missing Auth event";
  let event: Event;
  try {
    event = JSON.parse(Buffer.from(header.slice("Nostr ".length), "base64").toString("utf8")) as Event;
  } catch {
    return "Auth event is not base64 JSON";
  }
  if (event.kind !== 24242) return "Auth event must be kind 24242";
  if (!verifyEvent(event)) return "Auth event signature is invalid";
  if (event.created_at > nowSeconds) return "Auth event created_at is in the future";
  const expiration = Number(event.tags.find((t) => t[0] === "expiration")?.[1]);
  if (!Number.isFinite(expiration) || expiration <= nowSeconds) return "Auth event is expired or has no expiration";
  if (!event.tags.some((t) => t[0] === "t" && t[1] === "upload")) return "Auth event verb must be upload";
  if (!event.tags.some((t) => t[0] === "x" && t[1] === sha256)) return "Auth event has no x tag matching the blob";
  return event;
}

/** Starts the stand-in on 127.0.0.1 (a random port unless given). `now` is the clock the authorization is checked against. */
export function startBlossomServer(opts: { port?: number; now?: () => number } = {}): BlossomServer {
  const blobs = new Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>();
  const uploads: BlossomUpload[] = [];
  let mode: BlossomMode = "ok";
  const now = opts.now ?? Date.now;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    async fetch(request) {
      const url = new URL(request.url);
      const base = `${url.protocol}//${request.headers.get("host") ?? url.host}`;
      if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS });
      if (url.pathname === "/upload" && request.method === "PUT") {
        if (mode === "error500") return jsonError(500, "Storage is unavailable");
        const bytes = new Uint8Array(await request.arrayBuffer());
        if (mode === "too_large") return uploadRefusal(413, "File too large. Max allowed size is 1 KB");
        if (bytes.length === 0) return uploadRefusal(400, "Empty body");
        const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
        const auth = authorize(request.headers.get("authorization"), sha256, Math.floor(now() / 1000));
        if (typeof auth === "string") return uploadRefusal(401, auth);
        const type = request.headers.get("content-type") ?? "application/octet-stream";
        blobs.set(sha256, { bytes, type });
        uploads.push({ sha256, size: bytes.length, type, pubkey: auth.pubkey });
        const ext = EXTENSIONS[type];
        const descriptor = { url: `${base}/${sha256}${ext ? `.${ext}` : ""}`, sha256, size: bytes.length, type, uploaded: Math.floor(now() / 1000) };
        return new Response(JSON.stringify(descriptor), { status: 200, headers: { "content-type": "application/json", ...CORS } });
      }
      const blobMatch = BLOB_PATH.exec(url.pathname);
      if (blobMatch && (request.method === "GET" || request.method === "HEAD")) {
        const blob = blobs.get(blobMatch[1] as string);
        if (!blob) return request.method === "HEAD" ? new Response(null, { status: 404, headers: CORS }) : jsonError(404, "Blob not found");
        const headers = { "content-type": blob.type, "content-length": String(blob.bytes.length), ...CORS };
        return new Response(request.method === "HEAD" ? null : blob.bytes, { status: 200, headers });
      }
      return jsonError(404, "Not found");
    },
  });
  return {
    url: `http://localhost:${server.port}`,
    server,
    uploads,
    blob: (sha256) => blobs.get(sha256)?.bytes,
    setMode: (m) => {
      mode = m;
    },
    stop: async () => {
      await server.stop(true);
    },
  };
}
