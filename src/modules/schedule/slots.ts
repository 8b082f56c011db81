/**
 * The posting schedule (decisions.md §14): slots of weekdays × a wall-clock time × connections, in the account's time
 * zone. GET/PUT /api/v1/schedule/slots read and replace it; `slotTimes` walks the coming slot instants in order, which
 * is what the queue fills. A slot's time is a wall-clock time: 09:00 stays 09:00 across a DST change. A time a
 * spring-forward night skips (02:30) falls the length of the gap later (03:30); a time an autumn night repeats is
 * its later instant (dashboard/zoned.ts). Slots that fall on the same instant are one slot with both slots' targets.
 */
import { eq } from "drizzle-orm";
import type { StoredSlot } from "../../db/schema/accounts";
import { accounts } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField } from "../../lib/errors";
import { assertOwner, checkTimeZone, DEFAULT_TIME_ZONE, type SettingsCaller } from "../accounts/settings";
import { listConnections } from "../connections/service";
import { addDays, TIME_RE, zonedParts, zonedToUtc } from "../dashboard/zoned";

/** The weekdays as the API names them, Monday first (dashboard/zoned.ts weekdayOf: Monday 0). */
export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];
/** At most this many slots in a schedule. */
export const MAX_SLOTS = 100;

/** One slot as the API shows it. */
export interface PostingSlot {
  days: Weekday[];
  time: string;
  targets: string[];
}

/** The schedule as GET answers it and PUT takes it. */
export interface PostingSchedule {
  timeZone: string;
  slots: PostingSlot[];
}

function isWeekday(day: string): day is Weekday {
  return (WEEKDAYS as readonly string[]).includes(day);
}

/** One coming slot: its instant and the connections it posts to. */
export interface SlotTime {
  at: number;
  targets: ReadonlySet<string>;
}

/** GET /api/v1/schedule/slots. */
export async function getSlots(deps: Pick<Deps, "store">, accountId: string): Promise<PostingSchedule> {
  const row = await deps.store.db
    .select({ timeZone: accounts.timeZone, slots: accounts.postingSlots })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .get();
  const slots = (row?.slots ?? []).map((slot: StoredSlot) => ({ days: slot.days.filter(isWeekday), time: slot.time, targets: slot.targets }));
  return { timeZone: row?.timeZone ?? DEFAULT_TIME_ZONE, slots };
}

/**
 * A schedule as sent, checked and put in order: days known and each once (in week order), times "HH:MM", targets the
 * ids of this account's connections (400 unknown_target otherwise), each once. Two slots with the same time and days
 * stay two entries (their targets are merged when the queue reads them).
 */
function cleanSlots(slots: readonly StoredSlot[], connectionIds: ReadonlySet<string>): PostingSlot[] {
  if (slots.length > MAX_SLOTS) throw invalidField("slots", `at most ${MAX_SLOTS} slots`);
  return slots.map((slot, i) => {
    const days = new Set<string>();
    for (const day of slot.days) {
      const name = day.trim().toLowerCase();
      if (!isWeekday(name)) throw invalidField(`slots[${i}].days`, "must be days among mon, tue, wed, thu, fri, sat, sun");
      days.add(name);
    }
    if (days.size === 0) throw invalidField(`slots[${i}].days`, "must name at least one day");
    if (!TIME_RE.test(slot.time)) throw invalidField(`slots[${i}].time`, "must be a 24-hour time HH:MM such as 09:30");
    const targets = [...new Set(slot.targets)];
    if (targets.length === 0) throw invalidField(`slots[${i}].targets`, "must name at least one connection (an accountId from GET /schedule/targets)");
    for (const target of targets) {
      if (!connectionIds.has(target)) {
        throw new AppError("unknown_target", `No connected account has the id "${target}". Use an accountId from GET /api/v1/schedule/targets.`, { target });
      }
    }
    return { days: WEEKDAYS.filter((d) => days.has(d)), time: slot.time, targets };
  });
}

/**
 * PUT /api/v1/schedule/slots: replaces the schedule. A `timeZone` other than the account's changes the account's
 * zone, which needs an owner (403 forbidden, requiredRole owner). Everything is checked before anything is written.
 */
export async function putSlots(deps: Deps, caller: SettingsCaller, schedule: PostingSchedule): Promise<PostingSchedule> {
  const current = await getSlots(deps, caller.accountId);
  const timeZone = checkTimeZone("timeZone", schedule.timeZone);
  if (timeZone !== current.timeZone) assertOwner(caller.role, "change the account's time zone");
  const connectionIds = new Set((await listConnections(deps, caller.accountId)).map((c) => c.id));
  const slots = cleanSlots(schedule.slots, connectionIds);
  await deps.store.write(async (tx) => {
    await tx.update(accounts).set({ timeZone, postingSlots: slots }).where(eq(accounts.id, caller.accountId)).run();
  });
  return { timeZone, slots };
}

/**
 * The slot instants from `from` (inclusive) to `to` (exclusive), in order, each with the union of the targets of the
 * slots that fall on it. Walks the zone's calendar days, so a slot keeps its wall-clock time across DST changes.
 */
export function* slotTimes(schedule: PostingSchedule, from: number, to: number): Generator<SlotTime> {
  if (schedule.slots.length === 0) return;
  const byDay: PostingSlot[][] = WEEKDAYS.map((day) => schedule.slots.filter((s) => s.days.includes(day)));
  // The day before `from`'s zoned date too: a slot of that date can still be ahead of `from` in no zone, but the walk
  // starts there to be safe at the far ends of the offsets (±14 h).
  let date = addDays(zonedParts(from, schedule.timeZone).date, -1);
  for (let guard = 0; guard < 800; guard++) {
    const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
    const instants = new Map<number, Set<string>>();
    for (const slot of byDay[weekday] ?? []) {
      const at = zonedToUtc(date, slot.time, schedule.timeZone);
      if (at === null || at < from) continue;
      const targets = instants.get(at) ?? new Set<string>();
      for (const target of slot.targets) targets.add(target);
      instants.set(at, targets);
    }
    const sorted = [...instants.entries()].sort((a, b) => a[0] - b[0]);
    for (const [at, targets] of sorted) {
      if (at >= to) return;
      yield { at, targets };
    }
    // A day starts at most 14 h + a day after UTC midnight of its date: past `to` by then, nothing more comes.
    if (Date.parse(`${date}T00:00:00Z`) - 14 * 3_600_000 > to) return;
    date = addDays(date, 1);
  }
}
