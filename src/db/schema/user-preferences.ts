/**
 * Per-person dashboard preferences (owned by the dashboard module). `time_zone` is an IANA zone name such as
 * Europe/Berlin; every time the dashboard shows or reads is in it. No row: the zone has not been set yet, and the
 * dashboard takes the browser's on the next page load.
 */
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./accounts";

export const userPreferences = sqliteTable("user_preferences", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  timeZone: text("time_zone").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
