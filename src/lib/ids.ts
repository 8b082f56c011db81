/**
 * Random identifiers. UUIDv7 sorts by creation time, which makes "newest first" cursors cheap. NB: a UUIDv7 carries
 * 62 random bits, not 74: 48 bits are the millisecond timestamp, 4 the version, 2 the variant, and Bun fills the
 * 12-bit rand_a field with a sequence that keeps ids from one millisecond in order. 62 unguessable bits (with the
 * time of creation guessable) is what an id-named public URL rests on.
 */
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a syntactically valid UUID (any version). */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_RE.test(value);
}
