/**
 * Storage in an S3-compatible bucket (MEDIA_STORE=s3), through Bun's built-in `S3Client` (SigV4, path-style URLs).
 * Every object lives under `media/` in the bucket, so the sweep lists (and may delete) only what Seedcast wrote.
 *
 * Uploads: Bun's client sends a `Content-Type` on every PUT (inferred from the key's extension when no `type` is
 * given) but leaves it out of `SignedHeaders` (oven-sh/bun#43029); radosgw from Ceph 19.2.6 on refuses such a PUT.
 * So `put()` lets Bun sign a short-lived presigned PUT (query-string SigV4, `SignedHeaders=host`) and sends the bytes
 * with `fetch` and no `Content-Type` at all: nothing unsigned but Content-Length goes out. The object keeps S3's
 * default type; /media serves the type recorded in the asset's row, never the object's. The upload is checked
 * end to end: S3 answers a single-part PUT with the MD5 of what it stored as ETag, compared with ours.
 *
 * Reads stream: `body()` is the object's (ranged) GET as a ReadableStream. Never hand an S3File itself to a
 * Response: Bun answers that with a 302 to a presigned URL of the bucket.
 */
import { S3Client } from "bun";
import { type ByteRange, type Storage, type StorageListing, assertStorageKey, isStorageKey } from "./storage";

/** Where the bucket is and how to sign for it (config.ts validates these; the secret is never logged). */
export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** The folder inside the bucket that holds every media object. */
export const S3_MEDIA_PREFIX = "media/";
/** How long a presigned PUT stays valid: long enough for a slow 100 MB upload, short enough to be useless later. */
const PUT_URL_TTL_SECONDS = 300;
/** A whole PUT (connect, send, answer) gives up after this. */
const PUT_TIMEOUT_MS = 120_000;

/** A refusal or failure of the object store, named by S3's error code; never carries a URL or a signature. */
export class S3StorageError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "S3StorageError";
  }
}

/** S3's `<Code>…</Code>` of an error body, or the HTTP status. */
function errorCode(body: string, status: number): string {
  return /<Code>([^<]{1,100})<\/Code>/.exec(body)?.[1] ?? `HTTP ${status}`;
}

/** `error` as an S3StorageError without the request URL (Bun's fetch errors name it; a presigned one holds a signature). */
function scrub(error: unknown, action: string, key: string): S3StorageError {
  if (error instanceof S3StorageError) return error;
  const e = error as { code?: unknown; name?: unknown };
  const code = typeof e?.code === "string" ? e.code : typeof e?.name === "string" ? e.name : "Error";
  return new S3StorageError(`S3 ${action} of ${key} failed: ${code}`, code);
}

export interface S3StorageOptions {
  /** Keys per ListObjectsV2 page (S3's maximum, 1000, by default; tests use a small one to walk several pages). */
  pageSize?: number;
}

/** Storage in `settings.bucket`, under `media/`. */
export function createS3Storage(settings: S3Settings, { pageSize = 1000 }: S3StorageOptions = {}): Storage {
  const client = new S3Client({
    endpoint: settings.endpoint,
    bucket: settings.bucket,
    region: settings.region,
    accessKeyId: settings.accessKeyId,
    secretAccessKey: settings.secretAccessKey,
  });
  const objectKey = (key: string): string => {
    assertStorageKey(key);
    return `${S3_MEDIA_PREFIX}${key}`;
  };
  /**
   * One presigned PUT of `body` (`size` bytes), then the end-to-end check: a single-part PUT's ETag is the MD5 of the
   * stored bytes (unless the store encrypts with KMS: then it is not 32 hex digits and there is nothing to compare).
   * `md5` has seen every byte of `body` once the answer is in.
   */
  const send = async (key: string, body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>, size: number, md5: Bun.CryptoHasher): Promise<void> => {
    const url = client.presign(objectKey(key), { method: "PUT", expiresIn: PUT_URL_TTL_SECONDS });
    let response: Response;
    try {
      // A byte array's length fetch states itself; a stream's is stated here.
      const headers = body instanceof Uint8Array ? undefined : { "content-length": String(size) };
      response = await fetch(url, { method: "PUT", body, headers, signal: AbortSignal.timeout(PUT_TIMEOUT_MS) });
    } catch (error) {
      throw scrub(error, "PUT", key);
    }
    const answer = await response.text();
    if (!response.ok) {
      const code = errorCode(answer, response.status);
      throw new S3StorageError(`S3 PUT of ${key} was refused: ${code}`, code, response.status);
    }
    const etag = (response.headers.get("etag") ?? "").replaceAll('"', "").toLowerCase();
    if (/^[0-9a-f]{32}$/.test(etag)) {
      const digest = md5.digest("hex");
      if (etag !== digest) {
        await client.delete(objectKey(key)).catch(() => undefined);
        throw new S3StorageError(`S3 PUT of ${key} stored other bytes than were sent (ETag ${etag}, MD5 ${digest})`, "BadDigest");
      }
    }
  };
  return {
    kind: "s3",
    async put(key, bytes) {
      // A Uint8Array body: fetch adds Content-Length and no Content-Type.
      await send(key, bytes as Uint8Array<ArrayBuffer>, bytes.length, new Bun.CryptoHasher("md5").update(bytes));
    },
    async putStream(key, body, size) {
      // A stream body with Content-Length stated: fetch sends exactly that (no chunked encoding, which S3 refuses) and
      // no Content-Type (a file Blob would bring one inferred from its name). The MD5 is taken as the bytes go out.
      const md5 = new Bun.CryptoHasher("md5");
      let sent = 0;
      const hashed = body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            md5.update(chunk);
            sent += chunk.length;
            controller.enqueue(chunk);
          },
        }),
      );
      await send(key, hashed, size, md5);
      if (sent !== size) {
        await client.delete(objectKey(key)).catch(() => undefined);
        throw new S3StorageError(`S3 PUT of ${key} sent ${sent} bytes, expected ${size}`, "IncompleteBody");
      }
    },
    async read(key) {
      try {
        return await client.file(objectKey(key)).bytes();
      } catch (error) {
        throw scrub(error, "GET", key);
      }
    },
    body(key, range?: ByteRange) {
      const file = client.file(objectKey(key));
      return (range ? file.slice(range.start, range.end + 1) : file).stream();
    },
    async exists(key) {
      try {
        return await client.exists(objectKey(key));
      } catch (error) {
        throw scrub(error, "HEAD", key);
      }
    },
    async delete(key) {
      try {
        await client.delete(objectKey(key));
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === "NoSuchKey") return;
        throw scrub(error, "DELETE", key);
      }
    },
    async check() {
      try {
        await client.list({ prefix: S3_MEDIA_PREFIX, maxKeys: 1 });
      } catch (error) {
        const e = error as { code?: unknown };
        const code = typeof e?.code === "string" ? e.code : "Error";
        throw new S3StorageError(`the media bucket ${settings.bucket} at ${settings.endpoint} cannot be listed: ${code}`, code);
      }
    },
    async list(prefix = "") {
      const listing: StorageListing = { entries: [], temps: [] };
      let continuationToken: string | undefined;
      do {
        let page: Awaited<ReturnType<S3Client["list"]>>;
        try {
          page = await client.list({ prefix: `${S3_MEDIA_PREFIX}${prefix}`, maxKeys: pageSize, ...(continuationToken ? { continuationToken } : {}) });
        } catch (error) {
          throw scrub(error, "LIST", prefix || "(all)");
        }
        for (const object of page.contents ?? []) {
          const key = object.key.slice(S3_MEDIA_PREFIX.length);
          if (!object.key.startsWith(S3_MEDIA_PREFIX) || !isStorageKey(key)) continue;
          const mtimeMs = object.lastModified ? Date.parse(object.lastModified) : Number.NaN;
          // An object without a readable date cannot be aged: it is kept (never swept) rather than guessed.
          if (Number.isFinite(mtimeMs)) listing.entries.push({ key, mtimeMs });
        }
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
      return listing;
    },
  };
}
