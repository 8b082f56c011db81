/** GET and HEAD /media/<asset id>.<ext>: the public library URL of every asset (no key; see service.ts). */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { MEDIA_PATH } from "../assets/service";
import { serveMedia } from "./service";

/** Mounts the media routes. */
export function mediaModule(deps: Deps) {
  const detail = { summary: "An image of the library (public, immutable)", tags: ["media"] };
  return new Elysia()
    .get(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file), { detail })
    .head(`${MEDIA_PATH}/:file`, ({ request, params }) => serveMedia(deps, request, params.file, { bodyless: true }), {
      detail: { ...detail, hide: true },
    });
}
