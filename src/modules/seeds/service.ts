/**
 * Seeds: create, read, list (newest first, or ranked full-text search), patch, delete. Every read and write is scoped
 * to the account; other accounts' ids answer 404 exactly like unknown ones.
 */
import { and, eq } from "drizzle-orm";
import type { SeedRow } from "../../db/schema";
import { forUpdate } from "../../db/portable-sql";
import type { Store, StoreDb } from "../../db/store";
import { assets, seeds } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { seedSearchOf } from "./seed-search";

type SeedDeps = Pick<Deps, "store" | "clock">;

/** A stored seed as services see it (camelCase; `seq` is internal and left out). */
export type Seed = Omit<SeedRow, "seq">;

/** A seed as the API answers it (decisions.md §5). */
export interface SeedView {
  id: string;
  title: string;
  content: string;
  category: string | null;
  image_asset_id: string | null;
  image_url: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SeedInput {
  title: string;
  content: string;
  category?: string | null;
  image_asset_id?: string | null;
  image_url?: string | null;
}

export type SeedPatch = Partial<SeedInput>;

/**
 * The columns of a Seed. NB: a function, not a constant: `seeds` is the dialect's table only once bootstrap has run
 * useDialect (db/tables.ts), after this module was loaded.
 */
function seedColumns() {
  return {
    id: seeds.id,
    accountId: seeds.accountId,
    title: seeds.title,
    content: seeds.content,
    category: seeds.category,
    imageAssetId: seeds.imageAssetId,
    imageUrl: seeds.imageUrl,
    createdAt: seeds.createdAt,
    updatedAt: seeds.updatedAt,
  };
}

/** The API shape of a seed. */
export function seedView(seed: Seed): SeedView {
  return {
    id: seed.id,
    title: seed.title,
    content: seed.content,
    category: seed.category,
    image_asset_id: seed.imageAssetId,
    image_url: seed.imageUrl,
    createdAt: isoAt(seed.createdAt),
    updatedAt: isoAt(seed.updatedAt),
  };
}

/**
 * The seed `seedId` of `accountId`, or 404 not_found("seed") when it does not exist or belongs to another account.
 * For other modules (creations) as well as the seeds routes.
 */
export async function getOwnedSeed(deps: Pick<Deps, "store">, accountId: string, seedId: string): Promise<Seed> {
  if (!isUuid(seedId)) throw notFound("seed");
  const row = await deps.store.db
    .select(seedColumns())
    .from(seeds)
    .where(and(eq(seeds.id, seedId), eq(seeds.accountId, accountId)))
    .get();
  if (!row) throw notFound("seed");
  return row;
}

/**
 * 404 not_found("asset") unless `assetId` is an asset of `accountId`. Runs inside the seed's write, and the asset's row
 * stays locked (PostgreSQL) until the seed is saved, so a concurrent deleteAsset (which locks it too before counting
 * references) cannot remove it in between.
 */
async function assertOwnedAsset(dialect: Store["dialect"], db: StoreDb, accountId: string, assetId: string): Promise<void> {
  if (!isUuid(assetId)) throw notFound("asset");
  const row = await forUpdate(dialect, db.select({ id: assets.id }).from(assets).where(and(eq(assets.id, assetId), eq(assets.accountId, accountId)))).get();
  if (!row) throw notFound("asset");
}

/**
 * NB: SQLite's length() stops at a NUL, so a title starting with one failed the table's CHECK (a 500). No text field
 * has a use for NUL: it is refused here too, for callers that do not come through the HTTP body parser.
 */
function refuseNul(field: string, value: string): void {
  if (value.includes("\u0000")) throw invalidField(field, "must not contain NUL characters");
}

function cleanTitle(title: string): string {
  refuseNul("title", title);
  const value = title.trim();
  if (!value) throw invalidField("title", "must not be blank");
  return value;
}

function cleanContent(content: string): string {
  refuseNul("content", content);
  // NB: stored as written (interface.md); only an all-blank text is refused.
  if (!content.trim()) throw invalidField("content", "must not be blank");
  return content;
}

function cleanCategory(category: string | null | undefined): string | null {
  if (category) refuseNul("category", category);
  const value = category?.trim();
  return value ? value : null;
}

function cleanImageUrl(url: string | null | undefined): string | null {
  const value = url?.trim();
  if (!value) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalidField("image_url", "must be an http(s) URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw invalidField("image_url", "must be an http(s) URL");
  return value;
}

/** Saves a new seed (free; runs no model). 404 when `image_asset_id` is not an asset of this account. */
export async function createSeed(deps: SeedDeps, accountId: string, input: SeedInput): Promise<Seed> {
  const title = cleanTitle(input.title);
  const content = cleanContent(input.content);
  const category = cleanCategory(input.category);
  const imageUrl = cleanImageUrl(input.image_url);
  const imageAssetId = input.image_asset_id ?? null;
  const now = deps.clock.now();
  const seed: Seed = { id: newId(), accountId, title, content, category, imageAssetId, imageUrl, createdAt: now, updatedAt: now };
  // NB: check and insert in one write, so an asset cannot be deleted between the two (the assets module counts
  // references inside its own write).
  await deps.store.write(async (tx) => {
    if (imageAssetId !== null) await assertOwnedAsset(deps.store.dialect, tx, accountId, imageAssetId);
    await tx.insert(seeds).values(seed).run();
  });
  return seed;
}

/** Changes the given fields of an owned seed; null clears category, image_asset_id and image_url. */
export async function patchSeed(deps: SeedDeps, accountId: string, seedId: string, patch: SeedPatch): Promise<Seed> {
  const current = await getOwnedSeed(deps, accountId, seedId);
  const next: Seed = { ...current };
  if (patch.title !== undefined) next.title = cleanTitle(patch.title);
  if (patch.content !== undefined) next.content = cleanContent(patch.content);
  if (patch.category !== undefined) next.category = cleanCategory(patch.category);
  if (patch.image_url !== undefined) next.imageUrl = cleanImageUrl(patch.image_url);
  if (patch.image_asset_id !== undefined) next.imageAssetId = patch.image_asset_id;
  next.updatedAt = deps.clock.now();
  await deps.store.write(async (tx) => {
    if (patch.image_asset_id) await assertOwnedAsset(deps.store.dialect, tx, accountId, patch.image_asset_id);
    const updated = await tx
      .update(seeds)
      .set({
        title: next.title,
        content: next.content,
        category: next.category,
        imageAssetId: next.imageAssetId,
        imageUrl: next.imageUrl,
        updatedAt: next.updatedAt,
      })
      .where(and(eq(seeds.id, seedId), eq(seeds.accountId, accountId)))
      .returning({ id: seeds.id })
      .all();
    // Deleted meanwhile: answer as for any missing seed.
    if (updated.length === 0) throw notFound("seed");
  });
  return next;
}

/** Deletes an owned seed (its creations keep their own text). 404 when not owned. */
export async function deleteSeed(deps: SeedDeps, accountId: string, seedId: string): Promise<void> {
  if (!isUuid(seedId)) throw notFound("seed");
  const removed = await deps.store.write((tx) =>
    tx
      .delete(seeds)
      .where(and(eq(seeds.id, seedId), eq(seeds.accountId, accountId)))
      .returning({ id: seeds.id })
      .all(),
  );
  if (removed.length === 0) throw notFound("seed");
}

export interface SeedPage {
  seeds: Seed[];
  nextCursor: string | null;
}

/**
 * Lists the account's seeds. With `search` (words and word prefixes of title, content and category, all required,
 * case- and accent-insensitive): best matches first (see search.ts for the ranking window). Without it, or when it
 * holds no word: newest first. SQLite (FTS5, bm25) or PostgreSQL (tsvector) by the store's dialect (seed-search.ts).
 */
export function listSeeds(
  deps: Pick<Deps, "store">,
  accountId: string,
  opts: { search?: string | null; limit: number; cursor?: string | null },
): Promise<SeedPage> {
  return seedSearchOf(deps.store).list(accountId, opts);
}
