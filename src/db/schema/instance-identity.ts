/**
 * Which instance secret this database was made under: one row (id 1) holding the secret's public fingerprint
 * (`instanceSecretFingerprint`, an HMAC under a key derived from the secret: it tells nothing about it). API key,
 * session and OAuth token hashes are HMACs under the secret and stored credentials are sealed with keys derived from
 * it, so a start under another secret would quietly break every one of them: bootstrap writes the row on the first
 * start (a database from before this table adopts the secret it is started with) and refuses any later start whose
 * secret has another fingerprint (src/db/instance-identity.ts). The row lives in the database, not in DATA_DIR, so the
 * check holds wherever the database is (PostgreSQL has no data dir) and travels with backups and `migrate-data`.
 */
import { sql } from "drizzle-orm";
import { check, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The one row's id (the check constraint allows no other). */
export const INSTANCE_IDENTITY_ID = 1;

export const instanceIdentity = sqliteTable(
  "instance_identity",
  {
    /** Always 1 (the default, and the check allows nothing else): the table holds one row. */
    id: integer("id").primaryKey().default(1),
    /** `instanceSecretFingerprint(secret)`: 64 hex characters. */
    secretFingerprint: text("secret_fingerprint").notNull(),
    /** When the row was written (ms): the first start under this table. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [check("instance_identity_single_row", sql`${t.id} = 1`)],
);
