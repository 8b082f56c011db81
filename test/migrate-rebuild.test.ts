/**
 * A migration that rebuilds a table (drizzle-kit's `__new_<table>` copy, for a changed column or CHECK) must keep the
 * rows of the tables that refer to it: with foreign keys on, dropping the old `scheduled_posts` would cascade and
 * empty `scheduled_post_targets`. Builds a database at the migration before 0012, stores a post with an image and a
 * published target, then lets migrateDatabase apply the rest.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrateDatabase } from "../src/db/migrate";
import { embeddedMigrations } from "../src/db/migrations-embed";

test("0012 keeps posts and targets, and fills images from the image columns", () => {
  const sqlite = new Database(":memory:", { strict: true });
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("CREATE TABLE __seedcast_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  const before = embeddedMigrations().filter((m) => m.tag < "0012");
  expect(before.length).toBe(12);
  for (const m of before) {
    for (const statement of m.sql.split("--> statement-breakpoint")) if (statement.trim()) sqlite.exec(statement);
    sqlite.query("INSERT INTO __seedcast_migrations (tag, applied_at) VALUES (?, ?)").run(m.tag, "then");
  }
  sqlite.exec(`INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'Shop', 1)`);
  sqlite.exec(`INSERT INTO creations (id, account_id, type, seed_id, caption, alt_text, image_asset_id, aspect_ratio, media_style, created_at, updated_at)
    VALUES ('c1', 'a1', 'social_post', 's1', 'Hello', 'A cat', 'img1', '1:1', 'photo', 1, 1)`);
  sqlite.exec(`INSERT INTO scheduled_posts (id, account_id, creation_id, scheduled_time, status, caption, alt_text, image_asset_id, created_at, updated_at)
    VALUES ('p1', 'a1', 'c1', 5, 'published', 'Hello', 'A cat', 'img1', 1, 1)`);
  sqlite.exec(`INSERT INTO scheduled_post_targets (id, post_id, account_id, connection_id, platform, label, status, provider_post_id, created_at, updated_at)
    VALUES ('t1', 'p1', 'a1', 'k1', 'bluesky', '@shop', 'published', 'at://x', 1, 1)`);

  const applied = migrateDatabase(sqlite);
  expect(applied).toContain("0012_posts_as_people_write_them");
  expect(sqlite.query("SELECT id, parts_out FROM scheduled_post_targets").all()).toEqual([{ id: "t1", parts_out: "[]" }]);
  expect(sqlite.query("SELECT images, thread, first_comment, variants FROM scheduled_posts").get()).toEqual({
    images: '[{"assetId":"img1","altText":"A cat"}]',
    thread: "[]",
    first_comment: null,
    variants: "{}",
  });
  expect(sqlite.query("SELECT images FROM creations").get()).toEqual({ images: '[{"assetId":"img1","altText":"A cat"}]' });
  expect(sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(1);
});
