/**
 * An example value for a converted (OpenAPI 3.1) schema: its own `examples`/`default` where it has them, otherwise a
 * plausible value that satisfies it (formats, lengths, ranges, enums), so every documented response shows one and
 * every example validates against its schema (Redocly's `no-invalid-media-type-examples` checks that).
 */
import type { Json } from "./json-schema";

const SAMPLE_UUID = "0192f1c4-7b2a-7c3e-9d4f-2a6b8c0d1e2f";
const SAMPLE_TIME = "2026-11-22T10:00:00.000Z";

function typeOf(schema: Json): string | undefined {
  if (Array.isArray(schema.type)) return schema.type.find((t) => t !== "null") as string | undefined;
  return schema.type as string | undefined;
}

function stringSample(schema: Json, name: string): string {
  switch (schema.format) {
    case "uuid":
      return SAMPLE_UUID;
    case "date-time":
      return SAMPLE_TIME;
    case "date":
      return SAMPLE_TIME.slice(0, 10);
    case "uri":
    case "url":
      return "https://seedcast.example/";
    case "email":
      return "owner@example.com";
  }
  const lower = name.toLowerCase();
  let value = lower.endsWith("url") ? "https://seedcast.example/" : lower === "message" ? "A sentence for a person." : name || "text";
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Number.POSITIVE_INFINITY;
  while (value.length < min) value += "x";
  if (value.length > max) value = value.slice(0, max);
  return value;
}

function numberSample(schema: Json, integer: boolean): number {
  const min = typeof schema.minimum === "number" ? schema.minimum : null;
  const max = typeof schema.maximum === "number" ? schema.maximum : null;
  let value = min !== null ? min : max !== null ? Math.min(max, 0) : integer ? 1 : 1.5;
  if (min !== null && max !== null && min < 1 && max >= 1) value = 1;
  return integer ? Math.ceil(value) : value;
}

/**
 * How deep an example goes: a list of creations reaches a version's thread part's image's id at depth 13. A deeper
 * (self-referencing) schema is cut here with null.
 */
const MAX_SAMPLE_DEPTH = 24;

/** A value valid for `schema`; `$ref`s are resolved through `resolve`. */
export function sampleOf(schema: Json, resolve: (name: string) => Json | undefined, name = "", depth = 0): unknown {
  if (depth > MAX_SAMPLE_DEPTH) return null;
  if (typeof schema.$ref === "string") {
    const target = resolve(schema.$ref.replace("#/components/schemas/", ""));
    return target ? sampleOf(target, resolve, name, depth + 1) : null;
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ("example" in schema) return schema.example;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.find((v) => v !== null) ?? schema.enum[0];
  if ("default" in schema) return schema.default;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const first = (branches as Json[]).find((b) => b.type !== "null") ?? (branches[0] as Json);
      return sampleOf(first, resolve, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    let merged: Record<string, unknown> = {};
    for (const part of schema.allOf as Json[]) {
      const value = sampleOf(part, resolve, name, depth + 1);
      if (value && typeof value === "object") merged = { ...merged, ...(value as Record<string, unknown>) };
    }
    return merged;
  }
  switch (typeOf(schema)) {
    case "string":
      return stringSample(schema, name);
    case "integer":
      return numberSample(schema, true);
    case "number":
      return numberSample(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    case "array": {
      const items = (schema.items as Json | undefined) ?? {};
      const count = Math.max(1, typeof schema.minItems === "number" ? schema.minItems : 1);
      const limit = typeof schema.maxItems === "number" ? Math.min(count, schema.maxItems) : count;
      return Array.from({ length: limit }, () => sampleOf(items, resolve, name, depth + 1));
    }
    case "object":
    default: {
      const properties = (schema.properties as Record<string, Json> | undefined) ?? {};
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(properties)) out[key] = sampleOf(value, resolve, key, depth + 1);
      return out;
    }
  }
}
