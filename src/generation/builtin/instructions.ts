/**
 * Reads free-text change instructions ("shorter, no emoji", "more formal please") into flags the builtin
 * generator understands. Unknown words are ignored: a deterministic writer cannot follow arbitrary prose.
 */

/** What the instructions ask for; undefined means "no change". */
export interface ChangeFlags {
  length?: "shorter" | "longer";
  register?: "more_formal" | "more_casual";
  emoji?: "none" | "more";
  addQuestion?: boolean;
  noHashtags?: boolean;
}

const RULES: { re: RegExp; apply: (f: ChangeFlags) => void }[] = [
  { re: /\b(shorter|shorten|brief(er)?|concise|less text|tighter|trim)\b/, apply: (f) => (f.length = "shorter") },
  { re: /\b(longer|lengthen|more detail(s|ed)?|expand|elaborate)\b/, apply: (f) => (f.length = "longer") },
  { re: /\b(more formal|less casual|(?<!less )formal|professional|serious)\b/, apply: (f) => (f.register = "more_formal") },
  { re: /\b(more casual|less formal|(?<!less )casual|relaxed|informal|friendlier|more fun|playful)\b/, apply: (f) => (f.register = "more_casual") },
  { re: /\b(no|without|remove|drop|fewer|less) emojis?\b/, apply: (f) => (f.emoji = "none") },
  { re: /\b(more|add|extra|lots of) emojis?\b/, apply: (f) => (f.emoji = "more") },
  { re: /\b(add|ask|include|end with) (a )?question\b/, apply: (f) => (f.addQuestion = true) },
  { re: /\b(no|without|remove|drop) (the )?hashtags?\b/, apply: (f) => (f.noHashtags = true) },
];

/** Parses change instructions; later mentions win when two contradict (e.g. "shorter ... no, longer"). */
export function parseInstructions(text: string | undefined): ChangeFlags {
  const flags: ChangeFlags = {};
  if (!text) return flags;
  const lower = text.toLowerCase();
  // Apply in order of appearance so the last instruction wins.
  const hits: { index: number; apply: (f: ChangeFlags) => void }[] = [];
  for (const rule of RULES) {
    const m = rule.re.exec(lower);
    if (m) hits.push({ index: m.index, apply: rule.apply });
  }
  hits.sort((a, b) => a.index - b.index).forEach((h) => h.apply(flags));
  return flags;
}
