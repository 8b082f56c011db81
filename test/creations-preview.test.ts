/**
 * The public preview page at a creation's `url`: caption, image, Open Graph tags, everything escaped, nothing loaded
 * from third parties. Checked as text and in a real browser (chromium through playwright-core), with screenshots in
 * test-artifacts/creations/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { launchChromium } from "./helpers/browser";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { createBuiltinGenerator } from "../src/generation/builtin";
import { escapeHtml } from "../src/lib/html";
import type { CaptionRequest, Generator } from "../src/generation/generator";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const ARTIFACTS = join(import.meta.dir, "..", "test-artifacts", "creations");
const HOSTILE_CAPTION = `Tom & Jerry's <b>launch</b> is "today" <script>alert(1)</script>\nSecond line </p><img src=x onerror=alert(2)>`;
const HOSTILE_TITLE = `<script>alert("title")</script> Launch & "Learn"`;

/** Builtin images and alt text, but a caption full of markup, to prove the page escapes it. */
const builtin = createBuiltinGenerator();
let nextCaption: string | null = HOSTILE_CAPTION;
const generator: Generator = {
  name: "preview-test",
  writeCaption: (req: CaptionRequest, signal?: AbortSignal) =>
    nextCaption !== null ? Promise.resolve(nextCaption) : builtin.writeCaption(req, signal),
  renderImage: (req, signal) => builtin.renderImage(req, signal),
  describeImage: (req, signal) => builtin.describeImage(req, signal),
};

let world: World;
let server: ReturnType<typeof Bun.serve>;
let origin: string;
let acct: TestAccount;

beforeAll(async () => {
  // The page must be reachable by a browser, so the app is served on a random port and BASE_URL points at it.
  let handle: (request: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => handle(request) });
  origin = `http://127.0.0.1:${server.port}`;
  world = await createWorld({ generator, env: { BASE_URL: origin } });
  handle = (request) => world.app.handle(request);
  acct = await world.createAccount({ credits: 100 });
});
afterAll(async () => {
  await server?.stop(true);
  await world?.close();
});

async function makeCreation(includeVisual: boolean, aspectRatio = "square"): Promise<Record<string, any>> {
  const seed = await world.call("POST", "/api/v1/seeds", {
    key: acct.key,
    body: { title: HOSTILE_TITLE, content: "A launch event with a workshop and coffee for everyone who joins.", category: "event" },
  });
  expect(seed.status).toBe(201);
  const seedId = seed.json.id ?? seed.json.seed?.id;
  const res = await world.call("POST", "/api/v1/creations/generate", {
    key: acct.key,
    body: { seed_id: seedId, include_visual: includeVisual, aspect_ratio: aspectRatio, media_style: "editorial" },
  });
  expect(res.status).toBe(201);
  return res.json.creation;
}

async function page(path: string): Promise<Response> {
  return fetch(`${origin}${path}`);
}

/** Every absolute URL in the markup. */
function urlsIn(markup: string): string[] {
  return [...markup.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((m) => m[0]);
}

describe("preview page", () => {
  test("renders caption, image and Open Graph tags; escapes everything; only this instance's URLs", async () => {
    const creation = await makeCreation(true);
    expect(creation.url).toBe(`${origin}/c/${creation.id}`);
    const res = await page(`/c/${creation.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const markup = await res.text();

    expect(markup).not.toContain("<script");
    expect(markup).not.toContain("<b>");
    expect(markup).not.toContain("onerror=alert(2)>");
    expect(markup).toContain("Tom &amp; Jerry&#39;s &lt;b&gt;launch&lt;/b&gt; is &quot;today&quot; &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(markup).toContain(`<meta property="og:title" content="&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt; Launch &amp; &quot;Learn&quot;">`);
    expect(markup).toContain(`<meta property="og:url" content="${creation.url}">`);
    expect(markup).toContain(`<meta property="og:image" content="${creation.body.imageUrl}">`);
    expect(markup).toContain(`<meta property="og:image:width" content="1080">`);
    expect(markup).toContain(`<meta property="og:image:height" content="1080">`);
    expect(markup).toContain(`<meta name="twitter:card" content="summary_large_image">`);
    expect(markup).toMatch(/<meta property="og:description" content="Tom &amp; Jerry/);
    expect(markup).toContain(`<img src="${creation.body.imageUrl}"`);
    for (const url of urlsIn(markup)) expect(url.startsWith(`${origin}/`)).toBe(true);
  });

  test("without an image: no og:image, a summary card", async () => {
    const creation = await makeCreation(false);
    const markup = await (await page(`/c/${creation.id}`)).text();
    expect(markup).not.toContain("og:image");
    expect(markup).not.toContain("<img");
    expect(markup).toContain(`<meta name="twitter:card" content="summary">`);
  });

  test("a post written by hand: every image with its own alt text, the thread's parts and the first comment, escaped", async () => {
    const first = await makeCreation(true);
    const second = await makeCreation(true, "portrait");
    const res = await world.call("POST", "/api/v1/creations", {
      key: acct.key,
      body: {
        caption: "Post <one>",
        images: [{ asset_id: first.imageAssetId, alt_text: "First & best" }, { asset_id: second.imageAssetId, alt_text: "Second \"one\"" }],
        thread: [{ caption: "Part <two>", images: [{ asset_id: second.imageAssetId, alt_text: "In the thread" }] }],
        first_comment: "Comment <three>",
      },
    });
    expect(res.status).toBe(201);
    const markup = await (await page(`/c/${res.json.creation.id}`)).text();
    expect(markup).toContain(`<img src="${first.body.imageUrl}" alt="First &amp; best"`);
    expect(markup).toContain(`<img src="${second.body.imageUrl}" alt="Second &quot;one&quot;"`);
    expect(markup).toContain(`alt="In the thread"`);
    expect(markup.match(/<img /g)).toHaveLength(3);
    expect(markup.indexOf("Post &lt;one&gt;")).toBeLessThan(markup.indexOf("Part &lt;two&gt;"));
    expect(markup.indexOf("Part &lt;two&gt;")).toBeLessThan(markup.indexOf("Comment &lt;three&gt;"));
    expect(markup).toContain(`aria-label="Thread part 2 of 2"`);
    // The card stays the first image's.
    expect(markup).toContain(`<meta property="og:image" content="${first.body.imageUrl}">`);
  });

  test("unknown and malformed ids answer a 404 page", async () => {
    for (const id of ["0192f0c4-1d2e-7a3b-8c4d-5e6f7a8b9c0d", "not-a-uuid", "%3Cscript%3E"]) {
      const res = await page(`/c/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await res.text()).not.toContain("<script");
    }
  });

  test("shows the regenerated caption (same url)", async () => {
    const creation = await makeCreation(false);
    nextCaption = null;
    try {
      const res = await world.call("POST", "/api/v1/creations/regenerate", {
        key: acct.key,
        body: { creation_id: creation.id, parts: "caption" },
      });
      expect(res.status).toBe(200);
      expect(res.json.creation.url).toBe(creation.url);
      const markup = await (await page(`/c/${creation.id}`)).text();
      expect(markup).toContain(`<p class="caption">${escapeHtml(res.json.creation.body.caption)}</p>`);
      expect(markup).not.toContain("Tom &amp; Jerry");
    } finally {
      nextCaption = HOSTILE_CAPTION;
    }
  });

  describe("in a browser", () => {
    let browser: Browser | null = null;
    beforeAll(async () => {
      // NB: playwright makes a fresh throwaway profile per launch (it refuses --user-data-dir here).
      browser = await launchChromium();
      mkdirSync(ARTIFACTS, { recursive: true });
    });
    afterAll(async () => {
      await browser?.close();
    });

    test("the caption reads exactly as written, the image loads, no request leaves the instance", async () => {
      expect(browser).not.toBeNull();
      for (const ratio of ["square", "landscape", "story"]) {
        const creation = await makeCreation(true, ratio);
        const context = await browser!.newContext({ viewport: { width: 800, height: 900 } });
        const tab = await context.newPage();
        const requested: string[] = [];
        const problems: string[] = [];
        tab.on("request", (r) => requested.push(r.url()));
        tab.on("console", (m) => {
          if (m.type() === "error") problems.push(m.text());
        });
        tab.on("pageerror", (e) => problems.push(String(e)));
        await tab.goto(creation.url, { waitUntil: "load" });
        expect(await tab.title()).toContain("Launch & \"Learn\"");
        expect(await tab.locator(".caption").innerText()).toBe(HOSTILE_CAPTION);
        const loaded = await tab.locator("article img").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth);
        expect(loaded).toBeGreaterThan(0);
        expect(await tab.locator("article img").getAttribute("alt")).toBe(creation.body.altText);
        await tab.screenshot({ path: join(ARTIFACTS, `preview-${ratio}.png`), fullPage: true });
        expect(problems).toEqual([]);
        for (const url of requested) expect(url.startsWith(`${origin}/`)).toBe(true);
        await context.close();
      }
    }, 60_000);
  });
});
