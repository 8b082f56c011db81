/**
 * Instance-wide settings an administrator changes in the dashboard without a restart (decisions.md §15): today the
 * OpenAI-compatible language model server. One row (id 1). Environment variables win over every value here
 * (src/generation/settings.ts). The API key is sealed at rest like connection credentials and never shown again.
 */
import { sql } from "drizzle-orm";
import { check, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The one row's id (the check constraint allows no other). */
export const INSTANCE_SETTINGS_ID = 1;

export const instanceSettings = sqliteTable(
  "instance_settings",
  {
    id: integer("id").primaryKey().default(1),
    /** The server's API root, e.g. http://localhost:11434/v1; null: no model server set here (the builtin writer). */
    modelBaseUrl: text("model_base_url"),
    /** The API key, sealed (store/sealing.ts); null when none was set (Ollama and llama.cpp need none). */
    modelApiKeySealed: text("model_api_key_sealed"),
    modelTextModel: text("model_text_model"),
    modelImageModel: text("model_image_model"),
    /**
     * The network apps the admin entered (decisions.md §12): one sealed JSON object, network → {clientId, clientSecret}
     * (src/publishing/sign-in/app-credentials.ts). Null: none entered. The environment's pairs win over these.
     */
    networkAppsSealed: text("network_apps_sealed"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [check("instance_settings_single_row", sql`${t.id} = 1`)],
);

export type InstanceSettingsRow = typeof instanceSettings.$inferSelect;
