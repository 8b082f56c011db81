/** The brand voice of an account (decisions.md §6): one row per account, absent until first saved (defaults apply). */
import { sql } from "drizzle-orm";
import { check, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const EMOJI_LEVELS = ["none", "some", "lots"] as const;

export const brandVoices = sqliteTable(
  "brand_voices",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id, { onDelete: "cascade" }),
    tone: text("tone").notNull(),
    audience: text("audience").notNull(),
    language: text("language").notNull(),
    emoji: text("emoji", { enum: EMOJI_LEVELS }).notNull(),
    /** JSON array of strings. */
    hashtags: text("hashtags", { mode: "json" }).$type<string[]>().notNull(),
    /** JSON array of strings. */
    bannedWords: text("banned_words", { mode: "json" }).$type<string[]>().notNull(),
    signature: text("signature").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [check("brand_voices_emoji_valid", sql`${t.emoji} IN ('none','some','lots')`)],
);
