/** GET/PUT /api/v1/voice (the voice group): the brand voice every generator honours. */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { voicePatchSchema, voiceSchema } from "./model";
import { getVoice, putVoice } from "./service";

/** The voice routes. */
export function voiceModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/voice", ({ request }) => getVoice(deps, authOf(request).accountId), {
      scope: "voice",
      response: voiceSchema,
      detail: { summary: "The account's brand voice (defaults until saved)", tags: ["voice"] },
    })
    .put("/api/v1/voice", ({ request, body }) => putVoice(deps, authOf(request).accountId, body), {
      parse: parseJsonBody,
      scope: "voice",
      body: voicePatchSchema,
      response: voiceSchema,
      detail: {
        summary: "Save the brand voice; omitted fields keep their value",
        description: "Hashtags are stored with a leading #; duplicate hashtags and banned words are dropped.",
        tags: ["voice"],
      },
    });
}
