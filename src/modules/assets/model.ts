/** Request and response schemas of the asset routes: the single source of truth for validation and OpenAPI. */
import { t } from "elysia";

export const MAX_LABEL = 200;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

export const assetSchema = t.Object({
  id: t.String({ format: "uuid" }),
  fileName: t.String(),
  mimeType: t.String({ description: "image/png, image/jpeg, image/gif or image/webp (detected from the bytes)" }),
  sizeBytes: t.Integer(),
  url: t.String({ description: "Library URL the image is served from: {base_url}/media/<id>.<ext>" }),
  createdAt: t.String({ description: "ISO 8601 UTC" }),
});

export const ingestUrlBody = t.Object({
  url: t.String({ minLength: 1, maxLength: 2048, description: "https URL of a public PNG, JPEG, GIF or WebP image" }),
  label: t.Optional(t.String({ maxLength: MAX_LABEL, description: "Becomes the fileName (extension appended if missing)" })),
});

export const ingestUrlResponse = t.Object({ asset: assetSchema, creditsCharged: t.Literal(0) });

export const listQuery = t.Object({
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, error: `must be a whole number from 1 to ${LIST_LIMIT_MAX}` }),
  ),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 512 })),
});

export const listResponse = t.Object({ assets: t.Array(assetSchema), nextCursor: t.Union([t.String(), t.Null()]) });

export const assetIdParams = t.Object({ id: t.String({ maxLength: 64 }) });

export const deleteResponse = t.Object({ id: t.String(), deleted: t.Literal(true) });
