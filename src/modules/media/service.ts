/**
 * What /media answers for one request: the asset's bytes with the headers of decisions.md §4 (stored type, nosniff,
 * sandbox CSP, immutable caching, strong ETag from the SHA-256), 304 on a matching validator, 206/416 for Range.
 * The id is unguessable (UUIDv7 with 62 random bits, see lib/ids.ts) and the URL is public by design: it is what platforms fetch.
 */
import type { Deps } from "../../deps";
import { findAssetForMedia } from "../assets/service";
import { parseRange } from "./range";
import { padToAspectJpeg } from "../../lib/image-pad";

export const MEDIA_CSP = "default-src 'none'; sandbox";
export const MEDIA_CACHE = "public, max-age=31536000, immutable";
const FILE_RE = /^([0-9a-fA-F-]{36})\.([a-z]{3,4})$/;
/** `<id>.instagram.jpg`: the asset re-encoded the way Instagram takes it (JPEG, 4:5 to 1.91:1 by padding). */
const INSTAGRAM_RE = /^([0-9a-fA-F-]{36})\.instagram\.jpg$/;
/** Instagram's feed aspect ratios (width / height). */
export const INSTAGRAM_MIN_RATIO = 4 / 5;
export const INSTAGRAM_MAX_RATIO = 1.91;

function notFoundResponse(): Response {
  return new Response("Not found", {
    status: 404,
    headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-store" },
  });
}

/** True when an If-None-Match list names `etag` (weak comparison, as RFC 9110 §13.1.2 requires) or is `*`. */
function matchesIfNoneMatch(header: string, etag: string): boolean {
  const opaque = etag.replace(/^W\//, "");
  return header.split(",").some((raw) => {
    const tag = raw.trim();
    return tag === "*" || tag.replace(/^W\//, "") === opaque;
  });
}

/**
 * Answers GET or HEAD for `/media/<file>`. `bodyless` (the HEAD route, which Bun's router calls directly) answers
 * HEAD without opening the bytes. Without it, a HEAD is Elysia's own HEAD-for-GET (its router runs the GET handler
 * for HEAD and counts the body's bytes for Content-Length), so the body is given to be counted, as for GET.
 */
export async function serveMedia(deps: Deps, request: Request, file: string, { bodyless = false }: { bodyless?: boolean } = {}): Promise<Response> {
  const instagram = INSTAGRAM_RE.exec(file);
  if (instagram?.[1]) return serveInstagramVariant(deps, instagram[1].toLowerCase(), { bodyless });
  const match = FILE_RE.exec(file);
  const asset = match?.[1] ? await findAssetForMedia(deps, match[1].toLowerCase()) : null;
  if (!asset || asset.ext !== match?.[2]) return notFoundResponse();
  if (!(await deps.storage.exists(asset.storageKey))) {
    deps.log.error("media file missing", { assetId: asset.id });
    return notFoundResponse();
  }
  const etag = `"${asset.sha256}"`;
  const lastModified = new Date(asset.createdAt).toUTCString();
  const common: Record<string, string> = {
    etag,
    "last-modified": lastModified,
    "cache-control": MEDIA_CACHE,
    "x-content-type-options": "nosniff",
    "content-security-policy": MEDIA_CSP,
    "cross-origin-resource-policy": "cross-origin",
    "accept-ranges": "bytes",
  };

  const ifNoneMatch = request.headers.get("if-none-match");
  const ifModifiedSince = request.headers.get("if-modified-since");
  const notModified = ifNoneMatch
    ? matchesIfNoneMatch(ifNoneMatch, etag)
    : ifModifiedSince !== null && Math.floor(asset.createdAt / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000);
  if (notModified) return new Response(null, { status: 304, headers: common });

  const size = asset.sizeBytes;
  const isHead = request.method === "HEAD";
  const ifRange = request.headers.get("if-range");
  // Range is defined for GET only; If-Range with another validator means "send it all".
  const range = isHead || (ifRange !== null && ifRange.trim() !== etag) ? { kind: "full" as const } : parseRange(request.headers.get("range"), size);

  if (range.kind === "unsatisfiable") {
    return new Response(null, { status: 416, headers: { ...common, "content-range": `bytes */${size}` } });
  }
  const headers = { ...common, "content-type": asset.mimeType };
  if (range.kind === "partial") {
    const length = range.end - range.start + 1;
    return new Response(deps.storage.body(asset.storageKey, range), {
      status: 206,
      headers: { ...headers, "content-range": `bytes ${range.start}-${range.end}/${size}`, "content-length": String(length) },
    });
  }
  // A bodyless HEAD opens nothing (on S3 that would start a GET): Bun's server sends the Content-Length set here.
  const body = isHead && bodyless ? null : deps.storage.body(asset.storageKey);
  return new Response(body, { status: 200, headers: { ...headers, "content-length": String(size) } });
}

/**
 * The Instagram variant of an asset (what the Instagram connector hands Instagram to fetch): JPEG within 4:5 to
 * 1.91:1, padded with white, never cropped. Made on each request (Instagram fetches each image once per post).
 */
async function serveInstagramVariant(deps: Deps, id: string, { bodyless }: { bodyless: boolean }): Promise<Response> {
  const asset = await findAssetForMedia(deps, id);
  if (!asset || !(await deps.storage.exists(asset.storageKey))) return notFoundResponse();
  const original = new Uint8Array(await new Response(deps.storage.body(asset.storageKey)).arrayBuffer());
  let padded: Awaited<ReturnType<typeof padToAspectJpeg>>;
  try {
    padded = await padToAspectJpeg(original, INSTAGRAM_MIN_RATIO, INSTAGRAM_MAX_RATIO);
  } catch {
    return notFoundResponse();
  }
  const headers = {
    "content-type": "image/jpeg",
    "content-length": String(padded.bytes.length),
    "cache-control": MEDIA_CACHE,
    "x-content-type-options": "nosniff",
    "content-security-policy": MEDIA_CSP,
    "cross-origin-resource-policy": "cross-origin",
  };
  return new Response(bodyless ? null : (padded.bytes as Uint8Array<ArrayBuffer>), { status: 200, headers });
}
