/**
 * The queue generation (SQLite): `accounts.queue_generation` is bumped by triggers whenever a queued post leaves its
 * slot: its row deleted, its time or account changed, or `queued` cleared. The queue's slot cursor
 * (modules/schedule/queue-cursor.ts) remembers "every slot up to here is taken" and is trusted only while the counter is
 * unchanged, so a slot freed by any writer (the server, the dashboard, the CLI next to it, a hand-written statement) is
 * found again. Taking a slot never bumps it: a cursor only ever claims slots are taken. Kept in code like
 * auth-triggers.ts because drizzle-kit cannot generate triggers. NB: a drizzle-kit table rebuild of scheduled_posts
 * drops these triggers; such a migration must be followed by a new tag that creates them again
 * (test/queue.test.ts "a slot freed behind the server's back" fails without them).
 */
import type { EmbeddedMigration } from "./migrations-embed";

const BUMP = "UPDATE accounts SET queue_generation = queue_generation + 1 WHERE id = OLD.account_id;";

const QUEUE_GENERATION_V1 = `
CREATE TRIGGER scheduled_posts_queue_free_delete AFTER DELETE ON scheduled_posts WHEN OLD.queued = 1 BEGIN ${BUMP} END;
CREATE TRIGGER scheduled_posts_queue_free_update AFTER UPDATE OF queued, scheduled_time, account_id ON scheduled_posts
  WHEN OLD.queued = 1 AND (NEW.queued = 0 OR NEW.scheduled_time <> OLD.scheduled_time OR NEW.account_id <> OLD.account_id) BEGIN ${BUMP} END;
`;

/** Applied after the drizzle migrations (0022 adds the column), once, by tag. */
export const QUEUE_TRIGGER_MIGRATIONS: EmbeddedMigration[] = [{ tag: "9100_queue_generation_v1", sql: QUEUE_GENERATION_V1 }];
