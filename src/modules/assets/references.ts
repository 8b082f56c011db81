/**
 * Which rows refer to an asset, so DELETE can answer 409 asset_in_use instead of orphaning a seed, creation or post.
 *
 * Chosen design (documented for the seeds, creations and scheduling modules):
 *  - By default every table with an `image_asset_id` (or `imageAssetId`) column counts: any row holding the asset's
 *    id blocks deletion. Found from the drizzle schema of the tables services use (db/tables), so a new table needs
 *    no change here and the same code runs on both dialects.
 *  - A module whose rule is narrower (e.g. only *pending* scheduled posts block) registers a check for its table with
 *    `registerAssetReferenceCheck(table, fn)`; that check then replaces the default for that table.
 *  - A module that refers to assets through some other column registers a check the same way.
 * Checks run inside the DELETE's write transaction: they read through `deps.store.db` (which is that transaction
 * there) and await only the database.
 */
import { count, eq, getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { allTables } from "../../db/tables";
import type { Deps } from "../../deps";

/** Counts the rows of one table that still need `assetId`. It runs inside a write: database reads only. */
export type AssetReferenceCheck = (deps: Deps, assetId: string) => number | Promise<number>;

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

/** Every table but `assets` by SQL name, with its conventional reference columns (read per call: bindings swap). */
function referencingTables(): { name: string; table: SQLiteTable; columns: SQLiteColumn[] }[] {
  return Object.values(allTables())
    .map((table) => {
      const t = table as unknown as SQLiteTable;
      const columns = Object.values(getTableColumns(t)).filter((column) =>
        (ASSET_REFERENCE_COLUMNS as readonly string[]).includes(column.name),
      );
      return { name: getTableName(t), table: t, columns };
    })
    .filter((entry) => entry.name !== "assets");
}

/** How many rows, in every table, refer to `assetId`. 0 means the asset may be deleted. */
export async function assetReferenceCount(deps: Deps, assetId: string): Promise<number> {
  let total = 0;
  for (const { name, table, columns } of referencingTables()) {
    const custom = registered.get(name);
    if (custom) {
      total += await custom(deps, assetId);
      continue;
    }
    for (const column of columns) {
      const row = await deps.store.db.select({ n: count() }).from(table).where(eq(column, assetId)).get();
      total += row?.n ?? 0;
    }
  }
  // Registered checks for tables that do not exist (yet) are skipped above; a check for a missing table is harmless.
  return total;
}
