/**
 * Seeds: create, read, list (newest first, or ranked full-text search), patch, delete. Every read and write is scoped
 * to the account; other accounts' ids answer 404 exactly like unknown ones.
 */
import { and, eq } from "drizzle-orm";
import { assets, type SeedRow, seeds } from "../../db/schema";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { decodeSeedCursor, encodeSeedCursor } from "./cursor";
import { searchSeedSeqs } from "./search";
import { matchExpressionOf, searchTokens } from "./search-query";

type SeedDeps = Pick<Deps, "db" | "sqlite" | "clock">;

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

const SEED_COLUMNS = {
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
export function getOwnedSeed(deps: Pick<Deps, "db">, accountId: string, seedId: string): Seed {
  if (!isUuid(seedId)) throw notFound("seed");
  const row = deps.db
    .select(SEED_COLUMNS)
    .from(seeds)
    .where(and(eq(seeds.id, seedId), eq(seeds.accountId, accountId)))
    .get();
  if (!row) throw notFound("seed");
  return row;
}

type Tx = Parameters<Parameters<Deps["db"]["transaction"]>[0]>[0];

/** 404 not_found("asset") unless `assetId` is an asset of `accountId`. Runs on the client or inside a transaction. */
function assertOwnedAsset(deps: { db: Deps["db"] | Tx }, accountId: string, assetId: string): void {
  if (!isUuid(assetId)) throw notFound("asset");
  const row = deps.db
    .select({ id: assets.id })
    .from(assets)
    .where(and(eq(assets.id, assetId), eq(assets.accountId, accountId)))
    .get();
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
export function createSeed(deps: SeedDeps, accountId: string, input: SeedInput): Seed {
  const title = cleanTitle(input.title);
  const content = cleanContent(input.content);
  const category = cleanCategory(input.category);
  const imageUrl = cleanImageUrl(input.image_url);
  const imageAssetId = input.image_asset_id ?? null;
  const now = deps.clock.now();
  const seed: Seed = { id: newId(), accountId, title, content, category, imageAssetId, imageUrl, createdAt: now, updatedAt: now };
  // NB: check and insert in one immediate transaction, so an asset cannot be deleted between the two (the assets
  // module counts references inside its own immediate transaction).
  deps.db.transaction(
    (tx) => {
      if (imageAssetId !== null) assertOwnedAsset({ db: tx }, accountId, imageAssetId);
      tx.insert(seeds).values(seed).run();
    },
    { behavior: "immediate" },
  );
  return seed;
}

/** Changes the given fields of an owned seed; null clears category, image_asset_id and image_url. */
export function patchSeed(deps: SeedDeps, accountId: string, seedId: string, patch: SeedPatch): Seed {
  const current = getOwnedSeed(deps, accountId, seedId);
  const next: Seed = { ...current };
  if (patch.title !== undefined) next.title = cleanTitle(patch.title);
  if (patch.content !== undefined) next.content = cleanContent(patch.content);
  if (patch.category !== undefined) next.category = cleanCategory(patch.category);
  if (patch.image_url !== undefined) next.imageUrl = cleanImageUrl(patch.image_url);
  if (patch.image_asset_id !== undefined) next.imageAssetId = patch.image_asset_id;
  next.updatedAt = deps.clock.now();
  deps.db.transaction(
    (tx) => {
      if (patch.image_asset_id) assertOwnedAsset({ db: tx }, accountId, patch.image_asset_id);
      const updated = tx
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
    },
    { behavior: "immediate" },
  );
  return next;
}

/** Deletes an owned seed (its creations keep their own text). 404 when not owned. */
export function deleteSeed(deps: SeedDeps, accountId: string, seedId: string): void {
  if (!isUuid(seedId)) throw notFound("seed");
  const removed = deps.db
    .delete(seeds)
    .where(and(eq(seeds.id, seedId), eq(seeds.accountId, accountId)))
    .returning({ id: seeds.id })
    .all();
  if (removed.length === 0) throw notFound("seed");
}

interface RawSeedRow {
  seq: number;
  id: string;
  account_id: string;
  title: string;
  content: string;
  category: string | null;
  image_asset_id: string | null;
  image_url: string | null;
  created_at: number;
  updated_at: number;
}

function fromRaw(r: RawSeedRow): Seed {
  return {
    id: r.id,
    accountId: r.account_id,
    title: r.title,
    content: r.content,
    category: r.category,
    imageAssetId: r.image_asset_id,
    imageUrl: r.image_url,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface SeedPage {
  seeds: Seed[];
  nextCursor: string | null;
}

/**
 * Lists the account's seeds. With `search` (words and word prefixes of title, content and category, all required,
 * case- and accent-insensitive): best bm25 matches first (see search.ts for the ranking window). Without it, or when
 * it holds no word: newest first.
 */
export function listSeeds(
  deps: Pick<Deps, "sqlite">,
  accountId: string,
  opts: { search?: string | null; limit: number; cursor?: string | null },
): SeedPage {
  const tokens = opts.search ? searchTokens(opts.search) : null;
  const take = opts.limit + 1;
  let rows: RawSeedRow[];
  let next: (last: RawSeedRow) => string;
  if (tokens !== null) {
    const searchKey = matchExpressionOf(tokens);
    const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, searchKey) : null;
    const offset = cursor?.kind === "search" ? cursor.offset : 0;
    const seqs = searchSeedSeqs(deps.sqlite, accountId, tokens, offset, take);
    // NB: raw SQL for the page's rows by seq; the order is the search's, restored below.
    const found = seqs.length
      ? deps.sqlite
          .query<RawSeedRow, number[]>(`SELECT * FROM seeds WHERE seq IN (${seqs.map(() => "?").join(",")})`)
          .all(...seqs)
      : [];
    const bySeq = new Map(found.map((r) => [r.seq, r]));
    rows = seqs.map((seq) => bySeq.get(seq)).filter((r): r is RawSeedRow => r !== undefined);
    next = () => encodeSeedCursor({ kind: "search", offset: offset + opts.limit, search: searchKey });
  } else {
    const cursor = opts.cursor ? decodeSeedCursor(opts.cursor, null) : null;
    if (cursor?.kind === "newest") {
      rows = deps.sqlite
        .query<RawSeedRow, [string, number, number, number, number]>(
          `SELECT * FROM seeds WHERE account_id = ? AND (created_at < ? OR (created_at = ? AND seq < ?))
           ORDER BY created_at DESC, seq DESC LIMIT ?`,
        )
        .all(accountId, cursor.createdAt, cursor.createdAt, cursor.seq, take);
    } else {
      rows = deps.sqlite
        .query<RawSeedRow, [string, number]>("SELECT * FROM seeds WHERE account_id = ? ORDER BY created_at DESC, seq DESC LIMIT ?")
        .all(accountId, take);
    }
    next = (last) => encodeSeedCursor({ kind: "newest", createdAt: last.created_at, seq: last.seq });
  }
  const page = rows.slice(0, opts.limit);
  const last = page[page.length - 1];
  return { seeds: page.map(fromRaw), nextCursor: rows.length > opts.limit && last ? next(last) : null };
}
