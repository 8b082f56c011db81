/**
 * Blossom image uploads (hzrd149/blossom, BUD-01 and BUD-02): `PUT <server>/upload` with the raw bytes and an
 * `Authorization: Nostr <base64 of a kind-24242 event>` that carries `t=upload`, the blob's sha256 as `x` and a
 * NIP-40 `expiration`. The server answers a blob descriptor (`url`, `sha256`, `size`, `type`, `uploaded`) and must
 * not change the bytes, so the same image gives the same sha256 and, on the same server, the same URL: a note that
 * embeds it stays the same event on a resend.
 */
import { finalizeEvent } from "nostr-tools/pure";
import type { Deps } from "../../../deps";
import { probeImage } from "../../../lib/image-probe";
import { DeliveryError, type DeliveryImage } from "../../connector";
import { failureKindOf, providerFetch } from "../../outbound";

/** Kind of Blossom authorization events (BUD-01). */
export const BLOSSOM_AUTH_KIND = 24242;
/** How long an upload authorization stays valid. */
const AUTH_LIFETIME_S = 5 * 60;
/** Images up to the library's limit go up; Blossom servers set their own caps and answer 413 above them. */
const UPLOAD_TIMEOUT_MS = 60_000;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** An uploaded image: what the note's content and its NIP-92 `imeta` tag carry. */
export interface UploadedImage {
  url: string;
  sha256: string;
  mimeType: string;
  width: number;
  height: number;
  altText: string | null;
}

/** The sha256 of `bytes` as hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

/** The `Authorization` header value for an upload of `sha256` (BUD-01 "Authorization events", BUD-02 "Upload"). */
export function uploadAuthorization(secret: Uint8Array, sha256: string, nowSeconds: number): string {
  const event = finalizeEvent(
    {
      kind: BLOSSOM_AUTH_KIND,
      created_at: nowSeconds,
      content: "Upload image",
      tags: [
        ["t", "upload"],
        ["x", sha256],
        ["expiration", String(nowSeconds + AUTH_LIFETIME_S)],
      ],
    },
    secret,
  );
  return `Nostr ${Buffer.from(JSON.stringify(event)).toString("base64")}`;
}

/** The server's reason for a refusal: the `Blossom-Upload-Message`/`X-Reason` header, a JSON `message`, or the status. */
async function refusalWords(response: Response): Promise<string> {
  const header = response.headers.get("blossom-upload-message") ?? response.headers.get("x-reason");
  if (header) return header;
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === "string" && body.message !== "") return body.message;
  } catch {
    // not JSON
  }
  return text.trim() !== "" ? `HTTP ${response.status}: ${text.trim().slice(0, 200)}` : `HTTP ${response.status}`;
}

/**
 * Uploads one image to the Blossom server `server` and answers where it lives. Throws DeliveryError: the server's
 * refusal in its own words (permanent for 4xx, transient for 5xx and 429), and a descriptor whose sha256 is not the
 * one sent as permanent (the server changed the bytes).
 */
export async function uploadToBlossom(
  deps: Pick<Deps, "config" | "clock">,
  server: string,
  secret: Uint8Array,
  image: DeliveryImage,
): Promise<UploadedImage> {
  const sha256 = sha256Hex(image.bytes);
  const probe = await probeImage(image.bytes).catch((error: Error) => {
    throw new DeliveryError("permanent", `The image could not be read for Nostr: ${error.message}`);
  });
  const response = await providerFetch(deps, `${server.replace(/\/+$/, "")}/upload`, {
    method: "PUT",
    headers: {
      authorization: uploadAuthorization(secret, sha256, Math.floor(deps.clock.now() / 1000)),
      "content-type": probe.mimeType,
    },
    body: image.bytes,
    timeoutMs: UPLOAD_TIMEOUT_MS,
  });
  if (response.status !== 200 && response.status !== 201) {
    const words = await refusalWords(response);
    throw new DeliveryError(failureKindOf(response.status) === "transient" ? "transient" : "permanent", `The Blossom server refused the image: ${words}`);
  }
  let descriptor: { url?: unknown; sha256?: unknown };
  try {
    descriptor = (await response.json()) as typeof descriptor;
  } catch {
    throw new DeliveryError("transient", "The Blossom server answered the upload without a blob descriptor.");
  }
  if (typeof descriptor.url !== "string" || !/^https?:\/\//.test(descriptor.url)) {
    throw new DeliveryError("transient", "The Blossom server answered the upload without the image's URL.");
  }
  if (typeof descriptor.sha256 === "string" && SHA256_HEX.test(descriptor.sha256) && descriptor.sha256 !== sha256) {
    throw new DeliveryError("permanent", "The Blossom server changed the image while storing it (its sha256 differs), which BUD-02 forbids.");
  }
  return { url: descriptor.url, sha256, mimeType: probe.mimeType, width: probe.width, height: probe.height, altText: image.altText };
}
