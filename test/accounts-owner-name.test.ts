/** createAccount names the owner separately from the account (ownerName), defaulting to the account name. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AppError } from "../src/lib/errors";
import { createAccount } from "../src/modules/accounts/service";
import { type World, createWorld } from "./helpers/world";

const PASSWORD = "correct horse battery";
let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

const userName = (userId: string) => world.deps.sqlite.query<{ name: string }, [string]>("SELECT name FROM users WHERE id = ?").get(userId)?.name;
const accountName = (accountId: string) =>
  world.deps.sqlite.query<{ name: string }, [string]>("SELECT name FROM accounts WHERE id = ?").get(accountId)?.name;

test("ownerName names the person; the account keeps its own name", async () => {
  const created = await createAccount(world.deps, { name: "Bakery Ltd", ownerName: "  Grace Baker ", email: "grace@bakery.test", password: PASSWORD });
  expect(userName(created.userId)).toBe("Grace Baker");
  expect(accountName(created.accountId)).toBe("Bakery Ltd");
});

test("without ownerName (or a blank one) the owner is named after the account", async () => {
  const plain = await createAccount(world.deps, { name: "Solo", email: "solo@one.test", password: PASSWORD });
  expect(userName(plain.userId)).toBe("Solo");
  const blank = await createAccount(world.deps, { name: "Duo", ownerName: "   ", email: "duo@two.test", password: PASSWORD });
  expect(userName(blank.userId)).toBe("Duo");
});

test("an ownerName over 120 characters is refused naming the field, and nothing is created", async () => {
  const before = world.deps.sqlite.query("SELECT count(*) AS n FROM users").get();
  const refused = await createAccount(world.deps, { name: "Long", ownerName: "x".repeat(121), email: "long@x.test", password: PASSWORD }).catch((e) => e);
  expect(refused).toBeInstanceOf(AppError);
  expect((refused as AppError).toBody()).toMatchObject({ error: "invalid_request", details: [{ field: "ownerName" }] });
  expect(world.deps.sqlite.query("SELECT count(*) AS n FROM users").get()).toEqual(before);
});
