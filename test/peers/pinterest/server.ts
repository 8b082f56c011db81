/**
 * A Pinterest stand-in, written from Pinterest's documentation and held to its official OpenAPI description
 * (test/peers/platform-specs/pinterest-v5.openapi.json, API v5), never from Seedcast's client:
 * - https://developers.pinterest.com/docs/getting-started/authentication-and-scopes/: `GET https://www.pinterest.com/oauth/`
 *   (`client_id`, `redirect_uri`, `response_type=code`, `scope` comma-separated, `state`) shows the person a page with
 *   Allow and Cancel (Cancel: `redirect_uri?error=access_denied&state=…`); `POST /v5/oauth/token` with HTTP Basic
 *   (the description's `basic` security), form `grant_type=authorization_code`, `code`, `redirect_uri`; or
 *   `grant_type=refresh_token`, `refresh_token`. Access tokens last 30 days; refresh tokens are continuous (since
 *   May 2025 the only kind: 60 days, each refresh answers a new one; the one used is then spent). A bad code or refresh
 *   token answers 401 `{"code": 283, "message": "The authorization grant is invalid"}` (pinterest-python-sdk #114).
 * - `GET /v5/user_account`, `GET /v5/boards`, `GET /v5/boards/{board_id}`, `POST /v5/pins` (`image_base64`, or
 *   `multiple_image_base64` for a carousel of 2–5), `GET /v5/boards/{board_id}/pins`.
 * Every request is validated with Ajv against its operation in the description (query parameters, path parameters,
 * JSON and form bodies); one that does not conform is answered 400 `{code: 1, message}` and recorded in `violations`.
 * Every answer is validated against the operation's response schema before it is sent.
 */
import Ajv from "ajv";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { cutOffAnswer, escapeHtml } from "../stand-in-kit";

const SPEC_PATH = new URL("../platform-specs/pinterest-v5.openapi.json", import.meta.url).pathname;
const ACCESS_TTL_S = 30 * 24 * 60 * 60;
const REFRESH_TTL_S = 60 * 24 * 60 * 60;
const CODE_TTL_MS = 10 * 60 * 1000;

type Spec = { paths: Record<string, Record<string, { parameters?: { $ref?: string; name?: string; in?: string; schema?: unknown }[] }>>; components: { parameters: Record<string, { name: string; in: string; schema: unknown; required?: boolean }> } };

let compiled: { spec: Spec; get: (pointer: string) => ValidateFunction; param: (schema: unknown) => ValidateFunction } | null = null;

function validators() {
  if (compiled) return compiled;
  const spec = openApiNullable(JSON.parse(readFileSync(SPEC_PATH, "utf8"))) as Spec & Record<string, unknown>;
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
  addFormats(ajv);
  for (const name of ["int32", "int64", "double", "float", "uuid"]) ajv.addFormat(name, true);
  ajv.addSchema({ ...spec, $id: "pinterest" });
  const cache = new Map<string, ValidateFunction>();
  const get = (pointer: string): ValidateFunction => {
    let fn = cache.get(pointer);
    if (!fn) {
      fn = ajv.getSchema(`pinterest#${pointer}`);
      if (!fn) throw new Error(`no schema at ${pointer}`);
      cache.set(pointer, fn);
    }
    return fn;
  };
  const param = (schema: unknown) => ajv.compile({ ...(schema as object), $id: undefined } as object);
  compiled = { spec, get, param };
  return compiled;
}

/**
 * OpenAPI 3.0's `nullable` as JSON Schema: Ajv reads `nullable` beside a `type`; where a schema says `nullable`
 * without one (beside `allOf`), it becomes `anyOf: [the schema, {type: "null"}]`.
 */
function openApiNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openApiNullable);
  if (node === null || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(node)) out[k] = openApiNullable(val);
  if (out.nullable === true && out.type === undefined) {
    delete out.nullable;
    const { description, ...rest } = out;
    return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: "null" }] };
  }
  return out;
}

const esc = (p: string) => p.replace(/~/g, "~0").replace(/\//g, "~1");

/** One pin the stand-in stored. */
export interface StoredPin {
  id: string;
  boardId: string;
  title: string | null;
  description: string | null;
  altText: string | null;
  images: { contentType: string; bytes: number }[];
  sourceType: string;
  createdAt: number;
}

export interface PinterestMode {
  /** Store the next N pins, then cut the answer off (the client cannot know). */
  storeThenCut: number;
  /** Answer the token endpoint 503 this many times. */
  tokenUnavailable: number;
  /** Answer refreshes without a refresh token this many times (a network that omits it). */
  refreshWithoutRefreshToken: number;
  /** Latency of every pin, half before it is stored and half after. */
  latencyMs: number;
}

export interface PinterestStandIn {
  origin: string;
  clientId: string;
  clientSecret: string;
  account: { id: string; username: string };
  boards: { id: string; name: string; privacy: "PUBLIC" | "SECRET" }[];
  pins: StoredPin[];
  tokenRequests: { grantType: string; status: number; refreshToken: string | null }[];
  /** Refresh tokens handed out and not yet spent. */
  liveRefreshTokens: Set<string>;
  violations: string[];
  mode: PinterestMode;
  /** Revokes every grant (the person removed the app): each refresh token is then refused. */
  revokeAll(): void;
  /** Issues an access token directly (tests that skip the sign-in). */
  issueToken(): string;
  stop(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 (a free port); `now` is the test's clock. */
export function startPinterestStandIn(opts: { now: () => number }): PinterestStandIn {
  const v = validators();
  const clientId = "1507772";
  const clientSecret = randomBytes(20).toString("hex");
  const codes = new Map<string, { redirectUri: string; scope: string; expiresAt: number }>();
  const accessTokens = new Map<string, number>();
  let seq = 1_125_899_906_842_000n;
  const nextId = () => (seq += 1n).toString();

  const state: Omit<PinterestStandIn, "origin" | "stop"> = {
    clientId,
    clientSecret,
    account: { id: "549755813888", username: "harbourbakery" },
    boards: [
      { id: "549755885175", name: "Bread we bake", privacy: "PUBLIC" },
      { id: "549755885176", name: "Cakes for weddings", privacy: "PUBLIC" },
      { id: "549755885177", name: "Ideas (secret)", privacy: "SECRET" },
    ],
    pins: [],
    tokenRequests: [],
    liveRefreshTokens: new Set(),
    violations: [],
    mode: { storeThenCut: 0, tokenUnavailable: 0, refreshWithoutRefreshToken: 0, latencyMs: 0 },
    revokeAll() {
      state.liveRefreshTokens.clear();
      accessTokens.clear();
    },
    issueToken() {
      const access = `pina_${randomBytes(24).toString("base64url")}`;
      accessTokens.set(access, opts.now() + ACCESS_TTL_S * 1000);
      return access;
    },
  };

  const problem = (fn: ValidateFunction, value: unknown): string | null =>
    fn(value) ? null : (fn.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");

  /** Answers `body` after checking it against the operation's response schema. */
  const answer = (status: number, pointer: string, body: unknown): Response => {
    const bad = problem(v.get(pointer), body);
    if (bad) state.violations.push(`answer ${pointer}: ${bad}`);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
  const error = (status: number, code: number, message: string) => answer(status, "/components/schemas/Error", { code, message });
  const invalid = (what: string, why: string) => {
    state.violations.push(`${what}: ${why}`);
    return error(400, 1, `Invalid request: ${why}`);
  };

  /** Validates the query and path parameters of `path` `method` against the description. */
  const checkParams = (pathKey: string, method: string, url: URL, pathValues: Record<string, string>): string | null => {
    const params = (v.spec.paths[pathKey]?.[method]?.parameters ?? []).map((p) => (p.$ref ? v.spec.components.parameters[p.$ref.split("/").pop()!]! : (p as { name: string; in: string; schema: unknown })));
    for (const [name] of url.searchParams) if (!params.some((p) => p.in === "query" && p.name === name)) return `unknown query parameter ${name}`;
    for (const p of params) {
      const raw = p.in === "query" ? url.searchParams.get(p.name) : p.in === "path" ? (pathValues[p.name] ?? null) : null;
      if (raw === null) continue;
      const schema = p.schema as { type?: string };
      const value = schema.type === "integer" || schema.type === "number" ? Number(raw) : schema.type === "boolean" ? raw === "true" : raw;
      const bad = problem(v.param(p.schema), value);
      if (bad) return `${p.name} ${bad}`;
    }
    return null;
  };

  const bearer = (req: Request): boolean => {
    const token = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    const expiresAt = accessTokens.get(token);
    return expiresAt !== undefined && expiresAt > opts.now();
  };
  const unauthorized = () => error(401, 2, "Authentication failed.");

  function issue(grantType: "authorization_code" | "refresh_token", scope: string, withRefresh: boolean): Record<string, unknown> {
    const access = `pina_${randomBytes(24).toString("base64url")}`;
    accessTokens.set(access, opts.now() + ACCESS_TTL_S * 1000);
    const body: Record<string, unknown> = { access_token: access, token_type: "bearer", expires_in: ACCESS_TTL_S, scope, response_type: grantType };
    if (withRefresh) {
      const refresh = `pinr_${randomBytes(24).toString("base64url")}`;
      state.liveRefreshTokens.add(refresh);
      Object.assign(body, { refresh_token: refresh, refresh_token_expires_in: REFRESH_TTL_S, refresh_token_expires_at: Math.floor(opts.now() / 1000) + REFRESH_TTL_S });
    }
    return body;
  }

  async function token(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const grantType = form.get("grant_type") ?? "";
    const record = (status: number) => state.tokenRequests.push({ grantType, status, refreshToken: form.get("refresh_token") });
    if (!(req.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return invalid("POST /oauth/token", "body is not form-encoded");
    const body = Object.fromEntries(form);
    const schema = grantType === "refresh_token" ? "/components/schemas/OauthAccessTokenRequestRefresh" : "/components/schemas/OauthAccessTokenRequestCode";
    const bad = problem(v.get(schema), body);
    if (bad) return invalid("POST /oauth/token", bad);
    const basic = (req.headers.get("authorization") ?? "").replace(/^Basic /, "");
    if (Buffer.from(basic, "base64").toString() !== `${clientId}:${clientSecret}`) {
      record(401);
      return error(401, 2, "Authentication failed.");
    }
    if (state.mode.tokenUnavailable > 0) {
      state.mode.tokenUnavailable--;
      record(503);
      return new Response("Service Unavailable", { status: 503 });
    }
    if (grantType === "authorization_code") {
      const code = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      if (!code || code.expiresAt < opts.now() || code.redirectUri !== form.get("redirect_uri")) {
        record(401);
        return error(401, 283, "The authorization grant is invalid");
      }
      record(200);
      return answer(200, "/components/schemas/OauthAccessTokenResponseCode", issue("authorization_code", code.scope, true));
    }
    const refresh = form.get("refresh_token") ?? "";
    if (!state.liveRefreshTokens.has(refresh)) {
      record(401);
      return error(401, 283, "The authorization grant is invalid");
    }
    if (state.mode.refreshWithoutRefreshToken > 0) {
      state.mode.refreshWithoutRefreshToken--;
      record(200);
      // Outside the description on purpose (a network that omits it): not checked against the refresh schema.
      const partial = issue("refresh_token", "boards:read,pins:read,pins:write", false);
      return new Response(JSON.stringify(partial), { status: 200, headers: { "content-type": "application/json" } });
    }
    // Continuous refresh: the one used is spent, a new one comes back.
    state.liveRefreshTokens.delete(refresh);
    record(200);
    return answer(200, "/components/schemas/OauthAccessTokenResponseRefresh", issue("refresh_token", "boards:read,pins:read,pins:write", true));
  }

  function authorizePage(q: URLSearchParams): Response {
    if (q.get("client_id") !== clientId) return new Response("Invalid client_id", { status: 400 });
    if (q.get("response_type") !== "code") return new Response("Invalid response_type", { status: 400 });
    const scopes = (q.get("scope") ?? "").split(",");
    for (const s of scopes) if (!["boards:read", "pins:read", "pins:write"].includes(s)) state.violations.push(`authorize: scope "${s}" (Pinterest separates scopes with commas)`);
    const hidden = [...q].map(([k, val]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(val)}">`).join("");
    return new Response(
      `<!doctype html><html lang="en"><head><title>Pinterest</title></head><body><main><h1>Give Seedcast access to your Pinterest account?</h1>
<p>@${state.account.username}</p><ul>${scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join("")}</ul>
<form method="post" action="/oauth/">${hidden}<input type="hidden" name="decision" value="allow"><button type="submit">Give access</button></form>
<form method="post" action="/oauth/">${hidden}<input type="hidden" name="decision" value="cancel"><button type="submit">Cancel</button></form>
</main></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }

  function authorizeAnswer(form: URLSearchParams): Response {
    const redirect = new URL(form.get("redirect_uri") ?? "");
    if (form.get("decision") === "allow") {
      const code = randomBytes(20).toString("hex");
      codes.set(code, { redirectUri: form.get("redirect_uri") ?? "", scope: form.get("scope") ?? "", expiresAt: opts.now() + CODE_TTL_MS });
      redirect.searchParams.set("code", code);
    } else {
      redirect.searchParams.set("error", "access_denied");
    }
    const st = form.get("state");
    if (st !== null) redirect.searchParams.set("state", st);
    return new Response(null, { status: 302, headers: { location: redirect.toString() } });
  }

  const boardView = (b: PinterestStandIn["boards"][number]) => ({ id: b.id, name: b.name, privacy: b.privacy, description: null, owner: { username: state.account.username } });
  const pinView = (p: StoredPin) => ({ id: p.id, board_id: p.boardId, title: p.title, description: p.description, alt_text: p.altText, created_at: new Date(p.createdAt).toISOString().replace(/\.\d{3}Z$/, "Z") });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function createPin(req: Request, url: URL): Promise<Response> {
    const bad = checkParams("/pins", "post", url, {});
    if (bad) return invalid("POST /pins", bad);
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
    const schemaBad = problem(v.get("/components/schemas/PinCreate"), body);
    if (schemaBad) return invalid("POST /pins body", schemaBad);
    const source = body!.media_source as { source_type?: string; content_type?: string; data?: string; items?: { content_type: string; data: string }[] } | undefined;
    if (!source) return invalid("POST /pins body", "media_source is required to create a pin");
    const sourceSchema = { image_base64: "PinMediaSourceImageBase64", multiple_image_base64: "PinMediaSourceImagesBase64" }[source.source_type ?? ""];
    if (!sourceSchema) return invalid("POST /pins body", `media_source.source_type ${source.source_type} is not one Seedcast should send`);
    const sourceBad = problem(v.get(`/components/schemas/${sourceSchema}`), source);
    if (sourceBad) return invalid("POST /pins media_source", sourceBad);
    const board = state.boards.find((b) => b.id === body!.board_id);
    if (!board) return error(404, 3, "Board not found.");
    const images = (source.items ?? [source]).map((i) => ({ contentType: i.content_type ?? "", bytes: Buffer.from(i.data ?? "", "base64").byteLength }));
    if (state.mode.latencyMs > 0) await sleep(state.mode.latencyMs / 2);
    const pin: StoredPin = {
      id: nextId(),
      boardId: board.id,
      title: typeof body!.title === "string" ? body!.title : null,
      description: typeof body!.description === "string" ? body!.description : null,
      altText: typeof body!.alt_text === "string" ? body!.alt_text : null,
      images,
      sourceType: source.source_type ?? "",
      createdAt: opts.now(),
    };
    state.pins.push(pin);
    if (state.mode.latencyMs > 0) await sleep(state.mode.latencyMs / 2);
    if (state.mode.storeThenCut > 0) {
      state.mode.storeThenCut--;
      return cutOffAnswer(201);
    }
    return answer(201, `/paths/${esc("/pins")}/post/responses/201/content/application~1json/schema`, pinView(pin));
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === "/oauth/" && req.method === "GET") return authorizePage(url.searchParams);
    if (path === "/oauth/" && req.method === "POST") return authorizeAnswer(new URLSearchParams(await req.text()));
    if (path === "/v5/oauth/token" && req.method === "POST") return token(req);
    if (!path.startsWith("/v5/")) return error(404, 404, "Not found.");
    if (!bearer(req)) return unauthorized();
    const apiPath = path.slice(3);
    if (apiPath === "/user_account" && req.method === "GET") {
      const bad = checkParams("/user_account", "get", url, {});
      if (bad) return invalid("GET /user_account", bad);
      return answer(200, `/paths/${esc("/user_account")}/get/responses/200/content/application~1json/schema`, { id: state.account.id, username: state.account.username, account_type: "BUSINESS" });
    }
    if (apiPath === "/boards" && req.method === "GET") {
      const bad = checkParams("/boards", "get", url, {});
      if (bad) return invalid("GET /boards", bad);
      return answer(200, `/paths/${esc("/boards")}/get/responses/200/content/application~1json/schema`, { items: state.boards.map(boardView), bookmark: null });
    }
    if (apiPath === "/pins" && req.method === "POST") return createPin(req, url);
    const boardPins = /^\/boards\/([^/]+)\/pins$/.exec(apiPath);
    if (boardPins && req.method === "GET") {
      const bad = checkParams("/boards/{board_id}/pins", "get", url, { board_id: decodeURIComponent(boardPins[1]!) });
      if (bad) return invalid("GET /boards/{board_id}/pins", bad);
      const items = state.pins.filter((p) => p.boardId === boardPins[1]).reverse().map(pinView);
      return answer(200, `/paths/${esc("/boards/{board_id}/pins")}/get/responses/200/content/application~1json/schema`, { items, bookmark: null });
    }
    const board = /^\/boards\/([^/]+)$/.exec(apiPath);
    if (board && req.method === "GET") {
      const bad = checkParams("/boards/{board_id}", "get", url, {});
      if (bad) return invalid("GET /boards/{board_id}", bad);
      const found = state.boards.find((b) => b.id === decodeURIComponent(board[1]!));
      if (!found) return error(404, 3, "Board not found.");
      return answer(200, `/paths/${esc("/boards/{board_id}")}/get/responses/200/content/application~1json/schema`, boardView(found));
    }
    return error(404, 404, "Not found.");
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: route });
  return Object.assign(state, {
    origin: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.stop(true);
    },
  });
}
