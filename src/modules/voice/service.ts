/** The account's brand voice: stored once edited, DEFAULT_VOICE until then. */
import { eq } from "drizzle-orm";
import { brandVoices } from "../../db/tables";
import type { Deps } from "../../deps";
import { type BrandVoice, DEFAULT_VOICE } from "../../generation/generator";
import { invalidField } from "../../lib/errors";

/** The voice generators use for `accountId` (the defaults when never saved). */
export async function getVoice(deps: Pick<Deps, "store">, accountId: string): Promise<BrandVoice> {
  const row = await deps.store.db.select().from(brandVoices).where(eq(brandVoices.accountId, accountId)).get();
  if (!row) return { ...DEFAULT_VOICE, hashtags: [...DEFAULT_VOICE.hashtags], bannedWords: [...DEFAULT_VOICE.bannedWords] };
  return {
    tone: row.tone,
    audience: row.audience,
    language: row.language,
    emoji: row.emoji,
    hashtags: row.hashtags,
    bannedWords: row.bannedWords,
    signature: row.signature,
  };
}

/** Trims, drops duplicates (case-insensitively) and keeps the first spelling. */
function cleanList(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of values) {
    const value = raw.trim();
    const folded = value.toLocaleLowerCase();
    if (value && !seen.has(folded)) {
      seen.add(folded);
      out.push(value);
    }
  }
  return out;
}

/** Hashtags are stored with their `#` and without spaces, so generators can append them as they are. */
function cleanHashtags(values: readonly string[]): string[] {
  const bare = values.map((tag, i) => {
    const word = tag.trim().replace(/^#+/, "");
    if (!/^[\p{L}\p{N}_]+$/u.test(word)) throw invalidField(`hashtags.${i}`, "must be letters, digits or _ (one word)");
    return word;
  });
  return cleanList(bare).map((word) => `#${word}`);
}

/**
 * 400 for a banned word holding an unpaired UTF-16 surrogate: not text, and the list is stored as a JSON document,
 * which PostgreSQL's jsonb refuses with such an escape in it (SQLite kept it), so both databases answer the same.
 */
function refuseUnpairedSurrogates(field: string, values: readonly string[]): void {
  values.forEach((value, i) => {
    if (/\p{Cs}/u.test(value)) throw invalidField(`${field}.${i}`, "must be valid Unicode text (it holds an unpaired surrogate)");
  });
}

/** Saves the voice: fields given replace the current ones, fields omitted keep them. Returns the stored voice. */
export async function putVoice(deps: Pick<Deps, "store" | "clock">, accountId: string, changes: Partial<BrandVoice>): Promise<BrandVoice> {
  if (changes.bannedWords) refuseUnpairedSurrogates("bannedWords", changes.bannedWords);
  const current = await getVoice(deps, accountId);
  const language = (changes.language ?? current.language).trim();
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(language)) throw invalidField("language", "must be a language tag such as en or pt-BR");
  const next: BrandVoice = {
    tone: (changes.tone ?? current.tone).trim(),
    audience: (changes.audience ?? current.audience).trim(),
    language,
    emoji: changes.emoji ?? current.emoji,
    hashtags: changes.hashtags ? cleanHashtags(changes.hashtags) : current.hashtags,
    bannedWords: changes.bannedWords ? cleanList(changes.bannedWords) : current.bannedWords,
    signature: (changes.signature ?? current.signature).trim(),
  };
  const row = { ...next, updatedAt: deps.clock.now() };
  await deps.store.write((tx) =>
    tx
      .insert(brandVoices)
      .values({ accountId, ...row })
      .onConflictDoUpdate({ target: brandVoices.accountId, set: row })
      .run(),
  );
  return next;
}
