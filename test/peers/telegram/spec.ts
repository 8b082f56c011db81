/**
 * Telegram's Bot API description (test/peers/platform-specs/telegram-bot-api.json: Bot API 10.1, a faithful scrape
 * of https://core.telegram.org/bots/api by PaulSonOfLars/telegram-bot-api-spec) turned into JSON Schema for Ajv, so the
 * stand-in validates every request's parameters and its own answers against it. The description is not OpenAPI: each
 * type and method lists fields with `types` (Integer, String, Boolean, Float, True, InputFile, a type name, "Array of
 * …") and `required`. Rules taken from the page itself:
 *  - a type with `subtypes` is one of them (ChatMember, InputMedia, …); a field described "always “x”" or "must be x"
 *    is that constant (ChatMemberAdministrator.status, InputMediaPhoto.type), which tells the subtypes apart;
 *  - "InputFile" is a multipart file upload (#sending-files); in JSON-serialized parameters a file is referred to as
 *    the string `attach://<file_attach_name>` (#inputfile), so String covers it there;
 *  - unknown parameters are refused (additionalProperties false): a misspelt parameter is a client bug.
 */
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import type { ValidateFunction } from "ajv";

const SPEC_PATH = new URL("../platform-specs/telegram-bot-api.json", import.meta.url).pathname;

interface SpecField {
  name: string;
  types: string[];
  required: boolean;
  description: string | string[];
}
interface SpecEntry {
  name: string;
  fields?: SpecField[];
  subtypes?: string[];
  returns?: string[];
}
interface Spec {
  methods: Record<string, SpecEntry>;
  types: Record<string, SpecEntry>;
}

type Schema = Record<string, unknown>;

/** A file uploaded in multipart: the stand-in replaces it with this marker before validating. */
export const UPLOADED_FILE = { "x-uploaded-file": true } as const;

function typeSchema(type: string): Schema {
  if (type.startsWith("Array of ")) return { type: "array", items: typeSchema(type.slice("Array of ".length)) };
  switch (type) {
    case "Integer":
      return { type: "integer" };
    case "Float":
      return { type: "number" };
    case "String":
      return { type: "string" };
    case "Boolean":
      return { type: "boolean" };
    case "True":
      return { const: true };
    case "InputFile":
      return { type: "object", required: ["x-uploaded-file"], properties: { "x-uploaded-file": { const: true } } };
    default:
      return { $ref: `#/definitions/${type}` };
  }
}

function constOf(field: SpecField): string | null {
  const text = Array.isArray(field.description) ? field.description.join(" ") : field.description;
  const always = /always “([^”]+)”/.exec(text) ?? /must be ([a-z_]+)\b/.exec(text);
  return field.types.length === 1 && field.types[0] === "String" && always?.[1] ? always[1] : null;
}

function objectSchema(entry: SpecEntry): Schema {
  const properties: Record<string, Schema> = {};
  for (const f of entry.fields ?? []) {
    const fixed = constOf(f);
    properties[f.name] = fixed !== null ? { const: fixed } : f.types.length === 1 ? typeSchema(f.types[0]!) : { anyOf: f.types.map(typeSchema) };
  }
  return { type: "object", properties, required: (entry.fields ?? []).filter((f) => f.required).map((f) => f.name), additionalProperties: false };
}

let cache: { ajv: Ajv; spec: Spec } | null = null;

function load(): { ajv: Ajv; spec: Spec } {
  if (cache) return cache;
  const spec = JSON.parse(readFileSync(SPEC_PATH, "utf8")) as Spec;
  const definitions: Record<string, Schema> = {};
  for (const [name, entry] of Object.entries(spec.types)) {
    definitions[name] = entry.subtypes ? { anyOf: entry.subtypes.map((t) => typeSchema(t)) } : objectSchema(entry);
  }
  const root: Schema = { $id: "telegram", definitions };
  for (const [name, entry] of Object.entries(spec.methods)) {
    definitions[`method:${name}`] = objectSchema(entry);
    const returns = entry.returns ?? [];
    definitions[`returns:${name}`] = returns.length === 1 ? typeSchema(returns[0]!) : { anyOf: returns.map(typeSchema) };
  }
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(root);
  cache = { ajv, spec };
  return cache;
}

function validator(key: string): ValidateFunction {
  const fn = load().ajv.getSchema(`telegram#/definitions/${key}`);
  if (!fn) throw new Error(`the description has no ${key}`);
  return fn;
}

function problems(fn: ValidateFunction): string {
  return (fn.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");
}

/** Why `params` are not what the description of `method` takes, or null. */
export function requestProblem(method: string, params: Record<string, unknown>): string | null {
  if (!load().spec.methods[method]) return `there is no method ${method}`;
  const fn = validator(`method:${method}`);
  return fn(params) ? null : problems(fn);
}

/** Why `result` is not what `method` returns, or null. */
export function resultProblem(method: string, result: unknown): string | null {
  const fn = validator(`returns:${method}`);
  return fn(result) ? null : problems(fn);
}

/** Why `value` is not a `type` (e.g. "InputMediaPhoto"), or null. */
export function typeProblem(type: string, value: unknown): string | null {
  const fn = validator(type);
  return fn(value) ? null : problems(fn);
}

/** The field types of a method's parameter, as the description lists them. */
export function parameterTypes(method: string, name: string): string[] | null {
  return load().spec.methods[method]?.fields?.find((f) => f.name === name)?.types ?? null;
}
