/**
 * The synthetic seed corpus of the search benches (seed-search.ts, seed-search-pg.ts): words drawn by Zipf's law from
 * an English head (stopwords), topic words and synthetic words, with a deterministic PRNG so every run searches the
 * same text. Not a bench itself (bench/run runs only the .ts files directly in bench/).
 */
/** A small deterministic PRNG (mulberry32), so every run searches the same corpus. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
export const rand = prng(42);

/** The head of an English frequency list: in real text these make up about 40% of all words. */
export const STOPWORDS = (
  "the of and to a in is it you that he was for on are with as his they be at one have this from or had by not " +
  "but what some we can out other were all there when up use your how said an each she which do their time if will " +
  "way about many then them would like so these her long make thing see him two has look more day could go come did"
).split(" ");
/** Topic words a seed search would use, placed at ranks where content words sit in a Zipf distribution. */
export const TOPIC_WORDS = (
  "launch product coffee bakery spring summer autumn winter sale discount recipe tutorial webinar podcast team " +
  "hiring customer story behind scenes update release feature design community event workshop meetup garden " +
  "running marathon travel city market festival music guide tips question poll announcement newsletter blog " +
  "sustainability kitchen bread croissant espresso latte pastry cake harvest farm local organic shipping order"
).split(" ");
const SYLLABLES = "ka ri to mu ne sa lo vi da pe qu ar en is on ul tr st ch bl gr fl".split(" ");
export const VOCABULARY: string[] = [...STOPWORDS];
const synthetic = new Set<string>();
while (VOCABULARY.length < 30_000) {
  // Topic words take every 5th rank from 150 on (ranks 150–395): common, but not stopwords.
  const rank = VOCABULARY.length;
  const topic = rank >= 150 && (rank - 150) % 5 === 0 ? TOPIC_WORDS[(rank - 150) / 5] : undefined;
  if (topic) {
    VOCABULARY.push(topic);
    continue;
  }
  const n = 2 + Math.floor(rand() * 3);
  let w = "";
  for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
  if (!synthetic.has(w) && !STOPWORDS.includes(w) && !TOPIC_WORDS.includes(w)) {
    synthetic.add(w);
    VOCABULARY.push(w);
  }
}
/** Zipf's law (s = 1), as word frequencies in natural language: rank r is drawn with probability ∝ 1/r. */
const CUMULATIVE: number[] = [];
{
  let sum = 0;
  for (let r = 1; r <= VOCABULARY.length; r++) CUMULATIVE.push((sum += 1 / r));
}
export function word(): string {
  const x = rand() * (CUMULATIVE[CUMULATIVE.length - 1] as number);
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((CUMULATIVE[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo] as string;
}
export function sentence(words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(word());
  const s = out.join(" ");
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
}

/**
 * The searches both seed-search benches time, by kind, in the order they print. `accents` adds the accent-folding
 * kind (PostgreSQL's corpus has accented words; SQLite's bench corpus does not).
 */
export function searchKinds({ accents = false }: { accents?: boolean } = {}): Record<string, string[]> {
  return {
    "stopword (worst case)": ["the", "and", "with"],
    "common word": ["launch", "coffee", "product", "spring", "team"],
    "word prefix": ["launc", "coff", "bak", "cro", "webi"],
    "two words": ["coffee bakery", "spring launch", "team update", "product release"],
    "rare word": VOCABULARY.slice(4000, 4010),
    "prefix of a long word": ["sustainab", "newslet", "announc"],
    ...(accents ? { "accents folded": ["cafe", "CRÈME", "brulee", "zurich", "strasse", "sao paulo"] } : {}),
    "no match": ["xylophone", "zzzzq"],
    "newest first (no search)": [""],
  };
}
