// PostgreSQL mirror of src/db/schema/login-throttle.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Failed sign-in counts (dashboard login throttling), kept in the database so a lockout survives any spray of other
 * emails and a restart, and is shared by every process serving the dashboard. One row per counted thing: an email at
 * one source address, or a source address across all emails. The key is an HMAC under the instance secret, so
 * neither typed emails (sometimes a password typed in the wrong field) nor addresses are stored in clear.
 */
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";

export const loginThrottle = pgTable(
  "login_throttle",
  {
    /** `email:<hmac>` (email at an address) or `address:<hmac>` (an address across emails). */
    key: text("key").primaryKey(),
    /** Attempts counted in the current window (counted before the password is checked; a success takes its own back). */
    failures: bigint("failures", { mode: "number" }).notNull(),
    /** When the window began (ms): the first counted attempt. The window lasts LOGIN_WINDOW_MS from here. */
    windowStart: bigint("window_start", { mode: "number" }).notNull(),
  },
  (t) => [index("login_throttle_window_idx").on(t.windowStart)],
);
