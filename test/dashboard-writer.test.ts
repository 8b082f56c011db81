/**
 * Nothing typed is lost (decisions.md §15), in the dashboard, in process: the offline writer's sentence on the post
 * page, the confirm step before a regenerate replaces hand-written text (a plain form, no script), earlier versions
 * with Restore, and editing a scheduled post's text from its page (the snapshot changes, the creation does not).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { generateCreation } from "../src/modules/creations/service";
import { createSeed } from "../src/modules/seeds/service";
import { schedulePost } from "../src/modules/schedule/service";
import { isoAt } from "../src/lib/clock";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";

const SECRET = "whsec-0123456789abcdef";
let world: World;
let accountId: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver({ secret: SECRET });
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  accountId = (await createAccount(world.deps, { name: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD, credits: 500 })).accountId;
});
afterAll(async () => {
  await world.close();
  await receiver.stop();
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login("anna@bakery.test")).status).toBe(303);
  return b;
}

async function generated(): Promise<string> {
  const seed = await createSeed(world.deps, accountId, {
    title: "Winter opening hours",
    content: "From December we open Mon–Sat 8:00–14:00. Rye loaf €4.50. Pre-order at https://bakery.example/order.",
    category: "announcement",
  });
  return (await generateCreation(world.deps, accountId, { type: "social_post", seed_id: seed.id })).creation.id;
}

const captionOf = async (id: string) => (await world.sql("SELECT caption FROM creations WHERE id = ?", id))[0].caption as string;

describe("the post page", () => {
  test("says a builtin caption was written offline; not once the caption is the person's own", async () => {
    const b = await signedIn();
    const id = await generated();
    const path = `/dashboard/creations/${id}`;
    const page = await b.get(path);
    expect(page.text.replace(/<[^>]+>/g, "")).toContain("Written offline from your own words; connect a language model in Settings → Instance for new wording.");
    expect(page.text).toContain('<a href="/dashboard/instance#model-title">Settings → Instance</a>'); // this owner is the instance admin
    expect(page.text).not.toContain('id="versions"');
    await b.submit(path, path, { caption: "Our winter hours: Mon–Sat 8:00–14:00. Rye loaf €4.50." });
    expect((await b.get(path)).text).not.toContain("Written offline");
  });

  test("a regenerate that would replace a hand-written caption asks first; the form works without script; Restore brings it back", async () => {
    const b = await signedIn();
    const id = await generated();
    const path = `/dashboard/creations/${id}`;
    const mine = "My own words: winter hours Mon–Sat 8:00–14:00, rye €4.50.";
    expect((await b.submit(path, path, { caption: mine })).location).toBe(`${path}?notice=creation-saved`);

    const asked = await b.submit(path, `${path}/regenerate`, { parts: "caption", change_instructions: "shorter" });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain("You wrote this post's caption by hand.");
    expect(asked.text).toContain('name="confirm" value="yes"');
    expect(asked.text).toContain('name="change_instructions" value="shorter"');
    expect(await captionOf(id)).toBe(mine);

    // An image-only regenerate replaces no hand-written text: no question.
    const imageOnly = await b.submit(path, `${path}/regenerate`, { parts: "image" });
    expect(imageOnly.location).toBe(`${path}?notice=regenerated`);

    const confirmed = await b.request("POST", `${path}/regenerate`, { _csrf: b.csrf(), parts: "caption", change_instructions: "shorter", confirm: "yes" });
    expect(confirmed.location).toBe(`${path}?notice=regenerated`);
    const regenerated = await captionOf(id);
    expect(regenerated).not.toBe(mine);

    const shown = await b.get(path);
    expect(shown.text).toContain('id="versions"');
    expect(shown.text).toContain("written by hand");
    const restore = new RegExp(`action="(${path}/versions/[0-9a-f-]{36}/restore)"`).exec(shown.text.slice(shown.text.indexOf(mine.slice(0, 20))));
    expect(restore?.[1]).toBeDefined();
    const restored = await b.request("POST", restore![1]!, { _csrf: b.csrf() });
    expect(restored.location).toBe(`${path}?notice=version-restored`);
    expect(await captionOf(id)).toBe(mine);
    const versions = await world.sql("SELECT caption FROM creation_versions WHERE creation_id = ? ORDER BY id DESC", id);
    expect(versions[0].caption).toBe(regenerated);
  });
});

describe("a scheduled post's page", () => {
  test("edits the text it sends: the post's snapshot changes, the creation does not; an empty caption is refused beside its field", async () => {
    const b = await signedIn();
    const id = await generated();
    const hook = await addConnection(world.deps, { accountId, platform: "webhook", url: `${receiver.url}/bakery`, secret: SECRET });
    const { post } = await schedulePost(world.deps, accountId, { creationId: id, scheduledTime: isoAt(world.clock.now() + 3600_000), targets: [hook.accountId] });
    const path = `/dashboard/calendar/posts/${post.id}`;
    const page = await b.get(path);
    expect(page.text).toContain("Edit what it sends");

    const empty = await b.submit(path, `${path}/content`, { caption: "  " });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('id="caption-error">Write a caption; it cannot be empty.</p>');

    const before = await captionOf(id);
    const saved = await b.submit(path, `${path}/content`, { caption: "Tomorrow: Mon–Sat 8:00–14:00 all winter." });
    expect(saved.location).toBe(`${path}?notice=post-content-saved`);
    expect((await world.sql("SELECT caption FROM scheduled_posts WHERE id = ?", post.id))[0].caption).toBe("Tomorrow: Mon–Sat 8:00–14:00 all winter.");
    expect(await captionOf(id)).toBe(before);
    expect((await b.get(path)).text).toContain("Tomorrow: Mon–Sat 8:00–14:00 all winter.");
  });
});
