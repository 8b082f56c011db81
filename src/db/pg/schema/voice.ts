// PostgreSQL mirror of src/db/schema/voice.ts: the same tables, columns, JavaScript types and constraints.
/** The brand voice of an account (decisions.md §6): one row per account, absent until first saved (defaults apply). */
import { sql } from "drizzle-orm";
import { bigint, check, pgTable, text } from "drizzle-orm/pg-core";
import { jsonDocument } from "../columns";
import { accounts } from "./accounts";
import { EMOJI_LEVELS } from "../../schema/voice";

export const brandVoices = pgTable(
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
    hashtags: jsonDocument<string[]>("hashtags").notNull(),
    /** JSON array of strings. */
    bannedWords: jsonDocument<string[]>("banned_words").notNull(),
    signature: text("signature").notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [check("brand_voices_emoji_valid", sql`${t.emoji} IN ('none','some','lots')`)],
);
