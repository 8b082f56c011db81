/**
 * Column types the PostgreSQL schema shares. `jsonDocument` is jsonb whose value is sent as text and cast by the
 * server (`$1::text::jsonb`) instead of going through drizzle's own `jsonb()`: through `drizzle-orm/bun-sql` (the
 * driver we use, docs/choices.md) drizzle's `jsonb()` sends `JSON.stringify(value)` as a jsonb parameter, which Bun.sql
 * encodes as JSON once more, so PostgreSQL stores a JSON *string* ('"[\"a\"]"') that only drizzle can read back as
 * the value (the SQL side, `jsonb_typeof`, `->`, `@>`, sees a string). The cast works the same on every driver.
 * Only objects and arrays: a top-level JSON string would be ambiguous on the way back.
 */
import { type SQL, sql } from "drizzle-orm";
import { customType } from "drizzle-orm/pg-core";

/** A jsonb column holding a `T` (an object or an array), stored as that JSON value. */
export function jsonDocument<T extends object>(name: string) {
  return customType<{ data: T; driverData: unknown }>({
    dataType: () => "jsonb",
    toDriver: (value): SQL => sql`${JSON.stringify(value)}::text::jsonb`,
    // Drivers parse jsonb themselves; a string here is text from a driver that does not (parsed the same way).
    fromDriver: (value) => (typeof value === "string" ? JSON.parse(value) : value) as T,
  })(name);
}
