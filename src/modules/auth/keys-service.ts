/** Minting, rotating, revoking and listing API keys (dashboard and CLI; the API never mints keys). */
import { and, desc, eq, isNotNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../../db/schema";
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

function insertKey(
  deps: Pick<Deps, "db" | "clock" | "instanceSecret">,
  values: { accountId: string; userId: string; name: string; scopes: Scope[]; expiresDays: number | null },
): MintedKey {
  const now = deps.clock.now();
  const secret = generateKeySecret();
  const id = newId();
  deps.db
    .insert(apiKeys)
    .values({
      id,
      accountId: values.accountId,
      userId: values.userId,
      name: values.name,
      scopes: values.scopes.join(","),
      secretHash: hashKeySecret(deps, secret),
      prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
      expiresDays: values.expiresDays,
      expiresAt: values.expiresDays === null ? null : now + values.expiresDays * DAY_MS,
      createdAt: now,
    })
    .run();
  return { id, key: secret };
}

/** Mints a key for a member of the account; its groups may not exceed the member's role. */
export function mintKey(
  deps: Pick<Deps, "db" | "clock" | "instanceSecret">,
  input: { accountId: string; userId: string; name: string; groups: readonly string[]; expiresDays: number | null },
): MintedKey {
  const name = checkName(input.name);
  const role = memberRole(deps, input.accountId, input.userId);
  if (!role) throw notFound("member");
  const scopes = checkScopes(input.groups, ROLE_SCOPES[role]);
  if (input.expiresDays !== null && !(EXPIRY_CHOICES as readonly number[]).includes(input.expiresDays)) {
    throw invalidField("expires", `must be one of ${EXPIRY_CHOICES.join(", ")} days or never`);
  }
  return insertKey(deps, { accountId: input.accountId, userId: input.userId, name, scopes, expiresDays: input.expiresDays });
}

function loadKey(deps: Pick<Deps, "db">, keyId: string, accountId?: string): KeyRow {
  const row = deps.db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
  if (!row || (accountId !== undefined && row.accountId !== accountId)) throw notFound("API key");
  return row;
}

/**
 * Rotates an active key: mints a replacement with the same name, groups, member and expiry policy; the outgoing key
 * keeps working for 24 hours. NB: one synchronous immediate transaction, so two rotations cannot both succeed.
 */
export function rotateKey(
  deps: Pick<Deps, "db" | "clock" | "instanceSecret">,
  keyId: string,
  accountId?: string,
): MintedKey & { previousKeyGraceUntil: string } {
  return deps.db.transaction(
    () => {
      const row = loadKey(deps, keyId, accountId);
      const now = deps.clock.now();
      if (keyState(row, now) !== "active") {
        throw new AppError("invalid_request", "Only an active key can be rotated.");
      }
      const minted = insertKey(deps, {
        accountId: row.accountId,
        userId: row.userId,
        name: row.name,
        scopes: parseStoredScopes(row.scopes),
        expiresDays: row.expiresDays,
      });
      const graceUntil = now + ROTATION_GRACE_MS;
      deps.db.update(apiKeys).set({ graceUntil, replacedById: minted.id }).where(eq(apiKeys.id, keyId)).run();
      return { ...minted, previousKeyGraceUntil: isoAt(graceUntil) };
    },
    { behavior: "immediate" },
  );
}

/** Revokes a key at once. Revoking a revoked key is a no-op. */
export function revokeKey(deps: Pick<Deps, "db" | "clock">, keyId: string, accountId?: string): void {
  const row = loadKey(deps, keyId, accountId);
  if (row.revokedAt !== null) return;
  deps.db.update(apiKeys).set({ revokedAt: deps.clock.now() }).where(eq(apiKeys.id, keyId)).run();
}

/** Every key of the account with its state, newest first. */
export function listKeys(deps: Pick<Deps, "db" | "clock">, accountId: string): KeyView[] {
  const now = deps.clock.now();
  return deps.db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .all()
    .map((row) => toKeyView(row, now));
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
export function tidyKeys(deps: Pick<Deps, "db" | "clock">): number {
  const cutoff = deps.clock.now() - KEY_TIDY_AFTER_MS;
  const result = deps.db
    .delete(apiKeys)
    .where(
      or(
        and(isNotNull(apiKeys.revokedAt), lt(apiKeys.revokedAt, cutoff)),
        and(isNotNull(apiKeys.graceUntil), lt(apiKeys.graceUntil, cutoff)),
        and(isNotNull(apiKeys.expiresAt), lt(apiKeys.expiresAt, cutoff)),
      ),
    )
    .returning({ id: apiKeys.id })
    .all();
  return result.length;
}
