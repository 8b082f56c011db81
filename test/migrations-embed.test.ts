/**
 * Both dialects' migrations are inside the bundle (src/db/migrations-embed.ts is a Bun macro): bundling each migrator
 * the way the build does leaves the SQL of every journal entry in the output and no read of the migrations folders
 * at run time, so a binary carries them wherever it runs.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

async function bundle(entry: string): Promise<string> {
  const result = await Bun.build({ entrypoints: [join(ROOT, entry)], target: "bun", minify: false });
  expect(result.success).toBe(true);
  return (await Promise.all(result.outputs.map((o) => o.text()))).join("\n");
}

function journal(folder: string): string[] {
  const parsed = JSON.parse(readFileSync(join(ROOT, folder, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
  return parsed.entries.map((e) => e.tag);
}

describe("the migrations are embedded at bundle time", () => {
  for (const [entry, folder, statement] of [
    ["src/db/migrate.ts", "migrations", "CREATE TABLE `accounts`"],
    ["src/db/pg/migrate.ts", "migrations-pg", 'CREATE TABLE "accounts"'],
  ] as const) {
    test(`${entry} carries every migration of ${folder}/`, async () => {
      const code = await bundle(entry);
      const tags = journal(folder);
      expect(tags.length).toBeGreaterThan(0);
      for (const tag of tags) expect(code).toContain(JSON.stringify(tag));
      expect(code).toContain(statement);
      // The macro ran: its file reads are not in the bundle.
      expect(code).not.toContain("_journal.json");
      expect(code).not.toContain("readFileSync");
    });
  }
});
