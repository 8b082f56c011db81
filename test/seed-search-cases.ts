/**
 * The seed search cases (decisions.md §5, §11), written once and run on both databases: on SQLite through the HTTP API
 * (seeds.test.ts, seeds-stopwords.test.ts) and on PostgreSQL through `listSeedsPg` (seeds-pg.test.ts). Whole words and
 * word prefixes of title, content and category; case and accents; every word required; best first (title hits before
 * content hits, the ranking window); account isolation; stopwords; cursor pagination; inputs that must not break the
 * query. A backend only stores seeds and lists them; every expectation lives here.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { RANK_WINDOW } from "../src/modules/seeds/search";
import { STOPWORD_MIN_SEEDS } from "../src/modules/seeds/term-stats";

export interface SeedFixture {
  title: string;
  content: string;
  category: string | null;
}

export interface ListAnswer {
  status: number;
  ids: string[];
  titles: string[];
  nextCursor: string | null;
}

/** One database behind the seeds list. `A` is how the backend names an account (an id, or a test account with its key). */
export interface SearchBackend<A> {
  newAccount(): Promise<A>;
  /** Stores one seed, newer than every seed stored before it (`sameTime`: at the previous seed's timestamp). */
  create(account: A, seed: SeedFixture, opts?: { sameTime?: boolean }): Promise<string>;
  /** Stores many seeds at once, oldest first, with timestamps 0, 1, 2, … ms; answers their ids in the same order. */
  insertMany(account: A, seeds: SeedFixture[]): Promise<string[]>;
  /**
   * GET /seeds as the backend answers it; a refusal answers its status (400 for a cursor that does not fit). A limit
   * over 200 is for backends that call the service (the stopword cases), not the API.
   */
  list(account: A, query: { search?: string; limit?: number; cursor?: string | null }): Promise<ListAnswer>;
}

/** Inputs that must never break the query: FTS5 and tsquery syntax, quotes, SQL, NUL, emoji, very long words. */
export const NASTY_SEARCHES = [
  '"', '""', "*", "launch*", "launch AND", "OR launch", "NOT", "NEAR(launch party)", "title:launch", "-launch",
  "^launch", "(launch", "launch)", "{title}: x", "'; DROP TABLE seeds; --", "\\", "launch\u0000party", "🚀 launch",
  "a".repeat(500), "+", ":", "launch - party",
  // tsquery operators and prefixes
  "launch & party", "launch | party", "!launch", "launch:*", "launch:A", "'launch'", "launch <-> party", "launch <2> party",
  "&|!():*", "launch''", "\u0301", "\u0301 launch", "e\u0301", "❤️", "㍿".repeat(500), "é".repeat(500), "\u00a0launch\u2003party\u00a0",
];

/** The search cases over a small library (the SQLite suite's "list and search" fixture). */
export function describeSeedSearch<A>(label: string, backend: () => SearchBackend<A>): void {
  describe(`seed search (${label})`, () => {
    let c: A;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      const b = backend();
      c = await b.newAccount();
      const rows: [string, string, string, string | null][] = [
        ["launch", "Product launch next week", "Our new app goes live on Monday with a party.", "announcement"],
        ["launcher", "Rocket notes", "The launcher team shares a tip about fuel.", "tip"],
        ["cafe", "Café opening", "Le café ouvre ses portes: croissants for everyone.", "story"],
        ["question", "What do you read?", "Tell us your favourite book of the year.", "question"],
        ["mention", "Weekly digest", "Among other things, we mention the launch briefly.", null],
        ["tie", "Tie one", "Same timestamp as the next seed.", null],
        ["tie2", "Tie two", "Same timestamp as the previous seed.", null],
      ];
      for (const [name, title, content, category] of rows) {
        ids[name] = await b.create(c, { title, content, category }, { sameTime: name === "tie2" });
      }
      // A look-alike in another account must never show up.
      const other = await b.newAccount();
      ids.other = await b.create(other, { title: "Launch of the other account", content: "launch launch launch café", category: "announcement" });
    });
    const list = (query: { search?: string; limit?: number; cursor?: string | null }) => backend().list(c, query);
    const found = async (search: string) => (await list({ search })).ids;

    test("without search: newest first, ties broken by insertion order, cursor pagination covers everything once", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: ListAnswer = await list({ limit: 2, cursor });
        expect(res.status).toBe(200);
        expect(res.ids.length).toBeLessThanOrEqual(2);
        seen.push(...res.ids);
        cursor = res.nextCursor;
      } while (cursor);
      expect(seen).toEqual([ids.tie2, ids.tie, ids.mention, ids.question, ids.cafe, ids.launcher, ids.launch] as string[]);
    });

    test("word prefixes match, case-insensitively: `launc` finds launch and launcher", async () => {
      for (const q of ["launc", "LAUNC", "Launch"]) {
        const res = await list({ search: q });
        expect(res.status).toBe(200);
        expect(res.ids).toContain(ids.launch as string);
        expect(res.ids).toContain(ids.mention as string);
        if (q !== "Launch") expect(res.ids).toContain(ids.launcher as string);
      }
      // Whole words and prefixes only: not the middle or the end of a word.
      expect(await found("aunch")).toEqual([]);
      expect(await found("cher")).toEqual([]);
    });

    test("best matches first: a title hit outranks a passing mention in the content", async () => {
      const res = await found("launch");
      expect(res[0]).toBe(ids.launch as string);
      expect(res.indexOf(ids.launch as string)).toBeLessThan(res.indexOf(ids.mention as string));
      // A prefix of the category.
      expect(await found("announ")).toEqual([ids.launch as string]);
    });

    test("every word must match; category is searched; accents fold", async () => {
      expect(await found("launch party")).toEqual([ids.launch as string]);
      expect(await found("announce")).toEqual([ids.launch as string]);
      expect(await found("tip")).toEqual([ids.launcher as string]);
      for (const q of ["cafe", "café", "CAFÉ", "Cafe", "CAFE", "cafe\u0301"]) {
        expect({ q, found: await found(q) }).toEqual({ q, found: [ids.cafe as string] });
      }
      expect(await found("portes croissant")).toEqual([ids.cafe as string]);
      const none = await list({ search: "xylophone" });
      expect(none).toEqual({ status: 200, ids: [], titles: [], nextCursor: null });
    });

    test("another account's seeds never show up, however well they match", async () => {
      for (const q of ["launch", "launc", "cafe", "announcement", "other account"]) {
        expect({ q, leaked: (await found(q)).includes(ids.other as string) }).toEqual({ q, leaked: false });
      }
      expect(await found("account")).toEqual([]);
    });

    test("search syntax in user input never breaks the query (200, treated as words)", async () => {
      for (const q of NASTY_SEARCHES) {
        const res = await list({ search: q });
        expect({ q, status: res.status }).toEqual({ q, status: 200 });
        expect(Array.isArray(res.ids)).toBe(true);
      }
      expect(await found("NEAR(launch party)")).toEqual([]); // "near" is a word here, and no seed has it
      expect(await found("launch*")).toContain(ids.launch as string);
      // Operators are separators: the words around them are still required, each as a prefix.
      expect(await found("launch & party")).toEqual([ids.launch as string]);
      expect(await found("launch | xylophone")).toEqual([]);
      expect(await found("!launch")).toContain(ids.launch as string);
      expect(await found("'launch':*")).toContain(ids.launch as string);
      // A word made only of a combining mark folds to nothing and is ignored next to a real word, as FTS5 does.
      expect(await found("\u0301 launch")).toEqual(await found("launch"));
      expect(await found("\u0301")).toEqual([]);
      // A word longer than any stored word finds nothing (and does not drop out of the search).
      expect(await found(`launch ${"a".repeat(490)}`)).toEqual([]);
      expect(await found(`launch ${"㍿".repeat(490)}`)).toEqual([]); // NFKC: 1,960 CJK letters, 5,880 bytes
    });

    test("a search with no word characters lists newest first", async () => {
      const res = await list({ search: "  !? " });
      expect(res.ids[0]).toBe(ids.tie2 as string);
    });

    test("search results paginate with their cursor; a cursor from another search or the plain list is refused", async () => {
      const first = await list({ search: "launc", limit: 1 });
      expect(first.ids.length).toBe(1);
      expect(first.nextCursor).toEqual(expect.any(String));
      const all = await found("launc");
      expect(all.length).toBe(3);
      const pages: string[] = [];
      let cursor: string | null = null;
      do {
        const res: ListAnswer = await list({ search: "launc", limit: 1, cursor });
        pages.push(...res.ids);
        cursor = res.nextCursor;
      } while (cursor);
      expect(pages).toEqual(all);
      expect((await list({ search: "party", cursor: first.nextCursor })).status).toBe(400);
      expect((await list({ cursor: first.nextCursor })).status).toBe(400);
      expect((await list({ cursor: "%%%" })).status).toBe(400);
    });

    test(`more matches than the ranking window (${RANK_WINDOW}): newest window ranked, then older ones newest first, each once`, async () => {
      const b = backend();
      const d = await b.newAccount();
      const total = RANK_WINDOW + 10;
      // The oldest seed and one inside the window carry the word in the title; the rest only in the content.
      const order = await b.insertMany(
        d,
        Array.from({ length: total }, (_, i) => ({
          title: i === 0 || i === total - 100 ? "Pelican pelican" : `Note ${i}`,
          content: `A pelican note number ${i}.`,
          category: null,
        })),
      );
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: ListAnswer = await b.list(d, { search: "pelic", limit: 200, cursor });
        expect(res.status).toBe(200);
        seen.push(...res.ids);
        cursor = res.nextCursor;
      } while (cursor);
      expect(seen.length).toBe(total);
      expect(new Set(seen).size).toBe(total);
      expect(seen[0]).toBe(order[total - 100] as string); // the title hit inside the window ranks first
      // Older than the window: listed after it, newest first; the oldest (a title hit) comes last.
      expect(seen.slice(RANK_WINDOW)).toEqual(order.slice(0, 10).reverse());
    });
  });
}

/**
 * Stopwords at scale: a word in at least half of all seeds and in over STOPWORD_MIN_SEEDS of them is left out of the
 * ranking (and of the filter when other words are searched); a search of stopwords alone lists newest first. Below
 * the floor every word is ranked (describeSeedSearch). The backend's database must hold no other seeds.
 */
export function describeStopwords<A>(label: string, backend: () => SearchBackend<A>): void {
  describe(`stopwords (${label})`, () => {
    let acct: A;
    const COUNT = STOPWORD_MIN_SEEDS + 1500;
    /** Seed i (0 = oldest): every seed says "the"; every 10th mentions coffee, in its title when i % 20 === 0. */
    const titles: string[] = [];
    beforeAll(async () => {
      acct = await backend().newAccount();
      const rows: SeedFixture[] = [];
      for (let i = 0; i < COUNT; i++) {
        const title = i % 20 === 0 ? `Coffee notes ${i}` : `Seed number ${i}`;
        const content = i % 10 === 0 ? (i % 20 === 0 ? "the plan" : "the coffee plan") : `the plan for day ${i}`;
        titles.push(title);
        rows.push({ title, content, category: null });
      }
      await backend().insertMany(acct, rows);
    });
    const search = async (q: string, limit = 50) => backend().list(acct, { search: q, limit });

    test("a stopword alone lists every seed holding it, newest first", async () => {
      const page = await search("the", 30);
      expect(page.titles).toEqual(titles.slice(-30).reverse());
      expect(page.nextCursor).not.toBeNull();
    });

    test("next to a real word a stopword neither ranks nor filters: the word's own ranking, title hits first", async () => {
      const withStopword = (await search("the coffee", 300)).titles;
      const alone = (await search("coffee", 300)).titles;
      expect(withStopword).toEqual(alone);
      expect(withStopword.length).toBe(300);
      // Title hits (the "Coffee notes" seeds) come before content hits.
      const firstContentHit = withStopword.findIndex((t) => !t.startsWith("Coffee notes"));
      expect(firstContentHit).toBeGreaterThan(0);
      expect(withStopword.slice(firstContentHit).some((t) => t.startsWith("Coffee notes"))).toBe(false);
    });

    test("a word in fewer than half the seeds is ranked as always", async () => {
      // "coffee" is in a tenth of them: the title hits come first, whatever their age.
      const titlesFound = (await search("coffee", 10)).titles;
      expect(titlesFound.length).toBe(10);
      expect(titlesFound.every((t) => t.startsWith("Coffee notes"))).toBe(true);
    });
  });
}
