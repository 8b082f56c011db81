/**
 * The dashboard as a publishing tool, in process (app.handle, manual clock): seeds written, searched, edited and
 * deleted with errors beside their fields; generating from a seed; the person's time zone; keys minted once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { generateCreation } from "../src/modules/creations/service";
import { createSeed } from "../src/modules/seeds/service";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";

let world: World;
let accountId = "";

/** The `n` of a `SELECT count(*) AS n …` through world.sql (PostgreSQL answers it as a string). */
async function countOf(world: World, text: string, ...params: unknown[]): Promise<number> {
  return Number((await world.sql<{ n: unknown }>(text, ...params))[0]?.n);
}
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver({ secret: "whsec-0123456789abcdef" });
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost" } });
  accountId = (await createAccount(world.deps, { name: "Garden Club", email: "gc@garden.test", password: PASSWORD })).accountId;
});
afterAll(async () => {
  await world.close();
  await receiver.stop();
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  const r = await b.login("gc@garden.test");
  expect(r.status).toBe(303);
  return b;
}

describe("seeds", () => {
  test("a blank seed is refused with the error beside each field, focus on the first, typed text kept", async () => {
    const b = await signedIn();
    const r = await b.submit("/dashboard/seeds", "/dashboard/seeds", { title: "  ", content: "", category: "greens" });
    expect(r.status).toBe(400);
    expect(r.text).toContain('id="title" name="title" type="text" value="  " required aria-invalid="true" aria-describedby="title-error" autofocus');
    expect(r.text).toContain('<p class="field-error" id="title-error">Give the seed a title.</p>');
    expect(r.text).toMatch(/<textarea id="content"[^>]*aria-invalid="true"[^>]*aria-describedby="content-hint content-error"/);
    expect(r.text).not.toMatch(/id="content"[^>]*autofocus/);
    expect(r.text).toContain('value="greens"');
    expect(await countOf(world, "SELECT count(*) AS n FROM seeds")).toBe(0);
  });

  test("write, search, see the text, edit, and delete a seed", async () => {
    const b = await signedIn();
    const made = await b.submit("/dashboard/seeds", "/dashboard/seeds", { title: "Winter lettuce", content: "Sow lamb's lettuce under glass in November.", category: "greens" });
    expect(made.status).toBe(303);
    const id = /\/dashboard\/seeds\/([0-9a-f-]{36})\?notice=seed-saved/.exec(made.location ?? "")?.[1] ?? "";
    expect(id).not.toBe("");
    await b.submit("/dashboard/seeds", "/dashboard/seeds", { title: "Tomato blight", content: "Remove the lower leaves.", category: "" });

    const found = await b.get("/dashboard/seeds?q=lettuce");
    expect(found.text).toContain("Winter lettuce");
    expect(found.text).toContain("Sow lamb&#39;s lettuce under glass in November.");
    expect(found.text).not.toContain("Tomato blight");

    const shown = await b.get(`/dashboard/seeds/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain("Sow lamb&#39;s lettuce under glass in November.");
    expect(shown.text).toContain("Generate a post");

    const bad = await b.submit(`/dashboard/seeds/${id}`, `/dashboard/seeds/${id}`, { title: "Winter lettuce", content: "x", image_url: "ftp://nope" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="image_url-error">That is not a web address');
    expect(bad.text).toContain('value="ftp://nope"');

    const edited = await b.submit(`/dashboard/seeds/${id}`, `/dashboard/seeds/${id}`, { title: "Winter salad", content: "Lamb's lettuce and rocket.", category: "greens" });
    expect(edited.status).toBe(303);
    expect((await b.get(`/dashboard/seeds/${id}`)).text).toContain("Lamb&#39;s lettuce and rocket.");

    const confirm = await b.get(`/dashboard/seeds/${id}/delete`);
    expect(confirm.text).toContain("Delete the seed");
    const gone = await b.request("POST", `/dashboard/seeds/${id}/delete`, { _csrf: b.csrf() });
    expect(gone.location).toBe("/dashboard/seeds?notice=seed-deleted");
    expect((await b.get(`/dashboard/seeds/${id}`)).status).toBe(404);
  });

  test("generating from a seed with a generated visual makes a creation and opens it", async () => {
    const b = await signedIn();
    const made = await b.submit("/dashboard/seeds", "/dashboard/seeds", { title: "Garlic", content: "Plant garlic cloves before the ground freezes." });
    const seedPath = (made.location ?? "").split("?")[0] ?? "";
    const noImage = await b.submit(seedPath, `${seedPath}/generate`, { aspect_ratio: "portrait", media_style: "bold", image: "library" });
    expect(noImage.status).toBe(400);
    expect(noImage.text).toContain("Choose an image from the library, or another option.");
    const gen = await b.submit(seedPath, `${seedPath}/generate`, { aspect_ratio: "portrait", media_style: "bold", image: "generate" });
    expect(gen.status).toBe(303);
    expect(gen.location).toMatch(/^\/dashboard\/creations\/[0-9a-f-]{36}\?notice=generated$/);
    const row = (await world.sql("SELECT aspect_ratio AS a, media_style AS m, image_asset_id AS img FROM creations"))[0] as { a: string; m: string; img: string | null };
    expect(row.a).toBe("portrait");
    expect(row.m).toBe("bold");
    expect(row.img).not.toBeNull();
  });
});

describe("generating with a library image", () => {
  test("the picker offers the library; the chosen image becomes the post's, described in plain words", async () => {
    const { ingestImageBytes } = await import("../src/modules/assets/service");
    const sharp = (await import("sharp")).default;
    const png = await sharp({ create: { width: 320, height: 240, channels: 3, background: "#3a7d44" } }).png().toBuffer();
    const asset = await ingestImageBytes(world.deps, accountId, { bytes: new Uint8Array(png), fileName: "leeks.png", source: "upload" });
    const b = await signedIn();
    const made = await b.submit("/dashboard/seeds", "/dashboard/seeds", { title: "Leek trench", content: "Dig a trench for leeks." });
    const seedPath = (made.location ?? "").split("?")[0] ?? "";
    const shown = await b.get(seedPath);
    expect(shown.text).toContain(`<input type="radio" name="image_asset_id" value="${asset.id}">`);
    const gen = await b.submit(seedPath, `${seedPath}/generate`, { aspect_ratio: "square", media_style: "minimal", image: "library", image_asset_id: asset.id });
    expect(gen.status).toBe(303);
    const id = /\/dashboard\/creations\/([0-9a-f-]{36})/.exec(gen.location ?? "")?.[1] ?? "";
    const row = (await world.sql("SELECT image_asset_id AS a, alt_text AS alt FROM creations WHERE id = ?", id))[0] as { a: string; alt: string };
    expect(row.a).toBe(asset.id);
    expect(row.alt).toContain("green");
    expect(row.alt).not.toMatch(/\d+\s*×\s*\d+/);
  });
});

describe("time zone", () => {
  test("unset: the page asks the script to send the browser's zone; a known zone is saved, an unknown one refused", async () => {
    const b = await signedIn();
    const first = await b.get("/dashboard");
    expect(first.text).toContain('data-set-zone="/dashboard/account/time-zone"');
    const bad = await b.request("POST", "/dashboard/account/time-zone", { _csrf: b.csrf(), timeZone: "Mars/Olympus" }, { "x-requested-with": "fetch" });
    expect(bad.status).toBe(400);
    const ok = await b.request("POST", "/dashboard/account/time-zone", { _csrf: b.csrf(), timeZone: "Europe/Berlin" }, { "x-requested-with": "fetch" });
    expect(ok.status).toBe(204);
    const after = await b.get("/dashboard/account");
    expect(after.text).not.toContain("data-set-zone");
    expect(after.text).toContain('<option value="Europe/Berlin" selected>');
  });

  test("sign-in carries the browser's zone: adopted when none is set, never over a chosen one", async () => {
    await createAccount(world.deps, { name: "Lisbon Club", email: "lx@garden.test", password: PASSWORD });
    const b = new DashboardClient(world);
    await b.get("/login");
    expect(b.lastHtml).toContain('name="timeZone" value="" data-browser-zone');
    await b.request("POST", "/login", { _csrf: b.csrf(), email: "lx@garden.test", password: PASSWORD, timeZone: "Europe/Lisbon" });
    expect((await b.get("/dashboard/account")).text).toContain('<option value="Europe/Lisbon" selected>');
    const again = new DashboardClient(world);
    await again.get("/login");
    await again.request("POST", "/login", { _csrf: again.csrf(), email: "lx@garden.test", password: PASSWORD, timeZone: "Asia/Tokyo" });
    expect((await again.get("/dashboard/account")).text).toContain('<option value="Europe/Lisbon" selected>');
  });
});

describe("the post page", () => {
  test("caption edited by hand (counters per platform), scheduled at 09:00 in the person's zone, deleted only once free", async () => {
    const b = await signedIn();
    await b.request("POST", "/dashboard/account/time-zone", { _csrf: (await b.get("/dashboard")) && b.csrf(), timeZone: "Europe/Berlin" }, { "x-requested-with": "fetch" });
    const seed = await createSeed(world.deps, accountId, { title: "Leeks", content: "Earth up leeks for long white stems." });
    const { creation } = await generateCreation(world.deps, accountId, { type: "social_post", seed_id: seed.id });
    const hook = await addConnection(world.deps, { accountId, platform: "webhook", url: `${receiver.url}/garden`, secret: "whsec-0123456789abcdef" });
    const path = `/dashboard/creations/${creation.id}`;

    const shown = await b.get(path);
    expect(shown.text).toContain('data-max="63206"');
    const empty = await b.submit(path, path, { caption: "   " });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('id="caption-error">Write a caption; it cannot be empty.</p>');
    // A caption written by hand may be 63,206 characters (decisions §13; generated ones stay within 300).
    const long = await b.submit(path, path, { caption: "x".repeat(63_207) });
    expect(long.status).toBe(400);
    expect(long.text).toContain('class="counter over" data-max="63206"');
    expect(long.text).toContain("x".repeat(63_207));
    const saved = await b.submit(path, path, { caption: "Earth up your leeks now for long white stems. 🌱" });
    expect(saved.location).toBe(`${path}?notice=creation-saved`);
    expect((await world.sql("SELECT caption FROM creations WHERE id = ?", creation.id))[0]).toEqual({ caption: "Earth up your leeks now for long white stems. 🌱" });

    const none = await b.submit(path, `${path}/schedule`, { date: "2026-11-25", time: "09:00" });
    expect(none.status).toBe(400);
    expect(none.text).toContain('id="targets-error">Choose at least one connection to post to.</p>');
    expect(none.text).toContain('value="2026-11-25"');

    const tomorrow = new Date(world.clock.now() + 24 * 3600 * 1000).toISOString().slice(0, 10);
    const done = await b.submit(path, `${path}/schedule`, { date: tomorrow, time: "09:00", targets: [hook.accountId] });
    expect(done.status).toBe(303);
    const row = (await world.sql("SELECT scheduled_time AS t FROM scheduled_posts"))[0] as { t: number };
    // Berlin is UTC+1 in winter (the world's clock is in November).
    expect(new Date(Number(row.t)).toISOString()).toBe(`${tomorrow}T08:00:00.000Z`);

    const postId = ((await world.sql("SELECT id FROM scheduled_posts"))[0] as { id: string }).id;
    expect(done.location).toBe(`/dashboard/calendar?view=month&date=${tomorrow}&notice=scheduled#post-${postId}`);
    const month = await b.get(`/dashboard/calendar?view=month&date=${tomorrow}`);
    expect(month.text).toContain(`<time datetime="${tomorrow}T08:00:00.000Z">09:00</time>`);
    expect(month.text).toContain("times in Europe/Berlin");
    expect(month.text).toContain(`data-reschedule="/dashboard/calendar/posts/${postId}/reschedule" data-time="09:00"`);
    // Each chip names its post by the creation's caption (read once for the whole view).
    expect(month.text).toContain(`<a href="/dashboard/calendar/posts/${postId}">Earth up your leeks now for long white stems. 🌱</a>`);

    // The keyboard way: the post's page has date and time fields.
    const postPath = `/dashboard/calendar/posts/${postId}`;
    const past = await b.submit(postPath, `${postPath}/reschedule`, { date: "2026-11-01", time: "09:00" });
    expect(past.status).toBe(400);
    expect(past.text).toContain('id="time-error">Choose a time at least 5 minutes from now.</p>');
    const dayAfter = new Date(world.clock.now() + 2 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    const moved = await b.submit(postPath, `${postPath}/reschedule`, { date: dayAfter, time: "10:30" });
    expect(moved.status).toBe(303);
    expect(Number(((await world.sql("SELECT scheduled_time AS t FROM scheduled_posts"))[0] as { t: number }).t)).toBe(Date.parse(`${dayAfter}T09:30:00Z`));

    const busy = await b.submit(`${path}/delete`, `${path}/delete`, {});
    expect(busy.status).toBe(409);
    expect(busy.text).toContain("Cancel it in the");
  });
});

describe("connections", () => {
  test("a refused connect form shows the error beside its field, keeps the address, never echoes the secret", async () => {
    const b = await signedIn();
    const short = await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "webhook", url: "https://hooks.example.com/x", secret: "tooshort" });
    expect(short.status).toBe(400);
    expect(short.text).toContain('id="webhook-secret-error">The signing secret needs at least 16 characters.</p>');
    expect(short.text).toMatch(/id="webhook-secret" name="secret" type="password" value="" required aria-invalid="true" aria-describedby="webhook-secret-hint webhook-secret-error" autofocus/);
    expect(short.text).toContain('value="https://hooks.example.com/x"');
    expect(short.text).not.toContain("tooshort");
    const handle = await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "bluesky", handle: "not a handle", appPassword: "abcd-efgh-ijkl-mnop", service: "" });
    expect(handle.text).toContain('id="bluesky-handle-error">Enter your Bluesky handle, such as alice.bsky.social.</p>');
  });

  test("a connection that cannot be reached is not added; the form says so in plain words (no ECONNREFUSED)", async () => {
    const b = await signedIn();
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    await closed.stop(true);
    const res = await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "webhook", url: `http://127.0.0.1:${port}/hook`, secret: "whsec-0123456789abcdef" });
    expect(res.status).toBe(400);
    const shown = res;
    expect(shown.text).toContain(`value="http://127.0.0.1:${port}/hook"`);
    expect(shown.text).toContain("nothing accepted the connection there. Is the service running, and are the address and port right?");
    expect(shown.text).not.toMatch(/ECONNREFUSED|ConnectionRefused/);
  });
});

describe("library: from a web address and by upload link", () => {
  test("an image address is fetched into the library; a bad one is refused beside its field, typed value kept", async () => {
    const sharp = (await import("sharp")).default;
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: "#6a994e" } }).png().toBuffer();
    const ca = createTestCa();
    const images = startHttpsServer((r) => (new URL(r.url).pathname === "/kale.png" ? new Response(png, { headers: { "content-type": "image/png" } }) : new Response("not here", { status: 404 })), { ca });
    configureIngestFetch(world.deps, { extraCa: ca.caPem });
    try {
      const b = await signedIn();
      const bad = await b.submit("/dashboard/library", "/dashboard/library/from-url", { url: "not an address" });
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('id="url-error">');
      expect(bad.text).toContain('value="not an address"');
      const missing = await b.submit("/dashboard/library", "/dashboard/library/from-url", { url: `${images.url}/nothing.png` });
      expect(missing.status).toBe(400);
      expect(missing.text).toContain("The server did not hand over an image at that address.");
      const ok = await b.submit("/dashboard/library", "/dashboard/library/from-url", { url: `${images.url}/kale.png` });
      expect(ok.location).toBe("/dashboard/library?notice=uploaded");
      expect((await b.get("/dashboard/library")).text).toContain("kale.png");
    } finally {
      await images.stop();
      ca.dispose();
    }
  });

  test("an upload link is made, shown once after a redirect, and opens the upload page", async () => {
    const b = await signedIn();
    const made = await b.submit("/dashboard/library", "/dashboard/library/upload-link", {});
    expect(made.status).toBe(303);
    expect(made.location).toMatch(/^\/dashboard\/library\?link=[A-Za-z0-9_-]{43}$/);
    const shown = await b.get(made.location ?? "");
    const link = /id="new-link" type="text" readonly value="([^"]+)"/.exec(shown.text)?.[1] ?? "";
    expect(link).toMatch(/^http:\/\/localhost\/upload\/[A-Za-z0-9_-]+$/);
    const again = await b.get(made.location ?? "");
    expect(again.text).not.toContain(link);
    expect(again.text).toContain("shown once");
    const uploadPage = await world.app.handle(new Request(link));
    expect(uploadPage.status).toBe(200);
  });

  test("the form offers 15 minutes, 1 hour, 1 day or 7 days; the link made lives that long", async () => {
    const b = await signedIn();
    const page = await b.get("/dashboard/library");
    const options = [...page.text.matchAll(/<option value="(\d+)"[^>]*>([^<]+)<\/option>/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(options).toEqual(["900 15 minutes", "3600 1 hour", "86400 1 day", "604800 7 days"]);
    expect(page.text).toContain('<option value="900" selected>');
    for (const [lifetime, seconds] of [["604800", 604_800], ["86400", 86_400], ["not a choice", 900]] as const) {
      const made = await b.submit("/dashboard/library", "/dashboard/library/upload-link", { lifetime });
      const link = /id="new-link" type="text" readonly value="([^"]+)"/.exec((await b.get(made.location ?? "")).text)?.[1] ?? "";
      const row = await world.sql<{ expires_at: number | string; created_at: number | string }>("SELECT expires_at, created_at FROM upload_links ORDER BY created_at DESC, id DESC LIMIT 1");
      expect({ lifetime, ms: Number(row[0]!.expires_at) - Number(row[0]!.created_at) }).toEqual({ lifetime, ms: seconds * 1000 });
      expect((await world.app.handle(new Request(link))).status).toBe(200);
    }
  });
});

describe("credits", () => {
  test("one line per action, in words, linking to the post it paid for", async () => {
    const b = await signedIn();
    const seed = await createSeed(world.deps, accountId, { title: "Chard", content: "Rainbow chard keeps going all winter." });
    const { creation } = await generateCreation(world.deps, accountId, { type: "social_post", seed_id: seed.id });
    const path = `/dashboard/creations/${creation.id}`;
    const regen = await b.submit(path, `${path}/regenerate`, { parts: "caption", change_instructions: "shorter" });
    expect(regen.location).toBe(`${path}?notice=regenerated`);
    const page = await b.get("/dashboard/credits");
    const lines = [...page.text.matchAll(/<li><span class="when">[\s\S]*?<\/li>/g)].map((m) => m[0]);
    const about = lines.filter((l) => l.includes(`href="${path}"`));
    expect(about.length).toBe(2);
    expect(about[0]).toContain("Regenerated the caption of");
    expect(about[0]).toContain("−1 credit<");
    expect(about[1]).toContain("Generated <a");
    expect(about[1]).toContain("−5 credits");
    // Reserve and capture are one line, not two.
    const holds = await countOf(world, "SELECT count(*) AS n FROM credit_holds WHERE account_id = ?", accountId);
    const grants = await countOf(world, "SELECT count(*) AS n FROM credit_ledger WHERE account_id = ? AND hold_id IS NULL", accountId);
    expect(lines.length).toBe(holds + grants);
    expect(lines.some((l) => l.includes("Credits granted"))).toBe(true);
  });
});

describe("your password", () => {
  test("changed with the current one; errors beside their fields; other sessions end", async () => {
    await createAccount(world.deps, { name: "Pw Club", email: "pw@garden.test", password: PASSWORD });
    const b = new DashboardClient(world);
    await b.login("pw@garden.test");
    const other = new DashboardClient(world);
    await other.login("pw@garden.test");
    const wrong = await b.submit("/dashboard/account", "/dashboard/account/password", { currentPassword: "not it at all", newPassword: "a brand new one", confirmPassword: "a brand new one" });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('id="currentPassword-error">That is not your current password.</p>');
    expect(wrong.text).not.toContain("a brand new one");
    const differ = await b.submit("/dashboard/account", "/dashboard/account/password", { currentPassword: PASSWORD, newPassword: "a brand new one", confirmPassword: "a brand new two" });
    expect(differ.text).toContain('id="confirmPassword-error">The two new passwords differ.</p>');
    const ok = await b.submit("/dashboard/account", "/dashboard/account/password", { currentPassword: PASSWORD, newPassword: "a brand new one", confirmPassword: "a brand new one" });
    expect(ok.location).toBe("/dashboard/account?notice=password-changed");
    expect((await b.get("/dashboard")).status).toBe(200);
    expect((await other.get("/dashboard")).status).toBe(303);
    const fresh = new DashboardClient(world);
    expect((await fresh.login("pw@garden.test", PASSWORD)).status).toBe(401);
    expect((await fresh.login("pw@garden.test", "a brand new one")).status).toBe(303);
  });
});

describe("keys form", () => {
  test("no group chosen: 'Choose at least one group' beside the groups, typed name kept, nothing minted", async () => {
    const b = await signedIn();
    const before = await countOf(world, "SELECT count(*) AS n FROM api_keys");
    const res = await b.submit("/dashboard/keys", "/dashboard/keys", { name: "Potting bench", expires: "30" });
    expect(res.status).toBe(400);
    expect(res.text).toContain('<fieldset id="groups-group" aria-invalid="true" aria-describedby="groups-error"><legend>Groups</legend><p class="field-error" id="groups-error">Choose at least one group.</p>');
    expect(res.text).toContain('value="Potting bench"');
    // The focus goes to the first checkbox of the group in error.
    expect(res.text).toContain('<input autofocus type="checkbox" name="groups" value="read">');
    expect(await countOf(world, "SELECT count(*) AS n FROM api_keys")).toBe(before);
    const blank = await b.submit("/dashboard/keys", "/dashboard/keys", { name: " ", groups: "read", expires: "30" });
    expect(blank.text).toContain('id="name-error">Give the key a name of 1 to');
  });
});

describe("calendar dates", () => {
  test("a date that is not a real day answers 400 with today's calendar; the edges of the range work", async () => {
    const b = await signedIn();
    for (const date of ["%2B275760-09-13", "-271821-04-19", "2026-02-30", "10000-01-01", "1969-12-31", "junk"]) {
      const res = await b.get(`/dashboard/calendar?date=${date}`);
      expect([date, res.status]).toEqual([date, 400]);
      expect(res.text).toContain("YYYY-MM-DD");
    }
    for (const view of ["month", "week", "day"]) {
      for (const date of ["9999-12-24", "1970-01-01", "2026-03-29", "2026-10-25"]) {
        const res = await b.get(`/dashboard/calendar?view=${view}&date=${date}`);
        expect([view, date, res.status]).toEqual([view, date, 200]);
      }
    }
  });
});

describe("members form", () => {
  test("a bad email or short password: the error beside its field, name and email kept", async () => {
    const b = await signedIn();
    const bad = await b.submit("/dashboard/members", "/dashboard/members", { name: "Sam", email: "sam-at-example", password: "long enough pw", role: "editor" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="m-email-error">Enter an email address, such as sam@example.com.</p>');
    expect(bad.text).toContain('value="sam-at-example"');
    expect(bad.text).toContain('value="Sam"');
    const short = await b.submit("/dashboard/members", "/dashboard/members", { name: "Sam", email: "sam@example.com", password: "short", role: "editor" });
    expect(short.text).toContain('id="m-password-error">The initial password needs at least 8 characters.</p>');
  });
});

describe("a failed post", () => {
  test("shows what the receiver answered on the calendar and its page; retry schedules it again to the failed target", async () => {
    const { runDueOnce } = await import("../src/publishing/dispatcher");
    const { schedulePost } = await import("../src/modules/schedule/service");
    const b = await signedIn();
    const rejecting = await startWebhookReceiver({ secret: "whsec-0123456789abcdef" });
    try {
      const hook = await addConnection(world.deps, { accountId, platform: "webhook", url: `${rejecting.url}/reject`, secret: "whsec-0123456789abcdef" });
      const seed = await createSeed(world.deps, accountId, { title: "Onions", content: "Overwintering onions go in now." });
      const { creation } = await generateCreation(world.deps, accountId, { type: "social_post", seed_id: seed.id });
      const at = world.clock.now() + 10 * 60 * 1000;
      const { post } = await schedulePost(world.deps, accountId, { creationId: creation.id, scheduledTime: new Date(at).toISOString(), targets: [hook.accountId] });
      rejecting.setMode("reject400");
      world.clock.advance(11 * 60 * 1000);
      await runDueOnce(world.deps);
      const failed = (await world.sql("SELECT status FROM scheduled_posts WHERE id = ?", post.id))[0] as { status: string };
      expect(failed.status).toBe("failed");
      const day = new Date(at).toISOString().slice(0, 10);
      const month = await b.get(`/dashboard/calendar?view=month&date=${day}`);
      expect(month.text).toContain(`id="post-${post.id}"`);
      expect(month.text).toContain("status-failed");
      expect(month.text).toMatch(/class="chip-error">[^<]*The webhook receiver answered receiver rejecting \(test mode\)/);
      expect(month.text).not.toMatch(new RegExp(`id="post-${post.id}" draggable`));
      const postPath = `/dashboard/calendar/posts/${post.id}`;
      const shown = await b.get(postPath);
      expect(shown.text).toContain("Try again");
      expect(shown.text).toContain('<span class="error-text">The webhook receiver answered receiver rejecting (test mode)');
      rejecting.setMode("ok");
      const retryAt = new Date(world.clock.now() + 60 * 60 * 1000);
      const berlin = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(retryAt);
      const part = (t: string) => berlin.find((p) => p.type === t)?.value ?? "";
      const retried = await b.submit(postPath, `${postPath}/retry`, { date: `${part("year")}-${part("month")}-${part("day")}`, time: `${part("hour")}:${part("minute")}` });
      expect(retried.status).toBe(303);
      const again = (await world.sql("SELECT p.id, p.status, t.connection_id AS c FROM scheduled_posts p JOIN scheduled_post_targets t ON t.post_id = p.id WHERE p.creation_id = ? AND p.id <> ?", creation.id, post.id))[0] as { id: string; status: string; c: string };
      expect(again.status).toBe("scheduled");
      expect(again.c).toBe(hook.accountId);
      expect(retried.location).toBe(`/dashboard/calendar/posts/${again.id}?notice=retry-scheduled`);
    } finally {
      await rejecting.stop();
    }
  });
});

describe("the new pages keep the dashboard's rules", () => {
  const ID = "00000000-0000-7000-8000-000000000000";
  const PAGES = ["/dashboard/seeds", `/dashboard/seeds/${ID}`, `/dashboard/seeds/${ID}/delete`, `/dashboard/creations/${ID}/delete`, `/dashboard/calendar/posts/${ID}`, `/dashboard/keys/${ID}/rotate`, "/dashboard/account"];
  const ACTIONS = [
    "/dashboard/seeds",
    `/dashboard/seeds/${ID}`,
    `/dashboard/seeds/${ID}/delete`,
    `/dashboard/seeds/${ID}/generate`,
    `/dashboard/creations/${ID}`,
    `/dashboard/creations/${ID}/schedule`,
    `/dashboard/creations/${ID}/regenerate`,
    `/dashboard/creations/${ID}/delete`,
    `/dashboard/calendar/posts/${ID}/reschedule`,
    `/dashboard/calendar/posts/${ID}/retry`,
    "/dashboard/library/from-url",
    "/dashboard/library/upload-link",
    "/dashboard/account/time-zone",
    "/dashboard/account/password",
  ];

  test("no page without a session; no action without the session's CSRF token", async () => {
    const anonymous = new DashboardClient(world);
    for (const path of PAGES) {
      const res = await anonymous.get(path);
      expect([path, res.status, (res.location ?? "").startsWith("/login")]).toEqual([path, 303, true]);
    }
    const b = await signedIn();
    const seeds = await countOf(world, "SELECT count(*) AS n FROM seeds");
    const links = await countOf(world, "SELECT count(*) AS n FROM upload_links");
    for (const path of ACTIONS) {
      const res = await b.request("POST", path, { _csrf: "x".repeat(43), title: "Sneaky", content: "x", timeZone: "Asia/Tokyo" });
      expect([path, res.status]).toEqual([path, 403]);
    }
    expect(await countOf(world, "SELECT count(*) AS n FROM seeds")).toBe(seeds);
    expect(await countOf(world, "SELECT count(*) AS n FROM upload_links")).toBe(links);
  });

  test("another account's ids answer the same 404 as random ones", async () => {
    const other = await createAccount(world.deps, { name: "Other Club", email: "other@garden.test", password: PASSWORD });
    const seed = await createSeed(world.deps, other.accountId, { title: "Secret plot", content: "Private." });
    const { creation } = await generateCreation(world.deps, other.accountId, { type: "social_post", seed_id: seed.id });
    const b = await signedIn();
    for (const path of [`/dashboard/seeds/${seed.id}`, `/dashboard/creations/${creation.id}`, `/dashboard/seeds/${ID}`]) {
      const res = await b.get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).not.toContain("Secret plot");
    }
    const edit = await b.request("POST", `/dashboard/creations/${creation.id}`, { _csrf: b.csrf(), caption: "mine now" });
    expect(edit.status).toBe(404);
    const gen = await b.request("POST", `/dashboard/seeds/${seed.id}/generate`, { _csrf: b.csrf(), aspect_ratio: "square", media_style: "minimal", image: "none" });
    expect(gen.status).toBe(404);
    expect((await world.sql("SELECT caption FROM creations WHERE id = ?", creation.id))[0]).not.toEqual({ caption: "mine now" });
  });
});

describe("a viewer", () => {
  test("sees seeds, posts and the calendar but gets no forms to change them, and a forged post is refused", async () => {
    await addMember(world.deps, { accountId, email: "viewer@garden.test", password: PASSWORD, role: "viewer" });
    const seed = await createSeed(world.deps, accountId, { title: "Viewer sees this", content: "Read only." });
    const { creation } = await generateCreation(world.deps, accountId, { type: "social_post", seed_id: seed.id });
    const v = new DashboardClient(world);
    await v.login("viewer@garden.test");
    const seeds = await v.get("/dashboard/seeds");
    expect(seeds.text).toContain("Viewer sees this");
    expect(seeds.text).not.toContain("Write a seed");
    const post = await v.get(`/dashboard/creations/${creation.id}`);
    expect(post.status).toBe(200);
    expect(post.text).not.toContain(`action="/dashboard/creations/${creation.id}/schedule"`);
    expect(post.text).not.toContain('name="caption"');
    const forged = await v.request("POST", `/dashboard/creations/${creation.id}`, { _csrf: v.csrf(), caption: "viewer edit" });
    expect(forged.status).toBe(403);
    const gen = await v.request("POST", `/dashboard/seeds/${seed.id}/generate`, { _csrf: v.csrf(), aspect_ratio: "square", media_style: "minimal", image: "none" });
    expect(gen.status).toBe(403);
    expect(await countOf(world, "SELECT count(*) AS n FROM creations WHERE seed_id = ?", seed.id)).toBe(1);
  });
});

describe("the setup form puts its errors beside their fields", () => {
  test("passwords that differ: the error sits under 'Password again', focused, typed values kept", async () => {
    const fresh = await createWorld();
    try {
      const client = new DashboardClient(fresh);
      await client.get("/setup");
      const answer = await client.request("POST", "/setup", {
        _csrf: client.csrf(),
        name: "Allotment Berlin",
        ownerName: "Ana",
        email: "ana@example.test",
        password: "correct horse battery",
        confirm: "correct horse batterz",
      });
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/id="confirm"[^>]*aria-describedby="confirm-error"[^>]*aria-invalid="true" autofocus/);
      expect(answer.text).toContain('<p class="field-error" id="confirm-error">The two passwords differ');
      expect(answer.text).toContain('value="ana@example.test"');
      expect(answer.text).not.toContain("correct horse");
    } finally {
      await fresh.close();
    }
  });
});
