/**
 * Dashboard sign-in throttling, in the database (table login_throttle), so no spray of other emails and no restart
 * can lift an active lockout:
 *
 * - per email at one source address: LOGIN_MAX_FAILURES failed attempts inside LOGIN_WINDOW_MS lock that email from
 *   that address until the window (from its first failure) has passed; a success clears it;
 * - per source address across all emails: ADDRESS_MAX_FAILURES failed attempts inside the window lock every sign-in
 *   from that address until the window has passed (a success does not clear it, so signing in to one's own account
 *   cannot reset a spray).
 *
 * An attempt is counted BEFORE its password is checked, in one write transaction with the check of both limits,
 * so concurrent guesses cannot all slip in before the first failure is recorded; a success then takes its count back.
 * The check IS the count: a conditional upsert (`INSERT … ON CONFLICT DO UPDATE … WHERE` under the limit `RETURNING`)
 * whose returned row says whether the attempt was counted. On PostgreSQL (READ COMMITTED, many replicas) a read of the
 * count followed by its increment would let concurrent attempts all pass the same read; the upsert locks the row and
 * decides on its latest committed count. Both writers take the address's row before the email's (deadlock order).
 * The source address is the socket's (or, behind a proxy named in TRUSTED_PROXIES, the client it names; see
 * http/client-address.ts).
 */
import { eq, lte, sql } from "drizzle-orm";
import { loginThrottle } from "../../db/tables";
import type { Deps } from "../../deps";
import { hmacHex } from "../../lib/instance-secret";

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins from one address, across every email, before the address waits out the window. */
export const ADDRESS_MAX_FAILURES = 30;

type ThrottleDeps = Pick<Deps, "store" | "clock" | "instanceSecret">;

/** Which limit refused an attempt. */
export type LoginLimitReason = "email" | "address";

function emailKey(deps: ThrottleDeps, email: string, address: string): string {
  return `email:${hmacHex(deps.instanceSecret, `login-throttle:email\u0000${email.trim().toLowerCase()}\u0000${address}`)}`;
}

function addressKey(deps: ThrottleDeps, address: string): string {
  return `address:${hmacHex(deps.instanceSecret, `login-throttle:address\u0000${address}`)}`;
}

/**
 * Counts one sign-in attempt for `email` from `address`, unless a limit is reached: then nothing is counted and the
 * answer says which limit and how many seconds remain. Answers null when the attempt may go on (and was counted).
 */
export async function beginLoginAttempt(
  deps: ThrottleDeps,
  email: string,
  address: string,
): Promise<{ reason: LoginLimitReason; retryAfterSeconds: number } | null> {
  const ek = emailKey(deps, email, address);
  const ak = addressKey(deps, address);
  try {
    return await deps.store.write(async (tx) => {
      const now = deps.clock.now();
      const cutoff = now - LOGIN_WINDOW_MS;
      const wait = (row: { failures: number; windowStart: number } | undefined, max: number): number =>
        row && row.windowStart > cutoff && row.failures >= max ? Math.ceil((row.windowStart + LOGIN_WINDOW_MS - now) / 1000) : 0;
      /** Counts the attempt under `key` unless its limit is reached; answers the seconds to wait when it was not counted. */
      const count = async (key: string, max: number): Promise<number> => {
        const counted = await tx
          .insert(loginThrottle)
          .values({ key, failures: 1, windowStart: now })
          .onConflictDoUpdate({
            target: loginThrottle.key,
            // A window that has passed starts again at this attempt.
            set: {
              failures: sql`case when ${loginThrottle.windowStart} <= ${cutoff} then 1 else ${loginThrottle.failures} + 1 end`,
              windowStart: sql`case when ${loginThrottle.windowStart} <= ${cutoff} then ${now} else ${loginThrottle.windowStart} end`,
            },
            // Only under the limit (or in a window that has passed): otherwise nothing is written and no row comes back.
            setWhere: sql`${loginThrottle.windowStart} <= ${cutoff} or ${loginThrottle.failures} < ${max}`,
          })
          .returning({ key: loginThrottle.key })
          .all();
        if (counted.length > 0) return 0;
        // Refused: the row (locked by the upsert on PostgreSQL) says how long the window still runs.
        return Math.max(1, wait(await tx.select().from(loginThrottle).where(eq(loginThrottle.key, key)).get(), max));
      };
      const byAddress = await count(ak, ADDRESS_MAX_FAILURES);
      if (byAddress > 0) return { reason: "address" as const, retryAfterSeconds: byAddress };
      const byEmail = await count(ek, LOGIN_MAX_FAILURES);
      // The address's count is taken back with the whole transaction: a refused attempt counts nowhere.
      if (byEmail > 0) throw new Refused({ reason: "email", retryAfterSeconds: byEmail });
      return null;
    });
  } catch (error) {
    if (error instanceof Refused) return error.answer;
    throw error;
  }
}

/** Rolls back beginLoginAttempt's write when the email's limit refuses after the address's count was taken. */
class Refused extends Error {
  constructor(readonly answer: { reason: LoginLimitReason; retryAfterSeconds: number }) {
    super("login attempt refused");
  }
}

/** The attempt begun for `email` from `address` succeeded: the email's count is cleared, the address's takes it back. */
export async function loginSucceeded(deps: ThrottleDeps, email: string, address: string): Promise<void> {
  // The address's row first, the email's second: the order beginLoginAttempt locks them in (no deadlock on PostgreSQL).
  await deps.store.write(async (tx) => {
    await tx
      .update(loginThrottle)
      .set({ failures: sql`case when ${loginThrottle.failures} > 0 then ${loginThrottle.failures} - 1 else 0 end` })
      .where(eq(loginThrottle.key, addressKey(deps, address)))
      .run();
    await tx.delete(loginThrottle).where(eq(loginThrottle.key, emailKey(deps, email, address))).run();
  });
}

/** Deletes counts whose window has passed (housekeeping: every check ignores them anyway). Returns how many. */
export async function tidyLoginThrottle(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const cutoff = deps.clock.now() - LOGIN_WINDOW_MS;
  const removed = await deps.store.write((tx) =>
    tx.delete(loginThrottle).where(lte(loginThrottle.windowStart, cutoff)).returning({ key: loginThrottle.key }).all(),
  );
  return removed.length;
}
