/**
 * Wall-clock times in an IANA time zone, with the platform's Intl (no library: Intl carries the tz database the
 * runtime ships). Dates travel as "YYYY-MM-DD" strings, times as "HH:MM"; instants as epoch milliseconds.
 */

export interface ZonedParts {
  date: string;
  time: string;
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The wall-clock date and time of `ms` in `timeZone`. */
export function zonedParts(ms: number, timeZone: string): ZonedParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const year = parts.year ?? 1970;
  const month = parts.month ?? 1;
  const day = parts.day ?? 1;
  const hour = (parts.hour ?? 0) % 24;
  const minute = parts.minute ?? 0;
  return { year, month, day, hour, minute, date: `${year}-${pad(month)}-${pad(day)}`, time: `${pad(hour)}:${pad(minute)}` };
}

/** The zone's offset from UTC at `ms`, in milliseconds (Berlin in winter: +3 600 000). */
function offsetAt(ms: number, timeZone: string): number {
  const p = zonedParts(ms, timeZone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, new Date(ms).getUTCSeconds());
  return wall - (ms - (ms % 1000));
}

export const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
export const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * The instant a wall-clock date and time in `timeZone` names, or null when either is malformed. A time skipped by a
 * clock change (02:30 on a spring-forward night) is read as the same length of time after the change.
 */
export function zonedToUtc(date: string, time: string, timeZone: string): number | null {
  const d = DATE_RE.exec(date);
  const t = TIME_RE.exec(time);
  if (!d || !t) return null;
  const wall = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(t[1]), Number(t[2]));
  if (Number.isNaN(wall) || zonedDateValid(date) === false) return null;
  // Two passes settle the offset on either side of a change.
  let guess = wall - offsetAt(wall, timeZone);
  guess = wall - offsetAt(guess, timeZone);
  return guess;
}

/** True when "YYYY-MM-DD" is a real calendar date. */
export function zonedDateValid(date: string): boolean {
  const d = DATE_RE.exec(date);
  if (!d) return false;
  const probe = new Date(Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3])));
  return probe.getUTCFullYear() === Number(d[1]) && probe.getUTCMonth() === Number(d[2]) - 1 && probe.getUTCDate() === Number(d[3]);
}

/** The range of dates the dashboard works with: four-digit years from 1970 (past it, the result is clamped). */
export const FIRST_DATE = "1970-01-01";
export const LAST_DATE = "9999-12-31";

function clampedDate(ms: number): string {
  if (Number.isNaN(ms) || ms < Date.UTC(1970, 0, 1)) return FIRST_DATE;
  if (ms > Date.UTC(9999, 11, 31)) return LAST_DATE;
  return new Date(ms).toISOString().slice(0, 10);
}

/** "YYYY-MM-DD" plus `days` (calendar arithmetic, no zone involved), kept within FIRST_DATE…LAST_DATE. */
export function addDays(date: string, days: number): string {
  const d = DATE_RE.exec(date);
  if (!d) return date;
  return clampedDate(Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]) + days));
}

/** Weekday of a date, Monday 0 … Sunday 6. */
export function weekdayOf(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return (new Date(ms).getUTCDay() + 6) % 7;
}

/** The Monday of the week holding `date`. */
export function mondayOf(date: string): string {
  return addDays(date, -weekdayOf(date));
}

/** First of the month of `date`. */
export function firstOfMonth(date: string): string {
  return `${date.slice(0, 8)}01`;
}

/** First of the month `months` after the month of `date`. */
export function addMonths(date: string, months: number): string {
  const d = DATE_RE.exec(date);
  if (!d) return date;
  return clampedDate(Date.UTC(Number(d[1]), Number(d[2]) - 1 + months, 1));
}

/** A date for people: "Wednesday 25 November 2026". */
export function longDate(date: string): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString("en-GB", { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
}

/** A short date: "Wed 25 Nov". */
export function shortDate(date: string): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
}

/** "November 2026". */
export function monthTitle(date: string): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
}

function shortName(ms: number, timeZone: string, locale: string): string | null {
  const part = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: "short" }).formatToParts(new Date(ms)).find((p) => p.type === "timeZoneName");
  return part?.value ?? null;
}

/**
 * The zone's short name at `ms`, for labels: a name people know where one exists ("CET" in Berlin, "EST" in New York:
 * British English knows the first, American English the second), else the offset ("GMT+9").
 */
export function zoneAbbreviation(ms: number, timeZone: string): string {
  const gb = shortName(ms, timeZone, "en-GB");
  if (gb && !gb.startsWith("GMT") && !gb.startsWith("UTC")) return gb;
  const us = shortName(ms, timeZone, "en-US");
  if (us && !us.startsWith("GMT") && !us.startsWith("UTC")) return us;
  return gb ?? us ?? timeZone;
}

/**
 * The zone's short name over the days `first`…`last` (YYYY-MM-DD, as at noon each day), for a calendar heading:
 * "EST", or "EDT, then EST from Sun 1 Nov" when the clocks change within those days.
 */
export function zoneNameOver(first: string, last: string, timeZone: string): string {
  const at = (date: string) => zoneAbbreviation(zonedToUtc(date, "12:00", timeZone) ?? Date.parse(`${date}T12:00:00Z`), timeZone);
  const start = at(first);
  for (let d = first; d < last; ) {
    const next = addDays(d, 1);
    if (next === d) break;
    const name = at(next);
    if (name !== start) return `${start}, then ${name} from ${shortDate(next)}`;
    d = next;
  }
  return start;
}

/** A zone's name for reading: "America/New York" for America/New_York. */
export function zoneLabel(timeZone: string): string {
  return timeZone.replace(/_/g, " ");
}
