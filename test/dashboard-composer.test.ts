/**
 * The composer's form handlers in process (app.handle, no script): a blank post and one from a seed, every button as a
 * round trip that keeps what was typed and stores nothing (add images from the library or an upload, move, remove, add
 * thread parts), "Save" storing exactly what was typed (read back through the creations service), editing an existing
 * post without dropping what the composer does not show, CSRF and roles (a viewer cannot), bad input answered with a
 * sentence at its field and nothing half-stored, and the post pages showing every part of a post.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { createCreationByHand, updateCreation } from "../src/modules/creations/edit";
import { getCreation } from "../src/modules/creations/service";
import { createSeed } from "../src/modules/seeds/service";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { solidPng } from "./publishing-fixtures";

let world: World;
let receiver: WebhookReceiver;
let mastodon: MastodonServer;
let accountId = "";
let otherAccountId = "";
const images: string[] = [];
let foreignImage = "";

async function countOf(text: string, ...params: unknown[]): Promise<number> {
  return Number((await world.sql<{ n: unknown }>(text, ...params))[0]?.n);
}
const creationCount = () => countOf("SELECT count(*) AS n FROM creations WHERE account_id = ?", accountId);

async function png(i: number): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await solidPng(60 + i, 40 + i));
}
/** The library image `i` of beforeAll. */
function img(i: number): string {
  return images[i] ?? "";
}

beforeAll(async () => {
  receiver = await startWebhookReceiver({ secret: "whsec-0123456789abcdef" });
  mastodon = await startMastodonServer();
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost" } });
  accountId = (await createAccount(world.deps, { name: "Garden Club", email: "gc@garden.test", password: PASSWORD })).accountId;
  await addMember(world.deps, { accountId, email: "viewer@garden.test", password: PASSWORD, role: "viewer" });
  await addMember(world.deps, { accountId, email: "editor@garden.test", password: PASSWORD, role: "editor" });
  otherAccountId = (await createAccount(world.deps, { name: "Elsewhere", email: "x@elsewhere.test", password: PASSWORD })).accountId;
  for (let i = 0; i < 5; i++) images.push((await ingestImageBytes(world.deps, accountId, { bytes: await png(i), fileName: `bed-${i + 1}.png` })).id);
  foreignImage = (await ingestImageBytes(world.deps, otherAccountId, { bytes: await png(9), fileName: "theirs.png" })).id;
  await addConnection(world.deps, { accountId, platform: "webhook", url: `${receiver.url}/garden`, secret: "whsec-0123456789abcdef" });
  await addConnection(world.deps, { accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
}, 60_000);

afterAll(async () => {
  await world?.close();
  await receiver?.stop();
  await mastodon?.stop();
});

async function signedIn(email = "gc@garden.test"): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login(email)).status).toBe(303);
  return b;
}

/** The composer's form as the browser sends it without script: multipart, fields in page order. */
async function sendComposer(b: DashboardClient, action: string, fields: [string, string][], files: File[] = [], csrf = true) {
  const data = new FormData();
  if (csrf) data.append("_csrf", b.csrf());
  for (const [k, v] of fields) data.append(k, v);
  for (const file of files) data.append("upload", file);
  const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const response = await world.app.handle(new Request(`${BASE}${action}`, { method: "POST", headers: { cookie }, body: data }));
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").startsWith("text/html")) b.lastHtml = text;
  return { status: response.status, location: response.headers.get("location"), text };
}

/** The asset ids of the alt text fields of `scope` on the page, in page order. */
function altOrder(html: string, scope = "post"): string[] {
  return [...html.matchAll(new RegExp(`name="alt_${scope}_([0-9a-f-]{36})"`, "g"))].map((m) => m[1] ?? "");
}

describe("the composer without script", () => {
  test("New post in the navigation opens it blank, with a tab per connected network and its preview", async () => {
    const b = await signedIn();
    const overview = await b.get("/dashboard");
    expect(overview.text).toContain('<a href="/dashboard/compose">New post</a>');
    const r = await b.get("/dashboard/compose");
    expect(r.status).toBe(200);
    expect(r.text).toContain('enctype="multipart/form-data"');
    expect(r.text).toMatch(/<textarea id="caption" name="caption" rows="8" required[^>]*><\/textarea>/);
    expect(r.text).toContain('id="net-webhook"');
    expect(r.text).toContain('id="net-mastodon"');
    // Mastodon's counting rule and limits come from the connector (the peer's server says 500 and 4).
    expect(r.text).toMatch(/data-platform="mastodon" data-name="Mastodon" data-max-images="4" data-max-parts="24" data-first-comment="1"[^>]*data-max="500" data-url-length="23"/);
    expect(r.text).toContain("No length limit.");
    expect(r.text).toContain("<strong class=\"pv-name\">Garden Club</strong>");
  });

  test("the buttons are round trips: images added from the library go in order, move, and are removed; parts are added; nothing is stored", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const before = await creationCount();
    const added = await sendComposer(b, "/dashboard/compose", [
      ["op", "add-images"],
      ["caption", "Sow broad beans now: https://garden.test/beans."],
      ["pick", img(0)],
      ["pick", img(1)],
      ["pick", img(2)],
      ["pick", foreignImage],
      ["pick_to", "post"],
    ]);
    expect(added.status).toBe(200);
    expect(altOrder(added.text)).toEqual([img(0), img(1), img(2)]);
    expect(added.text).not.toContain(foreignImage);
    expect(added.text).toContain("Sow broad beans now: https://garden.test/beans.");
    // Each image without alt text says so, visibly.
    expect(added.text.match(/alt-hint alt-missing/g)?.length).toBe(3);
    // The preview made the link a link, without the sentence's full stop.
    expect(added.text).toContain('<a href="https://garden.test/beans" rel="nofollow noopener noreferrer">https://garden.test/beans</a>.');

    const moved = await sendComposer(b, "/dashboard/compose", [
      ["caption", "Sow broad beans now."],
      [`alt_post_${img(0)}`, "Seed packets"],
      [`alt_post_${img(1)}`, ""],
      [`alt_post_${img(2)}`, "A raised bed"],
      ["op", `image-up:post:2`],
    ]);
    expect(moved.status).toBe(200);
    expect(altOrder(moved.text)).toEqual([img(0), img(2), img(1)]);
    expect(moved.text).toContain(">A raised bed</textarea>");
    // The cursor stays on the moved image's button (no script: autofocus).
    expect(moved.text).toMatch(/id="op-image-up-post-1"[^>]*autofocus/);

    const part = await sendComposer(b, "/dashboard/compose", [["caption", "Sow broad beans now."], [`alt_post_${img(0)}`, "Seed packets"], ["op", "add-part"]]);
    expect(part.text).toContain('name="part_caption_p1"');
    const removed = await sendComposer(b, "/dashboard/compose", [["caption", "x"], [`alt_post_${img(0)}`, ""], ["part_caption_p1", "two"], ["op", "image-remove:post:0"]]);
    expect(altOrder(removed.text)).toEqual([]);
    expect(removed.text).toContain(">two</textarea>");
    expect(await creationCount()).toBe(before);
  });

  test("an upload without script goes into the library and into the chosen part; a file that is not an image is refused at the upload field", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const up = await sendComposer(
      b,
      "/dashboard/compose",
      [["caption", "Beans"], ["part_caption_p1", "Part two"], ["pick_to", "p1"], ["op", "add-images"]],
      [new File([await png(20)], "upload.png", { type: "image/png" })],
    );
    expect(up.status).toBe(200);
    expect(altOrder(up.text, "p1")).toHaveLength(1);
    expect(altOrder(up.text, "post")).toHaveLength(0);
    // The same bytes again, under another name: the library keeps one copy, the part has the image once, and the page
    // says why no second copy appeared.
    const assetCount = () => countOf("SELECT count(*) AS n FROM assets WHERE account_id = ?", accountId);
    const stored = await assetCount();
    const again = await sendComposer(
      b,
      "/dashboard/compose",
      [["caption", "Beans"], ["part_caption_p1", "Part two"], [`alt_p1_${altOrder(up.text, "p1")[0]}`, ""], ["pick_to", "p1"], ["op", "add-images"]],
      [new File([await png(20)], "IMG_0001.png", { type: "image/png" })],
    );
    expect(again.status).toBe(200);
    expect(await assetCount()).toBe(stored);
    expect(altOrder(again.text, "p1")).toEqual(altOrder(up.text, "p1"));
    expect(again.text).toContain("“upload.png” was already in your library: the post uses that image, not a second copy.");
    // A library image uploaded again goes into the post as that image; bytes only another account holds are stored anew.
    const mine = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], ["op", "add-images"]], [new File([await png(0)], "bed.png", { type: "image/png" })]);
    expect(altOrder(mine.text, "post")).toEqual([img(0)]);
    expect(mine.text).toContain("“bed-1.png” was already in your library");
    const theirs = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], ["op", "add-images"]], [new File([await png(9)], "theirs-too.png", { type: "image/png" })]);
    expect(await assetCount()).toBe(stored + 1);
    expect(altOrder(theirs.text, "post")).not.toContain(foreignImage);
    expect(theirs.text).not.toContain("already in your library");

    const bad = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], ["op", "add-images"]], [new File(["not an image"], "notes.txt", { type: "text/plain" })]);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/<p class="field-error" id="upload-error">notes\.txt: [^<]+<\/p>/);
    expect(bad.text).toContain(">Beans</textarea>");
  });

  test("with script the composer uploads through the library one file at a time: bytes already there are answered as that image, and the page says so", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const assetCount = () => countOf("SELECT count(*) AS n FROM assets WHERE account_id = ?", accountId);
    const stored = await assetCount();
    const asComposer = { "x-requested-with": "fetch", accept: "application/json" };
    const known = await b.upload("/dashboard/library/upload", new File([await png(1)], "IMG_7.png", { type: "image/png" }), asComposer);
    expect(known.status).toBe(200);
    expect(JSON.parse(known.text)).toEqual({ id: img(1), fileName: "bed-2.png", reused: "true" });
    const fresh = await b.upload("/dashboard/library/upload", new File([await png(31)], "new.png", { type: "image/png" }), asComposer);
    expect(JSON.parse(fresh.text)).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), fileName: "new.png" });
    expect(await assetCount()).toBe(stored + 1);
    // The library page's own upload still adds what it is given.
    await b.get("/dashboard/library");
    const plain = await b.upload("/dashboard/library/upload", new File([await png(1)], "bed-2-again.png", { type: "image/png" }), { "x-requested-with": "fetch" });
    expect(plain.status).toBe(200);
    expect(await assetCount()).toBe(stored + 2);
    // The script then sends the form with the image ticked and named as reused: one notice, from the library's name.
    await b.get("/dashboard/compose");
    const sent = await sendComposer(b, "/dashboard/compose", [["caption", "x"], ["pick", img(1)], ["reused", img(1)], ["reused", foreignImage], ["op", "add-images"]]);
    expect(sent.status).toBe(200);
    expect(altOrder(sent.text)).toEqual([img(1)]);
    expect(sent.text.match(/already in your library/g)).toHaveLength(1);
    expect(sent.text).toContain("“bed-2.png” was already in your library");
    expect(sent.text).not.toContain("theirs.png");
  });

  test("Save stores exactly what was typed: 4 images in order with alt texts, a thread with images, a first comment, versions", async () => {
    const b = await signedIn("editor@garden.test");
    await b.get("/dashboard/compose");
    const before = await creationCount();
    const r = await sendComposer(b, "/dashboard/compose", [
      ["caption", "Broad beans, sown in November, crop in May. https://garden.test/beans"],
      [`alt_post_${img(3)}`, "Bean seeds in a palm"],
      [`alt_post_${img(0)}`, "Seed packets"],
      [`alt_post_${img(1)}`, ""],
      [`alt_post_${img(2)}`, "A raised bed"],
      ["part_caption_p2", "Soak them overnight first."],
      [`alt_p2_${img(4)}`, "A bowl of water"],
      ["part_caption_p1", "Then 5 cm deep, 20 cm apart."],
      ["first_comment", "More at https://garden.test"],
      ["version_caption_mastodon", "Broad beans: sow now, eat in May."],
      ["version_nothread_webhook", "1"],
      ["op", "save"],
    ]);
    expect(r.status).toBe(303);
    const id = /\/dashboard\/creations\/([0-9a-f-]{36})\?notice=composed$/.exec(r.location ?? "")?.[1] ?? "";
    expect(id).not.toBe("");
    expect(await creationCount()).toBe(before + 1);
    const c = await getCreation(world.deps, accountId, id);
    expect(c.seedId).toBeNull();
    expect(c.body.caption).toBe("Broad beans, sown in November, crop in May. https://garden.test/beans");
    expect(c.body.images.map((i) => [i.assetId, i.altText])).toEqual([
      [img(3), "Bean seeds in a palm"],
      [img(0), "Seed packets"],
      [img(1), ""],
      [img(2), "A raised bed"],
    ]);
    expect(c.body.imageUrl).toBe(c.body.images[0]?.url ?? "");
    expect(c.body.thread.map((p) => [p.caption, p.images.map((i) => [i.assetId, i.altText])])).toEqual([
      ["Soak them overnight first.", [[img(4), "A bowl of water"]]],
      ["Then 5 cm deep, 20 cm apart.", []],
    ]);
    expect(c.body.firstComment).toBe("More at https://garden.test");
    expect(c.body.variants).toEqual({ mastodon: { caption: "Broad beans: sow now, eat in May." }, webhook: { thread: [] } });

    // The post's page shows all of it.
    const shown = await b.get(`/dashboard/creations/${id}`);
    expect(shown.text).toContain("Alt text: Bean seeds in a palm");
    expect(shown.text).toContain("No alt text");
    expect(shown.text).toContain("Thread (3 parts)");
    expect(shown.text).toContain("Soak them overnight first.");
    expect(shown.text).toContain("First comment");
    expect(shown.text).toContain("Broad beans: sow now, eat in May.");
    expect(shown.text).toContain("No thread there.");
    expect(shown.text).toContain(`href="/dashboard/creations/${id}/edit"`);
  });

  test("a network that cannot take a part says so on its tab; Save and schedule goes on to the post's schedule form", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const five = await sendComposer(b, "/dashboard/compose", [["caption", "Five beds"], ...images.map((id): [string, string] => ["pick", id]), ["op", "add-images"]]);
    expect(altOrder(five.text)).toHaveLength(5);
    const mastodonPanel = five.text.slice(five.text.indexOf('id="net-mastodon"'));
    expect(mastodonPanel).toContain('<li class="notice notice-warn">Mastodon takes at most 4 images per post; the post has 5. Remove 1.</li>');
    // The webhook takes everything: no hint on its tab.
    const webhookPanel = five.text.slice(five.text.indexOf('id="net-webhook"'), five.text.indexOf('id="net-mastodon"'));
    expect(webhookPanel).toContain('<ul class="net-hints plain" aria-live="polite"></ul>');
    // Mastodon's limit, counted by its rule: the link is 23 characters.
    const long = await sendComposer(b, "/dashboard/compose", [["caption", `${"x".repeat(480)} https://garden.test/${"y".repeat(60)}`], ["op", "add-part"]]);
    expect(long.text).toContain('<li class="counter over">Post: <span class="count">504</span>/500<span class="over-text"> · too long</span></li>');
    const before = await creationCount();
    const saved = await sendComposer(b, "/dashboard/compose", [["caption", "Five beds"], ["op", "save-schedule"]]);
    expect(saved.status).toBe(303);
    expect(saved.location).toMatch(/^\/dashboard\/creations\/[0-9a-f-]{36}\?notice=composed#schedule-title$/);
    expect(await creationCount()).toBe(before + 1);
  });

  test("bad input is answered at its field in a sentence, and nothing is stored", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const before = await creationCount();
    const empty = await sendComposer(b, "/dashboard/compose", [["caption", "   "], [`alt_post_${img(0)}`, "Seed packets"], ["op", "save"]]);
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('<p class="field-error" id="caption-error">Write a caption; it cannot be empty.</p>');
    expect(empty.text).toMatch(/<textarea id="caption"[^>]*aria-invalid="true"[^>]*autofocus/);
    expect(empty.text).toContain(">Seed packets</textarea>");

    const part = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], ["part_caption_p1", "Fine"], ["part_caption_p2", " "], ["op", "save"]]);
    expect(part.status).toBe(400);
    expect(part.text).toContain('<p class="field-error" id="part_caption_p2-error">Write this part’s text, or remove the part.</p>');
    expect(part.text).not.toContain('id="part_caption_p1-error"');

    const alt = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], [`alt_post_${img(0)}`, "a"], [`alt_post_${img(1)}`, "x".repeat(1501)], ["op", "save"]]);
    expect(alt.status).toBe(400);
    expect(alt.text).toContain(`<p class="field-error" id="alt-post-${img(1)}-error">This alt text must be at most 1500 characters (this one has 1501).</p>`);

    const version = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], ["version_caption_mastodon", "x".repeat(63_207)], ["op", "save"]]);
    expect(version.status).toBe(400);
    expect(version.text).toMatch(/id="version_caption_mastodon-error">This caption must be at most 63206 characters/);

    // Another account's image cannot be slipped in: it is dropped, never stored or shown.
    const foreign = await sendComposer(b, "/dashboard/compose", [["caption", "Beans"], [`alt_post_${foreignImage}`, "theirs"], ["op", "add-part"]]);
    expect(foreign.status).toBe(200);
    expect(foreign.text).not.toContain(foreignImage);
    expect(await creationCount()).toBe(before);
  });

  test("CSRF: a form without the token changes nothing (not even an upload); a viewer cannot open or send the composer", async () => {
    const b = await signedIn();
    await b.get("/dashboard/compose");
    const before = await creationCount();
    const assetsBefore = await countOf("SELECT count(*) AS n FROM assets WHERE account_id = ?", accountId);
    const forged = await sendComposer(b, "/dashboard/compose", [["caption", "Forged"], ["op", "save"]], [new File([await png(30)], "forged.png", { type: "image/png" })], false);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("This form has expired");
    expect(await creationCount()).toBe(before);
    expect(await countOf("SELECT count(*) AS n FROM assets WHERE account_id = ?", accountId)).toBe(assetsBefore);

    // An account without connections: the composer says where to connect one, instead of tabs.
    const elsewhere = await signedIn("x@elsewhere.test");
    const lonely = await elsewhere.get("/dashboard/compose");
    expect(lonely.status).toBe(200);
    expect(lonely.text).toContain('No connections yet. <a href="/dashboard/connections">Connect an account</a>');
    expect(lonely.text).not.toContain('role="tablist"');

    const viewer = await signedIn("viewer@garden.test");
    expect((await viewer.get("/dashboard")).text).not.toContain("/dashboard/compose");
    const page = await viewer.get("/dashboard/compose");
    expect(page.status).toBe(403);
    const sent = await sendComposer(viewer, "/dashboard/compose", [["caption", "From a viewer"], ["op", "save"]]);
    expect(sent.status).toBe(403);
    expect(await creationCount()).toBe(before);
  });

  test("from a seed: Write a post opens it with the seed's words; Save keeps the seed", async () => {
    const b = await signedIn();
    const seed = await createSeed(world.deps, accountId, { title: "Garlic", content: "Plant garlic cloves before the frost." });
    const seedPage = await b.get(`/dashboard/seeds/${seed.id}`);
    expect(seedPage.text).toContain(`href="/dashboard/compose?seed=${seed.id}">Write a post</a>`);
    const r = await b.get(`/dashboard/compose?seed=${seed.id}`);
    expect(r.text).toContain(">Plant garlic cloves before the frost.</textarea>");
    expect(r.text).toContain(`name="seed_id" value="${seed.id}"`);
    const saved = await sendComposer(b, "/dashboard/compose", [["seed_id", seed.id], ["caption", "Plant garlic now."], ["op", "save"]]);
    const id = /creations\/([0-9a-f-]{36})/.exec(saved.location ?? "")?.[1] ?? "";
    expect((await getCreation(world.deps, accountId, id)).seedId).toBe(seed.id);
    expect((await b.get("/dashboard/compose?seed=00000000-0000-4000-8000-000000000000")).status).toBe(404);
  });

  test("an existing post opens in the composer; saving changes what was changed and keeps a version's own images set through the API", async () => {
    const c = await createCreationByHand(world.deps, accountId, {
      caption: "Leeks",
      images: [{ assetId: img(0), altText: "Leeks" }, { assetId: img(1), altText: "Trench" }],
      thread: [{ caption: "Earth them up." }],
      variants: { mastodon: { images: [{ assetId: img(2), altText: "Only on Mastodon" }] }, bluesky: { caption: "Leeks, for Bluesky" } },
    });
    const b = await signedIn();
    const r = await b.get(`/dashboard/creations/${c.id}/edit`);
    expect(r.status).toBe(200);
    expect(altOrder(r.text)).toEqual([img(0), img(1)]);
    expect(r.text).toContain(">Earth them up.</textarea>");
    const saved = await sendComposer(b, `/dashboard/creations/${c.id}/edit`, [
      ["caption", "Leeks, earthed up"],
      [`alt_post_${img(1)}`, "Trench"],
      [`alt_post_${img(0)}`, "Leeks"],
      ["part_caption_p1", "Earth them up."],
      ["first_comment", "Questions welcome"],
      ["op", "save"],
    ]);
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/dashboard/creations/${c.id}?notice=creation-saved`);
    const after = await getCreation(world.deps, accountId, c.id);
    expect(after.body.caption).toBe("Leeks, earthed up");
    expect(after.body.images.map((i) => i.assetId)).toEqual([img(1), img(0)]);
    expect(after.body.firstComment).toBe("Questions welcome");
    expect(after.body.variants.mastodon?.images?.map((i) => [i.assetId, i.altText])).toEqual([[img(2), "Only on Mastodon"]]);
    // A version for a network the account is not connected to is not shown, and not dropped either.
    expect(r.text).not.toContain("version_caption_bluesky");
    expect(after.body.variants.bluesky).toEqual({ caption: "Leeks, for Bluesky" });

    // Another account's post is not there.
    const theirs = await createCreationByHand(world.deps, otherAccountId, { caption: "Theirs" });
    expect((await b.get(`/dashboard/creations/${theirs.id}/edit`)).status).toBe(404);
    const refused = await sendComposer(b, `/dashboard/creations/${theirs.id}/edit`, [["caption", "Mine now"], ["op", "save"]]);
    expect(refused.status).toBe(404);
    expect((await getCreation(world.deps, otherAccountId, theirs.id)).body.caption).toBe("Theirs");
    await updateCreation(world.deps, accountId, c.id, { variants: null });
  });
});
