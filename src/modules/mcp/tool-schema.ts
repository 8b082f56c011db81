/**
 * The modules' `t` (TypeBox) schemas as MCP tool schemas. A TypeBox schema is JSON Schema already; the SDK wants a
 * Standard Schema that can also produce JSON Schema, so this wraps one in that interface.
 *
 * Arguments are validated here, by the same compiled validator Elysia builds for the REST route's body (defaults
 * filled, unknown fields dropped, the same `error` texts, lone surrogates refused by name as json-body.ts does), and a
 * refusal is the REST `invalid_request` envelope. The SDK's own input check is therefore a pass-through: it would
 * answer a bare text instead of the envelope.
 */
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { type Static, type TSchema, ValidationError, getSchemaValidator } from "elysia";
import { Value } from "@sinclair/typebox/value";
import { validationToAppError } from "../../http/error-response";
import { invalidField } from "../../lib/errors";
import { loneSurrogateField } from "../../lib/unicode-text";

/** Elysia's string branch of `t.Integer`/`t.Numeric` (numeric text, for query strings): not part of a JSON argument. */
function isNumericTextBranch(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const branch = value as Record<string, unknown>;
  return branch.type === "string" && (branch.format === "integer" || branch.format === "numeric");
}

/**
 * Plain JSON Schema (draft 2020-12) of one node: Elysia's additions for query strings and OpenAPI 3.0 removed, so a
 * strict validator on the client (the SDK compiles output schemas with Ajv) accepts it.
 */
function plainNode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainNode);
  if (value === null || typeof value !== "object") return value;
  const node = { ...(value as Record<string, unknown>) };
  // Seedcast's validation texts, and OpenAPI 3.0's `nullable` next to the anyOf [..., {type: null}] that says it.
  delete node.error;
  delete node.nullable;
  if (Array.isArray(node.anyOf) && node.anyOf.some(isNumericTextBranch)) {
    const rest = node.anyOf.filter((branch) => !isNumericTextBranch(branch));
    delete node.anyOf;
    delete node.default;
    // The one branch left takes the node's place, and is cleaned like it (its `error` text included).
    if (rest.length === 1) return plainNode({ ...node, ...(rest[0] as Record<string, unknown>) });
    node.anyOf = rest;
  }
  for (const [key, child] of Object.entries(node)) node[key] = plainNode(child);
  return node;
}

/** The JSON Schema a client sees: the TypeBox schema without its symbols, as plain JSON Schema. */
export function advertisedJsonSchema(schema: TSchema): Record<string, unknown> {
  return plainNode(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>;
}

/**
 * `schema` as a Standard Schema the SDK accepts; `validate` is the identity (see the file comment). `closed`: the
 * object takes no property it does not declare (`additionalProperties: false`, what the argument check enforces).
 */
export function standardSchemaOf<T extends TSchema>(schema: T, options: { closed?: boolean } = {}): StandardSchemaWithJSON<Static<T>, Static<T>> {
  const json = options.closed ? { ...advertisedJsonSchema(schema), additionalProperties: false } : advertisedJsonSchema(schema);
  return {
    "~standard": {
      version: 1,
      vendor: "seedcast-typebox",
      validate: (value: unknown) => ({ value: value as Static<T> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

type Validator = NonNullable<ReturnType<typeof getSchemaValidator>>;

/** A tool's argument check: the REST body check of the same schema. */
export interface ArgumentCheck<T extends TSchema> {
  /** The cleaned, defaulted arguments, or throws AppError invalid_request with `details` like the REST route. */
  parse(value: unknown): Static<T>;
}

/** Builds the argument check of `schema` the way Elysia composes a route's body validation. */
export function argumentCheck<T extends TSchema>(schema: T): ArgumentCheck<T> {
  const validator = getSchemaValidator(schema, { normalize: true }) as Validator;
  const defaults = validator.hasDefault ? (Value.Default(schema, {}) as Record<string, unknown>) : null;
  return {
    parse(value) {
      const unpaired = loneSurrogateField(value);
      if (unpaired) throw invalidField(unpaired.field, unpaired.problem);
      const given = value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
      let args: unknown = defaults ? Object.assign(structuredClone(defaults), given) : { ...given };
      if (validator.Clean) args = validator.Clean(args);
      if (!validator.Check(args)) throw validationToAppError(new ValidationError("body", validator, args), "body");
      return (validator.hasTransform ? validator.Decode(args) : args) as Static<T>;
    },
  };
}
