/**
 * The builtin writer keeps what the seed states (decisions.md §15): every time, date, price, address, phone number
 * and link of the seed is in the caption when it fits, in every variant and voice, and no filler sentence is added.
 * Table-driven over seeds as small businesses write them.
 */
import { describe, expect, test } from "bun:test";
import { createBuiltinGenerator } from "../src/generation/builtin/index.ts";
import { findFacts } from "../src/generation/builtin/facts.ts";
import { graphemeCount } from "../src/generation/builtin/text.ts";
import { type BrandVoice, DEFAULT_VOICE, type SeedText } from "../src/generation/generator.ts";

const gen = createBuiltinGenerator();

interface Row {
  name: string;
  seed: SeedText;
  /** The facts as the seed writes them: each must appear in the caption verbatim. */
  facts: string[];
}

const ROWS: Row[] = [
  {
    name: "a bakery's opening hours and prices",
    seed: {
      title: "Fresh sourdough every morning",
      content:
        "Our bakers start at 4 so the bread is still warm when you come in. Open Mon–Fri 7:00–18:00, Sat 8:00–12:00. Rye loaf €4.50, croissant €1.80. Closed on Sundays for the team to rest.",
      category: "product",
    },
    facts: ["Mon–Fri 7:00–18:00", "Sat 8:00–12:00", "€4.50", "€1.80"],
  },
  {
    name: "an address, a phone number and a link",
    seed: {
      title: "We moved!",
      content:
        "After ten happy years on the old corner we needed more room for the ovens. Find us at 12 Market Street, Springfield. Tel. +49 30 1234567. Pre-order for pickup: https://bakery.example/order",
      category: "announcement",
    },
    facts: ["12 Market Street, Springfield", "Tel. +49 30 1234567", "https://bakery.example/order"],
  },
  {
    name: "an event with a date, a time range, a German address and a ticket price",
    seed: {
      title: "Bread baking workshop",
      content:
        "Learn to keep a starter alive and shape a proper loaf. Workshop on 28 November 2026 from 6pm to 8pm at Hauptstraße 5, 10115 Berlin. Tickets $15, flour and aprons included. Bring a jar for your own starter.",
      category: "event",
    },
    facts: ["28 November 2026", "6pm to 8pm", "Hauptstraße 5, 10115 Berlin", "$15"],
  },
  {
    name: "a US phone number, an email address and an evening time",
    seed: {
      title: "Holiday orders are open",
      content:
        "Stollen, gingerbread and our cranberry loaf are back for the season. Call (555) 123-4567 or email hello@bakery.example to reserve yours. Doors open late at 7.30pm on Dec 3 for pickup.",
      category: "announcement",
    },
    facts: ["(555) 123-4567", "hello@bakery.example", "7.30pm", "Dec 3"],
  },
  {
    name: "an ISO date and a www link in a tip",
    seed: {
      title: "Feed your starter before the weekend",
      content: "A starter fed on Friday night peaks on Saturday morning. Our full feeding guide from 2026-12-01 is at www.bakery.example/starter for anyone who asks.",
      category: "tip",
    },
    facts: ["2026-12-01", "www.bakery.example/starter"],
  },
  {
    name: "a price in words after the number and a weekday time",
    seed: {
      title: "Soup Tuesday",
      content: "Every Tuesday from 11:30 we ladle out a pot of lentil soup. A bowl with bread is 6 euros. It usually runs out by two, so come early.",
      category: "other",
    },
    facts: ["11:30", "6 euros"],
  },
  {
    name: "a long story whose facts sit in its last sentences",
    seed: {
      title: "Thirty years of the corner bakery",
      content:
        "My grandmother opened this shop with one oven and a recipe book she had carried from Silesia. " +
        "For years she baked alone, starting before dawn and selling out by noon. " +
        "My mother joined her in the eighties and added the rye breads people still ask for. " +
        "Today three of us bake here, and we still use her book every single morning. " +
        "Come celebrate with us on 14 March, 10:00–16:00, at 3 Mill Lane, Springfield. Cake is €2 a slice.",
      category: "story",
    },
    facts: ["14 March", "10:00–16:00", "3 Mill Lane, Springfield", "€2"],
  },
  {
    name: "dates written the European way and a price with a comma",
    seed: {
      title: "Christmas opening hours",
      content: "On 24.12.2026 we close at 13:00. Stollen costs 12,50 € this year. Happy holidays from all of us.",
      category: "announcement",
    },
    facts: ["24.12.2026", "13:00", "12,50 €"],
  },
];

const FILLER =
  /thanks? (you )?for (reading|following|being here|your continued support)|more soon|stay tuned|we can't wait|what a ride|we think you'll love it|grab yours now|check it out|take a look|on our site|here's to the next chapter|we look forward to|let us know what you think|we read every reply/i;

const VOICES: Array<{ name: string; voice: BrandVoice; changeInstructions?: string }> = [
  { name: "default", voice: DEFAULT_VOICE },
  { name: "formal, no emoji", voice: { ...DEFAULT_VOICE, tone: "professional", emoji: "none" } },
  {
    name: "playful with lots of emoji, hashtags and a signature",
    voice: { ...DEFAULT_VOICE, tone: "playful", emoji: "lots", hashtags: ["bakery", "sourdough", "Springfield"], signature: "— Anna & the team at the Corner Bakery" },
  },
  { name: "asked for a shorter one", voice: DEFAULT_VOICE, changeInstructions: "shorter" },
  { name: "asked for a longer one with a question", voice: DEFAULT_VOICE, changeInstructions: "longer, add a question" },
];

describe("builtin writer: the seed's facts", () => {
  for (const row of ROWS) {
    test(`${row.name}: the writer sees exactly these facts`, () => {
      const seen = findFacts(row.seed.content).map((f) => f.text);
      for (const fact of row.facts) expect({ fact, seen: seen.some((s) => s.includes(fact) || fact.includes(s)) }).toEqual({ fact, seen: true });
    });

    for (const { name, voice, changeInstructions } of VOICES) {
      test(`${row.name} · ${name}: every fact is in the caption, no filler`, async () => {
        for (let variant = 0; variant < 4; variant++) {
          const caption = await gen.writeCaption({
            seed: row.seed,
            voice,
            maxGraphemes: 300,
            variant,
            ...(changeInstructions ? { changeInstructions } : {}),
          });
          expect(graphemeCount(caption)).toBeLessThanOrEqual(300);
          for (const fact of row.facts) expect({ variant, caption, has: caption.includes(fact) }).toEqual({ variant, caption, has: true });
          expect({ variant, caption, filler: FILLER.test(caption) }).toEqual({ variant, caption, filler: false });
        }
      });
    }
  }

  test("a regenerate still reads differently and keeps every fact", async () => {
    const row = ROWS[0]!;
    const first = await gen.writeCaption({ seed: row.seed, voice: DEFAULT_VOICE, maxGraphemes: 300, variant: 0 });
    const second = await gen.writeCaption({ seed: row.seed, voice: DEFAULT_VOICE, maxGraphemes: 300, variant: 1, previousCaption: first });
    expect(second).not.toBe(first);
    for (const fact of row.facts) expect(second).toContain(fact);
  });

  test("under a tight limit the facts stay and the rest goes; a fact that cannot fit is the only thing lost", async () => {
    const row = ROWS[6]!; // the long story: 4 facts in its last sentence
    for (const max of [120, 90, 70]) {
      const caption = await gen.writeCaption({ seed: row.seed, voice: { ...DEFAULT_VOICE, signature: "— The Corner Bakery" }, maxGraphemes: max, variant: 0 });
      expect(graphemeCount(caption)).toBeLessThanOrEqual(max);
      for (const fact of row.facts) expect({ max, caption, has: caption.includes(fact) }).toEqual({ max, caption, has: true });
    }
    const tiny = await gen.writeCaption({ seed: row.seed, voice: DEFAULT_VOICE, maxGraphemes: 30, variant: 0 });
    expect(graphemeCount(tiny)).toBeLessThanOrEqual(30);
    expect(row.facts.some((fact) => tiny.includes(fact))).toBe(true);
  });
});
