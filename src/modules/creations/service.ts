/**
 * Creations: generate a social post from a seed (with a version per network when asked: platform-versions.ts),
 * regenerate it in place, read it back, render it as the API answers it (every image, the thread, the first comment,
 * the versions). Posts written by hand: edit.ts.
 *
 * The money-like flow of both writes (decisions.md §3): validate → ownership (404) → reserve (402) → model work →
 * write any new image file → ONE write transaction that inserts the new asset row, saves the creation
 * and captures the hold → on any failure, release the hold and delete what this request stored, so a failed call
 * leaves the creation, the library and the balance exactly as they were.
 *
 * API for other modules:
 *  - `getCreation(deps, accountId, id)` → Creation (404 for missing or other-account ids)
 *  - `findCreationRow(deps, accountId, id)` → the stored row or null (scheduling snapshots its content)
 *  - `creationToApi(deps, view)`, `viewOf(deps, row)`: a row as the API answers it
 */
import { and, count, desc, eq, inArray, lt, or } from "drizzle-orm";
import { jsonHoldsString } from "../../db/portable-sql";
import type { CreationRow } from "../../db/schema";
import type { StoredImage, StoredPart, StoredVariants } from "../../db/schema/post-content";
import { assetIdsOf } from "../../publishing/content";
import { assets, creations } from "../../db/tables";
import type { Deps } from "../../deps";
import {
  type AspectRatio,
  DEFAULT_ASPECT_RATIO,
  DEFAULT_MEDIA_STYLE,
  type BrandVoice,
  type GeneratedImage,
  type Generator,
  GenerationError,
  type MediaStyle,
  type SeedText,
} from "../../generation/generator";
import { isoAt } from "../../lib/clock";
import { graphemeCount } from "../../lib/graphemes";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { type CheckedImage, checkImageBytes } from "../assets/ingest";
import { assetFileName } from "../assets/file-name";
import { type AssetRecord, assetReferenceCount, assetUrl, findAsset, ingestFromUrl, lockAsset, registerAssetReferenceCheck, storeImage } from "../assets/service";
import { captureHold, releaseHold, reserveCredits } from "../credits/service";
import { getOwnedSeed } from "../seeds/service";
import { generatorFor } from "../instance-settings/service";
import { getVoice } from "../voice/service";
import { recordEvent } from "../../store/events";
import { platformVersions } from "./platform-versions";
import { HAND_SOURCE, keepVersion } from "./versions";
import {
  CREATION_TYPE,
  type Creation,
  DEFAULT_REGENERATE_PART,
  type GenerateBody,
  LIST_LIMIT_DEFAULT,
  type RegenerateBody,
  type RegeneratePart,
} from "./model";

// A creation blocks deleting an asset it uses anywhere: its first image (image_asset_id), any of its images, its
// thread parts' or its versions' images (decisions.md §4, §13).
registerAssetReferenceCheck("creations", async (deps, assetId) => {
  const row = await deps.store.db
    .select({ n: count() })
    .from(creations)
    .where(
      or(
        eq(creations.imageAssetId, assetId),
        jsonHoldsString(creations.images, assetId),
        jsonHoldsString(creations.thread, assetId),
        jsonHoldsString(creations.variants, assetId),
      ),
    )
    .get();
  return row?.n ?? 0;
});

/** Public path prefix of the preview page: `{base_url}/c/<id>`. */
export const PREVIEW_PATH = "/c";
/** Hold purposes, as they appear in the ledger. */
export const PURPOSE_GENERATE = "generate:social_post";
const PURPOSE_REGENERATE = (part: RegeneratePart) => `regenerate:${part}`;
/** Tries at getting a caption different from the previous one before giving up with 502. */
const MAX_CAPTION_TRIES = 4;

/** A creation row with the assets it shows, as the API renders it. */
export interface CreationView {
  row: CreationRow;
  /** The first image's asset (body.imageUrl), null when none. */
  asset: AssetRecord | null;
  /** Every asset the row uses (its images, its thread's and its versions'), by id. */
  assets: ReadonlyMap<string, AssetRecord>;
}

/** An existing library image the save will attach. */
interface LibraryImage {
  kind: "library";
  asset: AssetRecord;
  altText: string;
  /** Ingested from the seed's image_url by this request: removed again if the save fails. */
  ingestedNow: boolean;
}

/** A generated image not stored yet: its file and row are written by the save (assets' storeImage). */
interface NewImage {
  kind: "new";
  checked: CheckedImage;
  altText: string;
  fileName: string;
}

type ChosenImage = LibraryImage | NewImage;

// ---------------------------------------------------------------------------------------------------------------
// Rendering

/** The preview page URL of a creation. */
export function creationUrl(deps: Pick<Deps, "config">, id: string): string {
  return `${deps.config.baseUrl}${PREVIEW_PATH}/${id}`;
}

type ApiBody = Creation["body"];

function imagesToApi(deps: Pick<Deps, "config">, images: readonly StoredImage[], assets: ReadonlyMap<string, AssetRecord>): ApiBody["images"] {
  const out: ApiBody["images"] = [];
  for (const image of images) {
    const asset = assets.get(image.assetId);
    // NB: an asset in use cannot be deleted; one missing here was deleted in a race and is left out.
    if (asset) out.push({ assetId: asset.id, url: assetUrl(deps, asset), altText: image.altText ?? "" });
  }
  return out;
}

function threadToApi(deps: Pick<Deps, "config">, parts: readonly StoredPart[], assets: ReadonlyMap<string, AssetRecord>): ApiBody["thread"] {
  return parts.map((part) => ({ caption: part.caption, images: imagesToApi(deps, part.images, assets) }));
}

/** A post's stored versions as the API answers them (camelCase, images with their URLs). */
export function variantsToApi(deps: Pick<Deps, "config">, variants: StoredVariants, assets: ReadonlyMap<string, AssetRecord>): ApiBody["variants"] {
  const out: Record<string, ApiBody["variants"][keyof ApiBody["variants"]]> = {};
  for (const [platform, version] of Object.entries(variants)) {
    out[platform] = {
      ...(version.caption !== undefined ? { caption: version.caption } : {}),
      ...(version.images !== undefined ? { images: imagesToApi(deps, version.images, assets) } : {}),
      ...(version.thread !== undefined ? { thread: threadToApi(deps, version.thread, assets) } : {}),
      ...(version.firstComment !== undefined ? { firstComment: version.firstComment } : {}),
    };
  }
  return out as ApiBody["variants"];
}

/** The content fields of a post's body (images, thread, first comment, versions) as the API answers them. */
export function contentToApi(
  deps: Pick<Deps, "config">,
  content: Pick<CreationRow, "images" | "thread" | "firstComment" | "variants">,
  assets: ReadonlyMap<string, AssetRecord>,
): Pick<ApiBody, "images" | "thread" | "firstComment" | "variants"> {
  return {
    images: imagesToApi(deps, content.images, assets),
    thread: threadToApi(deps, content.thread, assets),
    firstComment: content.firstComment,
    variants: variantsToApi(deps, content.variants, assets),
  };
}

/** Renders a stored creation as the API answers it (decisions.md §6, §13). */
export function creationToApi(deps: Pick<Deps, "config">, view: CreationView): Creation {
  const { row, asset, assets } = view;
  return {
    id: row.id,
    type: CREATION_TYPE,
    url: creationUrl(deps, row.id),
    body: {
      type: CREATION_TYPE,
      caption: row.caption,
      altText: asset ? (row.altText ?? "") : null,
      imageUrl: asset ? assetUrl(deps, asset) : null,
      ...contentToApi(deps, row, assets),
    },
    seedId: row.seedId,
    imageAssetId: row.imageAssetId,
    editedByHand: { caption: row.captionSource === HAND_SOURCE, altText: asset !== null && row.altTextSource === HAND_SOURCE },
    aspectRatio: row.aspectRatio,
    mediaStyle: row.mediaStyle,
    createdAt: isoAt(row.createdAt),
    updatedAt: isoAt(row.updatedAt),
  };
}

/** The account's assets `ids` by id (ids that are gone: absent), in one read. */
export async function assetsById(deps: Pick<Deps, "store">, accountId: string, ids: readonly string[]): Promise<Map<string, AssetRecord>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await deps.store.db.select().from(assets).where(and(eq(assets.accountId, accountId), inArray(assets.id, wanted))).all();
  return new Map(rows.map((r) => [r.id, r]));
}

/** What the API shows of `row`: it and every asset it uses. */
export async function viewOf(deps: Pick<Deps, "store">, row: CreationRow): Promise<CreationView> {
  const ids = assetIdsOf(row);
  if (row.imageAssetId) ids.push(row.imageAssetId);
  const found = await assetsById(deps, row.accountId, ids);
  return { row, asset: row.imageAssetId ? (found.get(row.imageAssetId) ?? null) : null, assets: found };
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

/** The account's creation row, or null (also for ids that are not UUIDs). */
export async function findCreationRow(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<CreationRow | null> {
  if (!isUuid(id)) return null;
  return (await deps.store.db.select().from(creations).where(and(eq(creations.id, id), eq(creations.accountId, accountId))).get()) ?? null;
}

/** The captions of the account's creations `ids` (ids that are not UUIDs or are gone: absent), in one read. */
export async function creationCaptions(deps: Pick<Deps, "store">, accountId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter(isUuid))];
  if (wanted.length === 0) return new Map();
  const rows = await deps.store.db
    .select({ id: creations.id, caption: creations.caption })
    .from(creations)
    .where(and(eq(creations.accountId, accountId), inArray(creations.id, wanted)))
    .all();
  return new Map(rows.map((r) => [r.id, r.caption]));
}

/** The account's creation; 404 not_found for a missing id or another account's (identical answers). */
export async function getCreation(deps: Deps, accountId: string, id: string): Promise<Creation> {
  const row = await findCreationRow(deps, accountId, id);
  if (!row) throw notFound("creation");
  return creationToApi(deps, await viewOf(deps, row));
}

/** Any account's creation by id, for the public preview page (addressed by its unguessable id). */
export async function findCreationForPreview(deps: Deps, id: string): Promise<(CreationView & { seedTitle: string | null }) | null> {
  if (!isUuid(id)) return null;
  const row = await deps.store.db.select().from(creations).where(eq(creations.id, id)).get();
  if (!row) return null;
  return { ...(await viewOf(deps, row)), seedTitle: (await seedTextOrNull(deps, row.accountId, row.seedId))?.title ?? null };
}

function encodeCursor(id: string): string {
  return Buffer.from(id).toString("base64url");
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!isUuid(id)) throw invalidField("cursor", "is not a cursor this API returned");
  return id;
}

/**
 * One page of the account's creations, newest first (UUIDv7 ids sort by creation time, even under a frozen clock),
 * optionally only those of one seed.
 */
export async function listCreations(
  deps: Deps,
  accountId: string,
  opts: { seedId?: string; limit?: number; cursor?: string },
): Promise<{ creations: Creation[]; nextCursor: string | null }> {
  const limit = opts.limit ?? LIST_LIMIT_DEFAULT;
  const conditions = [eq(creations.accountId, accountId)];
  if (opts.seedId !== undefined) conditions.push(eq(creations.seedId, opts.seedId));
  if (opts.cursor) conditions.push(lt(creations.id, decodeCursor(opts.cursor)));
  const rows = await deps.store.db
    .select()
    .from(creations)
    .where(and(...conditions))
    .orderBy(desc(creations.id))
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const views: Creation[] = [];
  for (const row of page) views.push(creationToApi(deps, await viewOf(deps, row)));
  return {
    creations: views,
    nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers shared by generate and regenerate

export { graphemeCount };

/** Turns a generator failure into 502 generation_failed (retryable); anything else is a bug and stays a 500. */
async function generating<T>(deps: Deps, generator: Generator, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GenerationError) {
      deps.log.warn("generation failed", { what, generator: generator.name, error: error.message });
      throw new AppError("generation_failed", `The ${what} could not be generated; nothing was charged or changed. Try again.`, {
        retryable: true,
      });
    }
    throw error;
  }
}

function seedTextOf(seed: { title: string; content: string; category: string | null }): SeedText {
  return { title: seed.title, content: seed.content, category: seed.category };
}

/** The seed's text, or null when the seed is gone (a creation outlives its seed). */
async function seedTextOrNull(deps: Deps, accountId: string, seedId: string | null): Promise<SeedText | null> {
  if (seedId === null) return null;
  try {
    return seedTextOf(await getOwnedSeed(deps, accountId, seedId));
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return null;
    throw error;
  }
}

/** What the generator knows of a creation whose seed was deleted: its own caption stands in for the seed. */
function seedTextFromCaption(caption: string): SeedText {
  const firstLine = caption.split("\n")[0]?.trim() || caption;
  return { title: firstLine.slice(0, 120), content: caption, category: null };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The first banned word that appears in `caption` as a whole word (case-insensitive, Unicode-aware), or null. Every
 * generator already honours the voice; this check at the boundary keeps the promise whatever the generator does.
 */
export function bannedWordIn(caption: string, bannedWords: readonly string[]): string | null {
  for (const word of bannedWords) {
    const trimmed = word.trim();
    if (!trimmed) continue;
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(trimmed)}(?![\\p{L}\\p{N}])`, "iu");
    if (pattern.test(caption)) return trimmed;
  }
  return null;
}

/** Writes a caption that fits the limit and (on regenerate) differs from `previous`; 502 otherwise. */
async function writeCaption(
  deps: Deps,
  input: { generator: Generator; seed: SeedText; voice: BrandVoice; variant: number; previous?: string; changeInstructions?: string; maxGraphemes?: number },
): Promise<string> {
  const maxGraphemes = input.maxGraphemes ?? deps.config.captionMaxGraphemes;
  return generating(deps, input.generator, "caption", async () => {
    for (let attempt = 0; attempt < MAX_CAPTION_TRIES; attempt++) {
      const caption = (
        await input.generator.writeCaption({
          seed: input.seed,
          voice: input.voice,
          maxGraphemes,
          variant: input.variant + attempt,
          ...(input.previous !== undefined ? { previousCaption: input.previous } : {}),
          ...(input.changeInstructions ? { changeInstructions: input.changeInstructions } : {}),
        })
      ).trim();
      if (!caption) throw new GenerationError("the generator returned an empty caption");
      if (graphemeCount(caption) > maxGraphemes) {
        throw new GenerationError(`the generator returned a caption over ${maxGraphemes} graphemes`);
      }
      if (caption === input.previous) continue;
      if (bannedWordIn(caption, input.voice.bannedWords)) continue;
      return caption;
    }
    throw new GenerationError("the generator kept returning the previous caption or a banned word");
  });
}

/** Reads a stored asset's bytes. */
async function assetBytes(deps: Deps, asset: AssetRecord): Promise<Uint8Array> {
  return deps.storage.read(asset.storageKey);
}

/**
 * Alt text for an existing library image, written by the generator (vision for openai). `named`: the request named the
 * asset itself (see assetGone).
 */
async function describeAsset(deps: Deps, generator: Generator, asset: AssetRecord, seed: SeedText, voice: BrandVoice, named: boolean): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await assetBytes(deps, asset);
  } catch (error) {
    // Deleted since it was read (the file goes right after the row): answered as the save answers it.
    if (!(await findAsset(deps, asset.accountId, asset.id))) throw assetGone(named);
    throw error;
  }
  return generating(deps, generator, "alt text", () => generator.describeImage({ bytes, mimeType: asset.mimeType, seed, voice }));
}

/** Renders an image and checks its bytes like any image entering the library (nothing is stored yet). */
async function renderImage(
  deps: Deps,
  input: {
    generator: Generator;
    seed: SeedText;
    voice: BrandVoice;
    aspectRatio: AspectRatio;
    mediaStyle: MediaStyle;
    caption: string;
    variant: number;
    previousSha256?: string;
    changeInstructions?: string;
  },
): Promise<NewImage> {
  return generating(deps, input.generator, "image", async () => {
    const image: GeneratedImage = await input.generator.renderImage({
      seed: input.seed,
      voice: input.voice,
      aspectRatio: input.aspectRatio,
      mediaStyle: input.mediaStyle,
      caption: input.caption,
      variant: input.variant,
      ...(input.previousSha256 ? { previousImageSha256: input.previousSha256 } : {}),
      ...(input.changeInstructions ? { changeInstructions: input.changeInstructions } : {}),
    });
    let checked: CheckedImage;
    try {
      checked = await checkImageBytes(deps, image.bytes);
    } catch (error) {
      // A generated image the library would refuse (too large, not an image) is the generator's failure.
      if (error instanceof AppError) throw new GenerationError(`generated image refused: ${error.code}`, { cause: error });
      throw error;
    }
    if (input.previousSha256 && checked.sha256 === input.previousSha256) {
      throw new GenerationError("the generator returned the previous image again");
    }
    const altText = image.altText.trim() || `Image for ${input.seed.title}`;
    return { kind: "new", checked, altText, fileName: assetFileName(checked.ext, generatedFileName(input.seed)) };
  });
}

/** A readable file name for a generated card, from the seed title. */
function generatedFileName(seed: SeedText): string {
  const slug = seed.title
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `${slug || "seedcast"}-card`;
}

/**
 * The library asset for a seed's image_url: the one already ingested from that URL (the source is never fetched
 * again, interface.md), else a fresh ingest under every ingest check (a refusal throws its 400 reason).
 */
async function assetForSeedUrl(deps: Deps, accountId: string, url: string): Promise<LibraryImage> {
  const existing = await deps.store.db
    .select()
    .from(assets)
    .where(and(eq(assets.accountId, accountId), eq(assets.source, "url"), eq(assets.sourceUrl, url)))
    .orderBy(desc(assets.createdAt))
    .limit(1)
    .get();
  if (existing) return { kind: "library", asset: existing, altText: "", ingestedNow: false };
  const asset = await ingestFromUrl(deps, accountId, { url });
  return { kind: "library", asset, altText: "", ingestedNow: true };
}

/**
 * Undoes what a failed request stored: an asset ingested for it from the seed's image_url. NB: a concurrent generate
 * of the same seed may already have found and used that asset; it is only removed while nothing refers to it, counted
 * with the asset's row locked (lockAsset), so a generate saving it at the same moment either is counted or finds it
 * gone (useLibraryAsset), on PostgreSQL too.
 */
async function discard(deps: Deps, image: ChosenImage | null): Promise<void> {
  if (image?.kind !== "library" || !image.ingestedNow) return;
  const { id, accountId, storageKey } = image.asset;
  try {
    const removed = await deps.store.write(async (tx) => {
      if (!(await lockAsset(deps, accountId, id))) return false;
      if ((await assetReferenceCount(deps, id)) > 0) return false;
      await tx.delete(assets).where(and(eq(assets.id, id), eq(assets.accountId, accountId))).run();
      return true;
    });
    if (removed) await deps.storage.delete(storageKey);
  } catch (error) {
    deps.log.error("could not discard an asset of a failed creation save", { assetId: id, error: String(error) });
  }
}

/**
 * Inside the save's write, before a creation refers to a library asset: locks the asset's row (lockAsset) and refuses
 * when it is gone, deleted since it was read (DELETE /assets, or a failed request's discard). With the lock a delete
 * running at the same moment either waits and then counts this creation (409) or has removed the row first; the
 * creation never points at a deleted asset. An asset the request named itself answers as when it was checked (404);
 * one the seed brought was taken away by someone else (502, retryable, nothing charged).
 */
async function useLibraryAsset(deps: Deps, accountId: string, image: LibraryImage, named: boolean): Promise<void> {
  if (!(await lockAsset(deps, accountId, image.asset.id))) throw assetGone(named);
}

/** The refusal for a library asset deleted while a generate was using it (useLibraryAsset). */
function assetGone(named: boolean): AppError {
  if (named) return notFound("asset");
  return new AppError("generation_failed", "The seed's image was deleted while the creation was being saved; nothing was charged. Try again.", {
    retryable: true,
  });
}

/**
 * Saves in one write transaction: `write` (creation insert/update + capture) runs with the attached asset. A new
 * image goes through the library's own door: its file is written first, then `write` and its row share the
 * transaction; if anything throws, the row is not written and the file is deleted again (no orphan). `write` runs
 * inside the store's write (its queries through `deps.store.db` join it) and awaits only the database.
 */
async function save<T>(
  deps: Deps,
  accountId: string,
  image: ChosenImage | null,
  write: (asset: AssetRecord | null) => Promise<T>,
): Promise<{ result: T; asset: AssetRecord | null }> {
  if (image?.kind !== "new") {
    const asset = image?.asset ?? null;
    return { result: await deps.store.write(() => write(asset)), asset };
  }
  let result: { value: T } | null = null;
  const asset = await storeImage(deps, accountId, image.checked, { fileName: image.fileName, source: "generated" }, async (record) => {
    result = { value: await write(record) };
  });
  if (!result) throw new Error("storeImage returned without running the save");
  return { result: (result as { value: T }).value, asset };
}

/**
 * Records `creation.generated` for event webhooks inside the save's transaction (generate and regenerate alike:
 * `operation` tells them apart), with the creation as GET /creations/{id} shows it.
 */
async function recordCreationEvent(deps: Deps, view: CreationView, creditsCharged: number, operation: "generate" | "regenerate"): Promise<void> {
  await recordEvent(deps.store.db, deps.clock.now(), view.row.accountId, "creation.generated", () => ({
    creation: creationToApi(deps, view),
    creditsCharged,
    operation,
  }));
}

/** The view of `row` whose first image is `asset` (known already); the other assets it uses are read. */
async function viewWith(deps: Pick<Deps, "store">, row: CreationRow, asset: AssetRecord | null): Promise<CreationView> {
  const others = assetIdsOf(row).filter((id) => id !== asset?.id);
  const found = others.length > 0 ? await assetsById(deps, row.accountId, others) : new Map<string, AssetRecord>();
  if (asset) found.set(asset.id, asset);
  return { row, asset, assets: found };
}

// ---------------------------------------------------------------------------------------------------------------
// Generate

/**
 * POST /creations/generate. Checks in the order of decisions.md §1, reserves the flat price, writes the caption and
 * chooses the image by the precedence of decisions.md §6, then saves and captures in one transaction.
 */
export async function generateCreation(
  deps: Deps,
  accountId: string,
  body: GenerateBody,
): Promise<{ creation: Creation; creditsCharged: number }> {
  // The model server set on the Instance page applies from the next generate on, on every replica.
  const generator = await generatorFor(deps);
  if (body.include_visual === true && body.image_asset_id !== undefined) {
    throw new AppError("invalid_request", "Send either include_visual or image_asset_id, not both.", {
      details: [{ field: "image_asset_id", problem: "cannot be combined with include_visual: true" }],
    });
  }
  const aspectRatio = (body.aspect_ratio ?? DEFAULT_ASPECT_RATIO) as AspectRatio;
  const mediaStyle = (body.media_style ?? DEFAULT_MEDIA_STYLE) as MediaStyle;

  const seedRow = await getOwnedSeed(deps, accountId, body.seed_id);
  const requestedAsset = body.image_asset_id !== undefined ? await findAsset(deps, accountId, body.image_asset_id) : null;
  if (body.image_asset_id !== undefined && !requestedAsset) throw notFound("asset");

  const price = deps.config.prices.generateSocialPost;
  const holdId = await reserveCredits(deps, accountId, price, PURPOSE_GENERATE);
  let image: ChosenImage | null = null;
  try {
    const seed = seedTextOf(seedRow);
    const voice = await getVoice(deps, accountId);
    const caption = await writeCaption(deps, { generator, seed, voice, variant: 0 });
    const variants = await platformVersions(deps, accountId, body.platforms ?? [], caption, (maxGraphemes) =>
      writeCaption(deps, { generator, seed, voice, variant: 0, maxGraphemes }),
    );

    if (requestedAsset) {
      image = { kind: "library", asset: requestedAsset, altText: "", ingestedNow: false };
    } else if (body.include_visual === true) {
      image = await renderImage(deps, { generator, seed, voice, aspectRatio, mediaStyle, caption, variant: 0 });
    } else if (seedRow.imageAssetId) {
      const seedAsset = await findAsset(deps, accountId, seedRow.imageAssetId);
      if (seedAsset) image = { kind: "library", asset: seedAsset, altText: "", ingestedNow: false };
    }
    if (!image && seedRow.imageUrl) image = await assetForSeedUrl(deps, accountId, seedRow.imageUrl);
    if (image?.kind === "library") image.altText = await describeAsset(deps, generator, image.asset, seed, voice, requestedAsset !== null);

    const now = deps.clock.now();
    const base = {
      id: newId(),
      accountId,
      type: CREATION_TYPE,
      seedId: seedRow.id,
      caption,
      captionSource: generator.name,
      altText: image ? image.altText : null,
      altTextSource: image ? generator.name : null,
      aspectRatio,
      mediaStyle,
      variant: 0,
      createdAt: now,
      updatedAt: now,
    };
    const chosen = image;
    const saved = await save(deps, accountId, image, async (asset) => {
      if (chosen?.kind === "library") await useLibraryAsset(deps, accountId, chosen, requestedAsset !== null);
      const images = asset ? [{ assetId: asset.id, altText: base.altText }] : [];
      const row: CreationRow = { ...base, imageAssetId: asset?.id ?? null, images, thread: [], firstComment: null, variants };
      await deps.store.db.insert(creations).values(row).run();
      const charged = await captureHold(deps, holdId, `creation:${row.id}`);
      const view = await viewWith(deps, row, asset);
      await recordCreationEvent(deps, view, charged, "generate");
      return { view, charged };
    });
    return { creation: creationToApi(deps, saved.result.view), creditsCharged: saved.result.charged };
  } catch (error) {
    await releaseHold(deps, holdId);
    await discard(deps, image);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Regenerate

/**
 * `current` with the captions of `platforms`' versions replaced by `written` (a platform absent from `written` has the
 * post's caption: its version loses its caption, and a version left empty goes).
 */
function withVersions(current: StoredVariants, platforms: readonly string[], written: StoredVariants): StoredVariants {
  const out: StoredVariants = { ...current };
  for (const platform of platforms) {
    const { caption: _old, ...rest } = out[platform] ?? {};
    const caption = written[platform]?.caption;
    const next = caption !== undefined ? { ...rest, caption } : rest;
    if (Object.keys(next).length === 0) delete out[platform];
    else out[platform] = next;
  }
  return out;
}

/** The price of regenerating `part` (decisions.md §3: both = caption + image at the bundled rate). */
export function regeneratePrice(deps: Pick<Deps, "config">, part: RegeneratePart): number {
  const prices = deps.config.prices;
  if (part === "caption") return prices.regenerateCaption;
  if (part === "image") return prices.regenerateImage;
  return prices.regenerateBoth;
}

/**
 * Regenerates (and hand edits, edit.ts) of one creation run one after another in this process: each must differ from the result of the one
 * before, which only holds if they do not overlap. The conditional update on `variant` is the backstop.
 */
const regenerateQueues = new Map<string, Promise<unknown>>();

export async function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = regenerateQueues.get(key) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(work);
  const settled = run.catch(() => undefined);
  regenerateQueues.set(key, settled);
  try {
    return await run;
  } finally {
    if (regenerateQueues.get(key) === settled) regenerateQueues.delete(key);
  }
}

/**
 * POST /creations/regenerate: rewrites the caption, the image, or both, in place (same id), all or nothing.
 * An image failure leaves the creation exactly as it was and releases the hold; no file or asset is left behind.
 */
export async function regenerateCreation(
  deps: Deps,
  accountId: string,
  body: RegenerateBody,
): Promise<{ creation: Creation; creditsCharged: number }> {
  const generator = await generatorFor(deps);
  const part = body.parts ?? DEFAULT_REGENERATE_PART;
  if (!(await findCreationRow(deps, accountId, body.creation_id))) throw notFound("creation");
  return serialized(body.creation_id, async () => {
    const current = await findCreationRow(deps, accountId, body.creation_id);
    if (!current) throw notFound("creation");
    const price = regeneratePrice(deps, part);
    const holdId = await reserveCredits(deps, accountId, price, PURPOSE_REGENERATE(part));
    let image: ChosenImage | null = null;
    try {
      const seed = (await seedTextOrNull(deps, accountId, current.seedId)) ?? seedTextFromCaption(current.caption);
      const voice = await getVoice(deps, accountId);
      const variant = current.variant + 1;
      const changeInstructions = body.change_instructions?.trim() || undefined;
      const currentAsset = current.imageAssetId ? await findAsset(deps, accountId, current.imageAssetId) : null;

      let caption = current.caption;
      if (part !== "image") {
        caption = await writeCaption(deps, { generator, seed, voice, variant, previous: current.caption, changeInstructions });
      }
      const variants = body.platforms
        ? withVersions(
            current.variants,
            body.platforms,
            await platformVersions(deps, accountId, body.platforms, caption, (maxGraphemes) =>
              writeCaption(deps, { generator, seed, voice, variant, maxGraphemes, ...(changeInstructions ? { changeInstructions } : {}) }),
            ),
          )
        : current.variants;
      if (part !== "caption") {
        image = await renderImage(deps, {
          generator,
          seed,
          voice,
          aspectRatio: current.aspectRatio as AspectRatio,
          mediaStyle: current.mediaStyle as MediaStyle,
          caption,
          variant,
          ...(currentAsset ? { previousSha256: currentAsset.sha256 } : {}),
          ...(changeInstructions ? { changeInstructions } : {}),
        });
      }

      const updatedAt = deps.clock.now();
      const saved = await save(deps, accountId, image, async (asset) => {
        const changes = {
          caption,
          variant,
          variants,
          updatedAt,
          ...(part !== "image" ? { captionSource: generator.name } : {}),
          ...(image && asset
            ? {
                imageAssetId: asset.id,
                altText: image.altText,
                altTextSource: generator.name,
                // images[0] mirrors the image (db/schema/post-content.ts): the new one replaces the first, the others stay.
                images: [{ assetId: asset.id, altText: image.altText }, ...current.images.slice(1)],
              }
            : {}),
        };
        await keepVersion(deps, current);
        const updated = await deps.store.db
          .update(creations)
          .set(changes)
          .where(and(eq(creations.id, current.id), eq(creations.accountId, accountId), eq(creations.variant, current.variant)))
          .returning()
          .all();
        const row = updated[0];
        if (!row) {
          // NB: only reachable if another process regenerated the same creation meanwhile; nothing is saved.
          throw new AppError("generation_failed", "The creation changed while it was being regenerated; nothing was charged. Try again.", {
            retryable: true,
          });
        }
        const charged = await captureHold(deps, holdId, `creation:${row.id}`);
        const view = await viewWith(deps, row, (image && asset) || currentAsset);
        await recordCreationEvent(deps, view, charged, "regenerate");
        return { view, charged };
      });
      return { creation: creationToApi(deps, saved.result.view), creditsCharged: saved.result.charged };
    } catch (error) {
      await releaseHold(deps, holdId);
      await discard(deps, image);
      throw error;
    }
  });
}
