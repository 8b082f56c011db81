/**
 * PLATFORM_ORIGIN_OVERRIDES (decisions.md §12): `host=origin` pairs send calls for https://host/… to origin/…, same
 * path and query, exempt from the public-address and https rules; a bad value stops the start with a sentence.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";
import { overriddenUrl, parseOriginOverrides } from "../src/lib/origin-overrides";
import { DeliveryError } from "../src/publishing/connector";
import { outboundProblem, providerFetch, routedUrl } from "../src/publishing/outbound";

const BASE = { DATA_DIR: "/tmp/seedcast-config-test", BASE_URL: "http://localhost" };

const seen: string[] = [];
const peer = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}${url.search} host=${request.headers.get("host")}`);
    return Response.json({ ok: true, path: url.pathname });
  },
});
afterAll(() => peer.stop(true));
const origin = `http://127.0.0.1:${peer.port}`;

describe("PLATFORM_ORIGIN_OVERRIDES in the configuration", () => {
  test("unset: no overrides", () => {
    expect(loadConfig(BASE).platformOriginOverrides.size).toBe(0);
  });

  test("pairs are read host → origin (lower-cased host, origin without trailing slash)", () => {
    const config = loadConfig({ ...BASE, PLATFORM_ORIGIN_OVERRIDES: " Discord.com=http://127.0.0.1:9101/ , api.telegram.org=https://mirror.example:8443" });
    expect(Object.fromEntries(config.platformOriginOverrides)).toEqual({
      "discord.com": "http://127.0.0.1:9101",
      "api.telegram.org": "https://mirror.example:8443",
    });
  });

  test.each([
    ["discord.com"],
    ["https://discord.com=http://127.0.0.1:1"],
    ["discord.com:443=http://127.0.0.1:1"],
    ["discord.com=ftp://127.0.0.1"],
    ["discord.com=http://127.0.0.1:1/api"],
    ["discord.com=not a url"],
    ["discord.com=http://127.0.0.1:1,discord.com=http://127.0.0.1:2"],
  ])("%s stops the start with a message naming the variable", (raw) => {
    expect(() => loadConfig({ ...BASE, PLATFORM_ORIGIN_OVERRIDES: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, PLATFORM_ORIGIN_OVERRIDES: raw })).toThrow("PLATFORM_ORIGIN_OVERRIDES must be");
  });

  test("only https://<host>/… on the default port is rewritten, path and query kept", () => {
    const overrides = parseOriginOverrides("discord.com=http://127.0.0.1:9101");
    expect(overriddenUrl(overrides, "https://discord.com/api/webhooks/1/t?wait=true")).toBe("http://127.0.0.1:9101/api/webhooks/1/t?wait=true");
    expect(overriddenUrl(overrides, "https://DISCORD.com./x")).toBe("http://127.0.0.1:9101/x");
    expect(overriddenUrl(overrides, "http://discord.com/x")).toBeNull();
    expect(overriddenUrl(overrides, "https://discord.com:8443/x")).toBeNull();
    expect(overriddenUrl(overrides, "https://ptb.discord.com/x")).toBeNull();
    expect(overriddenUrl(overrides, "not a url")).toBeNull();
  });
});

describe("the outbound layer follows the overrides", () => {
  const config = loadConfig({ ...BASE, PLATFORM_ORIGIN_OVERRIDES: `api.telegram.org=${origin}` });

  test("a call for https://api.telegram.org/… reaches the overridden plain-http loopback origin", async () => {
    seen.length = 0;
    const answer = await providerFetch({ config }, "https://api.telegram.org/botX/getMe?x=1", { method: "POST", body: "{}" });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true, path: "/botX/getMe" });
    expect(seen).toEqual([`POST /botX/getMe?x=1 host=127.0.0.1:${peer.port}`]);
    expect(routedUrl({ config }, "https://api.telegram.org/a")).toBe(`${origin}/a`);
    expect(outboundProblem({ config }, "https://api.telegram.org/a")).toBeNull();
  });

  test("without the override the same loopback origin is refused, before anything is sent", async () => {
    seen.length = 0;
    const plain = loadConfig(BASE);
    const error = await providerFetch({ config: plain }, `${origin}/botX/getMe`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe("permanent");
    expect(outboundProblem({ config: plain }, `${origin}/a`)).toBe("The address must be https.");
    expect(seen).toEqual([]);
  });
});
