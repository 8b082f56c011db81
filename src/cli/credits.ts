/** `seedcast credits grant --account ID --amount A`. */
import type { Deps } from "../deps";
import { grantCredits } from "../modules/credits/grant";
import { UsageError, optional, output, parse, required } from "./args";

/** Grants credits to an account (the instance admin's tool). */
export async function creditsCommand(deps: Deps, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, json } = parse(rest, ["account", "amount", "note"]);
  if (sub !== "grant") throw new UsageError("usage: seedcast credits grant --account ID --amount A");
  const amount = required(flags, "amount");
  if (!/^\d+$/.test(amount)) throw new UsageError("--amount must be a positive whole number");
  const accountId = required(flags, "account");
  const balance = await grantCredits(deps, accountId, Number(amount), optional(flags, "note") ?? "granted by the instance admin");
  output(json, { accountId, granted: Number(amount), balance });
}
