/** `seedcast secret new`: a fresh INSTANCE_SECRET, printed once, kept nowhere. */
import { newInstanceSecret } from "../lib/instance-secret";
import { UsageError, output, parse } from "./args";

const USAGE = "usage: seedcast secret new   (prints a fresh INSTANCE_SECRET: 32 random bytes, base64)";

/**
 * Prints a new instance secret on one line (with --json: {"instanceSecret": "..."}). It reads no configuration and
 * opens nothing: it is what a person runs to fill in INSTANCE_SECRET before the first start.
 */
export function secretCommand(argv: string[]): void {
  const [sub, ...rest] = argv;
  const { positionals, json } = parse(rest, []);
  if (sub !== "new" || positionals.length > 0) throw new UsageError(USAGE);
  const secret = newInstanceSecret();
  output(json, { instanceSecret: secret }, secret);
}
