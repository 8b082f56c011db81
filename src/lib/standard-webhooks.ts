/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com, spec v1): three headers, `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, so the
 * timestamp is signed and any Standard Webhooks library verifies a delivery.
 *
 * The HMAC key is what such a library derives from the secret as its owner holds it (decisions.md §10):
 * - a `whsec_<base64>` secret (event webhooks): the base64-decoded bytes after the prefix, as the libraries do;
 * - any other secret (a webhook target's typed secret): its UTF-8 bytes (the libraries' "raw" secret option).
 */
import { createHmac } from "node:crypto";

export const STANDARD_WEBHOOK_ID_HEADER = "webhook-id";
export const STANDARD_WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const STANDARD_WEBHOOK_SIGNATURE_HEADER = "webhook-signature";
/** The prefix of a secret whose key is its base64 payload. */
export const STANDARD_WEBHOOK_SECRET_PREFIX = "whsec_";

/**
 * The HMAC key of an event webhook's secret: for `whsec_<base64>` (every secret Seedcast mints) its decoded bytes.
 * NB: Node's base64 decoder also reads the URL-safe alphabet, so a secret issued before the standard alphabet was
 * used (`whsec_<base64url>`) gives the same bytes its owner gets by rewriting it in standard base64. A secret without
 * the prefix (only a row written outside the API holds one) is keyed by its UTF-8 bytes, as the libraries' raw option
 * takes it, rather than failing every delivery.
 */
export function keyOfEventSecret(secret: string): Uint8Array {
  if (!secret.startsWith(STANDARD_WEBHOOK_SECRET_PREFIX)) return keyOfRawSecret(secret);
  return new Uint8Array(Buffer.from(secret.slice(STANDARD_WEBHOOK_SECRET_PREFIX.length), "base64"));
}

/** The HMAC key of a typed secret: its UTF-8 bytes. */
export function keyOfRawSecret(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** `v1,<base64 HMAC-SHA256 under key of "id.timestamp.body">`. */
export function standardWebhookSignature(key: Uint8Array, id: string, timestampSeconds: number, rawBody: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${rawBody}`).digest("base64");
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers of one message. */
export function standardWebhookHeaders(key: Uint8Array, id: string, timestampSeconds: number, rawBody: string): Record<string, string> {
  return {
    [STANDARD_WEBHOOK_ID_HEADER]: id,
    [STANDARD_WEBHOOK_TIMESTAMP_HEADER]: String(timestampSeconds),
    [STANDARD_WEBHOOK_SIGNATURE_HEADER]: standardWebhookSignature(key, id, timestampSeconds, rawBody),
  };
}
