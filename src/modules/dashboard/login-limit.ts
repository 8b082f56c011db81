/**
 * Login attempt limiting per (email, client address): after MAX_FAILURES failed attempts inside the window, further
 * attempts are refused until the window has passed since the first failure. A success clears the counter.
 * In memory on purpose: it resets on restart, which only ever helps the legitimate user.
 */
import type { Clock } from "../../lib/clock";

export const LOGIN_MAX_FAILURES = 5;
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/** Bounds memory under a spray of distinct emails. */
const MAX_TRACKED = 10_000;

interface Entry {
  failures: number;
  windowStart: number;
}

/** Counts failed logins per email+address. */
export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly clock: Clock) {}

  private key(email: string, address: string): string {
    return `${email.trim().toLowerCase()}\u0000${address}`;
  }

  /** Seconds until another attempt is allowed, or 0 when allowed now. */
  retryAfter(email: string, address: string): number {
    const entry = this.entries.get(this.key(email, address));
    if (!entry) return 0;
    const elapsed = this.clock.now() - entry.windowStart;
    if (elapsed >= LOGIN_WINDOW_MS) {
      this.entries.delete(this.key(email, address));
      return 0;
    }
    return entry.failures >= LOGIN_MAX_FAILURES ? Math.ceil((LOGIN_WINDOW_MS - elapsed) / 1000) : 0;
  }

  /** Records a failed attempt. */
  fail(email: string, address: string): void {
    const key = this.key(email, address);
    const now = this.clock.now();
    const entry = this.entries.get(key);
    if (!entry || now - entry.windowStart >= LOGIN_WINDOW_MS) {
      if (this.entries.size >= MAX_TRACKED) this.prune(now);
      this.entries.set(key, { failures: 1, windowStart: now });
      return;
    }
    entry.failures += 1;
  }

  /** Clears the counter after a successful login. */
  succeed(email: string, address: string): void {
    this.entries.delete(this.key(email, address));
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.windowStart >= LOGIN_WINDOW_MS) this.entries.delete(key);
    }
    // Still full: drop the oldest entries (Map keeps insertion order).
    for (const key of this.entries.keys()) {
      if (this.entries.size < MAX_TRACKED) break;
      this.entries.delete(key);
    }
  }
}
