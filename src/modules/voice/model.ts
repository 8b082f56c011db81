/** The brand voice body of GET/PUT /api/v1/voice (decisions.md §6). */
import { t } from "elysia";

export const MAX_TAGS = 30;
export const MAX_TAG_LENGTH = 100;

const tagList = (description: string) =>
  t.Array(t.String({ minLength: 1, maxLength: MAX_TAG_LENGTH }), { maxItems: MAX_TAGS, description });

export const voiceSchema = t.Object({
  tone: t.String({ maxLength: 200, description: 'How posts sound, e.g. "friendly", "formal".' }),
  audience: t.String({ maxLength: 300, description: "Who the posts are for." }),
  language: t.String({ minLength: 2, maxLength: 35, description: "BCP 47 language tag, e.g. en, de, pt-BR." }),
  emoji: t.Union([t.Literal("none"), t.Literal("some"), t.Literal("lots")], { description: "none, some or lots." }),
  hashtags: tagList("Hashtags to add, with or without #."),
  bannedWords: tagList("Words that never appear in a caption."),
  signature: t.String({ maxLength: 200, description: "A line appended to captions, e.g. a sign-off." }),
}, { title: "Voice" });

/** PUT accepts a partial voice: omitted fields keep their current value. */
export const voicePatchSchema = t.Partial(voiceSchema, { title: "VoicePatch" });
