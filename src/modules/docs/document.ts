/**
 * The OpenAPI 3.1 document, built from the app's routes: each route's own schemas (params, query, body, response,
 * from its module's model.ts), its `scope` (security, 401, 403), its `errors` (the refusals of its own work), and
 * what every route of its kind answers. Nothing here lists routes: a new route is documented by being mounted.
 *
 * Per /api/v1 operation, beside the route's own `errors`:
 * - 401 InvalidApiKey and 429 RateLimited (with Retry-After): the pipeline's checks, on every operation;
 * - 403 Forbidden unless the route takes any valid key;
 * - 400 ValidationError when the route has a schema for params, query or body, or takes an Idempotency-Key;
 * - 413 and 415 when it takes a body; 409 idempotency_in_flight and 422 idempotency_key_reused on POST, with the
 *   Idempotency-Key header parameter;
 * - the RateLimit-Policy and RateLimit headers on every answer but the 401, and Location on a 201 whose route
 *   declares it (`created`).
 * Public routes (no `scope`) get `security: []` and document their answers in `detail.responses` themselves, plus the
 * 400 of their params or query schema. Every operation documents the 431 the server answers to oversized headers.
 * The `webhooks` section holds what Seedcast POSTs to receivers (modules/webhooks/events-model.ts).
 */
import { OptionalKind } from "@sinclair/typebox";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../../http/idempotency";
import { LOCATION_DETAIL_KEY, type CreatedLocation } from "../../http/location";
import { ERRORS_DETAIL_KEY, GROUP_DETAIL_KEY } from "../../http/scope";
import { MAX_JSON_BYTES } from "../../http/json-body";
import { describeIssue } from "../../http/validation-message";
import { SCOPES, SCOPE_LABELS } from "../../auth/scopes";
import { errorResponses, invalidKeyResponse } from "./error-responses";
import { sampleOf } from "./examples";
import { type Json, SchemaComponents } from "./json-schema";
import type { DeliveryDoc } from "../webhooks/events-model";

export interface DocumentedRoute {
  method: string;
  path: string;
  hooks?: unknown;
}

export interface DocumentOptions {
  baseUrl: string;
  version: string;
  /** What Seedcast POSTs to receivers: the `webhooks` section. */
  deliveries?: readonly DeliveryDoc[];
}

interface RouteHooks {
  params?: Json;
  query?: Json;
  body?: Json;
  response?: Json;
  detail?: Json;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Detail keys that are the generator's input, not the operation's. */
const INPUT_KEYS = new Set(["hide", "responses", "security", ERRORS_DETAIL_KEY, LOCATION_DETAIL_KEY]);
const STATUS = /^[1-5]\d\d$/;
const TAG_DESCRIPTIONS: Record<string, string> = {
  account: "The account's settings: its time zone and the approval of editors' posts.",
  assets: "The image library: ingest from a URL, browser upload links, delete.",
  creations: "Social posts generated from seeds: caption, alt text, image.",
  credits: "The account's balance and its movements.",
  health: "Key echo and the supervisor probes.",
  media: "Public image URLs of the library.",
  operations: "Metrics for the operator.",
  schedule: "Connected accounts and scheduled posts.",
  seeds: "Source material: title, content, category, image.",
  feeds: "Blogs followed by their RSS, Atom or JSON Feed: each new item becomes a seed, a draft or a queued post.",
  voice: "The brand voice every generator honours.",
  OAuth: "Seedcast's own authorization server, for AI assistants connecting to /mcp (no API key).",
  mcp: "The Model Context Protocol endpoint for AI assistants (OAuth tokens only).",
  webhooks: "Event webhooks: your own systems told when posts go out, fail or are cancelled.",
};

const DESCRIPTION = `Self-hosted content scheduling.

Every /api/v1 call needs \`Authorization: Bearer svc_…\`; each operation names the group it needs (\`x-seedcast-group\`).
Bodies are JSON (at most ${MAX_JSON_BYTES} bytes). Every refusal is \`{"error": "<stable_code>", "message": "…"}\` plus the
fields its code names; the one exception is 401, whose body is exactly \`{"error":"Invalid API key"}\`. Every POST
takes an \`Idempotency-Key\` (at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters): the same key and body within 24 hours
replays the first answer. A 500 \`internal_error\` (never expected, always logged) is not listed per operation.

A known path asked with a method it does not serve answers 405 \`method_not_allowed\` with \`Allow\` (under /api/v1 once
the key is valid). Every /api/v1 answer to a valid key carries the IETF rate-limit fields \`RateLimit-Policy\` (the
key's quota a minute) and \`RateLimit\` (what is left now, and the seconds until the bucket is full); a 201 carries
\`Location\`. What Seedcast POSTs to your receivers (event webhooks, webhook publishing targets) is in \`webhooks\`.`;

/** `/api/v1/seeds/:id` → `/api/v1/seeds/{id}` */
export function documentPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

function words(text: string): string[] {
  return text.split(/[^A-Za-z0-9]+/).filter(Boolean);
}

/** `GET /api/v1/seeds/:id` → `getSeedsById`; `HEAD /media/:file` → `headMediaByFile`. */
export function operationIdOf(method: string, path: string): string {
  const parts: string[] = [];
  for (const segment of path.replace(/^\/api\/v1(?=\/|$)/, "").split("/").filter(Boolean)) {
    if (segment.startsWith(":")) parts.push("By", ...words(segment.slice(1)));
    else parts.push(...words(segment));
  }
  const tail = parts.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
  return method.toLowerCase() + (tail || "Root");
}

function objectProperties(schema: Json | undefined): Array<[string, Json, boolean]> {
  if (!schema || typeof schema.properties !== "object" || schema.properties === null) return [];
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(schema.properties as Record<string, Json>).map(([name, value]) => [name, value, required.has(name)]);
}

function parameter(location: "path" | "query", name: string, schema: Json, required: boolean, components: SchemaComponents): Json {
  const converted = components.convert(schema);
  const { description, ...rest } = converted;
  return { name, in: location, required: location === "path" ? true : required, ...(description ? { description } : {}), schema: rest };
}

/** The route's success answers: `response` is one schema (200) or a map of status → schema. */
function successSchemas(response: Json | undefined): Array<[string, Json]> {
  if (!response || typeof response !== "object") return [];
  const keys = Object.keys(response);
  if (keys.length > 0 && keys.every((k) => STATUS.test(k))) return keys.map((k) => [k, response[k] as Json]);
  return [["200", response]];
}

function isPublicApi(path: string): boolean {
  return path === "/api/v1" || path.startsWith("/api/v1/");
}

/** The route's own 400 example: its first body (else query) field, described as a refusal would describe it. */
function validationExample(hooks: RouteHooks): Record<string, unknown> | undefined {
  for (const [where, schema] of [["body", hooks.body], ["query", hooks.query]] as const) {
    const fields = objectProperties(schema);
    // A field with named values shows the words best ("emoji: must be one of none, some, lots").
    const first = fields.find(([, s]) => Array.isArray(s.enum) || Array.isArray(s.anyOf)) ?? fields[0];
    if (!first) continue;
    const problem = describeIssue({ path: `/${first[0]}`, schema: first[1], value: null }, where);
    return { message: `${problem.field}: ${problem.problem}`, details: [problem] };
  }
  return undefined;
}

/** The response headers every /api/v1 answer to a valid key carries, and the 431 of every operation. */
const SHARED_HEADERS: Json = {
  "RateLimit-Policy": {
    description: 'The key\'s quota (IETF RateLimit fields): `"key";q=<requests a minute>;w=60`.',
    schema: { type: "string", example: '"key";q=1200;w=60' },
  },
  RateLimit: {
    description: 'What is left of the quota now: `"key";r=<requests that may be made at once>;t=<seconds until the quota is whole again>`.',
    schema: { type: "string", example: '"key";r=1199;t=1' },
  },
};
const SHARED_RESPONSES: Json = {
  RequestHeaderFieldsTooLarge: {
    description: "Request Header Fields Too Large: the request's header fields are over the server's limit (about 16 KiB in all); answered by the HTTP server with no body, before any route.",
  },
};
const RATE_LIMIT_HEADER_REFS: Json = {
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
};

/** The `webhooks` section: one POST per delivery, its body a named component, its headers as parameters. */
function webhooksSection(deliveries: readonly DeliveryDoc[], components: SchemaComponents): Json {
  const header = (name: string, description: string, schema: Json = { type: "string" }): Json => ({ name, in: "header", required: true, description, schema });
  const out: Json = {};
  for (const d of deliveries) {
    const key = d.receiver === "event-webhook" ? "the `whsec_` secret's base64-decoded bytes" : "the secret's UTF-8 bytes";
    const schema = components.convert(d.body);
    out[d.name] = {
      post: {
        operationId: `deliver${d.name.split(/[^A-Za-z0-9]+/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")}`,
        summary: d.summary,
        description: d.description,
        tags: ["webhooks"],
        security: [],
        parameters: [
          header("webhook-id", "The message id (Standard Webhooks): the same on every retry of one message; equals Idempotency-Key."),
          header("webhook-timestamp", "Unix seconds when this attempt was sent (Standard Webhooks); signed.", { type: "string", pattern: "^[0-9]+$" }),
          header("webhook-signature", `\`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">\` under ${key} (Standard Webhooks).`, { type: "string", pattern: "^v1,[A-Za-z0-9+/]+={0,2}$" }),
          header("X-Seedcast-Signature", "`sha256=<hex HMAC-SHA256 of the raw body under the secret>`.", { type: "string", pattern: "^sha256=[0-9a-f]{64}$" }),
          header("X-Seedcast-Timestamp", "Unix seconds when this attempt was sent (the same value as webhook-timestamp).", { type: "string", pattern: "^[0-9]+$" }),
          header("Idempotency-Key", "The same on every retry of one message: answer a repeat without a second effect."),
        ],
        requestBody: { required: true, content: { "application/json": { schema, example: sampleOf(schema, (name) => components.get(name)) } } },
        responses: {
          "200": { description: "Received (any 2xx will do; the body is not read)." },
          default: { description: "Anything but 2xx: the delivery is retried with backoff." },
        },
      },
    };
  }
  return out;
}

/** `apiKey` always; `oauth2` (Seedcast's own authorization server) when an operation takes its tokens. */
function securitySchemes(baseUrl: string, used: ReadonlySet<string>): Json {
  const out: Json = { apiKey: { type: "http", scheme: "bearer", description: "An API key, `svc_…`, from the dashboard or `seedcast keys`." } };
  if (used.has("oauth2")) {
    const base = baseUrl.replace(/\/+$/, "");
    out.oauth2 = {
      type: "oauth2",
      description: "Seedcast's own OAuth sign-in (authorization code with PKCE S256); access tokens `sco_…` for /mcp only.",
      flows: {
        authorizationCode: {
          authorizationUrl: `${base}/oauth/authorize`,
          tokenUrl: `${base}/oauth/token`,
          refreshUrl: `${base}/oauth/token`,
          scopes: Object.fromEntries(SCOPES.map((scope) => [scope, SCOPE_LABELS[scope]])),
        },
      },
    };
  }
  return out;
}

/** Builds the document for `routes`. Hidden routes (detail.hide) and catch-alls are left out. */
export function buildDocument(routes: readonly DocumentedRoute[], options: DocumentOptions): Json {
  const components = new SchemaComponents();
  const resolve = (name: string) => components.get(name);
  const paths: Record<string, Record<string, Json>> = {};
  const tags = new Set<string>();
  const schemes = new Set<string>();

  for (const route of routes) {
    const hooks = (route.hooks ?? {}) as RouteHooks;
    const detail = (hooks.detail ?? {}) as Json;
    if (detail.hide === true || route.method === "ALL") continue;
    const method = route.method.toUpperCase();
    const docPath = documentPath(route.path);
    const group = detail[GROUP_DETAIL_KEY] as string | undefined;
    const api = isPublicApi(route.path);

    const operation: Json = {};
    for (const [key, value] of Object.entries(detail)) if (!INPUT_KEYS.has(key)) operation[key] = value;
    operation.operationId ??= operationIdOf(method, route.path);
    for (const tag of (operation.tags as string[] | undefined) ?? []) tags.add(tag);
    // A public route may name another scheme (the MCP endpoint takes OAuth tokens); else it takes none.
    operation.security = group ? [{ apiKey: [] }] : ((detail.security as Json[] | undefined) ?? []);
    for (const requirement of operation.security as Json[]) for (const scheme of Object.keys(requirement)) schemes.add(scheme);

    // Parameters: path (from the schema, or the pattern), query, and Idempotency-Key on an API POST.
    const parameters: Json[] = [];
    const pathNames = [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    const paramSchemas = new Map(objectProperties(hooks.params).map(([name, schema]) => [name, schema]));
    for (const name of pathNames) parameters.push(parameter("path", name, paramSchemas.get(name) ?? { type: "string" }, true, components));
    for (const [name, schema, required] of objectProperties(hooks.query)) parameters.push(parameter("query", name, schema, required, components));
    const idempotent = api && method === "POST";
    if (idempotent) {
      parameters.push({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          "Makes a retry safe: the same key with the same body within 24 hours replays the first answer (header Idempotent-Replayed: true); with another body → 422; while the first still runs → 409.",
        schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
      });
    }
    // Parameters a route documents itself (a form endpoint's query, a header) come after the ones read from schemas.
    for (const own of (detail.parameters as Json[] | undefined) ?? []) {
      if (!parameters.some((p) => p.name === own.name && p.in === own.in)) parameters.push(own);
    }
    if (parameters.length > 0) operation.parameters = parameters;

    // 413 and 415 are documented where a body is taken (a DELETE takes none).
    const takesBody = api && BODY_METHODS.has(method) && (hooks.body !== undefined || detail.requestBody !== undefined);
    if (hooks.body) {
      // A body the route may go without (t.Optional) is documented as not required.
      const optional = (hooks.body as Record<symbol, unknown>)[OptionalKind] === "Optional";
      operation.requestBody = { required: !optional, content: { "application/json": { schema: components.convert(hooks.body) } } };
    }

    // Responses: success from the route's schemas, then its errors.
    const responses: Record<string, Json> = {};
    for (const [status, schema] of successSchemas(hooks.response)) {
      const converted = components.convert(schema);
      responses[status] = {
        description: (schema.description as string | undefined) ?? (status === "201" ? "Created" : "OK"),
        content: { "application/json": { schema: converted, example: sampleOf(converted, resolve) } },
      };
    }
    if (api) {
      const codes: string[] = [];
      if (hooks.params || hooks.query || hooks.body || idempotent) codes.push("invalid_request");
      const needsGroup = group !== undefined && group !== "authenticated";
      if (needsGroup) codes.push("forbidden");
      if (takesBody) codes.push("payload_too_large", "unsupported_media_type");
      if (idempotent) codes.push("idempotency_in_flight", "idempotency_key_reused");
      codes.push("rate_limited", ...(((detail[ERRORS_DETAIL_KEY] as string[] | undefined) ?? [])));
      // The 403 example names the group this operation needs.
      const forbidden = needsGroup ? { message: `This key lacks the ${SCOPE_LABELS[group as keyof typeof SCOPE_LABELS]} group (${group}).`, requiredGroup: group } : undefined;
      Object.assign(responses, errorResponses(codes, components, { invalid_request: validationExample(hooks), forbidden }));
      for (const response of Object.values(responses)) response.headers = { ...((response.headers as Json | undefined) ?? {}), ...RATE_LIMIT_HEADER_REFS };
      responses["401"] = invalidKeyResponse(components);
    } else if (hooks.params || hooks.query) {
      // A public route's params or query schema refuses with the envelope's 400, like the API's.
      Object.assign(responses, errorResponses(["invalid_request"], components, { invalid_request: validationExample(hooks) }));
    }
    const own = (detail.responses as Record<string, Json> | undefined) ?? {};
    // A response a route documents itself (the CSV export's text/csv 200) carries the RateLimit fields like the others.
    if (api) for (const response of Object.values(own)) response.headers = { ...((response.headers as Json | undefined) ?? {}), ...RATE_LIMIT_HEADER_REFS };
    Object.assign(responses, own);
    const created = detail[LOCATION_DETAIL_KEY] as CreatedLocation | undefined;
    if (created && responses["201"]) {
      responses["201"].headers = {
        ...((responses["201"].headers as Json | undefined) ?? {}),
        Location: { description: `The created resource: \`${created.path}\`.`, schema: { type: "string", format: "uri-reference" } },
      };
    }
    responses["431"] = { $ref: "#/components/responses/RequestHeaderFieldsTooLarge" };
    // Every JSON answer shows an example: one the route gave, else one made from its schema.
    for (const response of Object.values(responses)) {
      if (response.$ref) continue;
      const json = (response.content as Record<string, Json> | undefined)?.["application/json"];
      if (json?.schema && json.example === undefined && json.examples === undefined) json.example = sampleOf(json.schema as Json, resolve);
    }
    operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));

    paths[docPath] ??= {};
    paths[docPath]![method.toLowerCase()] = operation;
  }

  const webhooks = webhooksSection(options.deliveries ?? [], components);
  if (Object.keys(webhooks).length > 0) tags.add("webhooks");
  return {
    openapi: "3.1.0",
    info: {
      title: "Seedcast API",
      version: options.version,
      description: DESCRIPTION,
    },
    servers: [{ url: options.baseUrl, description: "This instance (BASE_URL)" }],
    security: [{ apiKey: [] }],
    tags: [...tags].sort().map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    ...(Object.keys(webhooks).length > 0 ? { webhooks } : {}),
    components: {
      securitySchemes: securitySchemes(options.baseUrl, schemes),
      schemas: components.all(),
      headers: SHARED_HEADERS,
      responses: SHARED_RESPONSES,
    },
  };
}
