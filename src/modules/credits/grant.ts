/** Granting credits (the instance admin, the CLI, and the initial grant of a new account). */
import { eq, sql } from "drizzle-orm";
import { accounts, creditLedger } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";

/** Adds `amount` credits to the account's balance and writes a `grant` ledger row. Returns the new balance. */
export async function grantCredits(deps: Pick<Deps, "store" | "clock">, accountId: string, amount: number, note = ""): Promise<number> {
  if (!Number.isInteger(amount) || amount <= 0) {
    throw new AppError("invalid_request", "amount must be a positive whole number.", {
      details: [{ field: "amount", problem: "must be a positive whole number" }],
    });
  }
  return deps.store.write(async (tx) => {
    const updated = await tx
      .update(accounts)
      .set({ creditsBalance: sql`${accounts.creditsBalance} + ${amount}` })
      .where(eq(accounts.id, accountId))
      .returning({ balance: accounts.creditsBalance })
      .get();
    if (!updated) throw notFound("account");
    await tx
      .insert(creditLedger)
      .values({
        id: newId(),
        accountId,
        kind: "grant",
        amount,
        note,
        balanceAfter: updated.balance,
        createdAt: deps.clock.now(),
      })
      .run();
    return updated.balance;
  });
}
