/**
 * RFC 3339 timestamps (`date-time` of section 5.6) → epoch milliseconds, strictly: a full date, `T` (or `t`, or the
 * space RFC 3339 allows by note), hours and minutes, optional seconds and fraction, and `Z`/`z` or a `±HH:MM` offset.
 * Every field is range-checked (no 2026-02-30, no 25:00, no offset over 23:59); `Date.parse` alone accepts and rolls
 * over such values. A leap second (`:60`) is read as the last millisecond of its minute.
 */

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch, or null when `value` is not an RFC 3339 date-time. */
export function parseRfc3339(value: string): number | null {
  const m = RFC3339_RE.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  let offsetMs = 0;
  if (m[8] === undefined) {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    if (offHours > 23 || offMinutes > 59) return null;
    offsetMs = (m[9] === "-" ? -1 : 1) * (offHours * 60 + offMinutes) * 60_000;
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, Math.min(second, 59), second === 60 ? 999 : millis);
  return utc.getTime() - offsetMs;
}
