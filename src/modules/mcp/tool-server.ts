/**
 * The MCP server one request is answered by: every tool of tools.ts registered on a fresh McpServer (the SDK's
 * per-request model), each call going arguments → idempotency → the REST service → the REST answer.
 *
 * A call's result: `structuredContent` is the REST answer's JSON and a short text says the same for people. A refusal
 * is a result with `isError: true` whose `structuredContent` is the REST error envelope (`{error, message, ...}`) and
 * whose text is the envelope's message. The group was checked before the SDK saw the request (endpoint.ts).
 */
import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import type { Deps } from "../../deps";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../../http/idempotency";
import { AppError, invalidField } from "../../lib/errors";
import { VERSION } from "../../version";
import { t } from "elysia";
import { IDEMPOTENCY_ARGUMENT, errorEnvelopeSchema } from "./model";
import type { McpPrincipal } from "./principal";
import { runIdempotent, type ToolAnswer } from "./tool-idempotency";
import { type ArgumentCheck, argumentCheck, standardSchemaOf } from "./tool-schema";
import { TOOLS, type ToolDefinition } from "./tools";

export const SERVER_NAME = "seedcast";

const INSTRUCTIONS =
  "Seedcast turns seeds (ideas, notes, announcements) into social posts and schedules them to connected Bluesky, " +
  "Mastodon and webhook accounts. Typical flow: create_seed → generate_creation (costs credits; see get_credits) → " +
  "list_targets → schedule_post. Refusals come back as results with isError and a stable `error` code.";

/** What registration needs of a tool, built once per process (the schemas never change). */
interface PreparedTool {
  definition: ToolDefinition;
  check: ArgumentCheck<ToolDefinition["input"]>;
  config: {
    title: string;
    description: string;
    inputSchema: ReturnType<typeof standardSchemaOf>;
    outputSchema: ReturnType<typeof standardSchemaOf>;
    annotations: ToolDefinition["annotations"];
  };
}

const PREPARED: readonly PreparedTool[] = TOOLS.map((definition) => ({
  definition,
  check: argumentCheck(definition.input),
  config: {
    title: definition.title,
    description: definition.description,
    inputSchema: standardSchemaOf(definition.input),
    outputSchema: standardSchemaOf(t.Union([definition.output, errorEnvelopeSchema])),
    annotations: { title: definition.title, ...definition.annotations },
  },
}));

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

/** Runs the tool: arguments checked like the REST body, then its service. Never throws. */
async function answerOf(deps: Deps, principal: McpPrincipal, prepared: PreparedTool, raw: unknown): Promise<ToolAnswer> {
  const { definition } = prepared;
  try {
    const args = prepared.check.parse(raw);
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
function usableKey(raw: unknown): string | null {
  if (raw === null || typeof raw !== "object") return null;
  const key = (raw as Record<string, unknown>)[IDEMPOTENCY_ARGUMENT];
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !key.isWellFormed()) return null;
  if (key.trim() === "") throw invalidField(IDEMPOTENCY_ARGUMENT, "must not be empty");
  return key;
}

/** One tool call, start to end. */
async function callTool(deps: Deps, principal: McpPrincipal, bearer: string, prepared: PreparedTool, raw: unknown): Promise<CallToolResult> {
  const { definition } = prepared;
  let key: string | null;
  try {
    key = definition.creates ? usableKey(raw) : null;
  } catch (error) {
    return resultOf(definition, errorAnswer(deps, definition.name, error));
  }
  let answer: ToolAnswer;
  if (key === null) {
    answer = await answerOf(deps, principal, prepared, raw);
  } else {
    const { [IDEMPOTENCY_ARGUMENT]: _key, ...args } = raw as Record<string, unknown>;
    try {
      answer = await runIdempotent(deps, { accountId: principal.accountId, tool: definition.name, key, bearer }, args, () =>
        answerOf(deps, principal, prepared, raw),
      );
    } catch (error) {
      answer = errorAnswer(deps, definition.name, error);
    }
  }
  return resultOf(definition, answer);
}

/** The MCP result of an answer. */
function resultOf(definition: ToolDefinition, answer: ToolAnswer): CallToolResult {
  const body = answer.body as Record<string, unknown>;
  if (answer.status >= 400) {
    const message = typeof body.message === "string" ? body.message : String(body.error);
    return { content: [{ type: "text", text: `Refused (${String(body.error)}): ${message}` }], structuredContent: body, isError: true };
  }
  const said = definition.summary(body as never);
  const text = answer.replayed ? `${said} (Replayed: an earlier call used this idempotency_key.)` : said;
  return { content: [{ type: "text", text }], structuredContent: body };
}

/**
 * A fresh server for one request of `principal`. `only`: the request is nothing but calls of these tools, so only
 * they are registered (registering all twenty per request cost more than the call itself); null registers every tool.
 * `bearer`: the request's access token, held in memory only (it seals credential answers kept for replays).
 */
export function createToolServer(deps: Deps, principal: McpPrincipal, bearer: string, only: ReadonlySet<string> | null = null): McpServer {
  const server = new McpServer({ name: SERVER_NAME, title: "Seedcast", version: VERSION }, { instructions: INSTRUCTIONS });
  // A call of a tool that does not exist gets every tool, so the SDK answers "Tool … not found" as usual.
  const subset = only && PREPARED.some((prepared) => only.has(prepared.definition.name)) ? only : null;
  for (const prepared of PREPARED) {
    if (subset && !subset.has(prepared.definition.name)) continue;
    server.registerTool(prepared.definition.name, prepared.config, (args: unknown) => callTool(deps, principal, bearer, prepared, args));
  }
  return server;
}
