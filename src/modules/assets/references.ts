/**
 * Which rows refer to an asset, so DELETE can answer 409 asset_in_use instead of orphaning a seed, creation or post.
 *
 * Chosen design (documented for the seeds, creations and scheduling modules):
 *  - By default every table with an `image_asset_id` (or `imageAssetId`) column counts: any row holding the asset's
 *    id blocks deletion. Found by introspecting the schema, so a new table needs no change here.
 *  - A module whose rule is narrower (e.g. only *pending* scheduled posts block) registers a check for its table with
 *    `registerAssetReferenceCheck(table, fn)`; that check then replaces the default for that table.
 *  - A module that refers to assets through some other column registers a check the same way.
 * Checks run inside the DELETE's immediate transaction and must be synchronous.
 */
import type { Deps } from "../../deps";

/** Counts the rows of one table that still need `assetId`. Synchronous: it runs inside a transaction. */
export type AssetReferenceCheck = (deps: Deps, assetId: string) => number;

/** Column names that hold an asset reference by convention. */
export const ASSET_REFERENCE_COLUMNS = ["image_asset_id", "imageAssetId"] as const;

const registered = new Map<string, AssetReferenceCheck>();

/**
 * Replaces the default check for `table` (or adds one for a table without a conventional column).
 * Call once at module load; registering the same table again replaces the earlier check.
 */
export function registerAssetReferenceCheck(table: string, check: AssetReferenceCheck): void {
  registered.set(table, check);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** How many rows, in every table, refer to `assetId`. 0 means the asset may be deleted. */
export function assetReferenceCount(deps: Deps, assetId: string): number {
  const tables = deps.sqlite
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'assets'",
    )
    .all()
    .map((row) => row.name);
  let total = 0;
  for (const table of tables) {
    const custom = registered.get(table);
    if (custom) {
      total += custom(deps, assetId);
      continue;
    }
    const columns = deps.sqlite
      .query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)")
      .all(table)
      .map((row) => row.name)
      .filter((name) => (ASSET_REFERENCE_COLUMNS as readonly string[]).includes(name));
    for (const column of columns) {
      const row = deps.sqlite
        .query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${quoteIdent(table)} WHERE ${quoteIdent(column)} = ?`)
        .get(assetId);
      total += row?.n ?? 0;
    }
  }
  // Registered checks for tables that do not exist (yet) are skipped above; a check for a missing table is harmless.
  return total;
}
