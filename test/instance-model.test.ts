/**
 * The Instance page's language model server (decisions.md §15), at the service: set and tested without a restart
 * against the OpenAI-compatible test server (test/peers/openai-server.ts): success, a bad key (401 in words), an
 * unreachable server; the key sealed at rest and never shown; the next generate uses it; environment variables win.
 * On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DB_FILE_NAME } from "../src/db/client";
import { type Store, openSqliteStore } from "../src/db/store";
import { generateCreation } from "../src/modules/creations/service";
import { clearModelSettings, effectiveModel, modelSettingsView, saveModelSettings, testModelServer } from "../src/modules/instance-settings/service";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type OpenAiServer, startOpenAiServer } from "./peers/openai-server";

let world: World;
let server: OpenAiServer;
let acct: TestAccount;

beforeAll(async () => {
  world = await createWorld();
  server = await startOpenAiServer({ apiKey: "sk-local-9f8e7d6c5b4a" });
  acct = await world.createAccount({ credits: 100 });
});

afterAll(async () => {
  await server.stop();
  await world.close();
});

async function seedId(): Promise<string> {
  const res = await world.call("POST", "/api/v1/seeds", {
    key: acct.key,
    body: { title: "Winter hours", content: "We open Mon–Sat 8:00–14:00 from December.", category: "announcement" },
  });
  expect(res.status).toBe(201);
  return res.json.id ?? res.json.seed?.id;
}

/** A port nothing listens on: a server started and stopped again. */
async function closedPort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = s.port;
  await s.stop(true);
  return port!;
}

describe("the language model server on the Instance page", () => {
  test("Test: success with the server's answer; a bad key answers its 401 in words without the key; an unreachable server says so", async () => {
    const ok = await testModelServer(world.deps, { baseUrl: server.baseUrl, apiKey: server.apiKey, textModel: "llama3.2", imageModel: "" });
    expect(ok).toMatchObject({ ok: true, model: "llama3.2" });
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.authorization).toBe(`Bearer ${server.apiKey}`);

    const wrongKey = "sk-wrong-000000000000";
    const bad = await testModelServer(world.deps, { baseUrl: server.baseUrl, apiKey: wrongKey, textModel: "llama3.2", imageModel: "" });
    expect(bad.ok).toBe(false);
    if (bad.ok) throw new Error("unreachable");
    expect(bad.message).toContain("HTTP 401");
    expect(bad.message).toContain("Incorrect API key");
    expect(bad.message).not.toContain(wrongKey);

    const port = await closedPort();
    const down = await testModelServer(world.deps, { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "", textModel: "llama3.2", imageModel: "" });
    expect(down.ok).toBe(false);
    if (down.ok) throw new Error("unreachable");
    expect(down.message).toContain("could not reach the generation server");
  });

  test("a bad address or a missing text model is refused with the field named; nothing saved", async () => {
    for (const [input, field] of [
      [{ baseUrl: "ftp://example.com", textModel: "x", imageModel: "" }, "baseUrl"],
      [{ baseUrl: "not a url", textModel: "x", imageModel: "" }, "baseUrl"],
      [{ baseUrl: "http://user:pw@localhost:11434/v1", textModel: "x", imageModel: "" }, "baseUrl"],
      [{ baseUrl: "http://localhost:11434/v1", textModel: " ", imageModel: "" }, "textModel"],
    ] as const) {
      await expect(saveModelSettings(world.deps, input)).rejects.toMatchObject({ code: "invalid_request", extra: { details: [{ field }] } });
    }
    expect((await modelSettingsView(world.deps)).inUse).toBe("builtin");
  });

  test("saved: the key sealed at rest and never shown; the next generate uses the server; removed: offline again", async () => {
    const before = await generateCreation(world.deps, acct.accountId, { type: "social_post", seed_id: await seedId() });
    expect((await world.sql("SELECT caption_source FROM creations WHERE id = ?", before.creation.id))[0].caption_source).toBe("builtin");

    await saveModelSettings(world.deps, { baseUrl: `${server.baseUrl}/`, apiKey: server.apiKey, textModel: "llama3.2", imageModel: "" });
    const view = await modelSettingsView(world.deps);
    expect(view).toEqual({ baseUrl: server.baseUrl, textModel: "llama3.2", imageModel: "", apiKeySet: true, environment: [], inUse: "instance" });
    const stored = await world.sql("SELECT * FROM instance_settings");
    expect(JSON.stringify(stored)).not.toContain(server.apiKey);
    expect(stored[0].model_api_key_sealed).toMatch(/^v1\./);

    const chatsBefore = server.requests.filter((r) => r.endpoint === "chat").length;
    server.queueChat(JSON.stringify({ caption: "Winter hours: Mon–Sat 8:00–14:00, from the model." }));
    const after = await generateCreation(world.deps, acct.accountId, { type: "social_post", seed_id: await seedId() });
    expect(after.creation.body.caption).toBe("Winter hours: Mon–Sat 8:00–14:00, from the model.");
    expect(server.requests.filter((r) => r.endpoint === "chat").length).toBe(chatsBefore + 1);
    expect(server.requests.at(-1)!.body?.model).toBe("llama3.2");
    expect((await world.sql("SELECT caption_source FROM creations WHERE id = ?", after.creation.id))[0].caption_source).toBe("openai");

    // Saving again with the key field left empty keeps the stored key.
    await saveModelSettings(world.deps, { baseUrl: server.baseUrl, apiKey: "", textModel: "qwen2.5", imageModel: "" });
    expect((await effectiveModel(world.deps))?.apiKey).toBe(server.apiKey);
    // "Test" with the key field empty uses the stored key too.
    expect((await testModelServer(world.deps, { baseUrl: server.baseUrl, apiKey: "", textModel: "qwen2.5", imageModel: "" })).ok).toBe(true);

    await clearModelSettings(world.deps);
    expect(await modelSettingsView(world.deps)).toMatchObject({ baseUrl: "", apiKeySet: false, inUse: "builtin" });
    const offline = await generateCreation(world.deps, acct.accountId, { type: "social_post", seed_id: await seedId() });
    expect((await world.sql("SELECT caption_source FROM creations WHERE id = ?", offline.creation.id))[0].caption_source).toBe("builtin");
  });
});

/** Another replica's connections to the same database (SQLite file, or PostgreSQL). */
async function openSecondStore(): Promise<Store> {
  if (world.dialect === "postgres") {
    const { openPgStore } = await import("../src/db/pg/store");
    const url = world.env().DATABASE_URL;
    if (!url) throw new Error("no DATABASE_URL in the PostgreSQL world");
    return openPgStore(url, { max: 2 });
  }
  return openSqliteStore(join(world.dataDir, DB_FILE_NAME));
}

describe("across replicas", () => {
  test("a server saved through one replica is used by another's next generate, and its removal too", async () => {
    const second = await openSecondStore();
    try {
      const replica = { ...world.deps, store: second };
      await saveModelSettings(world.deps, { baseUrl: server.baseUrl, apiKey: server.apiKey, textModel: "on-replica-one", imageModel: "" });
      server.queueChat(JSON.stringify({ caption: "Written by the model, generated on the other replica." }));
      const made = await generateCreation(replica, acct.accountId, { type: "social_post", seed_id: await seedId() });
      expect(made.creation.body.caption).toBe("Written by the model, generated on the other replica.");
      expect(server.requests.at(-1)!.body?.model).toBe("on-replica-one");
      await clearModelSettings(world.deps);
      const offline = await generateCreation(replica, acct.accountId, { type: "social_post", seed_id: await seedId() });
      expect((await world.sql("SELECT caption_source FROM creations WHERE id = ?", offline.creation.id))[0].caption_source).toBe("builtin");
    } finally {
      await second.close();
    }
  });
});

describe("environment variables win", () => {
  test("OPENAI_TEXT_MODEL set: it replaces the page's model; GENERATOR set: the page's server is not used at all", async () => {
    const w = await createWorld({ env: { OPENAI_TEXT_MODEL: "env-model" } });
    try {
      await saveModelSettings(w.deps, { baseUrl: server.baseUrl, apiKey: server.apiKey, textModel: "page-model", imageModel: "" });
      expect((await effectiveModel(w.deps))?.textModel).toBe("env-model");
      expect((await modelSettingsView(w.deps)).environment).toEqual(["OPENAI_TEXT_MODEL"]);
    } finally {
      await w.close();
    }
    const fixed = await createWorld({ env: { GENERATOR: "builtin" } });
    try {
      await saveModelSettings(fixed.deps, { baseUrl: server.baseUrl, apiKey: server.apiKey, textModel: "page-model", imageModel: "" });
      expect(await effectiveModel(fixed.deps)).toBeNull();
      expect((await modelSettingsView(fixed.deps)).inUse).toBe("environment");
    } finally {
      await fixed.close();
    }
  });
});
