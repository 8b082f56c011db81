/**
 * A post's content as people write it (decisions.md §13), from the request to the stored shape: the camelCase inputs
 * the service and the dashboard take, their conversion from the API's snake_case bodies, the checks of every text
 * (captions and first comments up to 63,206 characters, alt text up to 1,500), and the ownership of every image
 * (404 for an asset that is not in the account's library).
 *
 * API for other modules and the dashboard:
 *  - types `ImageInput`, `PartInput`, `VariantInput`, `CreationInput`, `CreationPatch`
 *  - `creationInputOf(body)`, `creationPatchOf(body)`: REST/MCP bodies → inputs
 *  - `cleanImages`, `cleanThread`, `cleanFirstComment`, `cleanVariants`: inputs → stored shapes (400s)
 *  - `assertOwnedAssets(deps, accountId, ids)`: 404 for any asset not owned; `lockAssets` inside a write
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { forUpdate } from "../../db/portable-sql";
import { CONNECTION_PLATFORMS } from "../../db/schema/connections";
import { MAX_IMAGES, MAX_THREAD_PARTS, type StoredImage, type StoredPart, type StoredVariant, type StoredVariants } from "../../db/schema/post-content";
import { assets } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { graphemeCount } from "../../lib/graphemes";
import { MAX_ALT_TEXT_GRAPHEMES, MAX_HAND_CAPTION_GRAPHEMES, type CreateBody, type EditBody, type ImageInputBody, type PartInputBody, type VariantInputBody } from "./model";

/** One image as the service takes it: an asset of the library and its own alt text (absent/null: none). */
export interface ImageInput {
  assetId: string;
  altText?: string | null;
}

/** One follow-up part of a thread. */
export interface PartInput {
  caption: string;
  images?: ImageInput[];
}

/** A network's own version: a field it sets replaces the post's (`thread: []`, `firstComment: ""` clear them). */
export interface VariantInput {
  caption?: string;
  images?: ImageInput[];
  thread?: PartInput[];
  firstComment?: string;
}

/** A post written by hand (POST /creations, the dashboard's composer). */
export interface CreationInput {
  caption: string;
  images?: ImageInput[];
  seedId?: string;
  thread?: PartInput[];
  firstComment?: string | null;
  variants?: Partial<Record<string, VariantInput>>;
}

/** An edit (PATCH /creations/{id}): fields left out stay; null (and [] / {} / "") removes. */
export interface CreationPatch {
  caption?: string;
  /** The first image's alt text (today's edit); not together with `images`. */
  altText?: string;
  images?: ImageInput[] | null;
  thread?: PartInput[] | null;
  firstComment?: string | null;
  variants?: Partial<Record<string, VariantInput>> | null;
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies → inputs

function imageOf(body: ImageInputBody): ImageInput {
  return { assetId: body.asset_id, ...(body.alt_text !== undefined ? { altText: body.alt_text } : {}) };
}

function partOf(body: PartInputBody): PartInput {
  return { caption: body.caption, ...(body.images !== undefined ? { images: body.images.map(imageOf) } : {}) };
}

function variantOf(body: VariantInputBody): VariantInput {
  return {
    ...(body.caption !== undefined ? { caption: body.caption } : {}),
    ...(body.images !== undefined ? { images: body.images.map(imageOf) } : {}),
    ...(body.thread !== undefined ? { thread: body.thread.map(partOf) } : {}),
    ...(body.first_comment !== undefined ? { firstComment: body.first_comment } : {}),
  };
}

function variantsOf(body: NonNullable<CreateBody["variants"]>): Partial<Record<string, VariantInput>> {
  const out: Partial<Record<string, VariantInput>> = {};
  for (const [platform, variant] of Object.entries(body)) if (variant !== undefined) out[platform] = variantOf(variant);
  return out;
}

/** POST /creations' body (snake_case) as the service takes it. */
export function creationInputOf(body: Omit<CreateBody, "type">): CreationInput {
  return {
    caption: body.caption,
    ...(body.images !== undefined ? { images: body.images.map(imageOf) } : {}),
    ...(body.seed_id !== undefined ? { seedId: body.seed_id } : {}),
    ...(body.thread !== undefined ? { thread: body.thread.map(partOf) } : {}),
    ...(body.first_comment !== undefined ? { firstComment: body.first_comment } : {}),
    ...(body.variants !== undefined ? { variants: variantsOf(body.variants) } : {}),
  };
}

/** PATCH /creations/{id}'s body as the service takes it; `alt_text` and `altText` (its first spelling) are one field. */
export function creationPatchOf(body: EditBody): CreationPatch {
  if (body.alt_text !== undefined && body.altText !== undefined) throw invalidField("alt_text", "send alt_text or altText, not both");
  const altText = body.alt_text ?? body.altText;
  return {
    ...(body.caption !== undefined ? { caption: body.caption } : {}),
    ...(altText !== undefined ? { altText } : {}),
    ...(body.images !== undefined ? { images: body.images === null ? null : body.images.map(imageOf) } : {}),
    ...(body.thread !== undefined ? { thread: body.thread === null ? null : body.thread.map(partOf) } : {}),
    ...(body.first_comment !== undefined ? { firstComment: body.first_comment } : {}),
    ...(body.variants !== undefined ? { variants: body.variants === null ? null : variantsOf(body.variants) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs → stored content (400s)

/**
 * A caption written by hand as it will be stored: trimmed, non-empty, at most MAX_HAND_CAPTION_GRAPHEMES
 * (decisions.md §13; each network's own limit is checked at scheduling). `field` names it in the refusal.
 */
export function cleanHandCaption(caption: string, field = "caption"): string {
  const trimmed = caption.trim();
  if (trimmed === "") throw invalidField(field, "must not be empty");
  // A text has no more graphemes than UTF-16 code units: a short one needs no count (the CSV import checks 10,000).
  if (trimmed.length <= MAX_HAND_CAPTION_GRAPHEMES) return trimmed;
  const length = graphemeCount(trimmed);
  if (length > MAX_HAND_CAPTION_GRAPHEMES) throw invalidField(field, `must be at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (this one has ${length})`);
  return trimmed;
}

/** Alt text written by hand as it will be stored: trimmed, at most MAX_ALT_TEXT_GRAPHEMES. */
export function cleanAltText(altText: string, field = "altText"): string {
  const trimmed = altText.trim();
  if (trimmed.length <= MAX_ALT_TEXT_GRAPHEMES) return trimmed;
  const length = graphemeCount(trimmed);
  if (length > MAX_ALT_TEXT_GRAPHEMES) {
    throw invalidField(field, `must be at most ${MAX_ALT_TEXT_GRAPHEMES} characters (this one has ${length})`);
  }
  return trimmed;
}

/** Images as stored: at most MAX_IMAGES, each alt text trimmed (empty: null). */
export function cleanImages(images: readonly ImageInput[], field: string): StoredImage[] {
  if (images.length > MAX_IMAGES) throw invalidField(field, `must hold at most ${MAX_IMAGES} images (this one has ${images.length})`);
  return images.map((image, i) => {
    const altText = image.altText == null ? "" : cleanAltText(image.altText, `${field}[${i}].alt_text`);
    return { assetId: image.assetId, altText: altText === "" ? null : altText };
  });
}

/** Thread parts as stored: at most MAX_THREAD_PARTS, each caption a hand caption. */
export function cleanThread(parts: readonly PartInput[], field: string): StoredPart[] {
  if (parts.length > MAX_THREAD_PARTS) throw invalidField(field, `must hold at most ${MAX_THREAD_PARTS} parts (this one has ${parts.length})`);
  return parts.map((part, i) => ({
    caption: cleanHandCaption(part.caption, `${field}[${i}].caption`),
    images: cleanImages(part.images ?? [], `${field}[${i}].images`),
  }));
}

/** The post's first comment as stored: trimmed, null when absent or empty. */
export function cleanFirstComment(text: string | null | undefined, field = "first_comment"): string | null {
  if (text == null || text.trim() === "") return null;
  return cleanHandCaption(text, field);
}

/** The versions as stored, by platform (a known platform each); a version's `firstComment: ""` stays (it clears). */
export function cleanVariants(variants: Partial<Record<string, VariantInput>>, field = "variants"): StoredVariants {
  const out: StoredVariants = {};
  for (const [platform, variant] of Object.entries(variants)) {
    if (variant === undefined) continue;
    if (!(CONNECTION_PLATFORMS as readonly string[]).includes(platform)) {
      throw invalidField(`${field}.${platform}`, `is not a platform; use one of ${CONNECTION_PLATFORMS.join(", ")}`);
    }
    const at = `${field}.${platform}`;
    const stored: StoredVariant = {};
    if (variant.caption !== undefined) stored.caption = cleanHandCaption(variant.caption, `${at}.caption`);
    if (variant.images !== undefined) stored.images = cleanImages(variant.images, `${at}.images`);
    if (variant.thread !== undefined) stored.thread = cleanThread(variant.thread, `${at}.thread`);
    if (variant.firstComment !== undefined) stored.firstComment = variant.firstComment.trim() === "" ? "" : cleanHandCaption(variant.firstComment, `${at}.first_comment`);
    out[platform] = stored;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Ownership

/** 404 not_found unless every id is an asset of the account's library (one read). */
export async function assertOwnedAssets(deps: Pick<Deps, "store">, accountId: string, ids: readonly string[]): Promise<void> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return;
  const valid = wanted.filter(isUuid);
  const rows =
    valid.length === 0
      ? []
      : await deps.store.db.select({ id: assets.id }).from(assets).where(and(eq(assets.accountId, accountId), inArray(assets.id, valid))).all();
  if (rows.length !== wanted.length) {
    throw new AppError("not_found", "No asset with that id exists in this account: every image must be an asset of your library.");
  }
}

/**
 * Inside a write, before content refers to `ids`: locks every asset's row in one statement (in id order, as lockAsset
 * locks one), so a delete at the same moment either waits and then counts this content (409 asset_in_use) or removed
 * the row first. Answers false when one is gone (the caller answers 404, or reads again).
 */
export async function lockAssets(deps: Pick<Deps, "store">, accountId: string, ids: readonly string[]): Promise<boolean> {
  if (!deps.store.inWrite()) throw new Error("lockAssets() outside a write: the locks would end with their own statement");
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return true;
  if (!wanted.every(isUuid)) return false;
  const query = deps.store.db
    .select({ id: assets.id })
    .from(assets)
    .where(and(eq(assets.accountId, accountId), inArray(assets.id, wanted)))
    .orderBy(asc(assets.id));
  const rows = await forUpdate(deps.store.dialect, query).all();
  return rows.length === wanted.length;
}
