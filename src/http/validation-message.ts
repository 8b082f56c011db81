/**
 * The one place a schema refusal becomes words: `{field, problem}` naming the field and what it accepts, read from the
 * schema that refused it (`emoji: must be one of none, some, lots`; `limit: must be a whole number from 1 to 200`).
 * TypeBox's own summaries ("should be one of: 'string', 'string'") name JSON types, not values; they are never shown.
 * A schema may still carry its own `error` text when the words depend on meaning the schema cannot tell
 * ("must be the id of one of your assets"); the OpenAPI document drops that keyword.
 */

/** One issue as TypeBox / Elysia report it (`ValidationError.all`). */
export interface SchemaIssue {
  path?: string;
  type?: number;
  schema?: unknown;
  value?: unknown;
  message?: string;
}

export interface FieldProblem {
  field: string;
  problem: string;
}

// TypeBox's ValueErrorType numbers (typebox/errors), the two that are about the object rather than the value.
const OBJECT_ADDITIONAL_PROPERTIES = 42;
const OBJECT_REQUIRED_PROPERTY = 45;

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function list(values: readonly unknown[]): string {
  return values.map((v) => (v === null ? "null" : String(v))).join(", ");
}

/** The values an enum-like schema allows (`enum`, `const`, or a union of them), or null when it is not one. */
function allowedValues(schema: Schema): unknown[] | null {
  if (Array.isArray(schema.enum)) return schema.enum;
  if ("const" in schema) return [schema.const];
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches) && branches.length > 0) {
    const values: unknown[] = [];
    for (const branch of branches) {
      const inner = isSchema(branch) ? allowedValues(branch) : null;
      if (!inner) return null;
      values.push(...inner);
    }
    return values;
  }
  return null;
}

function range(min: unknown, max: unknown, unit: (n: number) => string, what: string): string {
  const lo = typeof min === "number" ? min : null;
  const hi = typeof max === "number" ? max : null;
  if (lo !== null && hi !== null) return lo === hi ? `${what} of exactly ${unit(lo)}` : `${what} of ${lo} to ${unit(hi)}`;
  if (hi !== null) return `${what} of at most ${unit(hi)}`;
  if (lo !== null) return `${what} of at least ${unit(lo)}`;
  return what;
}

const FORMAT_WORDS: Record<string, string> = {
  uuid: "a UUID",
  "date-time": "an RFC 3339 timestamp such as 2026-11-22T10:00:00Z",
  date: "a date such as 2026-11-22",
  uri: "a URL",
  email: "an email address",
};

/** What `schema` accepts, as the end of "must be …" (without "must be"). */
function accepted(schema: Schema): string {
  const values = allowedValues(schema);
  if (values) return values.length === 1 ? String(values[0]) : `one of ${list(values)}`;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(branches)) {
    const described = branches.filter(isSchema).filter((b) => !isWireNumeric(b));
    const nonNull = described.filter((b) => b.type !== "null");
    const words = nonNull.map(accepted);
    if (nonNull.length < described.length) words.push("null");
    return words.join(" or ");
  }
  const type = Array.isArray(schema.type) ? schema.type.filter((t) => t !== "null")[0] : schema.type;
  const orNull = Array.isArray(schema.type) && schema.type.includes("null") ? " or null" : "";
  switch (type) {
    case "string": {
      const format = typeof schema.format === "string" ? FORMAT_WORDS[schema.format] : undefined;
      if (format) return format + orNull;
      if (typeof schema.pattern === "string") return `text matching ${schema.pattern}${orNull}`;
      return range(schema.minLength, schema.maxLength, (n) => `${n} character${n === 1 ? "" : "s"}`, "text") + orNull;
    }
    case "integer":
      return numberRange("a whole number", schema) + orNull;
    case "number":
      return numberRange(schema.multipleOf === 1 ? "a whole number" : "a number", schema) + orNull;
    case "boolean":
      return `true or false${orNull}`;
    case "null":
      return "null";
    case "array": {
      const items = isSchema(schema.items) ? ` of ${accepted(schema.items).replace(/^(a|an) /, "")}` : "";
      return range(schema.minItems, schema.maxItems, (n) => `${n} item${n === 1 ? "" : "s"}`, `a list${items}`) + orNull;
    }
    case "object":
      return `an object${orNull}`;
    default:
      return "a valid value";
  }
}

function numberRange(what: string, schema: Schema): string {
  const lo = typeof schema.minimum === "number" ? schema.minimum : null;
  const hi = typeof schema.maximum === "number" ? schema.maximum : null;
  if (lo !== null && hi !== null) return `${what} from ${lo} to ${hi}`;
  if (lo !== null) return `${what} of at least ${lo}`;
  if (hi !== null) return `${what} of at most ${hi}`;
  return what;
}

/** Elysia's query coercion branch (`{type: "string", format: "integer" | "numeric"}`): a wire detail, not a value. */
export function isWireNumeric(schema: Schema): boolean {
  return schema.type === "string" && (schema.format === "integer" || schema.format === "numeric" || schema.format === "boolean");
}

/** The field a JSON pointer names, dotted (`/targets/0` → `targets.0`); `where` (body, query, params) at the root. */
function fieldOf(path: string | undefined, where: string): string {
  const dotted = (path ?? "").replace(/^\//, "").split("/").filter(Boolean).join(".").replace(/~1/g, "/").replace(/~0/g, "~");
  return dotted || where;
}

/** One issue → `{field, problem}`. */
export function describeIssue(issue: SchemaIssue, where = "body"): FieldProblem {
  const field = fieldOf(issue.path, where);
  const schema = isSchema(issue.schema) ? issue.schema : {};
  if (issue.type === OBJECT_ADDITIONAL_PROPERTIES) return { field, problem: "is not a field this route accepts" };
  if (issue.type === OBJECT_REQUIRED_PROPERTY || issue.value === undefined) {
    const custom = typeof schema.error === "string" ? `; it ${schema.error}` : "";
    return { field, problem: `is required${custom}` };
  }
  if (typeof schema.error === "string") return { field, problem: schema.error };
  return { field, problem: `must be ${accepted(schema)}` };
}

/**
 * Any validation error (Elysia's ValidationError, or a list of TypeBox issues) → the problems, one per field, at most
 * `max`. Never echoes the value that was sent.
 */
export function describeValidationError(error: unknown, where = "body", max = 20): FieldProblem[] {
  let issues: SchemaIssue[] = [];
  try {
    const all = Array.isArray(error) ? error : (error as { all?: unknown }).all;
    if (Array.isArray(all)) issues = all as SchemaIssue[];
  } catch {
    issues = [];
  }
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const issue of issues) {
    const described = describeIssue(issue, where);
    if (seen.has(described.field)) continue;
    seen.add(described.field);
    problems.push(described);
    if (problems.length >= max) break;
  }
  if (problems.length === 0) problems.push({ field: where, problem: "is not valid" });
  return problems;
}
