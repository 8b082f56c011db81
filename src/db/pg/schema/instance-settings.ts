// PostgreSQL mirror of src/db/schema/instance-settings.ts: the same tables, columns, JavaScript types and constraints.
/** Instance-wide settings changed in the dashboard without a restart (decisions.md §15); one row (id 1). */
import { sql } from "drizzle-orm";
import { bigint, check, pgTable, text } from "drizzle-orm/pg-core";

export { INSTANCE_SETTINGS_ID } from "../../schema/instance-settings";

export const instanceSettings = pgTable(
  "instance_settings",
  {
    id: bigint("id", { mode: "number" }).primaryKey().default(1),
    modelBaseUrl: text("model_base_url"),
    modelApiKeySealed: text("model_api_key_sealed"),
    modelTextModel: text("model_text_model"),
    modelImageModel: text("model_image_model"),
    networkAppsSealed: text("network_apps_sealed"),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [check("instance_settings_single_row", sql`${t.id} = 1`)],
);
