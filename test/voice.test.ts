/** Brand voice: GET/PUT /api/v1/voice (voice group), defaults, partial updates, validation, isolation. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_VOICE } from "../src/generation/generator";
import { getVoice } from "../src/modules/voice/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type World, createWorld } from "./helpers/world";

const VOICE = "/api/v1/voice";
let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

describeAuthMatrix("voice", () => world, [
  { method: "GET", path: VOICE },
  { method: "PUT", path: VOICE, validBody: { tone: "formal" } },
]);

const voiceRows = async () => Number((await world.sql<{ n: number }>("SELECT count(*) AS n FROM brand_voices"))[0]?.n);

describe("brand voice", () => {
  test("an account without a saved voice gets the defaults", async () => {
    const a = await world.createAccount();
    const res = await world.call("GET", VOICE, { key: a.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(DEFAULT_VOICE);
    expect(await getVoice(world.deps, a.accountId)).toEqual(DEFAULT_VOICE);
  });

  test("PUT saves the given fields, keeps the others, normalises hashtags and drops duplicates", async () => {
    const a = await world.createAccount();
    const res = await world.call("PUT", VOICE, {
      key: a.key,
      body: {
        tone: " warm, direct ",
        emoji: "none" as const,
        hashtags: ["#Seedcast", "seedcast", "launch_day"],
        bannedWords: ["synergy", "Synergy", " leverage "],
        signature: "— the team",
      },
    });
    expect(res.status).toBe(200);
    const expected = {
      ...DEFAULT_VOICE,
      tone: "warm, direct",
      emoji: "none" as const,
      hashtags: ["#Seedcast", "#launch_day"],
      bannedWords: ["synergy", "leverage"],
      signature: "— the team",
    };
    expect(res.json).toEqual(expected);
    expect((await world.call("GET", VOICE, { key: a.key })).json).toEqual(expected);
    expect(await getVoice(world.deps, a.accountId)).toEqual(expected);
    const again = await world.call("PUT", VOICE, { key: a.key, body: { audience: "small bakeries", language: "pt-BR" } });
    expect(again.json).toEqual({ ...expected, audience: "small bakeries", language: "pt-BR" });
  });

  test("validation: 400 naming the field, nothing stored", async () => {
    const a = await world.createAccount();
    const before = await voiceRows();
    const cases: [Record<string, unknown>, string][] = [
      [{ emoji: "many" }, "emoji"],
      [{ hashtags: "not-a-list" }, "hashtags"],
      [{ hashtags: ["two words"] }, "hashtags.0"],
      [{ bannedWords: [""] }, "bannedWords.0"],
      // An unpaired surrogate is not text (PostgreSQL's jsonb refuses it): a 400 on both databases.
      [{ bannedWords: ["fine", "x\ud800"] }, "bannedWords.1"],
      [{ language: "english please" }, "language"],
      [{ tone: "x".repeat(201) }, "tone"],
      [{ hashtags: Array.from({ length: 31 }, (_, i) => `t${i}`) }, "hashtags"],
    ];
    for (const [body, field] of cases) {
      const res = await world.call("PUT", VOICE, { key: a.key, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.json.error).toBe("invalid_request");
      expect(res.json.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect(await voiceRows()).toBe(before);
  });

  test("only the voice group: read/create/schedule keys get 403 and write nothing", async () => {
    const a = await world.createAccount();
    const others = (await a.mint(["read", "create", "schedule"])).key;
    const before = await voiceRows();
    for (const method of ["GET", "PUT"] as const) {
      const res = await world.call(method, VOICE, { key: others, body: method === "PUT" ? { tone: "x" } : undefined });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ error: "forbidden", requiredGroup: "voice" });
    }
    expect(await voiceRows()).toBe(before);
    expect((await world.call("GET", VOICE, { key: (await a.mint(["voice"])).key })).status).toBe(200);
  });

  test("each account has its own voice", async () => {
    const a = await world.createAccount();
    const b = await world.createAccount();
    await world.call("PUT", VOICE, { key: a.key, body: { tone: "playful" } });
    expect((await world.call("GET", VOICE, { key: b.key })).json.tone).toBe(DEFAULT_VOICE.tone);
    expect(await getVoice(world.deps, b.accountId)).toEqual(DEFAULT_VOICE);
  });
});
