/**
 * The `state` of a sign-in under way (decisions.md §12): random, single use, bound to the dashboard session and the
 * account, dead after 10 minutes, kept in the database (table `sign_in_states`) so the callback may land on any
 * replica. The row holds an HMAC of the state, never the state, and its details sealed (the PKCE verifier among them).
 * The callback takes it with one conditional DELETE … RETURNING: of two callbacks racing with one state, one wins.
 */
import { randomBytes } from "node:crypto";
import { and, eq, gt, lte } from "drizzle-orm";
import { signInStates } from "../../db/tables";
import type { Deps } from "../../deps";
import { deriveKey, hmacHex } from "../../lib/instance-secret";
import { openJson, sealJson } from "../../store/sealing";
import type { SignInChoice } from "./network";

/** How long a sign-in may take between the connect button and the callback. */
export const SIGN_IN_STATE_TTL_MS = 10 * 60 * 1000;
const STATE_KEY_LABEL = "sign-in:state:v1";
const SEAL_KEY_LABEL = "sign-in:state:sealed:v1";
/** A state is 32 random bytes in base64url; anything else is not looked up. */
const STATE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** What a sign-in remembers between its start and its callback. */
export interface PendingSignIn {
  /** The PKCE verifier, or null when the network takes no PKCE. */
  verifier: string | null;
  /** The input the sign-in started with (Mastodon: the server). */
  input: Record<string, string>;
  /** The connection being reconnected, when the person pressed Reconnect on it. */
  reconnectId: string | null;
  redirectUri: string;
  /** A chooser's pending accounts (sealed like the rest): what the person may tick, and the connections' endpoint. */
  choices?: { endpoint: string; items: SignInChoice[] };
}

/** Who may finish a sign-in: the session and account that started it, on the same network. */
export interface SignInOwner {
  sessionId: string;
  accountId: string;
  platform: string;
}

type StateDeps = Pick<Deps, "store" | "clock" | "instanceSecret">;

function stateHash(deps: StateDeps, state: string): string {
  return hmacHex(deriveKey(deps.instanceSecret, STATE_KEY_LABEL), state);
}

/** Stores a new sign-in and answers its `state` for the authorization request. */
export async function createSignInState(deps: StateDeps, owner: SignInOwner, pending: PendingSignIn): Promise<string> {
  const now = deps.clock.now();
  const state = randomBytes(32).toString("base64url");
  const hash = stateHash(deps, state);
  await deps.store.write(async (tx) => {
    await tx.insert(signInStates).values({
      stateHash: hash,
      sessionId: owner.sessionId,
      accountId: owner.accountId,
      platform: owner.platform,
      sealed: sealJson(deps.instanceSecret, hash, pending, SEAL_KEY_LABEL),
      expiresAt: now + SIGN_IN_STATE_TTL_MS,
    }).run();
  });
  return state;
}

/**
 * Takes the sign-in of `state` once: null when it is unknown (forged), already taken, dead, started by another
 * session, for another account or another network.
 */
export async function takeSignInState(deps: StateDeps, owner: SignInOwner, state: string): Promise<PendingSignIn | null> {
  if (!STATE_SHAPE.test(state)) return null;
  const hash = stateHash(deps, state);
  const taken = await deps.store.write((tx) =>
    tx
      .delete(signInStates)
      .where(
        and(
          eq(signInStates.stateHash, hash),
          eq(signInStates.sessionId, owner.sessionId),
          eq(signInStates.accountId, owner.accountId),
          eq(signInStates.platform, owner.platform),
          gt(signInStates.expiresAt, deps.clock.now()),
        ),
      )
      .returning({ sealed: signInStates.sealed })
      .all(),
  );
  const row = taken[0];
  if (!row) return null;
  return openJson<PendingSignIn>(deps.instanceSecret, hash, row.sealed, SEAL_KEY_LABEL);
}

/** Deletes the sign-ins whose ten minutes have passed (the tidy job). Answers how many went. */
export async function tidySignInStates(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const removed = await deps.store.write((tx) =>
    tx.delete(signInStates).where(lte(signInStates.expiresAt, deps.clock.now())).returning({ h: signInStates.stateHash }).all(),
  );
  return removed.length;
}
