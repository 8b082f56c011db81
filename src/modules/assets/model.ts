/** Request and response schemas of the asset routes: the single source of truth for validation and OpenAPI. */
import { t } from "elysia";
import { integer, orNull, pathId, timestamp, uuid } from "../../lib/schema";

import type { ErrorCode } from "../../lib/errors";

export const MAX_LABEL = 200;

/** The 400 reasons of an ingest from a URL (decisions.md §4): every route that may fetch an image answers them. */
export const INGEST_REFUSALS = [
  "invalid_url",
  "https_required",
  "port_not_allowed",
  "unsupported_encoding",
  "host_not_public",
  "host_unresolvable",
  "fetch_failed",
  "upstream_status",
  "too_many_redirects",
  "unsupported_type",
  "image_too_large",
  "image_dimensions_too_large",
  "empty_body",
] as const satisfies readonly ErrorCode[];
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

export const assetSchema = t.Object({
  id: uuid(),
  fileName: t.String(),
  mimeType: t.String({ description: "image/png, image/jpeg, image/gif or image/webp (detected from the bytes)" }),
  sizeBytes: integer({ minimum: 1 }),
  url: t.String({ description: "Library URL the image is served from: {base_url}/media/<id>.<ext>" }),
  createdAt: timestamp(),
}, { title: "Asset" });

export const ingestUrlBody = t.Object({
  url: t.String({ minLength: 1, maxLength: 2048, description: "https URL of a public PNG, JPEG, GIF or WebP image" }),
  label: t.Optional(t.String({ maxLength: MAX_LABEL, description: "Becomes the fileName (extension appended if missing)" })),
});

export const ingestUrlResponse = t.Object({ asset: assetSchema, creditsCharged: t.Literal(0) }, { title: "IngestedAsset" });

export const listQuery = t.Object({
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT, error: `must be a whole number from 1 to ${LIST_LIMIT_MAX}` }),
  ),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 512 })),
});

export const listResponse = t.Object({ assets: t.Array(assetSchema), nextCursor: orNull(t.String()) }, { title: "AssetList" });

export const assetIdParams = t.Object({ id: pathId() });

export const deleteResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });
