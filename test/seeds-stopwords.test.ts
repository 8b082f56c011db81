/**
 * Stopwords at scale on SQLite, through the service (the cases are shared with PostgreSQL: seed-search-cases.ts): a
 * word in at least half of all seeds and in over STOPWORD_MIN_SEEDS of them is left out of the ranking (and of the
 * filter when other words are searched); a search of stopwords alone lists newest first. Below the floor every word
 * is ranked (seeds.test.ts).
 */
import { afterAll, beforeAll } from "bun:test";
import { AppError } from "../src/lib/errors";
import { seeds } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { listSeeds } from "../src/modules/seeds/service";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type SearchBackend, describeStopwords } from "./seed-search-cases";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

const serviceBackend = (): SearchBackend<TestAccount> => ({
  newAccount: () => world.createAccount(),
  async create() {
    throw new Error("not used by the stopword cases");
  },
  async insertMany(acct, rows) {
    const start = world.clock.now();
    const order = rows.map(() => newId());
    const values = rows.map((row, i) => ({
      id: order[i] as string,
      accountId: acct.accountId,
      ...row,
      createdAt: start + i * 1000,
      updatedAt: start + i * 1000,
    }));
    await world.store.write(async (tx) => {
      for (let i = 0; i < values.length; i += 500) await tx.insert(seeds).values(values.slice(i, i + 500)).run();
    });
    return order;
  },
  async list(acct, query) {
    try {
      const page = await listSeeds(world.deps, acct.accountId, { search: query.search ?? null, limit: query.limit ?? 50, cursor: query.cursor ?? null });
      return { status: 200, ids: page.seeds.map((s) => s.id), titles: page.seeds.map((s) => s.title), nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof AppError) return { status: error.status, ids: [], titles: [], nextCursor: null };
      throw error;
    }
  },
});

describeStopwords("SQLite, through the service", serviceBackend);
