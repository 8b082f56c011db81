/** GET and HEAD /media/<asset id>.<ext>: the public library URL of every asset (no key; see service.ts). */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { MEDIA_PATH } from "../assets/service";
import { serveMedia } from "./service";

/** Mounts the media routes. */
export function mediaModule(deps: Deps) {
  const image = { "image/*": { schema: { type: "string" as const, format: "binary" } } };
  const text = { "text/plain": { schema: { type: "string" as const } } };
  const notModified = { description: "Not modified (If-None-Match matched the ETag)" };
  const getResponses = {
    200: { description: "The image (immutable; ETag, Accept-Ranges)", content: image },
    206: { description: "The requested byte range (Range: bytes=…)", content: image },
    304: notModified,
    404: { description: "No such image", content: text },
    416: { description: "The range is outside the file (Content-Range: bytes */size)" },
  };
  // HEAD: the headers of GET without the body; Range is defined for GET only, so no 206 or 416.
  const headResponses = { 200: { description: "The image's headers" }, 304: notModified, 404: { description: "No such image" } };
  const detail = {
    summary: "An image of the library (public, immutable)",
    description: "The URL an asset's `url` names: served without a key so networks and browsers can fetch it; cacheable as immutable (an asset's bytes never change).",
    tags: ["media"],
  };
  return new Elysia()
    .get(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file), {
      detail: { ...detail, responses: getResponses },
    })
    .head(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file, { bodyless: true }), {
      detail: { ...detail, summary: "The headers of an image of the library, without its bytes", responses: headResponses },
    });
}
