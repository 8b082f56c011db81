/**
 * Validation refusals in words (decisions.md §10): the field and what it accepts, from the schema that refused it.
 * Through the real routes (Elysia's validation, the envelope) and through describeIssue over every kind of schema.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { t } from "elysia";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { describeValidationError } from "../src/http/validation-message";
import { integer, orNull } from "../src/lib/schema";
import { type TestAccount, type World, createWorld } from "./helpers/world";

let world: World;
let acct: TestAccount;
beforeAll(async () => {
  world = await createWorld();
  acct = await world.createAccount();
});
afterAll(async () => {
  await world.close();
});

/** The problems TypeBox's own checker finds in `value`, in our words. */
function problems(schema: Parameters<typeof TypeCompiler.Compile>[0], value: unknown): string[] {
  const errors = [...TypeCompiler.Compile(schema).Errors(value)];
  return describeValidationError(errors).map((p) => `${p.field}: ${p.problem}`);
}

describe("through the routes", () => {
  test("an enum names its values, never the JSON types", async () => {
    const res = await world.call("PUT", "/api/v1/voice", { key: acct.key, body: { emoji: "loads" } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: "invalid_request",
      message: "emoji: must be one of none, some, lots",
      details: [{ field: "emoji", problem: "must be one of none, some, lots" }],
    });
    expect(res.text).not.toContain("'string'");
  });

  test("limit names its range; a missing field is required; a wrong type says what it must be", async () => {
    const limit = await world.call("GET", "/api/v1/schedule/posts?limit=500", { key: acct.key });
    expect(limit.json.message).toBe("limit: must be a whole number from 1 to 200");
    const missing = await world.call("POST", "/api/v1/schedule", { key: acct.key, body: { type: "social_post", scheduled_time: "2030-01-01T00:00:00Z", targets: ["webhook"] } });
    expect(missing.json.details).toContainEqual({ field: "creation_id", problem: "is required" });
    const wrong = await world.call("POST", "/api/v1/creations/regenerate", { key: acct.key, body: { creation_id: "x", parts: "all" } });
    expect(wrong.json.details).toContainEqual({ field: "parts", problem: "must be one of caption, image, both" });
    const list = await world.call("PUT", "/api/v1/voice", { key: acct.key, body: { hashtags: "launch" } });
    expect(list.json.details[0].field).toBe("hashtags");
    expect(list.json.details[0].problem).toMatch(/^must be a list of text of 1 to 100 characters of at most 30 items$/);
  });

  test("the value sent is never echoed", async () => {
    const res = await world.call("PUT", "/api/v1/voice", { key: acct.key, body: { emoji: "secret-value-123" } });
    expect(res.text).not.toContain("secret-value-123");
  });
});

describe("describeIssue over each kind of schema", () => {
  test("literal unions, enums, constants", () => {
    expect(problems(t.Object({ e: t.Union([t.Literal("a"), t.Literal("b")]) }), { e: "c" })).toEqual(["e: must be one of a, b"]);
    expect(problems(t.Object({ e: t.UnionEnum(["x", "y"]) }), { e: "z" })).toEqual(["e: must be one of x, y"]);
    expect(problems(t.Object({ k: t.Literal("social_post") }), { k: "story" })).toEqual(["k: must be social_post"]);
  });

  test("strings, numbers, booleans, nulls, arrays, nested fields", () => {
    expect(problems(t.Object({ s: t.String({ minLength: 2, maxLength: 5 }) }), { s: "" })).toEqual(["s: must be text of 2 to 5 characters"]);
    expect(problems(t.Object({ s: t.String({ maxLength: 3 }) }), { s: "long" })).toEqual(["s: must be text of at most 3 characters"]);
    expect(problems(t.Object({ s: t.String({ format: "uuid" }) }), { s: "nope" })).toEqual(["s: must be a UUID"]);
    expect(problems(t.Object({ n: integer({ minimum: 0 }) }), { n: 1.5 })).toEqual(["n: must be a whole number of at least 0"]);
    expect(problems(t.Object({ b: t.Boolean() }), { b: "yes" })).toEqual(["b: must be true or false"]);
    expect(problems(t.Object({ c: orNull(t.String({ maxLength: 2 })) }), { c: 5 })).toEqual(["c: must be text of at most 2 characters or null"]);
    expect(problems(t.Object({ a: t.Array(t.String(), { minItems: 1 }) }), { a: [] })).toEqual(["a: must be a list of text of at least 1 item"]);
    expect(problems(t.Object({ o: t.Object({ deep: t.Union([t.Literal("p"), t.Literal("q")]) }) }), { o: { deep: "r" } })).toEqual([
      "o.deep: must be one of p, q",
    ]);
    expect(problems(t.Object({ req: t.String() }), {})).toEqual(["req: is required"]);
  });

  test("a schema's own words win where meaning is needed; nothing to describe gives one generic line", () => {
    expect(problems(t.Object({ id: t.String({ maxLength: 3, error: "must be the id of one of your assets" }) }), { id: "toolong" })).toEqual([
      "id: must be the id of one of your assets",
    ]);
    expect(describeValidationError(new Error("not a validation error"), "query")).toEqual([{ field: "query", problem: "is not valid" }]);
  });
});
