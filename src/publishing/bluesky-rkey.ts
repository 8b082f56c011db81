/**
 * The Bluesky record key of a target and of each part of its thread, derived from the target's id so a retry after a
 * crash can only ever write the same record (the PDS refuses a second record under one key, and getRecord tells
 * whether the first one landed).
 * The key is a valid TID (the lexicon's key type for posts): 13 base32-sortable characters of a 64-bit integer whose
 * top bit is 0, 53 bits of microseconds (the target id's UUIDv7 millisecond time plus a hashed sub-millisecond part)
 * and 10 bits of a hashed clock id.
 */
import { createHash } from "node:crypto";

const S32_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz";
const TID_LENGTH = 13;

/** The deterministic TID record key for `targetId` (a UUIDv7; any string works, time then comes from the hash). */
export function recordKeyForTarget(targetId: string): string {
  return recordKeyForPart(targetId, 0);
}

/**
 * The deterministic TID record key of part `index` of `targetId`'s post (0 is the post itself, then the thread parts
 * and the first comment, connector.ts partsOf): the post's key plus `index` microseconds, so a thread's keys are
 * distinct and sort in the order the parts go out.
 */
export function recordKeyForPart(targetId: string, index: number): string {
  const digest = createHash("sha256").update(`seedcast:bluesky-rkey:${targetId}`).digest();
  const hex = targetId.replaceAll("-", "");
  const uuidMs = /^[0-9a-f]{12}/i.test(hex) ? Number.parseInt(hex.slice(0, 12), 16) : digest.readUIntBE(0, 5);
  const micros = BigInt(uuidMs) * 1000n + BigInt(digest.readUInt16BE(0) % 1000) + BigInt(index);
  const clockId = BigInt(digest.readUInt16BE(2) & 0x3ff);
  let value = ((micros & ((1n << 53n) - 1n)) << 10n) | clockId;
  let out = "";
  for (let i = 0; i < TID_LENGTH; i++) {
    out = S32_ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}
