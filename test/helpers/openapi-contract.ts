/**
 * Records HTTP exchanges against a served Seedcast and checks them against its own OpenAPI document with Ajv
 * (OpenAPI 3.1 schemas are JSON Schema 2020-12): every answered status documented for its operation, every body of
 * the documented media type and valid against the documented schema. It also tells which documented statuses no
 * exchange produced, so a contract test can insist that each was exercised.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { PipelinedApp } from "../../src/http/pipeline";

// biome-ignore lint: the document is JSON of any shape.
type Json = any;

export interface Exchange {
  /** `get /api/v1/seeds/{id}` */
  operation: string;
  status: number;
  contentType: string;
  body: string;
}

export interface Served {
  base: string;
  stop(): Promise<void>;
}

export interface SendOptions {
  params?: Record<string, string>;
  query?: string;
  key?: string | null;
  json?: unknown;
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}

const DOC_BASE = "https://seedcast.test/openapi.json";

/** The document's component references (`#/components/schemas/X`) as references into one Ajv schema's `$defs`. */
function rebase(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${DOC_BASE}#/$defs/`));
}

export class ContractRecorder {
  readonly exchanges: Exchange[] = [];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addFormat("binary", true);
    // The OpenAPI 3.1 base vocabulary's annotations (the dialect the document's schemas are written in).
    this.ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs"]);
    this.ajv.addSchema(rebase({ $id: DOC_BASE, $defs: doc.components?.schemas ?? {} }));
  }

  /** Every operation of the document: `get /api/v1/seeds/{id}`. */
  operations(): string[] {
    const out: string[] = [];
    for (const [path, item] of Object.entries(this.doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) out.push(`${method} ${path}`);
    }
    return out;
  }

  operation(op: string): Json {
    const [method, path] = op.split(" ") as [string, string];
    const found = this.doc.paths?.[path]?.[method];
    if (!found) throw new Error(`no operation ${op} in the document`);
    return found;
  }

  /** Sends `op` to `server` (path parameters filled from `params`) and records the exchange. */
  async send(server: Served, op: string, o: SendOptions = {}): Promise<Answer> {
    const [method, template] = op.split(" ") as [string, string];
    this.operation(op);
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = o.params?.[name];
      if (value === undefined) throw new Error(`${op}: no value for {${name}}`);
      return encodeURIComponent(value);
    });
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: BodyInit | undefined = o.raw;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(`${server.base}${path}${o.query ? `?${o.query}` : ""}`, { method: method.toUpperCase(), headers, body, redirect: "manual" });
    const text = method === "head" ? "" : await response.text();
    this.exchanges.push({ operation: op, status: response.status, contentType: response.headers.get("content-type") ?? "", body: text });
    let json: Json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  private validator(op: string, status: string, mediaType: string, schema: Json): ValidateFunction {
    const id = `${op} ${status} ${mediaType}`;
    let validate = this.validators.get(id);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema));
      this.validators.set(id, validate);
    }
    return validate;
  }

  /** Problems of one exchange: undocumented status, undocumented media type, or a body that fails its schema. */
  check(exchange: Exchange): string[] {
    const where = `${exchange.operation} → ${exchange.status}`;
    const response = this.operation(exchange.operation).responses?.[String(exchange.status)];
    if (!response) return [`${where}: status not documented (${exchange.body.slice(0, 160)})`];
    const content = response.content as Record<string, { schema?: Json }> | undefined;
    if (!content) return exchange.body === "" ? [] : [`${where}: documented without a body, answered ${exchange.body.length} bytes`];
    const type = exchange.contentType.split(";")[0]!.trim().toLowerCase();
    const mediaType = Object.keys(content).find((m) => m === type || (m.endsWith("/*") && type.startsWith(m.slice(0, -1))));
    if (!mediaType) return [`${where}: content type ${type || "(none)"} not documented (${Object.keys(content).join(", ")})`];
    if (mediaType !== "application/json") return [];
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return [`${where}: body is not JSON`];
    }
    const validate = this.validator(exchange.operation, String(exchange.status), mediaType, content[mediaType]!.schema ?? {});
    if (validate(body)) return [];
    return [`${where}: body does not match the schema: ${this.ajv.errorsText(validate.errors)} — ${exchange.body.slice(0, 300)}`];
  }

  /** Every recorded exchange's problems. */
  problems(): string[] {
    return this.exchanges.flatMap((e) => this.check(e));
  }

  /** `op → status` pairs the document lists and no recorded exchange produced. */
  unexercised(): string[] {
    const seen = new Set(this.exchanges.map((e) => `${e.operation} → ${e.status}`));
    const missing: string[] = [];
    for (const op of this.operations()) {
      for (const status of Object.keys(this.operation(op).responses ?? {})) {
        if (!seen.has(`${op} → ${status}`)) missing.push(`${op} → ${status}`);
      }
    }
    return missing;
  }

  /** Every example in the document validated against its schema. */
  exampleProblems(): string[] {
    const problems: string[] = [];
    for (const op of this.operations()) {
      for (const [status, response] of Object.entries((this.operation(op).responses ?? {}) as Record<string, Json>)) {
        const json = response.content?.["application/json"];
        if (!json?.schema) continue;
        const validate = this.validator(op, status, "application/json", json.schema);
        const examples = [
          ...(json.example !== undefined ? [json.example] : []),
          ...Object.values((json.examples ?? {}) as Record<string, { value: unknown }>).map((e) => e.value),
        ];
        if (examples.length === 0) problems.push(`${op} → ${status}: no example`);
        for (const example of examples) {
          if (!validate(example)) problems.push(`${op} → ${status}: example invalid: ${this.ajv.errorsText(validate.errors)}`);
        }
      }
    }
    return problems;
  }
}

/** Serves a pipelined app on 127.0.0.1:0 the way `seedcast serve` does. */
export function serveApp(app: PipelinedApp): Served {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: app.servedRoutes(), fetch: (request) => app.handle(request) });
  return { base: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
