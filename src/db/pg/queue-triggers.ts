/**
 * The queue generation on PostgreSQL, as src/db/queue-triggers.ts does it on SQLite: `accounts.queue_generation` is
 * bumped by row triggers whenever a queued post leaves its slot (deleted; time, account or `queued` changed). The bump
 * updates the account's row, the row the queue locks (FOR UPDATE) before it chooses a slot: a transaction freeing a slot
 * and one taking a slot are therefore ordered, and a cursor stored with the older generation is never trusted after the
 * free commits. Kept in code because drizzle-kit cannot generate functions and triggers; applied by migrate.ts after
 * drizzle's.
 */
import type { EmbeddedMigration } from "../migrations-embed";

const BREAK = "--> statement-breakpoint";

const QUEUE_GENERATION_V1 = [
  `CREATE FUNCTION seedcast_bump_queue_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE accounts SET queue_generation = queue_generation + 1 WHERE id = OLD.account_id;
  RETURN NULL;
END;
$$;`,
  "CREATE TRIGGER scheduled_posts_queue_free_delete AFTER DELETE ON scheduled_posts FOR EACH ROW WHEN (OLD.queued) EXECUTE FUNCTION seedcast_bump_queue_generation();",
  "CREATE TRIGGER scheduled_posts_queue_free_update AFTER UPDATE OF queued, scheduled_time, account_id ON scheduled_posts FOR EACH ROW " +
    "WHEN (OLD.queued AND (NOT NEW.queued OR NEW.scheduled_time <> OLD.scheduled_time OR NEW.account_id <> OLD.account_id)) " +
    "EXECUTE FUNCTION seedcast_bump_queue_generation();",
].join(`\n${BREAK}\n`);

/** Applied after the drizzle migrations (0015 adds the column), once, by tag (the same tag as SQLite's). */
export const PG_QUEUE_TRIGGER_MIGRATIONS: readonly EmbeddedMigration[] = [{ tag: "9100_queue_generation_v1", sql: QUEUE_GENERATION_V1 }];
