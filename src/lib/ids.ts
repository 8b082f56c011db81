/** Random identifiers. UUIDv7 sorts by creation time, which makes "newest first" cursors cheap. */
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a syntactically valid UUID (any version). */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_RE.test(value);
}
