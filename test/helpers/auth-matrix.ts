/**
 * The shared auth matrix, written once and reused by every module's tests: every credential failure, with a valid and
 * an invalid body, answers 401 with the byte-identical body {"error":"Invalid API key"}.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { generateKeySecret } from "../../src/lib/api-key-format";
import { revokeKey, rotateKey } from "../../src/modules/auth/keys-service";
import type { World } from "./world";

export const INVALID_KEY_BODY = '{"error":"Invalid API key"}';
const DAY = 24 * 60 * 60 * 1000;

export interface MatrixRoute {
  method: string;
  /** Path; may contain ids of things that do not exist: auth comes first. */
  path: string;
  /** A body the route would accept (undefined for body-less routes). */
  validBody?: unknown;
}

/** Credential headers that must all fail, computed against a live world. */
async function failingCredentials(world: World): Promise<[string, Record<string, string>][]> {
  const acct = await world.createAccount();
  const revoked = await acct.mint(["read", "create", "schedule", "voice"]);
  await revokeKey(world.deps, revoked.id);
  const expiring = await acct.mint(["read", "create", "schedule", "voice"], { expiresDays: 30 });
  const rotated = await acct.mint(["read", "create", "schedule", "voice"]);
  await rotateKey(world.deps, rotated.id);
  world.clock.advance(31 * DAY);
  const good = (await acct.mint(["read"])).key;
  const badChecksum = good.slice(0, -1) + (good.endsWith("A") ? "B" : "A");
  return [
    ["missing header", {}],
    ["wrong scheme", { authorization: `Basic ${good}` }],
    ["token scheme", { authorization: `Token ${good}` }],
    ["empty token", { authorization: "Bearer " }],
    ["bearer only", { authorization: "Bearer" }],
    ["malformed", { authorization: "Bearer svc_short" }],
    ["without prefix", { authorization: `Bearer ${good.slice(4)}` }],
    ["something appended", { authorization: `Bearer ${good}x` }],
    ["bad checksum", { authorization: `Bearer ${badChecksum}` }],
    ["unknown", { authorization: `Bearer ${generateKeySecret()}` }],
    ["revoked", { authorization: `Bearer ${revoked.key}` }],
    ["expired", { authorization: `Bearer ${expiring.key}` }],
    ["retired after grace", { authorization: `Bearer ${rotated.key}` }],
    ["identity hints without key", { "x-user-id": acct.userId, "x-account-id": acct.accountId }],
  ];
}

/**
 * Declares the matrix tests for each route against `getWorld()`. `send` answers each request: the world's app
 * in-process by default; a real server's fetch to run the matrix over HTTP.
 */
export function describeAuthMatrix(
  name: string,
  getWorld: () => World,
  routes: readonly MatrixRoute[],
  send: (request: Request) => Response | Promise<Response> = (request) => getWorld().app.handle(request),
): void {
  describe(`${name}: auth matrix`, () => {
    let cases: [string, Record<string, string>][] = [];
    beforeAll(async () => {
      cases = await failingCredentials(getWorld());
    });
    for (const route of routes) {
      test(`${route.method} ${route.path}: every bad credential → 401, one body`, async () => {
        expect(cases.length).toBeGreaterThan(10);
        const bodies: [string, BodyInit | undefined, Record<string, string>][] = [
          ["valid body", route.validBody === undefined ? undefined : JSON.stringify(route.validBody), { "content-type": "application/json" }],
          ["invalid body", '{"broken": ', { "content-type": "application/json" }],
          ["wrong-typed body", JSON.stringify({ title: 42, seed_id: [], url: false }), { "content-type": "application/json" }],
        ];
        for (const [caseName, headers] of cases) {
          for (const [bodyName, body, bodyHeaders] of bodies) {
            const init: RequestInit = { method: route.method, headers: { ...bodyHeaders, ...headers } };
            if (route.method !== "GET" && route.method !== "HEAD") init.body = body;
            const res = await send(new Request(`http://localhost${route.path}`, init));
            const text = await res.text();
            expect({ caseName, bodyName, status: res.status }).toEqual({ caseName, bodyName, status: 401 });
            expect({ caseName, bodyName, text }).toEqual({ caseName, bodyName, text: INVALID_KEY_BODY });
          }
        }
      });
    }
  });
}
