/**
 * Schema building blocks the models share, where Elysia's own `t` says something other than what the API means:
 * - `t.Integer` also accepts a string of digits (Elysia's coercion) and documents as `string | integer`; `integer()`
 *   is TypeBox's plain integer, for bodies and responses. Query parameters keep `t.Integer` (a query is text).
 * - `t.Nullable` adds OpenAPI 3.0's `nullable` keyword next to an `anyOf`; `orNull()` is the plain union.
 */
import { Type } from "@sinclair/typebox";
import { type TSchema, t } from "elysia";

/** A JSON integer (never a string of digits). */
export function integer(options: Parameters<typeof Type.Integer>[0] = {}) {
  return Type.Integer(options);
}

/** `schema` or null. */
export function orNull<T extends TSchema>(schema: T, options: Parameters<typeof t.Union>[1] = {}) {
  return t.Union([schema, t.Null()], options);
}

/** An id the API made (UUID). Response side only: request ids stay strings so an unknown one answers 404. */
export function uuid(options: Parameters<typeof t.String>[0] = {}) {
  return t.String({ format: "uuid", ...options });
}

/**
 * The `pathId` schemas: the OpenAPI document gives them `format: uuid`. A set of the schema objects rather than a
 * keyword inside them, so the schema stays plain JSON Schema wherever else it is used (MCP advertises tool inputs
 * built from the same schemas, and a strict validator refuses unknown keywords).
 */
const DOCUMENTED_UUIDS = new WeakSet<object>();

/** True for a schema made by `pathId` (documented as `format: uuid`). */
export function isDocumentedUuid(schema: object): boolean {
  return DOCUMENTED_UUIDS.has(schema);
}

/**
 * A path parameter naming something by its id: documented as `format: uuid` (the ids the API makes), checked only for
 * length, so an id that is not a UUID answers 404 exactly like an unknown one (nothing tells them apart).
 */
export function pathId(maxLength = 64) {
  const schema = t.String({ maxLength });
  DOCUMENTED_UUIDS.add(schema);
  return schema;
}

/** An RFC 3339 UTC timestamp as the API answers it (`2026-11-22T10:00:00.000Z`). */
export function timestamp(options: Parameters<typeof t.String>[0] = {}) {
  return t.String({ format: "date-time", ...options });
}
