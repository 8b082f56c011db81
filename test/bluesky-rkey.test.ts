/**
 * Record keys per part of a thread (src/publishing/bluesky-rkey.ts): part 0 keeps the target's key, every part has its
 * own valid TID, the keys of one thread sort in sending order, and they are stable across calls.
 */
import { expect, test } from "bun:test";
import { recordKeyForPart, recordKeyForTarget } from "../src/publishing/bluesky-rkey";
import { newId } from "../src/lib/ids";

/** The atproto TID syntax: 13 base32-sortable characters, the first of which keeps the top bit 0. */
const TID_RE = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

test("each of 26 parts (the post, 24 thread parts, the first comment) has its own TID, in sending order, stable", () => {
  for (let round = 0; round < 50; round++) {
    const targetId = newId();
    const keys = Array.from({ length: 26 }, (_, i) => recordKeyForPart(targetId, i));
    expect(keys[0]).toBe(recordKeyForTarget(targetId));
    expect(keys.every((k) => TID_RE.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(26);
    expect([...keys].sort()).toEqual(keys);
    expect(Array.from({ length: 26 }, (_, i) => recordKeyForPart(targetId, i))).toEqual(keys);
  }
});
