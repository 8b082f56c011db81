/**
 * Request and response schemas of the creations routes: the single source of truth for validation and OpenAPI.
 * Enum fields carry an `error` text naming the allowed values, which the pipeline puts in `details[].problem`.
 */
import { t } from "elysia";
import { integer, orNull, pathId, timestamp, uuid } from "../../lib/schema";
import { ASPECT_RATIOS, DEFAULT_ASPECT_RATIO, DEFAULT_MEDIA_STYLE, MEDIA_STYLES } from "../../generation/generator";

export const CREATION_TYPE = "social_post";
export const CREATION_TYPES = [CREATION_TYPE] as const;
export const REGENERATE_PARTS = ["caption", "image", "both"] as const;
export type RegeneratePart = (typeof REGENERATE_PARTS)[number];
export const DEFAULT_REGENERATE_PART: RegeneratePart = "both";
/** Change instructions are a hint for the generator, not content: a short sentence or two. */
export const MAX_CHANGE_INSTRUCTIONS = 1000;
/** Alt text written by hand: Mastodon's description limit, the strictest of the platforms. */
export const MAX_ALT_TEXT_GRAPHEMES = 1500;
/**
 * A caption written by hand (PATCH, a scheduled post's content) may be this long (decisions.md §13: the longest any
 * network takes); each network's own limit is checked at scheduling. CAPTION_MAX_GRAPHEMES bounds generated ones only.
 */
export const MAX_HAND_CAPTION_GRAPHEMES = 63_206;
/** A bound in UTF-16 units before the grapheme checks of the service (a grapheme is at least one unit). */
const MAX_EDIT_CHARS = MAX_HAND_CAPTION_GRAPHEMES * 4;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

const ASPECT_RATIO_NAMES = Object.keys(ASPECT_RATIOS) as (keyof typeof ASPECT_RATIOS)[];

/** "must be one of a, b, c" — the problem text of every enum refusal. */
function oneOf(values: readonly string[]): string {
  return `must be one of ${values.join(", ")}`;
}

// NB: an optional t.UnionEnum without a `default` is filled with its FIRST value by Elysia when absent; every optional
// enum here therefore names its real default explicitly.
const typeField = t.UnionEnum(CREATION_TYPES, {
  default: CREATION_TYPE,
  error: oneOf(CREATION_TYPES),
  description: "Only social_post exists.",
});

export const generateBody = t.Object({
  type: t.Optional(typeField),
  seed_id: t.String({ error: "must be the id of one of your seeds", description: "An owned seed." }),
  include_visual: t.Optional(t.Boolean({ error: "must be true or false", description: "true generates an image." })),
  aspect_ratio: t.Optional(
    t.UnionEnum(ASPECT_RATIO_NAMES as [string, ...string[]], {
      default: DEFAULT_ASPECT_RATIO,
      error: oneOf(ASPECT_RATIO_NAMES),
      description: "square 1080×1080 (default), portrait 1080×1350, landscape 1200×628, story 1080×1920.",
    }),
  ),
  media_style: t.Optional(
    t.UnionEnum(MEDIA_STYLES, { default: DEFAULT_MEDIA_STYLE, error: oneOf(MEDIA_STYLES), description: "minimal by default." }),
  ),
  image_asset_id: t.Optional(
    t.String({ error: "must be the id of one of your assets", description: "An owned asset; excludes include_visual." }),
  ),
});

export const regenerateBody = t.Object({
  type: t.Optional(typeField),
  creation_id: t.String({ error: "must be the id of one of your creations" }),
  parts: t.Optional(t.UnionEnum(REGENERATE_PARTS, { default: DEFAULT_REGENERATE_PART, error: oneOf(REGENERATE_PARTS), description: "both by default." })),
  change_instructions: t.Optional(
    t.String({
      maxLength: MAX_CHANGE_INSTRUCTIONS,
      error: `must be text of at most ${MAX_CHANGE_INSTRUCTIONS} characters`,
      description: 'e.g. "shorter", "more formal", "add a question", "no emoji".',
    }),
  ),
});

export const listQuery = t.Object({
  seed_id: t.Optional(t.String()),
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT }),
  ),
  cursor: t.Optional(t.String({ maxLength: 200, error: "must be a cursor from a previous page" })),
});

export const idParams = t.Object({ id: pathId() });

export const editBody = t.Object({
  caption: t.Optional(
    t.String({
      maxLength: MAX_EDIT_CHARS,
      error: `must be text of at most ${MAX_HAND_CAPTION_GRAPHEMES} characters`,
      description: `The new caption: not empty, at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (each network's own limit is checked when it is scheduled).`,
    }),
  ),
  altText: t.Optional(
    t.String({
      maxLength: MAX_EDIT_CHARS,
      error: `must be text of at most ${MAX_ALT_TEXT_GRAPHEMES} characters`,
      description: `The image's alt text (at most ${MAX_ALT_TEXT_GRAPHEMES} characters); only for a creation with an image.`,
    }),
  ),
});

export const creationDeletedResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });

const editedByHandSchema = t.Object(
  {
    caption: t.Boolean({ description: "True when the caption was last written by hand (PATCH or the dashboard), not by the generator." }),
    altText: t.Boolean({ description: "True when the alt text was last written by hand." }),
  },
  { title: "EditedByHand", description: "Which texts a person wrote; a regenerate replacing them asks first in the dashboard." },
);

export const creationSchema = t.Object({
  id: uuid(),
  type: t.Literal(CREATION_TYPE),
  url: t.String({ description: "Public preview page: {base_url}/c/<id>." }),
  body: t.Object({
    type: t.Literal(CREATION_TYPE),
    caption: t.String(),
    altText: orNull(t.String()),
    imageUrl: orNull(t.String()),
  }),
  seedId: orNull(uuid(), { description: "The seed it was generated from; null for a post written by hand without one" }),
  imageAssetId: orNull(uuid()),
  editedByHand: editedByHandSchema,
  aspectRatio: t.String(),
  mediaStyle: t.String(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
}, { title: "Creation" });

export const creationWithChargeResponse = t.Object({ creation: creationSchema, creditsCharged: integer({ minimum: 0 }) }, { title: "ChargedCreation" });
export const creationResponse = t.Object({ creation: creationSchema }, { title: "CreationEnvelope" });
export const creationListResponse = t.Object({
  creations: t.Array(creationSchema),
  nextCursor: orNull(t.String()),
}, { title: "CreationList" });

export const creationVersionSchema = t.Object(
  {
    id: uuid(),
    caption: t.String(),
    altText: orNull(t.String(), { description: "Null when the version had no image." }),
    imageAssetId: orNull(uuid(), { description: "The version's image; null when it had none." }),
    imageUrl: orNull(t.String(), { description: "Null when the version had no image, or its image was deleted from the library since." }),
    editedByHand: editedByHandSchema,
    replacedAt: timestamp({ description: "When a regenerate, an edit or a restore replaced this content." }),
  },
  { title: "CreationVersion" },
);
export const creationVersionsResponse = t.Object(
  { versions: t.Array(creationVersionSchema, { description: `Newest first; the last 10 are kept.` }) },
  { title: "CreationVersionList" },
);

/** An earlier version of a creation as the API shows it. */
export type CreationVersion = typeof creationVersionSchema.static;
/** A creation as the API shows it. */
export type Creation = typeof creationSchema.static;
export type GenerateBody = typeof generateBody.static;
export type RegenerateBody = typeof regenerateBody.static;
export type EditBody = typeof editBody.static;
