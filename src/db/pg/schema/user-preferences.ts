// PostgreSQL mirror of src/db/schema/user-preferences.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Per-person dashboard preferences (owned by the dashboard module). `time_zone` is an IANA zone name such as
 * Europe/Berlin; every time the dashboard shows or reads is in it. No row: the zone has not been set yet, and the
 * dashboard takes the browser's on the next page load.
 */
import { bigint, pgTable, text } from "drizzle-orm/pg-core";
import { users } from "./accounts";

export const userPreferences = pgTable("user_preferences", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  timeZone: text("time_zone").notNull(),
  updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
});
