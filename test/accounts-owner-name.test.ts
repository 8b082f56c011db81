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

const userName = async (userId: string) => (await world.sql<{ name: string }>("SELECT name FROM users WHERE id = ?", userId))[0]?.name;
const accountName = async (accountId: string) => (await world.sql<{ name: string }>("SELECT name FROM accounts WHERE id = ?", accountId))[0]?.name;
const userCount = async () => Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM users"))[0]?.n);

test("ownerName names the person; the account keeps its own name", async () => {
  const created = await createAccount(world.deps, { name: "Bakery Ltd", ownerName: "  Grace Baker ", email: "grace@bakery.test", password: PASSWORD });
  expect(await userName(created.userId)).toBe("Grace Baker");
  expect(await accountName(created.accountId)).toBe("Bakery Ltd");
});

test("without ownerName (or a blank one) the owner is named after the account", async () => {
  const plain = await createAccount(world.deps, { name: "Solo", email: "solo@one.test", password: PASSWORD });
  expect(await userName(plain.userId)).toBe("Solo");
  const blank = await createAccount(world.deps, { name: "Duo", ownerName: "   ", email: "duo@two.test", password: PASSWORD });
  expect(await userName(blank.userId)).toBe("Duo");
});

test("an ownerName over 120 characters is refused naming the field, and nothing is created", async () => {
  const before = await userCount();
  const refused = await createAccount(world.deps, { name: "Long", ownerName: "x".repeat(121), email: "long@x.test", password: PASSWORD }).catch((e) => e);
  expect(refused).toBeInstanceOf(AppError);
  expect((refused as AppError).toBody()).toMatchObject({ error: "invalid_request", details: [{ field: "ownerName" }] });
  expect(await userCount()).toBe(before);
});
