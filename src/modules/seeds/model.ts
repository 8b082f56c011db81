/** Request and response schemas of the seeds routes (decisions.md §5): the single source of truth for validation. */
import { t } from "elysia";
import { orNull, pathId, timestamp, uuid } from "../../lib/schema";

export const TITLE_MAX = 300;
export const CONTENT_MAX = 20_000;
export const CATEGORY_MAX = 100;
export const IMAGE_URL_MAX = 2048;
export const SEARCH_MAX = 500;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

const title = t.String({ minLength: 1, maxLength: TITLE_MAX, error: `must be text of 1 to ${TITLE_MAX} characters` });
const content = t.String({ minLength: 1, maxLength: CONTENT_MAX, error: `must be text of 1 to ${CONTENT_MAX} characters` });
const category = t.String({ maxLength: CATEGORY_MAX, error: `must be text of at most ${CATEGORY_MAX} characters` });
const imageAssetId = t.String({ maxLength: 100, error: "must be the id of one of your assets" });
const imageUrl = t.String({ maxLength: IMAGE_URL_MAX, error: `must be an http(s) URL of at most ${IMAGE_URL_MAX} characters` });

export const createSeedBody = t.Object({
  title,
  content,
  category: t.Optional(orNull(category)),
  image_asset_id: t.Optional(orNull(imageAssetId)),
  image_url: t.Optional(orNull(imageUrl)),
});

/** PATCH: every field optional; null clears category, image_asset_id and image_url. */
export const patchSeedBody = t.Object({
  title: t.Optional(title),
  content: t.Optional(content),
  category: t.Optional(orNull(category)),
  image_asset_id: t.Optional(orNull(imageAssetId)),
  image_url: t.Optional(orNull(imageUrl)),
});

export const listSeedsQuery = t.Object({
  search: t.Optional(t.String({ maxLength: SEARCH_MAX, error: `must be text of at most ${SEARCH_MAX} characters` })),
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT }),
  ),
  cursor: t.Optional(t.String({ maxLength: 500 })),
});

export const seedIdParams = t.Object({ id: pathId(100) });

export const seedResponse = t.Object({
  id: uuid(),
  title: t.String(),
  content: t.String(),
  category: orNull(t.String()),
  image_asset_id: orNull(uuid()),
  image_url: orNull(t.String()),
  createdAt: timestamp(),
  updatedAt: timestamp(),
}, { title: "Seed" });

export const seedListResponse = t.Object({ seeds: t.Array(seedResponse), nextCursor: orNull(t.String()) }, { title: "SeedList" });
export const seedDeletedResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });
