/**
 * The account's own settings (decisions.md §14): its time zone (the one posting slots and repeats follow; each member
 * still sees times in their own) and whether editors' posts wait for an owner's approval (the flag only; approval
 * itself is the schedule module's). Reading needs the read group; changing needs an owner.
 */
import { eq } from "drizzle-orm";
import type { Role } from "../../auth/scopes";
import type { StoreDb } from "../../db/store";
import { accounts } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { DEFAULT_TIME_ZONE, isTimeZone } from "../../web/preferences";

export { DEFAULT_TIME_ZONE };

/** The account as GET /api/v1/account answers it. */
export interface AccountSettingsApi {
  id: string;
  name: string;
  timeZone: string;
  approvalRequired: boolean;
}

/** Who asks: the account and the member's current role (a key's or an MCP grant's, read at every request). */
export interface SettingsCaller {
  accountId: string;
  role: Role;
}

/** A change of the settings; a field left out stays as it is. */
export interface AccountSettingsChange {
  timeZone?: string;
  approvalRequired?: boolean;
}

/** 403 forbidden with requiredRole "owner" unless `role` is owner (decisions.md §14). */
export function assertOwner(role: Role, what: string): void {
  if (role !== "owner") {
    throw new AppError("forbidden", `Only an owner of the account can ${what}.`, { requiredRole: "owner" });
  }
}

/** A time zone as the API takes it: an IANA name this runtime knows (Europe/Berlin, UTC); 400 invalid_request otherwise. */
export function checkTimeZone(field: string, name: string): string {
  const trimmed = name.trim();
  if (!isTimeZone(trimmed)) throw invalidField(field, "must be an IANA time zone name such as Europe/Berlin or UTC");
  // Intl answers the canonical spelling (europe/berlin → Europe/Berlin).
  return new Intl.DateTimeFormat("en", { timeZone: trimmed }).resolvedOptions().timeZone;
}

/** GET /api/v1/account. */
export async function getAccountSettings(deps: Pick<Deps, "store">, accountId: string): Promise<{ account: AccountSettingsApi }> {
  const row = await deps.store.db
    .select({ id: accounts.id, name: accounts.name, timeZone: accounts.timeZone, approvalRequired: accounts.approvalRequired })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .get();
  if (!row) throw notFound("account");
  return { account: row };
}

/** The zone the account's slots and repeats follow. */
export async function accountTimeZone(db: StoreDb, accountId: string): Promise<string> {
  const row = await db.select({ timeZone: accounts.timeZone }).from(accounts).where(eq(accounts.id, accountId)).get();
  return row?.timeZone ?? DEFAULT_TIME_ZONE;
}

/**
 * PATCH /api/v1/account: an owner changes the time zone and/or the approval flag. Every field is checked before
 * anything is written; a refusal writes nothing.
 */
export async function updateAccountSettings(
  deps: Pick<Deps, "store">,
  caller: SettingsCaller,
  change: AccountSettingsChange,
): Promise<{ account: AccountSettingsApi }> {
  assertOwner(caller.role, "change the account's settings");
  if (change.timeZone === undefined && change.approvalRequired === undefined) {
    throw new AppError("invalid_request", "Send time_zone, approval_required or both.", {
      details: [{ field: "body", problem: "must contain time_zone or approval_required" }],
    });
  }
  const values: { timeZone?: string; approvalRequired?: boolean } = {};
  if (change.timeZone !== undefined) values.timeZone = checkTimeZone("time_zone", change.timeZone);
  if (change.approvalRequired !== undefined) values.approvalRequired = change.approvalRequired;
  await deps.store.write(async (tx) => {
    await tx.update(accounts).set(values).where(eq(accounts.id, caller.accountId)).run();
  });
  return getAccountSettings(deps, caller.accountId);
}
