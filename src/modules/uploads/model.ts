/** Schemas of the upload-link API routes. */
import { t } from "elysia";

export const uploadLinkResponse = t.Object({
  id: t.String({ format: "uuid" }),
  uploadUrl: t.String({ description: "{base_url}/upload/<token>: a credential; its holder can add one image" }),
  expiresAt: t.String({ description: "ISO 8601 UTC" }),
  expiresInSeconds: t.Integer(),
  creditsCharged: t.Literal(0),
});

export const uploadLinkStatusResponse = t.Object({
  id: t.String({ format: "uuid" }),
  status: t.Union([t.Literal("valid"), t.Literal("used"), t.Literal("expired")]),
  assetId: t.Union([t.String(), t.Null()]),
  expiresAt: t.String(),
});

export const uploadLinkParams = t.Object({ id: t.String({ maxLength: 64 }) });
