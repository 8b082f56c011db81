/**
 * The instance secret against the database (PostgreSQL): the twin of src/db/instance-identity.ts for every replica's
 * start once PostgreSQL mode is wired into bootstrap (right after `migratePostgres`). Same rules: a missing row is
 * written with a conditional insert and read back, a present one is only read, another fingerprint refuses.
 */
import { eq } from "drizzle-orm";
import { type InstanceSecretSource, fingerprintMismatchError } from "../../lib/instance-secret";
import type { AnyPgDb } from "./handle";
import { INSTANCE_IDENTITY_ID, instanceIdentity } from "./schema/instance-identity";

async function recorded(db: AnyPgDb): Promise<string | null> {
  const rows = await db.select({ fingerprint: instanceIdentity.secretFingerprint }).from(instanceIdentity).where(eq(instanceIdentity.id, INSTANCE_IDENTITY_ID));
  return rows[0]?.fingerprint ?? null;
}

/** See src/db/instance-identity.ts. `database` names it in the refusal (never with a password). */
export async function checkInstanceIdentityPg(db: AnyPgDb, fingerprint: string, source: InstanceSecretSource, database: string, now: number): Promise<boolean> {
  let wrote = false;
  let found = await recorded(db);
  if (found === null) {
    const inserted = await db
      .insert(instanceIdentity)
      .values({ id: INSTANCE_IDENTITY_ID, secretFingerprint: fingerprint, createdAt: now })
      .onConflictDoNothing()
      .returning({ id: instanceIdentity.id });
    wrote = inserted.length > 0;
    found = await recorded(db);
  }
  if (found !== fingerprint) throw fingerprintMismatchError(source, database);
  return wrote;
}
