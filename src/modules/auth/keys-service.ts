/** Minting, rotating, revoking and listing API keys (dashboard and CLI; the API never mints keys). */
import { and, desc, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../../db/tables";
import type { Deps } from "../../deps";
import { DISPLAY_PREFIX_LENGTH, generateKeySecret } from "../../lib/api-key-format";
import { isoAt } from "../../lib/clock";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { memberRole } from "../accounts/service";
import { type KeyState, hashKeySecret, keyState } from "../../auth/key-secret";
import { ROLE_SCOPES, type Scope, SCOPES, isScope, parseStoredScopes } from "../../auth/scopes";

export const KEY_NAME_MAX = 80;
export const EXPIRY_CHOICES = [30, 90, 365] as const;
export const DEFAULT_EXPIRY_DAYS = 90;
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Keys revoked, expired or retired longer ago than this are deleted by the tidy job. */
export const KEY_TIDY_AFTER_MS = 30 * DAY_MS;

export interface KeyView {
  id: string;
  name: string;
  scopes: Scope[];
  prefix: string;
  userId: string;
  state: KeyState;
  expiresDays: number | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  graceUntil: string | null;
  revokedAt: string | null;
}

export interface MintedKey {
  id: string;
  /** The secret: shown once, never stored. */
  key: string;
}

type KeyRow = typeof apiKeys.$inferSelect;

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || [...trimmed].length > KEY_NAME_MAX) {
    throw invalidField("name", `must be 1 to ${KEY_NAME_MAX} characters`);
  }
  return trimmed;
}

/** Parses an expiry choice: 30, 90, 365 or "never" (null); default 90. */
export function parseExpiryDays(value: string | number | null | undefined): number | null {
  if (value === undefined || value === "") return DEFAULT_EXPIRY_DAYS;
  if (value === null || value === "never") return null;
  const n = Number(value);
  if (!(EXPIRY_CHOICES as readonly number[]).includes(n)) {
    throw invalidField("expires", `must be one of ${EXPIRY_CHOICES.join(", ")} days or never`);
  }
  return n;
}

function checkScopes(requested: readonly string[], allowed: readonly Scope[]): Scope[] {
  const unknown = requested.filter((s) => !isScope(s));
  if (unknown.length > 0) throw invalidField("groups", `unknown group ${unknown.join(", ")}; use ${SCOPES.join(", ")}`);
  if (requested.length === 0) throw invalidField("groups", "choose at least one group");
  const beyond = requested.filter((s) => !allowed.includes(s as Scope));
  if (beyond.length > 0) {
    throw new AppError("forbidden", `Your role cannot grant ${beyond.join(", ")}.`, { requiredGroup: beyond[0] });
  }
  return SCOPES.filter((s) => requested.includes(s));
}

/** Inserts the key in its own write, or in the caller's when called inside one (rotateKey). */
async function insertKey(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret">,
  values: { accountId: string; userId: string; name: string; scopes: Scope[]; expiresDays: number | null },
): Promise<MintedKey> {
  const now = deps.clock.now();
  const secret = generateKeySecret();
  const id = newId();
  const secretHash = hashKeySecret(deps, secret);
  await deps.store.write(async (tx) => {
    await tx
      .insert(apiKeys)
      .values({
        id,
        accountId: values.accountId,
        userId: values.userId,
        name: values.name,
        scopes: values.scopes.join(","),
        secretHash,
        prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
        expiresDays: values.expiresDays,
        expiresAt: values.expiresDays === null ? null : now + values.expiresDays * DAY_MS,
        createdAt: now,
      })
      .run();
  });
  return { id, key: secret };
}

/** Mints a key for a member of the account; its groups may not exceed the member's role. */
export async function mintKey(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret">,
  input: { accountId: string; userId: string; name: string; groups: readonly string[]; expiresDays: number | null },
): Promise<MintedKey> {
  const name = checkName(input.name);
  const role = await memberRole(deps, input.accountId, input.userId);
  if (!role) throw notFound("member");
  const scopes = checkScopes(input.groups, ROLE_SCOPES[role]);
  if (input.expiresDays !== null && !(EXPIRY_CHOICES as readonly number[]).includes(input.expiresDays)) {
    throw invalidField("expires", `must be one of ${EXPIRY_CHOICES.join(", ")} days or never`);
  }
  return insertKey(deps, { accountId: input.accountId, userId: input.userId, name, scopes, expiresDays: input.expiresDays });
}

async function loadKey(deps: Pick<Deps, "store">, keyId: string, accountId?: string): Promise<KeyRow> {
  const row = await deps.store.db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
  if (!row || (accountId !== undefined && row.accountId !== accountId)) throw notFound("API key");
  return row;
}

/**
 * Rotates an active key: mints a replacement with the same name, groups, member and expiry policy; the outgoing key
 * keeps working for 24 hours. NB: one write transaction whose retiring update is conditional on the key still being
 * active, so two rotations cannot both succeed.
 */
export async function rotateKey(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret">,
  keyId: string,
  accountId?: string,
): Promise<MintedKey & { previousKeyGraceUntil: string }> {
  return deps.store.write(async (tx) => {
    const row = await loadKey(deps, keyId, accountId);
    const now = deps.clock.now();
    if (keyState(row, now) !== "active") {
      throw new AppError("invalid_request", "Only an active key can be rotated.");
    }
    const minted = await insertKey(deps, {
      accountId: row.accountId,
      userId: row.userId,
      name: row.name,
      scopes: parseStoredScopes(row.scopes),
      expiresDays: row.expiresDays,
    });
    const graceUntil = now + ROTATION_GRACE_MS;
    // Conditional on the key still being active, so a concurrent rotation that got there first (possible on
    // PostgreSQL, where writes are not serialised) makes this one fail and roll back its replacement.
    const retired = await tx
      .update(apiKeys)
      .set({ graceUntil, replacedById: minted.id })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.graceUntil), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id })
      .all();
    if (retired.length !== 1) throw new AppError("invalid_request", "Only an active key can be rotated.");
    return { ...minted, previousKeyGraceUntil: isoAt(graceUntil) };
  });
}

/** Revokes a key at once. Revoking a revoked key is a no-op. */
export async function revokeKey(deps: Pick<Deps, "store" | "clock">, keyId: string, accountId?: string): Promise<void> {
  await deps.store.write(async (tx) => {
    const row = await loadKey(deps, keyId, accountId);
    if (row.revokedAt !== null) return;
    await tx.update(apiKeys).set({ revokedAt: deps.clock.now() }).where(eq(apiKeys.id, keyId)).run();
  });
}

/** Every key of the account with its state, newest first. */
export async function listKeys(deps: Pick<Deps, "store" | "clock">, accountId: string): Promise<KeyView[]> {
  const now = deps.clock.now();
  const rows = await deps.store.db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .all();
  return rows.map((row) => toKeyView(row, now));
}

function toKeyView(row: KeyRow, now: number): KeyView {
  const opt = (ms: number | null) => (ms === null ? null : isoAt(ms));
  return {
    id: row.id,
    name: row.name,
    scopes: parseStoredScopes(row.scopes),
    prefix: row.prefix,
    userId: row.userId,
    state: keyState(row, now),
    expiresDays: row.expiresDays,
    createdAt: isoAt(row.createdAt),
    lastUsedAt: opt(row.lastUsedAt),
    expiresAt: opt(row.expiresAt),
    graceUntil: opt(row.graceUntil),
    revokedAt: opt(row.revokedAt),
  };
}

/**
 * Deletes keys that stopped working more than 30 days ago. Housekeeping only: requests check expiry, grace and
 * revocation themselves, so correctness never waits for this job.
 */
export async function tidyKeys(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const cutoff = deps.clock.now() - KEY_TIDY_AFTER_MS;
  const result = await deps.store.write((tx) =>
    tx
      .delete(apiKeys)
      .where(
        or(
          and(isNotNull(apiKeys.revokedAt), lt(apiKeys.revokedAt, cutoff)),
          and(isNotNull(apiKeys.graceUntil), lt(apiKeys.graceUntil, cutoff)),
          and(isNotNull(apiKeys.expiresAt), lt(apiKeys.expiresAt, cutoff)),
        ),
      )
      .returning({ id: apiKeys.id })
      .all(),
  );
  return result.length;
}
