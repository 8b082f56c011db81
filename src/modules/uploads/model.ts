/** Schemas of the upload-link API routes. */
import { t } from "elysia";
import { integer, orNull, pathId, timestamp, uuid } from "../../lib/schema";

export const uploadLinkResponse = t.Object({
  id: uuid(),
  uploadUrl: t.String({ description: "{base_url}/upload/<token>: a credential; its holder can add one image" }),
  expiresAt: timestamp(),
  expiresInSeconds: integer({ minimum: 0 }),
  creditsCharged: t.Literal(0),
}, { title: "UploadLink" });

export const uploadLinkStatusResponse = t.Object({
  id: uuid(),
  status: t.Union([t.Literal("valid"), t.Literal("used"), t.Literal("expired")]),
  assetId: orNull(uuid()),
  expiresAt: timestamp(),
}, { title: "UploadLinkStatus" });

export const uploadLinkParams = t.Object({ id: pathId() });

/** The shortest and longest lifetime a link may be given (decisions.md §15), in seconds. */
export const MIN_UPLOAD_LINK_TTL_SECONDS = 300;
export const MAX_UPLOAD_LINK_TTL_SECONDS = 604_800;

/** POST /assets/upload-link: the body is optional; without it (or the field) a link lives 900 seconds. */
export const uploadLinkBody = t.Optional(
  t.Object({
    expires_in_seconds: t.Optional(
      integer({
        minimum: MIN_UPLOAD_LINK_TTL_SECONDS,
        maximum: MAX_UPLOAD_LINK_TTL_SECONDS,
        default: 900,
        error: `must be a whole number of seconds from ${MIN_UPLOAD_LINK_TTL_SECONDS} to ${MAX_UPLOAD_LINK_TTL_SECONDS}`,
        description: "How long the link stays usable, in seconds: 300 (5 minutes) to 604800 (7 days); 900 when left out.",
      }),
    ),
  }),
);

export type UploadLinkBody = typeof uploadLinkBody.static;
