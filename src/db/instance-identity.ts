/**
 * The instance secret against the database, on both backends: the one row of `instance_identity` records the
 * fingerprint of the secret the database was made under. Run by bootstrap (db/open-store.ts) right after migrations,
 * before anything else is written.
 */
import { eq } from "drizzle-orm";
import { type InstanceSecretSource, fingerprintMismatchError } from "../lib/instance-secret";
import { INSTANCE_IDENTITY_ID } from "./schema/instance-identity";
import type { Store } from "./store";
import { instanceIdentity } from "./tables";

async function recorded(store: Store): Promise<string | null> {
  const row = await store.db
    .select({ fingerprint: instanceIdentity.secretFingerprint })
    .from(instanceIdentity)
    .where(eq(instanceIdentity.id, INSTANCE_IDENTITY_ID))
    .get();
  return row?.fingerprint ?? null;
}

/**
 * Requires the recorded fingerprint to be `fingerprint`; when the database has no row yet (a new database, or one from
 * before the table: it adopts the secret it is started with) records it first. A row that is there is only read (a
 * refused start writes nothing). The insert is conditional (on conflict nothing) and the row is read back, so two
 * processes (replicas) starting at once agree on one fingerprint and the loser of a race under another secret refuses
 * too. Throws InstanceSecretError naming `source` and `database` (never with a password) on a mismatch. Returns whether
 * this call wrote the row.
 */
export async function checkInstanceIdentity(store: Store, fingerprint: string, source: InstanceSecretSource, database: string, now: number): Promise<boolean> {
  let wrote = false;
  let found = await recorded(store);
  if (found === null) {
    const inserted = await store.write((tx) =>
      tx
        .insert(instanceIdentity)
        .values({ id: INSTANCE_IDENTITY_ID, secretFingerprint: fingerprint, createdAt: now })
        .onConflictDoNothing()
        .returning({ id: instanceIdentity.id })
        .all(),
    );
    wrote = inserted.length > 0;
    found = await recorded(store);
  }
  if (found !== fingerprint) throw fingerprintMismatchError(source, database);
  return wrote;
}
