/**
 * The typed client example (docs/examples/typed-client.ts) as a client author would use it: openapi-typescript
 * generates the types from a served Seedcast's /openapi.json, TypeScript 5 compiles the example against them
 * (strict), a misspelt field does not compile, and the compiled example runs against that server.
 * docs/examples is its own npm project (scripts/test-setup.sh installs it): openapi-typescript needs TypeScript 5's
 * compiler API, which the project's TypeScript 7 does not have.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addConnection } from "../src/modules/connections/service";
import { type Served, serveApp } from "./helpers/openapi-contract";
import { type World, createWorld } from "./helpers/world";
import { WEBHOOK_SECRET } from "./publishing-fixtures";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const EXAMPLES = join(import.meta.dir, "..", "docs", "examples");
const BIN = join(EXAMPLES, "node_modules", ".bin");

let world: World;
let server: Served;
let receiver: WebhookReceiver;
let work = "";

async function run(command: string[], cwd: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(command, { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd }, stdout: "pipe", stderr: "pipe" });
  const [out, err] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text()];
  return { code: await proc.exited, output: out + err };
}

beforeAll(async () => {
  if (!existsSync(join(BIN, "openapi-typescript"))) throw new Error("docs/examples is not installed: run bash scripts/test-setup.sh");
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  server = serveApp(world.app);
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  // Inside docs/examples, so the copies resolve openapi-fetch from its node_modules.
  work = join(EXAMPLES, "node_modules", ".cache", `typed-client-${process.pid}-${Date.now()}`);
  mkdirSync(work, { recursive: true });
  for (const file of ["typed-client.ts", "tsconfig.json"]) copyFileSync(join(EXAMPLES, file), join(work, file));
});

afterAll(async () => {
  await server.stop();
  await receiver.stop();
  await world.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("typed client (openapi-typescript + openapi-fetch)", () => {
  test("types generated from the served document; the example compiles under strict TypeScript", async () => {
    const generated = await run(["node", join(BIN, "openapi-typescript"), `${server.base}/openapi.json`, "-o", "seedcast-api.d.ts"], work);
    expect(generated.output).toContain("seedcast-api.d.ts");
    expect(generated.code).toBe(0);
    const types = await Bun.file(join(work, "seedcast-api.d.ts")).text();
    // The refusals are typed, not `never`.
    expect(types).toContain('InsufficientCredits: {');
    const compiled = await run(["node", join(BIN, "tsc"), "--noEmit", "-p", "."], work);
    expect(compiled.output).toBe("");
    expect(compiled.code).toBe(0);
  });

  test("a misspelt body field, a wrong path and an undocumented refusal field do not compile", async () => {
    writeFileSync(
      join(work, "misuse.ts"),
      `import createClient from "openapi-fetch";
import type { paths } from "./seedcast-api";
const client = createClient<paths>({ baseUrl: "http://x" });
export async function misuse() {
  await client.POST("/api/v1/seeds", { body: { titel: "x", content: "y" } });
  await client.GET("/api/v1/seed");
  const r = await client.POST("/api/v1/creations/generate", { body: { seed_id: "x" } });
  if (r.error && r.error.error === "not_found") return r.error.required;
}
`,
    );
    writeFileSync(join(work, "tsconfig.misuse.json"), JSON.stringify({ extends: "./tsconfig.json", include: ["misuse.ts", "seedcast-api.d.ts"] }));
    const compiled = await run(["node", join(BIN, "tsc"), "--noEmit", "-p", "tsconfig.misuse.json"], work);
    expect(compiled.code).not.toBe(0);
    expect(compiled.output).toContain("titel");
    expect(compiled.output).toContain("misuse.ts(6,"); // no such path

    expect(compiled.output).toContain("required");
  });

  test("the example runs against the server: seed, generate, schedule; a typed 402 without credits", async () => {
    const acct = await world.createAccount({ credits: 100 });
    await addConnection(world.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    const example = await import(join(work, "typed-client.ts"));
    const outcome = await example.launchPost(server.base, acct.key, "Launch day", "We launch on Monday.");
    expect(outcome.refusal).toBeNull();
    expect(outcome.caption.length).toBeGreaterThan(0);
    expect(outcome.post.status).toBe("scheduled");
    expect(outcome.post.targets).toHaveLength(1);
    expect(await example.allSeedTitles(server.base, acct.key)).toEqual(["Launch day"]);

    const poor = await world.createAccount({ credits: 0 });
    const refused = await example.launchPost(server.base, poor.key, "No credits", "Nothing to spend.");
    expect(refused.refusal).toBe("needs 5 credits, has 0");
    expect(refused.post).toBeNull();
  });
});
