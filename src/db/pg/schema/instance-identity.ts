// PostgreSQL mirror of src/db/schema/instance-identity.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Which instance secret this database was made under: one row (id 1) holding the secret's public fingerprint
 * (`instanceSecretFingerprint`). Every replica checks it at start (src/db/instance-identity.ts), so a replica
 * started with another INSTANCE_SECRET refuses instead of answering 401 to every key.
 */
import { sql } from "drizzle-orm";
import { bigint, check, pgTable, text } from "drizzle-orm/pg-core";

export { INSTANCE_IDENTITY_ID } from "../../schema/instance-identity";

export const instanceIdentity = pgTable(
  "instance_identity",
  {
    /** Always 1 (the default, and the check allows nothing else): the table holds one row. */
    id: bigint("id", { mode: "number" }).primaryKey().default(1),
    /** `instanceSecretFingerprint(secret)`: 64 hex characters. */
    secretFingerprint: text("secret_fingerprint").notNull(),
    /** When the row was written (ms): the first start under this table. */
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [check("instance_identity_single_row", sql`${t.id} = 1`)],
);
