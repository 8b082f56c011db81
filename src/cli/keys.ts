/** `seedcast keys mint|rotate|revoke|list`. */
import type { Deps } from "../deps";
import { firstOwner } from "../modules/accounts/service";
import { listKeys, mintKey, parseExpiryDays, revokeKey, rotateKey } from "../modules/auth/keys-service";
import { UsageError, optional, output, parse, required } from "./args";

const USAGE =
  "usage: seedcast keys mint --account ID --name N --groups read,create,schedule,voice [--expires-days 30|90|365|never] [--member USERID]\n" +
  "       seedcast keys rotate ID | revoke ID | list --account ID";

/** Dispatches the keys subcommands. */
export async function keysCommand(deps: Deps, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positionals, json } = parse(rest, ["account", "name", "groups", "expires-days", "member"]);
  switch (sub) {
    case "mint": {
      const accountId = required(flags, "account");
      const minted = await mintKey(deps, {
        accountId,
        userId: optional(flags, "member") ?? (await firstOwner(deps, accountId)),
        name: required(flags, "name"),
        groups: required(flags, "groups").split(",").map((g) => g.trim()).filter(Boolean),
        expiresDays: parseExpiryDays(optional(flags, "expires-days")),
      });
      output(json, minted, json ? undefined : `id: ${minted.id}\nkey: ${minted.key}\n(The key is shown once; store it now.)`);
      return;
    }
    case "rotate": {
      const id = positionals[0];
      if (!id) throw new UsageError(USAGE);
      output(json, await rotateKey(deps, id));
      return;
    }
    case "revoke": {
      const id = positionals[0];
      if (!id) throw new UsageError(USAGE);
      await revokeKey(deps, id);
      output(json, { id, revoked: true });
      return;
    }
    case "list": {
      const keys = await listKeys(deps, required(flags, "account"));
      output(
        json,
        { keys },
        keys.map((k) => `${k.id}  ${k.prefix}…  ${k.state.padEnd(7)}  ${k.scopes.join(",").padEnd(26)}  ${k.name}`).join("\n") ||
          "(no keys)",
      );
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
