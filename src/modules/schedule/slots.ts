/**
 * The posting schedule (decisions.md §14): slots of weekdays × a wall-clock time × connections, in the account's time
 * zone. GET/PUT /api/v1/schedule/slots read and replace it; `slotTimes` walks the coming slot instants in order, which
 * is what the queue fills. A slot's time is a wall-clock time: 09:00 stays 09:00 across a DST change. A time a
 * spring-forward night skips (02:30) falls the length of the gap later (03:30); a time an autumn night repeats is
 * its later instant (lib/zoned.ts). Slots that fall on the same instant are one slot with both slots' targets.
 */
import { eq } from "drizzle-orm";
import type { StoredSlot } from "../../db/schema/accounts";
import { accounts } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField } from "../../lib/errors";
import { assertOwner, checkTimeZone, DEFAULT_TIME_ZONE, type SettingsCaller } from "../accounts/settings";
import { listConnections } from "../connections/service";
import { addDays, TIME_RE, zonedParts, zonedToUtc } from "../../lib/zoned";

/** The weekdays as the API names them, Monday first (lib/zoned.ts weekdayOf: Monday 0). */
export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];
/** At most this many slots in a schedule. */
export const MAX_SLOTS = 300;

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
  return scheduleOf(row);
}

/** The schedule an account row stores (its time zone and slots; none: the default zone, no slots). */
export function scheduleOf(row: { timeZone: string; slots: StoredSlot[] } | undefined): PostingSchedule {
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

const DAY_MS = 24 * 60 * 60 * 1000;
/** How many (zone, date) midnights are remembered (a zone's rules do not change while the process runs). */
const MIDNIGHT_CACHE_MAX = 50_000;
const midnights = new Map<string, number | null>();

/** The instant a date's 00:00 is in `timeZone` (a midnight a clock change skips: the instant after the gap). */
function midnightOf(date: string, timeZone: string): number | null {
  const key = `${timeZone}\u0000${date}`;
  let at = midnights.get(key);
  if (at === undefined) {
    if (midnights.size >= MIDNIGHT_CACHE_MAX) midnights.clear();
    at = zonedToUtc(date, "00:00", timeZone);
    midnights.set(key, at);
  }
  return at;
}

type WeekPlan = readonly (readonly { minute: number; time: string; targets: ReadonlySet<string> }[])[];
/** How many schedules' week plans are remembered (by their slots' JSON): the queue asks for one on every call. */
const PLAN_CACHE_MAX = 200;
const plans = new Map<string, WeekPlan>();

/** Each weekday's slots as minutes after midnight, in order, slots at the same time merged (remembered per schedule). */
function weekPlan(schedule: PostingSchedule): WeekPlan {
  const key = JSON.stringify(schedule.slots);
  let plan = plans.get(key);
  if (plan === undefined) {
    if (plans.size >= PLAN_CACHE_MAX) plans.clear();
    plan = buildWeekPlan(schedule);
    plans.set(key, plan);
  }
  return plan;
}

function buildWeekPlan(schedule: PostingSchedule): WeekPlan {
  return WEEKDAYS.map((day) => {
    const byTime = new Map<string, Set<string>>();
    for (const slot of schedule.slots) {
      if (!slot.days.includes(day)) continue;
      const targets = byTime.get(slot.time) ?? new Set<string>();
      for (const target of slot.targets) targets.add(target);
      byTime.set(slot.time, targets);
    }
    return [...byTime.entries()]
      .map(([time, targets]) => ({ minute: Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5)), time, targets }))
      .sort((a, b) => a.minute - b.minute);
  });
}

/**
 * The slot instants from `from` (inclusive) to `to` (exclusive), in order, each with the union of the targets of the
 * slots that fall on it. Walks the zone's calendar days, so a slot keeps its wall-clock time across DST changes. A day
 * of 24 hours places its slots by arithmetic from its midnight; only a day with a clock change asks the zone for each.
 */
export function* slotTimes(schedule: PostingSchedule, from: number, to: number): Generator<SlotTime> {
  if (schedule.slots.length === 0) return;
  const plan = weekPlan(schedule);
  const zone = schedule.timeZone;
  // The day before `from`'s zoned date too: its late slots can still lie ahead of `from` near a change.
  let date = addDays(zonedParts(from, zone).date, -1);
  for (let guard = 0; guard < 800; guard++) {
    const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
    const next = addDays(date, 1);
    const start = midnightOf(date, zone);
    const end = midnightOf(next, zone);
    const regular = start !== null && end !== null && end - start === DAY_MS;
    const daySlots = plan[weekday] ?? [];
    let instants: { at: number; targets: ReadonlySet<string> }[];
    if (regular) {
      // Distinct times in order (weekPlan merged equal ones): their instants are distinct and in order too.
      instants = daySlots.map((slot) => ({ at: start + slot.minute * 60_000, targets: slot.targets }));
    } else {
      // A time a spring night skips can fall on a later slot's instant: one slot with both's targets.
      const byInstant = new Map<number, Set<string>>();
      for (const slot of daySlots) {
        const at = zonedToUtc(date, slot.time, zone);
        if (at === null) continue;
        byInstant.set(at, new Set([...(byInstant.get(at) ?? []), ...slot.targets]));
      }
      instants = [...byInstant.entries()].map(([at, targets]) => ({ at, targets })).sort((a, b) => a.at - b.at);
    }
    for (const { at, targets } of instants) {
      if (at < from) continue;
      if (at >= to) return;
      yield { at, targets };
    }
    if (start !== null && start > to) return;
    date = next;
  }
}

/** The instants already taken by queued posts, as the free-slot walk asks about them. */
export interface SlotsTaken {
  has(at: number): boolean;
}

/**
 * The first slot instant in [from, to) that holds every one of `targetIds` and that `taken` does not hold, or null.
 * The queue's hot path: with thousands of slots already taken it walks them as numbers (a day of 24 hours places its
 * slots by arithmetic from its midnight), never building the objects slotTimes yields.
 */
export function firstFreeSlotTime(schedule: PostingSchedule, targetIds: readonly string[], taken: SlotsTaken, from: number, to: number): number | null {
  if (schedule.slots.length === 0) return null;
  const plan = weekPlan(schedule).map((day) => day.filter((slot) => targetIds.every((id) => slot.targets.has(id))));
  if (plan.every((day) => day.length === 0)) return null;
  const zone = schedule.timeZone;
  let date = addDays(zonedParts(from, zone).date, -1);
  for (let guard = 0; guard < 800; guard++) {
    const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
    const next = addDays(date, 1);
    const start = midnightOf(date, zone);
    const end = midnightOf(next, zone);
    if (start !== null && end !== null && end - start === DAY_MS) {
      for (const slot of plan[weekday] ?? []) {
        const at = start + slot.minute * 60_000;
        if (at >= to) return null;
        if (at >= from && !taken.has(at)) return at;
      }
    } else {
      const day = [...slotTimes(schedule, Math.max(from, start ?? from), end ?? to)];
      for (const slot of day) {
        if (slot.at >= to) return null;
        if (slot.at >= from && !taken.has(slot.at) && targetIds.every((id) => slot.targets.has(id))) return slot.at;
      }
    }
    if (start !== null && start > to) return null;
    date = next;
  }
  return null;
}
