/**
 * The MCP server one request is answered by: every tool of tools.ts registered on a fresh McpServer (the SDK's
 * per-request model), each call going arguments → idempotency → the REST service → the REST answer.
 *
 * Arguments: only declared ones (anything else is refused by name, nothing done); the `id` argument's other name
 * (`creation_id`, `post_id`…) is moved to `id` first. The output schema is the REST success answer only.
 *
 * A call's result: `structuredContent` is the REST answer's JSON and a short text says the same for people. A refusal
 * is a result with `isError: true` whose text is the envelope's message and whose `structuredContent` is the REST error
 * envelope (`{error, message, ...}`). For a 2025-era request the envelope comes as a second text block (JSON) instead:
 * the SDK clients of that era check a refusal's structuredContent against the success schema and would throw it away.
 * The group was checked before the SDK saw the request (endpoint.ts).
 */
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { Deps } from "../../deps";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../../http/idempotency";
import { AppError, invalidField } from "../../lib/errors";
import { VERSION } from "../../version";
import type { TObject } from "@sinclair/typebox";
import { IDEMPOTENCY_ARGUMENT, withFormerId } from "./model";
import type { McpPrincipal } from "./principal";
import { runIdempotent, type ToolAnswer } from "./tool-idempotency";
import { type ArgumentCheck, argumentCheck, standardSchemaOf } from "./tool-schema";
import { TOOLS, type ToolDefinition } from "./tools";

export const SERVER_NAME = "seedcast";

const INSTRUCTIONS =
  "Seedcast turns seeds (ideas, notes, announcements) into social posts and schedules them to connected Bluesky, " +
  "Mastodon and webhook accounts. Typical flow: create_seed → generate_creation (costs credits; see get_credits) → " +
  "list_targets → schedule_post. Refusals come back as results with isError and a stable `error` code.";

/** Which protocol era the request is served in (the SDK's routing: 2026-07-28 is modern, 2025-era is legacy). */
export type McpEra = "modern" | "legacy";

/** What registration needs of a tool, built once per process (the schemas never change). */
interface PreparedTool {
  definition: ToolDefinition;
  check: ArgumentCheck<ToolDefinition["input"]>;
  /** Every argument name the input schema declares. */
  declared: ReadonlySet<string>;
  config: {
    title: string;
    description: string;
    inputSchema: ReturnType<typeof standardSchemaOf>;
    outputSchema: ReturnType<typeof standardSchemaOf>;
    annotations: ToolDefinition["annotations"];
  };
}

/** A tool's whole input schema: its definition's, plus the other name of `id` when it has one. */
function inputSchemaOf(definition: ToolDefinition): TObject {
  const schema = definition.input as TObject;
  return definition.formerId ? withFormerId(schema, definition.formerId) : schema;
}

const PREPARED: readonly PreparedTool[] = TOOLS.map((definition) => {
  const input = inputSchemaOf(definition);
  return {
    definition,
    check: argumentCheck(input),
    declared: new Set(Object.keys(input.properties)),
    config: {
      title: definition.title,
      description: definition.description,
      inputSchema: standardSchemaOf(input, { closed: true }),
      outputSchema: standardSchemaOf(definition.output),
      annotations: { title: definition.title, ...definition.annotations },
    },
  };
});

/** The answer of a refusal or failure, as REST would render it. */
function errorAnswer(deps: Deps, tool: string, error: unknown): ToolAnswer {
  if (error instanceof AppError) return { status: error.status, body: error.toBody(), replayed: false };
  deps.log.error("unhandled error in MCP tool", {
    tool,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  return {
    status: 500,
    body: { error: "internal_error", message: "Something went wrong on our side; it was logged." },
    replayed: false,
  };
}

/**
 * The call's arguments as an object, refused (AppError invalid_request) when one is not declared, with the other name
 * of `id` moved to `id` (refused when both are given and differ).
 */
function declaredArguments(prepared: PreparedTool, raw: unknown): Record<string, unknown> {
  const given: Record<string, unknown> = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  const undeclared = Object.keys(given).filter((name) => !prepared.declared.has(name));
  if (undeclared.length > 0) {
    const takes = [...prepared.declared].filter((name) => name !== prepared.definition.formerId).join(", ") || "no arguments";
    const names = undeclared.map((name) => `\`${name}\``).join(", ");
    throw new AppError(
      "invalid_request",
      `${prepared.definition.name} has no argument ${names}; it takes: ${takes}.`,
      { details: undeclared.map((field) => ({ field, problem: "is not an argument of this tool" })) },
    );
  }
  const former = prepared.definition.formerId;
  if (former !== undefined && given[former] !== undefined) {
    if (given.id !== undefined && given.id !== given[former]) {
      throw invalidField("id", `was given twice with different values, as id and as ${former} (its other name); send id only`);
    }
    given.id = given[former];
    delete given[former];
  }
  return given;
}

/** Runs the tool: arguments checked like the REST body, then its service. Never throws. */
async function answerOf(deps: Deps, principal: McpPrincipal, prepared: PreparedTool, given: Record<string, unknown>): Promise<ToolAnswer> {
  const { definition } = prepared;
  try {
    const args = prepared.check.parse(given);
    const body = await definition.run(deps, principal, args);
    return { status: definition.status, body, replayed: false };
  } catch (error) {
    return errorAnswer(deps, definition.name, error);
  }
}

/**
 * The idempotency key a call carries, when it is one the claim can take; null when there is none or when it is not
 * well-formed text of the allowed length (the argument check then refuses it). Blank: refused as REST refuses a
 * blank header.
 */
function usableKey(given: Record<string, unknown>): string | null {
  const key = given[IDEMPOTENCY_ARGUMENT];
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !key.isWellFormed()) return null;
  if (key.trim() === "") throw invalidField(IDEMPOTENCY_ARGUMENT, "must not be empty");
  return key;
}

/** One tool call, start to end. */
async function callTool(deps: Deps, principal: McpPrincipal, bearer: string, prepared: PreparedTool, raw: unknown, era: McpEra): Promise<CallToolResult> {
  const { definition } = prepared;
  let given: Record<string, unknown>;
  let key: string | null;
  try {
    given = declaredArguments(prepared, raw);
    key = definition.creates ? usableKey(given) : null;
  } catch (error) {
    return resultOf(definition, errorAnswer(deps, definition.name, error), era);
  }
  let answer: ToolAnswer;
  if (key === null) {
    answer = await answerOf(deps, principal, prepared, given);
  } else {
    const { [IDEMPOTENCY_ARGUMENT]: _key, ...args } = given;
    const scope = { accountId: principal.accountId, tool: definition.name, key, bearer, withheld: definition.withheldOnReplay ?? [] };
    try {
      answer = await runIdempotent(deps, scope, args, () => answerOf(deps, principal, prepared, given));
    } catch (error) {
      answer = errorAnswer(deps, definition.name, error);
    }
  }
  return resultOf(definition, answer, era);
}

/** The MCP result of an answer. */
function resultOf(definition: ToolDefinition, answer: ToolAnswer, era: McpEra): CallToolResult {
  const body = answer.body as Record<string, unknown>;
  if (answer.status >= 400) {
    const message = typeof body.message === "string" ? body.message : String(body.error);
    const said = { type: "text" as const, text: `Refused (${String(body.error)}): ${message}` };
    if (era === "legacy") return { content: [said, { type: "text", text: JSON.stringify(body) }], isError: true };
    return { content: [said], structuredContent: body, isError: true };
  }
  const said = definition.summary(body as never);
  const text = answer.replayed ? `${said} (Replayed: an earlier call used this idempotency_key.)` : said;
  return { content: [{ type: "text", text }], structuredContent: body };
}

/**
 * A fresh server for one request of `principal`. `only`: the request is nothing but calls of these tools, so only
 * they are registered (registering every tool per request cost more than the call itself); null registers every tool.
 * `bearer`: the request's access token, held in memory only (it seals credential answers kept for replays). `era`: how
 * a refusal is carried (see the file comment).
 */
export function createToolServer(
  deps: Deps,
  principal: McpPrincipal,
  bearer: string,
  only: ReadonlySet<string> | null = null,
  era: McpEra = "modern",
): McpServer {
  const server = new McpServer({ name: SERVER_NAME, title: "Seedcast", version: VERSION }, { instructions: INSTRUCTIONS });
  // A call of a tool that does not exist gets every tool, so the SDK answers "Tool … not found" as usual.
  const subset = only && PREPARED.some((prepared) => only.has(prepared.definition.name)) ? only : null;
  for (const prepared of PREPARED) {
    if (subset && !subset.has(prepared.definition.name)) continue;
    server.registerTool(prepared.definition.name, prepared.config, (args: unknown) => callTool(deps, principal, bearer, prepared, args, era));
  }
  return server;
}
