/** Shared CLI plumbing: argument parsing, output in text or --json, and uniform failure. */
import { parseArgs } from "node:util";
import { AppError } from "../lib/errors";

export type Flags = Record<string, string | boolean | undefined>;

export interface Parsed {
  flags: Flags;
  positionals: string[];
  json: boolean;
}

/** A usage mistake: exit code 2 with the message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Parses `argv` allowing the given string options plus --json. */
export function parse(argv: string[], options: readonly string[], booleans: readonly string[] = []): Parsed {
  const spec: Record<string, { type: "string" | "boolean" }> = { json: { type: "boolean" } };
  for (const o of options) spec[o] = { type: "string" };
  for (const b of booleans) spec[b] = { type: "boolean" };
  try {
    const { values, positionals } = parseArgs({ args: argv, options: spec, allowPositionals: true, strict: true });
    return { flags: values as Flags, positionals, json: values.json === true };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The value of a required string flag. */
export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** The value of an optional string flag. */
export function optional(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}

/** Prints a result: JSON on stdout with --json, else `text` (or key: value lines). */
export function output(json: boolean, result: unknown, text?: string): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (text !== undefined) {
    process.stdout.write(`${text}\n`);
    return;
  }
  if (result && typeof result === "object") {
    for (const [k, v] of Object.entries(result)) process.stdout.write(`${k}: ${typeof v === "string" ? v : JSON.stringify(v)}\n`);
  }
}

/** Prints a failure (JSON on stdout with --json, text on stderr) and returns the exit code. */
export function fail(json: boolean, error: unknown): number {
  const code = error instanceof AppError ? error.code : error instanceof UsageError ? "usage" : "error";
  const message = error instanceof Error ? error.message : String(error);
  if (json) process.stdout.write(`${JSON.stringify({ error: code, message })}\n`);
  else process.stderr.write(`seedcast: ${message}\n`);
  return error instanceof UsageError ? 2 : 1;
}
