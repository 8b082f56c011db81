/** Schemas of the upload-link API routes. */
import { t } from "elysia";
import { integer, orNull, timestamp, uuid } from "../../lib/schema";

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

export const uploadLinkParams = t.Object({ id: t.String({ maxLength: 64 }) });
