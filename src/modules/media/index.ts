/** GET and HEAD /media/<asset id>.<ext>: the public library URL of every asset (no key; see service.ts). */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { MEDIA_PATH } from "../assets/service";
import { serveMedia } from "./service";

/** Mounts the media routes. */
export function mediaModule(deps: Deps) {
  const image = { "image/*": { schema: { type: "string" as const, format: "binary" } } };
  const text = { "text/plain": { schema: { type: "string" as const } } };
  // HEAD answers the same statuses and headers without a body.
  const responses = (body: boolean) => ({
    200: body ? { description: "The image (immutable; ETag, Accept-Ranges)", content: image } : { description: "The image's headers" },
    206: body ? { description: "The requested byte range (Range: bytes=…)", content: image } : { description: "The range's headers" },
    304: { description: "Not modified (If-None-Match matched the ETag)" },
    404: body ? { description: "No such image", content: text } : { description: "No such image" },
    416: { description: "The range is outside the file (Content-Range: bytes */size)" },
  });
  const detail = { summary: "An image of the library (public, immutable)", tags: ["media"] };
  return new Elysia()
    .get(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file), {
      detail: { ...detail, responses: responses(true) },
    })
    .head(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file), {
      detail: { ...detail, summary: "The headers of an image of the library, without its bytes", responses: responses(false) },
    });
}
