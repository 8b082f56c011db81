/**
 * The builtin caption writer: extractive and deterministic, no model. It keeps every sentence of the seed that
 * states a time, date, price, address, phone number or link (facts.ts) and adds the strongest of the others, puts an
 * opener shaped by category and register in front, applies the brand voice (emoji level, hashtags, signature, banned
 * words) and fits the grapheme limit, giving up a fact only when even the fact alone does not fit. It adds no filler
 * ("Thanks for reading."): every sentence is the seed's own, the opener, or a question the seed or the person asked
 * for. `variant` rotates the wording so every regenerate reads differently.
 */
import type { BrandVoice, CaptionRequest, EmojiLevel, SeedText } from "../generator.ts";
import {
  CASUAL_TONES,
  CATEGORIES,
  EMOJI,
  FORMAL_TONES,
  OPENERS,
  QUESTIONS,
  type Category,
  type Register,
} from "./caption-templates.ts";
import { type Fact, factClauses, findFacts } from "./facts.ts";
import { parseInstructions, type ChangeFlags } from "./instructions.ts";
import {
  graphemeCount,
  keywords,
  removeBannedWords,
  splitSentences,
  stripEmoji,
  tidy,
  truncateGraphemes,
} from "./text.ts";

const ENGLISH = "en";
const PARAGRAPH = "\n\n";
/** How many seed sentences go in the body for each length. */
const BODY_SENTENCES = { shorter: 1, normal: 2, longer: 4 } as const;
/** How many other variants to try when one collides with the previous caption. */
const MAX_VARIANT_TRIES = 24;

/** Maps a free category string onto the ones we have templates for. */
export function normalizeCategory(category: string | null): Category {
  const c = (category ?? "").trim().toLowerCase();
  return (CATEGORIES as readonly string[]).includes(c) ? (c as Category) : "other";
}

/** A seed sentence with its score and original position. */
export interface ScoredSentence {
  text: string;
  index: number;
  score: number;
}

/**
 * Ranks the seed's sentences, best first: early position, a readable length, numbers, words shared with the
 * title, and a category cue (a question for question posts, a date/time for events, a price for products).
 */
export function rankSentences(seed: SeedText, category: Category): ScoredSentence[] {
  const sentences = splitSentences(seed.content).filter((s) => !/^#\S+(\s+#\S+)*$/.test(s)); // hashtag-only lines
  const titleWords = keywords(seed.title);
  const titleNorm = seed.title.trim().toLowerCase();
  const scored = sentences
    .filter((s) => s.toLowerCase() !== titleNorm)
    .map((text, index) => {
      const len = text.length;
      let score = Math.max(0.2, 1 - index * 0.12);
      score += len < 25 ? 0.1 : len <= 180 ? 1 : len <= 260 ? 0.5 : 0.2;
      if (/\d/.test(text)) score += 0.4;
      let shared = 0;
      for (const w of keywords(text)) if (titleWords.has(w)) shared++;
      score += Math.min(shared, 3) * 0.35;
      if (category === "question" && text.endsWith("?")) score += 0.8;
      if (category === "event" && /\b(mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|\b\d{1,2}(:\d{2})?\s?(am|pm)\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i.test(text)) score += 0.6;
      if (category === "product" && /[$€£¥]\s?\d|\b\d+%/.test(text)) score += 0.5;
      if (category === "tip" && /^(try|use|start|stop|don't|do not|always|never|make|keep|set|add|avoid)\b/i.test(text)) score += 0.4;
      if (text.split(/\s+/).length < 3) score -= 1; // fragments read badly on their own
      return { text, index, score };
    });
  return scored.sort((a, b) => b.score - a.score || a.index - b.index);
}

/** The register the voice's tone asks for, moved one step by "more formal"/"more casual". */
function chooseRegister(tone: string, flags: ChangeFlags): Register {
  const t = tone.toLowerCase();
  let level = FORMAL_TONES.some((w) => t.includes(w)) ? 0 : CASUAL_TONES.some((w) => t.includes(w)) ? 2 : 1;
  if (flags.register === "more_formal") level = Math.max(0, level - 1);
  if (flags.register === "more_casual") level = Math.min(2, level + 1);
  return (["formal", "neutral", "casual"] as const)[level]!;
}

function chooseEmoji(level: EmojiLevel, flags: ChangeFlags, register: Register): EmojiLevel {
  if (flags.emoji === "none") return "none";
  if (flags.emoji === "more") return level === "none" ? "some" : "lots";
  // A formal register tones emoji down one step unless the voice explicitly wants lots.
  if (register === "formal" && flags.register === "more_formal" && level === "some") return "none";
  return level;
}

/** `#Tag` form of a configured hashtag ("summer sale" → "#SummerSale"); empty when nothing is left. */
function toHashtag(raw: string): string {
  const words = raw.replace(/^#+/, "").split(/[^\p{L}\p{N}_]+/u).filter(Boolean);
  if (words.length === 0) return "";
  const body = words.length === 1 ? words[0]! : words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return `#${body}`;
}

/** Words that fit a category's posts, so a voice hashtag such as #launch fits an announcement without naming it. */
const CATEGORY_WORDS: Record<Category, readonly string[]> = {
  announcement: ["launch", "release", "news", "update", "new", "announcement", "version"],
  tip: ["tip", "tips", "howto", "advice", "guide", "hack", "hacks"],
  question: ["question", "poll", "ask", "community"],
  story: ["story", "stories", "journey", "behindthescenes", "team"],
  event: ["event", "events", "meetup", "conference", "workshop", "festival", "live"],
  product: ["product", "shop", "sale", "new", "store", "deal"],
  other: [],
};

/** A word's stem for loose matching: its first five letters ("gardening" and "garden" share "garde"). */
function stem(word: string): string {
  return word.toLowerCase().slice(0, 5);
}

/**
 * True when a hashtag fits the seed: one of its words shares a stem with a word of the seed (title, text or
 * category), or names what the seed's category is about. A voice's hashtags are candidates, not a fixed footer:
 * "#SocialMedia" under a post about broad beans reads as spam.
 */
export function hashtagFits(tag: string, seed: SeedText, category: Category): boolean {
  const seedWords = new Set(
    `${seed.title} ${seed.content} ${seed.category ?? ""}`
      .toLowerCase()
      .match(/[\p{L}\p{N}]{3,}/gu)
      ?.map(stem) ?? [],
  );
  const parts = tag
    .replace(/^#/, "")
    .split(/(?=[A-Z])|[^\p{L}\p{N}]+/u)
    .map((w) => w.toLowerCase())
    .filter((w) => w.length >= 3);
  const whole = tag.replace(/^#/, "").toLowerCase();
  if (CATEGORY_WORDS[category].includes(whole)) return true;
  return parts.some((w) => seedWords.has(stem(w)) || CATEGORY_WORDS[category].includes(w));
}

function contract(text: string): string {
  return text
    .replace(/\bWe are\b/g, "We're").replace(/\bwe are\b/g, "we're")
    .replace(/\bIt is\b/g, "It's").replace(/\bit is\b/g, "it's")
    .replace(/\bdo not\b/g, "don't").replace(/\bDo not\b/g, "Don't")
    .replace(/\bcannot\b/g, "can't").replace(/\bwill not\b/g, "won't")
    .replace(/\byou are\b/g, "you're").replace(/\bYou are\b/g, "You're");
}

function expand(text: string): string {
  return text
    .replace(/\bWe're\b/g, "We are").replace(/\bwe're\b/g, "we are")
    .replace(/\bIt's\b/g, "It is").replace(/\bit's\b/g, "it is")
    .replace(/\bdon't\b/g, "do not").replace(/\bDon't\b/g, "Do not")
    .replace(/\bcan't\b/g, "cannot").replace(/\bwon't\b/g, "will not")
    .replace(/\byou're\b/g, "you are").replace(/\bYou're\b/g, "You are")
    .replace(/\blet's\b/g, "let us").replace(/\bLet's\b/g, "Let us");
}

/** Register-specific surface: formal loses exclamation marks and contractions, casual gains contractions. */
function applyRegister(text: string, register: Register): string {
  if (register === "formal") return expand(text).replace(/!+/g, ".").replace(/\.\.+/g, ".");
  if (register === "casual") return contract(text);
  return text;
}

/** Ends a sentence with punctuation if it has none. */
function terminate(s: string): string {
  // A sentence ending in a link stays as it is: a full stop glued to it would become part of the address.
  if (/(https?:\/\/|www\.)\S+$/i.test(s)) return s;
  return /[.!?…:)"”’]$/u.test(s) ? s : `${s}.`;
}

/** A sentence of the caption's body: its text, the facts it states, and its rank among the seed's sentences. */
interface BodySentence {
  text: string;
  facts: Fact[];
  rank: number;
}

/** The parts a caption is assembled from; the fitter drops/trims them in a fixed order. */
interface Parts {
  opener: string;
  /** True when the opener states a fact the body does not (the title's own time, price, ...): it is kept. */
  openerHasFacts: boolean;
  body: BodySentence[];
  /** Emoji after the body ("lots"). */
  trailingEmoji: string;
  question: string;
  signature: string;
  hashtags: string[];
}

function assemble(p: Parts): string {
  const body = [...p.body.map((s) => s.text), p.body.length > 0 ? p.trailingEmoji : ""].filter(Boolean).join(" ");
  const head = [p.opener, body].filter(Boolean).join(PARAGRAPH);
  const paragraphs = [head, p.question, p.signature, p.hashtags.join(" ")].filter((x) => x.length > 0);
  return paragraphs.join(PARAGRAPH);
}

/**
 * Shrinks the parts until the caption fits `max` graphemes, in a fixed order of what matters least: sentences
 * without a fact (weakest first), hashtags, the question, the signature, an opener without a fact; then sentences
 * with facts are cut to the clauses that carry them, then to the facts alone, and only then does a fact go (the
 * last ones first). A body without facts keeps its best sentence, trimmed at a word boundary.
 */
function fit(parts: Parts, max: number): string {
  const p: Parts = { ...parts, body: parts.body.map((s) => ({ ...s })), hashtags: [...parts.hashtags] };
  const fits = () => graphemeCount(assemble(p)) <= max;
  const weakestPlain = () => {
    const plain = p.body.filter((s) => s.facts.length === 0);
    return plain.length === 0 ? null : plain.reduce((a, b) => (b.rank > a.rank ? b : a));
  };
  while (!fits() && p.body.length > 1) {
    const weakest = weakestPlain();
    if (!weakest) break;
    p.body.splice(p.body.indexOf(weakest), 1);
  }
  while (!fits() && p.hashtags.length > 1) p.hashtags.pop();
  if (!fits()) p.hashtags = [];
  if (!fits()) p.trailingEmoji = "";
  if (!fits()) p.question = "";
  if (!fits()) p.signature = "";
  if (!fits() && !p.openerHasFacts && p.body.length > 0) p.opener = "";
  const withFacts = () => p.body.filter((s) => s.facts.length > 0).sort((a, b) => graphemeCount(b.text) - graphemeCount(a.text));
  for (const sentence of withFacts()) {
    if (fits()) break;
    sentence.text = terminate(factClauses(sentence.text, sentence.facts));
  }
  for (const sentence of withFacts()) {
    if (fits()) break;
    sentence.text = sentence.facts.map((f) => f.text).join(" · ");
  }
  while (!fits() && p.body.some((s) => s.facts.length > 1)) {
    const last = [...p.body].reverse().find((s) => s.facts.length > 1)!;
    last.facts = last.facts.slice(0, -1);
    last.text = last.facts.map((f) => f.text).join(" · ");
  }
  while (!fits() && p.body.filter((s) => s.facts.length > 0).length > 1) {
    p.body.splice(p.body.lastIndexOf([...p.body].reverse().find((s) => s.facts.length > 0)!), 1);
  }
  if (!fits() && p.body.length === 1 && p.body[0]!.facts.length === 0) {
    const withoutBody = graphemeCount(assemble({ ...p, body: [] }));
    const separator = p.opener ? PARAGRAPH.length : 0;
    const room = max - withoutBody - separator;
    if (room >= 20) p.body = [{ ...p.body[0]!, text: truncateGraphemes(p.body[0]!.text, room) }];
    else if (p.opener) p.opener = "";
  }
  const text = assemble(p);
  return graphemeCount(text) <= max ? text : truncateGraphemes(text.replace(/\s+/g, " "), max);
}

/**
 * The body: every sentence that states a fact, plus `n` of the others (at least one) starting at a variant-dependent
 * rank, in reading order.
 */
function pickBody(ranked: ScoredSentence[], n: number, rotation: number): ScoredSentence[] {
  if (ranked.length === 0) return [];
  const factual = ranked.filter((s) => findFacts(s.text).length > 0);
  const plain = ranked.filter((s) => findFacts(s.text).length === 0);
  const picked: ScoredSentence[] = [...factual];
  // One of the seed's other sentences at least: facts alone read like a notice board (fit drops it when room runs out).
  const wanted = Math.max(n - factual.length, 1);
  const offset = plain.length === 0 ? 0 : rotation % plain.length;
  for (let i = 0; i < Math.min(wanted, plain.length); i++) picked.push(plain[(offset + i) % plain.length]!);
  return picked.sort((a, b) => a.index - b.index);
}

/** Writes one caption for exactly this variant (no collision handling). */
function composeVariant(req: CaptionRequest, variant: number): string {
  const { seed, voice } = req;
  const flags = parseInstructions(req.changeInstructions);
  const category = normalizeCategory(seed.category);
  const register = chooseRegister(voice.tone, flags);
  const emojiLevel = chooseEmoji(voice.emoji, flags, register);
  const english = (voice.language || ENGLISH).toLowerCase().startsWith(ENGLISH);
  const banned = voice.bannedWords;
  const clean = (s: string) => removeBannedWords(emojiLevel === "none" ? stripEmoji(s) : tidy(s), banned);

  const ranked = rankSentences(seed, category);
  const openerList = OPENERS[category][register];
  const openerIndex = variant % openerList.length;
  const round = Math.floor(variant / openerList.length);
  const length = flags.length ?? "normal";
  const rankOf = new Map(ranked.map((s, rank) => [s.index, rank]));
  const body: BodySentence[] = pickBody(ranked, BODY_SENTENCES[length], round)
    .map((s) => {
      const text = clean(applyRegister(terminate(s.text), register));
      return { text, facts: findFacts(text), rank: rankOf.get(s.index) ?? 0 };
    })
    .filter((s) => s.text.length > 0);

  // Keep a title's own "?" or "!": they carry meaning ("Tabs or spaces?").
  const title = clean(seed.title.trim().replace(/[.:;,]+$/, ""));
  const titleWords = keywords(title);
  const firstWords = keywords(body[0]?.text ?? "");
  const shared = [...titleWords].filter((w) => firstWords.has(w)).length;
  // When the first sentence already says the title, use the plain opener to avoid saying it twice.
  const firstLower = (body[0]?.text ?? "").toLowerCase();
  const saysTitle = (title.length > 0 && firstLower.includes(title.toLowerCase())) || (titleWords.size >= 3 && shared / titleWords.size >= 0.6);
  const template = openerList[openerIndex]!;
  let opener = "";
  if (english) opener = title && !saysTitle ? template.withTitle.replace("{title}", title).replace(/([!?])[.!]+$/, "$1") : template.plain;
  else if (title && !saysTitle) opener = terminate(title);
  if (body.length === 0 && !title && english) opener = template.plain;

  const questions = QUESTIONS[category][register];
  const wantsQuestion = flags.addQuestion === true || (category === "question" && !body.some((s) => s.text.endsWith("?")));
  const question = english && wantsQuestion ? questions[variant % questions.length]! : "";

  const emoji = EMOJI[category];
  const pick = (k: number) => emoji[(variant + k) % emoji.length]!;
  if (emojiLevel !== "none") {
    opener = opener ? `${opener} ${pick(0)}` : opener;
    if (!opener && body.length > 0) body[0]!.text = `${body[0]!.text} ${pick(0)}`;
  }
  const trailingEmoji = emojiLevel === "lots" ? `${pick(1)} ${pick(2)}` : "";

  const hashtags = flags.noHashtags
    ? []
    : [...new Set(voice.hashtags.map(toHashtag))].filter(
        (h) =>
          h.length > 1 &&
          !banned.some((w) => w.trim() && h.toLowerCase().includes(w.trim().toLowerCase())) &&
          hashtagFits(h, seed, category),
      );
  const cleanOpener = clean(applyRegister(opener, register));
  const bodyText = body.map((s) => s.text).join(" ");
  const parts: Parts = {
    opener: cleanOpener,
    openerHasFacts: findFacts(cleanOpener).some((f) => !bodyText.includes(f.text)),
    body,
    trailingEmoji,
    question: clean(question),
    signature: clean(voice.signature.trim()),
    hashtags,
  };
  let text = fit(parts, req.maxGraphemes);
  // Truncation can cut a longer word down to a banned one ("freedom" → "free…"): clean once more.
  text = removeBannedWords(text, banned);
  if (flags.noHashtags) text = text.replace(/(^|\s)#[\p{L}\p{N}_]+/gu, "$1").trim();
  return text;
}

function same(a: string, b: string | undefined): boolean {
  if (b === undefined) return false;
  return a.replace(/\s+/g, " ").trim().toLowerCase() === b.replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * Writes the caption for a request: fits `maxGraphemes`, never contains a banned word, and differs from
 * `previousCaption` (later variants are tried until one does).
 */
export function writeCaption(req: CaptionRequest): string {
  const base = Math.max(0, Math.floor(req.variant));
  let first = "";
  for (let k = 0; k < MAX_VARIANT_TRIES; k++) {
    const text = composeVariant(req, base + k);
    if (k === 0) first = text;
    if (text.length > 0 && !same(text, req.previousCaption)) return text;
  }
  // Every variant collided (tiny limit or empty seed): vary the ending as a last resort.
  const alternative = truncateGraphemes(`${first.replace(/[.!?…]+$/u, "")}…`, req.maxGraphemes);
  return same(alternative, req.previousCaption) ? truncateGraphemes(first, Math.max(1, graphemeCount(first) - 1)) : alternative;
}

/** Exposed for the card renderer: the seed's single strongest line, banned words removed. */
export function keyLine(seed: SeedText, voice: BrandVoice, rotation = 0): string {
  const ranked = rankSentences(seed, normalizeCategory(seed.category));
  if (ranked.length === 0) return "";
  const best = ranked[rotation % Math.min(ranked.length, 2)]!;
  return removeBannedWords(stripEmoji(best.text), voice.bannedWords);
}
