/**
 * The instance secret against the database (SQLite): the one row of `instance_identity` records the fingerprint of the
 * secret the database was made under. Run by bootstrap right after migrations, before anything else is written.
 */
import { eq } from "drizzle-orm";
import { type InstanceSecretSource, fingerprintMismatchError } from "../lib/instance-secret";
import type { Db } from "./client";
import { INSTANCE_IDENTITY_ID, instanceIdentity } from "./schema/instance-identity";

function recorded(db: Db): string | null {
  const row = db.select({ fingerprint: instanceIdentity.secretFingerprint }).from(instanceIdentity).where(eq(instanceIdentity.id, INSTANCE_IDENTITY_ID)).get();
  return row?.fingerprint ?? null;
}

/**
 * Requires the recorded fingerprint to be `fingerprint`; when the database has no row yet (a new database, or one from
 * before the table: it adopts the secret it is started with) records it first. A row that is there is only read (a
 * refused start writes nothing). The insert is conditional (on conflict nothing) and the row is read back, so two
 * processes starting at once agree on one fingerprint and the loser of a race under another secret refuses too.
 * Throws InstanceSecretError naming `source` and `database` on a mismatch. Returns whether this call wrote the row.
 */
export function checkInstanceIdentity(db: Db, fingerprint: string, source: InstanceSecretSource, database: string, now: number): boolean {
  let wrote = false;
  let found = recorded(db);
  if (found === null) {
    wrote =
      db
        .insert(instanceIdentity)
        .values({ id: INSTANCE_IDENTITY_ID, secretFingerprint: fingerprint, createdAt: now })
        .onConflictDoNothing()
        .returning({ id: instanceIdentity.id })
        .all().length > 0;
    found = recorded(db);
  }
  if (found !== fingerprint) throw fingerprintMismatchError(source, database);
  return wrote;
}
