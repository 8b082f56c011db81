/**
 * Full-text search DDL that drizzle-kit cannot generate (virtual tables, triggers), kept in code so it survives
 * `npm run db:generate` (which deletes migrations/). migrate.ts applies these after the drizzle migrations, each
 * once, recorded by tag in the same __seedcast_migrations table.
 *
 * NB: a drizzle migration that rebuilds the `seeds` table drops its triggers: add a new tagged entry here that
 * drops and recreates the FTS table and triggers and rebuilds the index.
 */
import type { EmbeddedMigration } from "./migrations-embed";

const SEEDS_FTS_V1 = `
CREATE VIRTUAL TABLE seeds_fts USING fts5(
  title, content, category,
  content='seeds', content_rowid='seq',
  tokenize='unicode61 remove_diacritics 2',
  prefix='2 3 4'
);
CREATE TRIGGER seeds_fts_after_insert AFTER INSERT ON seeds BEGIN
  INSERT INTO seeds_fts(rowid, title, content, category) VALUES (new.seq, new.title, new.content, coalesce(new.category, ''));
END;
CREATE TRIGGER seeds_fts_after_delete AFTER DELETE ON seeds BEGIN
  INSERT INTO seeds_fts(seeds_fts, rowid, title, content, category) VALUES ('delete', old.seq, old.title, old.content, coalesce(old.category, ''));
END;
CREATE TRIGGER seeds_fts_after_update AFTER UPDATE OF title, content, category ON seeds BEGIN
  INSERT INTO seeds_fts(seeds_fts, rowid, title, content, category) VALUES ('delete', old.seq, old.title, old.content, coalesce(old.category, ''));
  INSERT INTO seeds_fts(rowid, title, content, category) VALUES (new.seq, new.title, new.content, coalesce(new.category, ''));
END;
INSERT INTO seeds_fts(seeds_fts) VALUES ('rebuild');
`;

/** Tagged FTS migrations, applied in order after the embedded drizzle migrations. */
export const FTS_MIGRATIONS: readonly EmbeddedMigration[] = [{ tag: "fts_seeds_v1", sql: SEEDS_FTS_V1 }];
