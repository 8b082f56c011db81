/**
 * TypeBox (Elysia `t`) schemas → OpenAPI 3.1 schemas (JSON Schema 2020-12), and the named components they share.
 *
 * - A schema with a `title` (`t.Object({...}, { title: "Seed" })`) becomes `#/components/schemas/Seed` wherever it
 *   appears; two different schemas with one title are a mistake and throw.
 * - Elysia's query coercion branch (`anyOf: [{type: string, format: integer}, {type: integer}]`) documents as the
 *   value it stands for.
 * - `X | null` becomes a type array (`type: ["string", "null"]`); OpenAPI 3.0's `nullable` is dropped, and so is
 *   Elysia's `error` keyword (the validator's words, not part of the schema).
 * - A union of literals becomes an `enum`.
 * - `additionalProperties: false` is left out (see `plain`).
 */
import { isWireNumeric } from "../../http/validation-message";
import { isDocumentedUuid } from "../../lib/schema";

export type Json = Record<string, unknown>;

const DROPPED_KEYS = new Set(["error", "nullable", "$id"]);
const ANNOTATIONS = ["description", "default", "examples", "example", "deprecated", "readOnly", "writeOnly"];
const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The own string-keyed fields of a TypeBox schema (its Kind and Optional symbols are not JSON). */
function plain(schema: Json): Json {
  const out: Json = {};
  for (const key of Object.keys(schema)) if (!DROPPED_KEYS.has(key)) out[key] = schema[key];
  // An id documented as a UUID but not checked as one (lib/schema.ts `pathId`).
  if (isDocumentedUuid(schema)) out.format = "uuid";
  // Elysia sets `additionalProperties: false` on a response schema the first time it compiles a route that answers
  // it (mutating the shared object), so it cannot be told from a declared one: the document leaves it out always,
  // and stays the same whichever routes ran first.
  if (out.additionalProperties === false) delete out.additionalProperties;
  return out;
}

function isSimpleTyped(schema: Json): boolean {
  return typeof schema.type === "string" && !("$ref" in schema) && !("anyOf" in schema) && !("oneOf" in schema) && !("allOf" in schema);
}

/** The components a document collects while its schemas are converted. */
export class SchemaComponents {
  private readonly byName = new Map<string, { key: string; schema: Json }>();

  /** `#/components/schemas` in name order. */
  all(): Record<string, Json> {
    const names = [...this.byName.keys()].sort();
    return Object.fromEntries(names.map((name) => [name, this.byName.get(name)!.schema]));
  }

  /** The converted schema of a component, for examples. */
  get(name: string): Json | undefined {
    return this.byName.get(name)?.schema;
  }

  /** Converts `schema`; titled subschemas become references. */
  convert(schema: unknown): Json {
    return this.walk(schema, false);
  }

  /** Registers a titled schema and answers its reference. */
  register(schema: Json): Json {
    const name = schema.title as string;
    const key = JSON.stringify(schema, (k, v) => (k === "additionalProperties" && v === false ? undefined : v));
    const known = this.byName.get(name);
    if (known) {
      if (known.key !== key) throw new Error(`OpenAPI: two different schemas are both titled "${name}"`);
      return { $ref: `#/components/schemas/${name}` };
    }
    // Reserve the name first: a schema that refers to itself ends there.
    this.byName.set(name, { key, schema: {} });
    const converted = this.walk(schema, true);
    this.byName.set(name, { key, schema: converted });
    return { $ref: `#/components/schemas/${name}` };
  }

  private walk(input: unknown, isComponentRoot: boolean): Json {
    if (!isObject(input)) return {};
    if (!isComponentRoot && typeof input.title === "string" && COMPONENT_NAME.test(input.title)) return this.register(input);
    const schema = plain(input);
    if (!isComponentRoot) delete schema.title;

    if (isObject(schema.properties)) {
      const properties: Json = {};
      for (const [name, value] of Object.entries(schema.properties)) properties[name] = this.walk(value, false);
      schema.properties = properties;
    }
    if (isObject(schema.items)) schema.items = this.walk(schema.items, false);
    if (isObject(schema.additionalProperties)) schema.additionalProperties = this.walk(schema.additionalProperties, false);
    if (isObject(schema.patternProperties)) {
      const patterns: Json = {};
      for (const [name, value] of Object.entries(schema.patternProperties)) patterns[name] = this.walk(value, false);
      schema.patternProperties = patterns;
    }
    if (Array.isArray(schema.required) && schema.required.length === 0) delete schema.required;
    for (const key of ["allOf", "oneOf"] as const) {
      if (Array.isArray(schema[key])) schema[key] = (schema[key] as unknown[]).map((b) => this.walk(b, false));
    }
    if (Array.isArray(schema.anyOf)) return this.union(schema, input.anyOf as unknown[]);
    return schema;
  }

  /** `anyOf` simplified: wire branches dropped, literals to enum, `X | null` to a type array. */
  private union(schema: Json, rawBranches: unknown[]): Json {
    const annotations: Json = {};
    for (const key of ANNOTATIONS) if (key in schema) annotations[key] = schema[key];
    const kept = rawBranches.filter((b) => isObject(b) && !isWireNumeric(b));
    const branches = kept.map((b) => this.walk(b, false));
    const withNotes = (s: Json): Json => ({ ...s, ...annotations });

    if (branches.length === 1) return withNotes(branches[0]!);

    const literals = branches.every((b) => "const" in b && typeof b.type === "string") ? branches : null;
    const literalType = literals?.[0]?.type;
    if (literals && literals.every((b) => b.type === literalType)) {
      return withNotes({ type: literalType, enum: literals.map((b) => b.const) });
    }

    const nulls = branches.filter((b) => b.type === "null");
    const others = branches.filter((b) => b.type !== "null");
    if (nulls.length === 1 && others.length === 1 && isSimpleTyped(others[0]!)) {
      const only = others[0]!;
      const merged: Json = { ...only, type: [only.type, "null"] };
      if (Array.isArray(only.enum)) merged.enum = [...only.enum, null];
      if ("const" in only) {
        merged.enum = [only.const, null];
        delete merged.const;
      }
      return withNotes(merged);
    }
    return withNotes({ anyOf: branches });
  }
}
