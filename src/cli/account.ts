/** `seedcast account create|disable|enable` and `seedcast member add|set-role`. */
import type { Deps } from "../deps";
import { addMember, createAccount, setAccountDisabled, setMemberRole, setPassword } from "../modules/accounts/service";
import { readSecretInput } from "./secret-input";
import { UsageError, optional, output, parse, required } from "./args";

/** seedcast account create --name N --email E --password P [--credits C] */
export async function accountCommand(deps: Deps, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positionals, json } = parse(rest, ["name", "email", "password", "credits"]);
  if (sub === "create") {
    const credits = optional(flags, "credits");
    if (credits !== undefined && !/^\d+$/.test(credits)) throw new UsageError("--credits must be a whole number");
    const result = await createAccount(deps, {
      name: required(flags, "name"),
      email: required(flags, "email"),
      password: required(flags, "password"),
      credits: credits === undefined ? undefined : Number(credits),
    });
    output(json, result);
    return;
  }
  if (sub === "disable" || sub === "enable") {
    const id = positionals[0];
    if (!id) throw new UsageError(`usage: seedcast account ${sub} ACCOUNT_ID`);
    const missed = await setAccountDisabled(deps, id, sub === "disable");
    if (sub === "disable") output(json, { accountId: id, disabled: true });
    else output(json, { accountId: id, disabled: false, missedTargets: missed }, `account ${id} enabled; ${missed} post target(s) that fell due while it was disabled were marked failed`);
    return;
  }
  throw new UsageError("usage: seedcast account create --name N --email E --password P [--credits C] | disable ID | enable ID");
}

/**
 * seedcast member add --account ID --email E --password P --role R | member set-role USERID ROLE |
 * member set-password USERID (the password from stdin, or a prompt that does not echo; never from argv)
 */
export async function memberCommand(deps: Deps, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positionals, json } = parse(rest, ["account", "email", "password", "role", "name"]);
  if (sub === "add") {
    const result = await addMember(deps, {
      accountId: required(flags, "account"),
      email: required(flags, "email"),
      password: required(flags, "password"),
      role: required(flags, "role"),
      name: optional(flags, "name"),
    });
    output(json, result);
    return;
  }
  if (sub === "set-role") {
    const [userId, role] = positionals;
    if (!userId || !role) throw new UsageError("usage: seedcast member set-role USERID owner|editor|viewer");
    await setMemberRole(deps, userId, role, optional(flags, "account"));
    output(json, { userId, role });
    return;
  }
  if (sub === "set-password") {
    const [userId] = positionals;
    if (!userId || flags.password !== undefined || positionals.length > 1) {
      throw new UsageError("usage: seedcast member set-password USERID  (type the password at the prompt, or pipe it on stdin; never on the command line)");
    }
    const password = await readSecretInput("New password: ", "Same password again: ");
    await setPassword(deps, userId, password);
    output(json, { userId, passwordChanged: true });
    return;
  }
  throw new UsageError("usage: seedcast member add --account ID --email E --password P --role R | set-role USERID ROLE | set-password USERID");
}
