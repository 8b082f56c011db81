/**
 * Stopwords at scale: a word in at least half of all seeds and in over STOPWORD_MIN_SEEDS of them is left out of the
 * ranking (and of the filter when other words are searched); a search of stopwords alone lists newest first. Below
 * the floor every word is ranked (seeds.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../src/lib/ids";
import { listSeeds } from "../src/modules/seeds/service";
import { STOPWORD_MIN_SEEDS } from "../src/modules/seeds/term-stats";
import { type TestAccount, type World, createWorld } from "./helpers/world";

let world: World;
let acct: TestAccount;
const COUNT = STOPWORD_MIN_SEEDS + 1500;
/** Seed i (0 = oldest): every seed says "the"; every 10th mentions coffee, in its title when i % 20 === 0. */
const titles: string[] = [];

beforeAll(async () => {
  world = await createWorld();
  acct = await world.createAccount();
  const insert = world.deps.sqlite.prepare(
    "INSERT INTO seeds (id, account_id, title, content, category, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?)",
  );
  const start = world.clock.now();
  world.deps.sqlite.transaction(() => {
    for (let i = 0; i < COUNT; i++) {
      const title = i % 20 === 0 ? `Coffee notes ${i}` : `Seed number ${i}`;
      const content = i % 10 === 0 ? (i % 20 === 0 ? "the plan" : "the coffee plan") : `the plan for day ${i}`;
      titles.push(title);
      insert.run(newId(), acct.accountId, title, content, start + i * 1000, start + i * 1000);
    }
  })();
});
afterAll(() => world.close());

const search = (q: string, limit = 50) => listSeeds(world.deps, acct.accountId, { search: q, limit });

test("a stopword alone lists every seed holding it, newest first", () => {
  const page = search("the", 30);
  expect(page.seeds.map((s) => s.title)).toEqual(titles.slice(-30).reverse());
  expect(page.nextCursor).not.toBeNull();
});

test("next to a real word a stopword neither ranks nor filters: the word's own ranking, title hits first", () => {
  const withStopword = search("the coffee", 300).seeds.map((s) => s.title);
  const alone = search("coffee", 300).seeds.map((s) => s.title);
  expect(withStopword).toEqual(alone);
  expect(withStopword.length).toBe(300);
  // Title hits (the "Coffee notes" seeds) come before content hits.
  const firstContentHit = withStopword.findIndex((t) => !t.startsWith("Coffee notes"));
  expect(firstContentHit).toBeGreaterThan(0);
  expect(withStopword.slice(firstContentHit).some((t) => t.startsWith("Coffee notes"))).toBe(false);
});

test("a word in fewer than half the seeds is ranked as always", () => {
  // "coffee" is in a tenth of them: bm25 puts the title hits first, whatever their age.
  const titlesFound = search("coffee", 10).seeds.map((s) => s.title);
  expect(titlesFound.every((t) => t.startsWith("Coffee notes"))).toBe(true);
});
