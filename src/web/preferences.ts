/**
 * The person's own settings: their IANA time zone. Every time the dashboard shows is in it, and every time typed in a
 * form is read in it. Until it is set, the page script sends the browser's zone once (`Intl...timeZone`); without
 * script the zone is UTC until chosen on the Account page.
 */
import { eq } from "drizzle-orm";
import type { Deps } from "../deps";
import { userPreferences } from "../db/tables";

export const DEFAULT_TIME_ZONE = "UTC";

/** True for a zone name this runtime knows (IANA names such as Europe/Berlin, and UTC). */
export function isTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Every zone the runtime knows, for the settings select. */
export function timeZones(): string[] {
  const supported = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.("timeZone") ?? [];
  return supported.includes("UTC") ? supported : ["UTC", ...supported];
}

/** The person's zone, or null when never set. */
export async function storedTimeZone(deps: Pick<Deps, "store">, userId: string): Promise<string | null> {
  const row = await deps.store.db.select({ tz: userPreferences.timeZone }).from(userPreferences).where(eq(userPreferences.userId, userId)).get();
  return row && isTimeZone(row.tz) ? row.tz : null;
}

/** Saves the person's zone (the caller has checked `isTimeZone`). */
export async function saveTimeZone(deps: Pick<Deps, "store" | "clock">, userId: string, timeZone: string): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    await tx
      .insert(userPreferences)
      .values({ userId, timeZone, updatedAt: now })
      .onConflictDoUpdate({ target: userPreferences.userId, set: { timeZone, updatedAt: now } })
      .run();
  });
}

/** The zone of each request's session, looked up once by the route wrappers (null: never set). */
const sessionZones = new WeakMap<object, string | null>();

/** Remembers the person's stored zone for this request's session object. */
export async function rememberZone(deps: Pick<Deps, "store">, session: { userId: string }): Promise<void> {
  sessionZones.set(session, await storedTimeZone(deps, session.userId));
}

/** The zone to show times in for this session: the stored one, else UTC. */
export function zoneOf(session: object): string {
  return sessionZones.get(session) ?? DEFAULT_TIME_ZONE;
}

/** True when the person has not chosen a zone yet (the page script then sends the browser's). */
export function zoneUnset(session: object): boolean {
  return sessionZones.has(session) && sessionZones.get(session) === null;
}

/** At sign-in and setup: the browser's zone (sent by the page script) becomes the person's, unless they chose one. */
export async function adoptBrowserZone(deps: Pick<Deps, "store" | "clock">, userId: string, zone: string): Promise<void> {
  if (isTimeZone(zone.trim()) && (await storedTimeZone(deps, userId)) === null) await saveTimeZone(deps, userId, zone.trim());
}
