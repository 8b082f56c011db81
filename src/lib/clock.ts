/**
 * Time is injected: services read `deps.clock.now()`, never `Date.now()`, so tests move time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock used in production. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests set and advance by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: number | string | Date = "2026-11-22T10:00:00.000Z") {
    this.current = new Date(start).getTime();
  }
  now(): number {
    return this.current;
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.current += ms;
  }
  /** Sets the time. */
  set(at: number | string | Date): void {
    this.current = new Date(at).getTime();
  }
}

/** ISO 8601 UTC with milliseconds and `Z`, the only timestamp format the API speaks. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
