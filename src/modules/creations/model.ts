/**
 * Request and response schemas of the creations routes: the single source of truth for validation and OpenAPI.
 * Enum fields carry an `error` text naming the allowed values, which the pipeline puts in `details[].problem`.
 */
import type { TOptional } from "@sinclair/typebox";
import { type TSchema, t } from "elysia";
import { CONNECTION_PLATFORMS } from "../../db/schema/connections";
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../../db/schema/post-content";
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

/** Generate's and regenerate's `platforms`: the networks to write a version for. */
function platformsField(description: string) {
  return t.Array(t.UnionEnum(CONNECTION_PLATFORMS, { error: oneOf(CONNECTION_PLATFORMS) }), {
    maxItems: CONNECTION_PLATFORMS.length,
    uniqueItems: true,
    error: `must be a list of distinct platforms among ${CONNECTION_PLATFORMS.join(", ")}`,
    description,
  });
}

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
  platforms: t.Optional(platformsField("Also writes a version per network (body.variants) whose caption fits that network's limit, at the same flat price. A network whose version would be the post's caption gets none.")),
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
  platforms: t.Optional(
    platformsField(
      "Also rewrites these networks' versions for their limits from the new caption (same price); a version the new caption already is loses its caption. Versions of networks not named stay as they are.",
    ),
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

// ---------------------------------------------------------------------------------------------------------------
// Posts written by hand (decisions.md §13): requests snake_case, answers camelCase.

const handCaption = (what: string) =>
  t.String({
    maxLength: MAX_EDIT_CHARS,
    error: `must be text of at most ${MAX_HAND_CAPTION_GRAPHEMES} characters`,
    description: `${what}: not empty, at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (each network's own limit is checked when it is scheduled).`,
  });
const firstCommentText = (description: string) =>
  t.String({ maxLength: MAX_EDIT_CHARS, error: `must be text of at most ${MAX_HAND_CAPTION_GRAPHEMES} characters`, description });

export const imageInput = t.Object(
  {
    asset_id: t.String({ maxLength: 64, error: "must be the id of one of your assets", description: "An asset of your library (404 otherwise)." }),
    alt_text: t.Optional(
      orNull(
        t.String({ maxLength: MAX_EDIT_CHARS, error: `must be text of at most ${MAX_ALT_TEXT_GRAPHEMES} characters` }),
        { description: `This image's alt text (at most ${MAX_ALT_TEXT_GRAPHEMES} characters); absent or null when none.` },
      ),
    ),
  },
  { title: "ImageInput", additionalProperties: false, error: "must be an object {asset_id, alt_text?}" },
);
const imagesInput = t.Array(imageInput, {
  maxItems: MAX_IMAGES,
  error: `must be a list of at most ${MAX_IMAGES} images`,
  description: `0–${MAX_IMAGES} images in order; the first is body.imageUrl/body.altText.`,
});

export const partInput = t.Object(
  { caption: handCaption("This part's text"), images: t.Optional(imagesInput) },
  { title: "ThreadPartInput", additionalProperties: false, error: "must be an object {caption, images?}" },
);
const threadInput = t.Array(partInput, {
  maxItems: MAX_THREAD_PARTS,
  error: `must be a list of at most ${MAX_THREAD_PARTS} parts`,
  description: `0–${MAX_THREAD_PARTS} follow-up parts, published as replies to the post in order (409 not_schedulable on a network without threads).`,
});

export const variantInput = t.Object(
  {
    caption: t.Optional(handCaption("This network's caption")),
    images: t.Optional(imagesInput),
    thread: t.Optional(threadInput),
    first_comment: t.Optional(firstCommentText('This network\'s first comment; "" clears the post\'s for this network.')),
  },
  {
    title: "VariantInput",
    additionalProperties: false,
    error: "must be an object {caption?, images?, thread?, first_comment?}",
    description: "A network's own version: a field it sets replaces the post's for that network's targets (thread [] and first_comment \"\" clear them).",
  },
);

/** An object with one optional property per platform, each `schema`: the versions' map, by platform name. */
export function perPlatform<T extends TSchema>(schema: T, options: { title: string; description: string; error?: string }) {
  const properties = Object.fromEntries(CONNECTION_PLATFORMS.map((p) => [p, t.Optional(schema)])) as unknown as Record<(typeof CONNECTION_PLATFORMS)[number], TOptional<T>>;
  return t.Object(properties, { additionalProperties: false, ...options });
}

export const variantsInput = perPlatform(variantInput, {
  title: "VariantsInput",
  error: `must be an object whose keys are platforms among ${CONNECTION_PLATFORMS.join(", ")}`,
  description: "A version per network, by platform name.",
});

export const createBody = t.Object({
  type: t.Optional(typeField),
  caption: handCaption("The post's caption"),
  images: t.Optional(imagesInput),
  seed_id: t.Optional(t.String({ maxLength: 64, error: "must be the id of one of your seeds", description: "The seed it is written from (404 otherwise)." })),
  thread: t.Optional(threadInput),
  first_comment: t.Optional(orNull(firstCommentText("Posted as the first comment or reply right after the post; empty or null: none."))),
  variants: t.Optional(variantsInput),
});

export const editBody = t.Object({
  caption: t.Optional(
    t.String({
      maxLength: MAX_EDIT_CHARS,
      error: `must be text of at most ${MAX_HAND_CAPTION_GRAPHEMES} characters`,
      description: `The new caption: not empty, at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (each network's own limit is checked when it is scheduled).`,
    }),
  ),
  alt_text: t.Optional(
    t.String({
      maxLength: MAX_EDIT_CHARS,
      error: `must be text of at most ${MAX_ALT_TEXT_GRAPHEMES} characters`,
      description: `The first image's alt text (at most ${MAX_ALT_TEXT_GRAPHEMES} characters); only for a creation with an image, and not together with images.`,
    }),
  ),
  altText: t.Optional(
    t.String({
      maxLength: MAX_EDIT_CHARS,
      error: `must be text of at most ${MAX_ALT_TEXT_GRAPHEMES} characters`,
      description: "The same as alt_text (this route's first spelling); send one of them.",
    }),
  ),
  images: t.Optional(orNull(imagesInput, { description: "The whole list of images, replacing it; null or [] removes every image." })),
  thread: t.Optional(orNull(threadInput, { description: "The whole thread, replacing it; null or [] removes it." })),
  first_comment: t.Optional(orNull(firstCommentText("The first comment; null or empty removes it."))),
  variants: t.Optional(orNull(variantsInput, { description: "The whole map of versions, replacing it; null or {} removes every version." })),
});

export const creationDeletedResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });

const editedByHandSchema = t.Object(
  {
    caption: t.Boolean({ description: "True when the caption was last written by hand (PATCH or the dashboard), not by the generator." }),
    altText: t.Boolean({ description: "True when the alt text was last written by hand." }),
  },
  { title: "EditedByHand", description: "Which texts a person wrote; a regenerate replacing them asks first in the dashboard." },
);

const imageSchema = t.Object(
  { assetId: uuid(), url: t.String({ description: "The asset's public URL." }), altText: t.String({ description: '"" when the image has no alt text.' }) },
  { title: "PostImage" },
);
const partSchema = t.Object({ caption: t.String(), images: t.Array(imageSchema) }, { title: "ThreadPart" });
const variantSchema = t.Object(
  {
    caption: t.Optional(t.String()),
    images: t.Optional(t.Array(imageSchema)),
    thread: t.Optional(t.Array(partSchema, { description: "[]: this network gets no thread." })),
    firstComment: t.Optional(t.String({ description: '"": this network gets no first comment.' })),
  },
  { title: "Variant", description: "A network's own version: the fields it sets replace the post's for that network." },
);

export const creationSchema = t.Object({
  id: uuid(),
  type: t.Literal(CREATION_TYPE),
  url: t.String({ description: "Public preview page: {base_url}/c/<id>." }),
  body: t.Object({
    type: t.Literal(CREATION_TYPE),
    caption: t.String(),
    altText: orNull(t.String(), { description: "The first image's alt text; null when there is no image." }),
    imageUrl: orNull(t.String(), { description: "The first image's URL; null when there is no image." }),
    images: t.Array(imageSchema, { description: `0–${MAX_IMAGES} images in order.` }),
    thread: t.Array(partSchema, { description: `0–${MAX_THREAD_PARTS} follow-up parts, published as replies in order.` }),
    firstComment: orNull(t.String(), { description: "Posted right after the post as its first comment or reply; null when none." }),
    variants: perPlatform(variantSchema, { title: "Variants", description: "A version per network, by platform name; {} when none." }),
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
export type CreateBody = typeof createBody.static;
export type ImageInputBody = typeof imageInput.static;
export type PartInputBody = typeof partInput.static;
export type VariantInputBody = typeof variantInput.static;
