/**
 * Discord (a channel webhook) and Telegram (a bot and a channel) end to end against stand-ins written from the
 * networks' docs and held to their official descriptions (test/peers/discord, test/peers/telegram: every request our
 * client sends is validated there; `violations` must stay empty). Reached through PLATFORM_ORIGIN_OVERRIDES, as a
 * deployment would reach a mirror. Connect and check, each bad input's sentence with nothing stored, a post with 2
 * images (alt text) and a 2-part thread delivered once and read back, cancel before it is due, and the `unconfirmed`
 * state: an answer cut off after the network stored the message is never resent; a person answers "It was posted" or
 * "Send again" (which resumes after the parts already out).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { AppError } from "../src/lib/errors";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { addConnection, listConnections } from "../src/modules/connections/service";
import { parseWebhookUrl } from "../src/publishing/networks/discord/client";
import { discordConnector } from "../src/publishing/networks/discord/connector";
import { postingProblem, telegramConnector } from "../src/publishing/networks/telegram/connector";
import { runDueOnce } from "../src/publishing/dispatcher";
import { openConnection } from "../src/store/connections";
import { DashboardClient } from "./helpers/dashboard-client";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type DiscordStandIn, startDiscordStandIn } from "./peers/discord/server";
import { type TelegramStandIn, startTelegramStandIn } from "./peers/telegram/server";
import { postRows, solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
let world: World;
let discord: DiscordStandIn;
let telegram: TelegramStandIn;

beforeAll(async () => {
  discord = startDiscordStandIn();
  telegram = startTelegramStandIn();
  // ALLOW_PRIVATE_HOSTS: an event webhook on 127.0.0.1 is accepted (its events are read from the outbox here).
  world = await createWorld({
    env: { PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`, ALLOW_PRIVATE_HOSTS: "127.0.0.1" },
  });
});

afterAll(async () => {
  await world.close();
  await discord.stop();
  await telegram.stop();
});

afterEach(() => {
  // Every request Seedcast sent conformed to the network's description, and so did every answer the stand-ins gave.
  expect(discord.violations).toEqual([]);
  expect(telegram.violations).toEqual([]);
});

/** A post of the account's with 2 images (each with its alt text) and a 2-part thread, scheduled to `targets`. */
async function schedulePost(acct: TestAccount, targets: string[], caption: string, inMs = HOUR) {
  const first = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(320, 200), fileName: "first" });
  const second = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(200, 320), fileName: "second" });
  // Written by hand through the API (decisions.md §13): 2 images with their alt text, 2 thread parts.
  const made = await world.call("POST", "/api/v1/creations", {
    key: acct.key,
    body: {
      type: "social_post",
      caption,
      images: [
        { asset_id: first.id, alt_text: "A blue field, wide" },
        { asset_id: second.id, alt_text: "A blue field, tall" },
      ],
      thread: [{ caption: `${caption} (2/3)` }, { caption: `${caption} (3/3)` }],
    },
  });
  expect(made.status).toBe(201);
  const res = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + inMs), targets },
  });
  expect(res.status).toBe(200);
  return res.json.post as { id: string; targets: { accountId: string; platform: string }[] };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("Discord webhook URLs", () => {
  test("the forms Discord hands out are taken; anything else gets a sentence saying where to copy it", () => {
    const token = "AbCdEf0123456789_-AbCdEf0123456789AbCdEf0123456789AbCdEf01234567";
    for (const url of [
      `https://discord.com/api/webhooks/112233445566778899/${token}`,
      `https://discordapp.com/api/webhooks/112233445566778899/${token}`,
      `https://ptb.discord.com/api/webhooks/112233445566778899/${token}`,
      `https://canary.discord.com/api/v10/webhooks/112233445566778899/${token}/`,
      ` https://discord.com/api/webhooks/112233445566778899/${token}?wait=true `,
    ]) {
      expect(parseWebhookUrl(url), url).toEqual({ id: "112233445566778899", token });
    }
    for (const url of [
      "",
      "https://example.com/api/webhooks/112233445566778899/abc",
      `http://discord.com/api/webhooks/112233445566778899/${token}`,
      `https://discord.com/api/webhooks/112233445566778899/${token}/slack`,
      "https://discord.com/channels/1/2",
      `https://evil.discord.com.example/api/webhooks/112233445566778899/${token}`,
    ]) {
      const parsed = parseWebhookUrl(url);
      expect("problem" in parsed, url).toBe(true);
    }
    expect((parseWebhookUrl("https://example.com") as { problem: string }).problem).toContain("Copy Webhook URL");
  });
});

describe("Discord end to end", () => {
  let acct: TestAccount;
  let connectionId: string;

  beforeAll(async () => {
    acct = await world.createAccount();
  });

  test("connect: the webhook is read back (its name becomes the label); the token is sealed, never the endpoint", async () => {
    const hook = discord.addWebhook("Garden club news");
    const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "discord", webhookUrl: hook.url });
    expect(view).toMatchObject({ platform: "discord", label: "Garden club news", readyToPost: true, blockedReason: null });
    connectionId = view.accountId;
    const [row] = await world.sql("SELECT endpoint, credentials_sealed, meta FROM connections WHERE id = ?", connectionId);
    expect(row!.endpoint).toBe(`https://discord.com/api/webhooks/${hook.id}`);
    expect(row!.credentials_sealed).not.toContain(hook.token);
    expect(JSON.parse(row!.meta)).toMatchObject({ discordChannelId: hook.channelId, discordGuildId: hook.guildId });
    expect(discord.requests).toContain(`GET /api/v10/webhooks/${hook.id}/***`);
  });

  test("bad inputs: not a webhook URL, a webhook Discord does not know, the same webhook twice: a sentence each, nothing stored", async () => {
    const other = await world.createAccount();
    const notUrl = await refusal(addConnection(world.deps, { accountId: other.accountId, platform: "discord", webhookUrl: "https://example.com/hook" }));
    expect(notUrl.extra.details).toEqual([{ field: "webhookUrl", problem: expect.stringContaining("This is not a Discord webhook URL.") }]);
    const gone = discord.addWebhook("Deleted");
    discord.webhooks.splice(discord.webhooks.findIndex((w) => w.id === gone.id), 1);
    const unknown = await refusal(addConnection(world.deps, { accountId: other.accountId, platform: "discord", webhookUrl: gone.url }, { keepWhenNotReady: true }));
    expect(unknown.message).toContain("Discord does not know this webhook (Unknown Webhook)");
    const wrongToken = discord.addWebhook("Wrong token");
    const badToken = await refusal(
      addConnection(world.deps, { accountId: other.accountId, platform: "discord", webhookUrl: wrongToken.url.replace(/.{4}$/, "zzzz") }, { keepWhenNotReady: true }),
    );
    expect(badToken.message).toContain("Invalid Webhook Token");
    expect(await listConnections(world.deps, other.accountId)).toEqual([]);
    const garden = discord.webhooks.find((w) => w.name === "Garden club news")!;
    const sameHook = `https://discordapp.com/api/v10/webhooks/${garden.id}/${garden.token}`;
    const again = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "discord", webhookUrl: sameHook }));
    expect(again.message).toContain("already connected");
  });

  test("a post with 2 images (alt text as each attachment's description) and a 2-part thread goes out once, in order", async () => {
    const post = await schedulePost(acct, ["discord"], "Seed swap on Saturday");
    const before = discord.messages.length;
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    await runDueOnce(world.deps);
    const sent = discord.messages.slice(before);
    expect(sent.map((m) => m.content)).toEqual(["Seed swap on Saturday", "Seed swap on Saturday (2/3)", "Seed swap on Saturday (3/3)"]);
    expect(sent[0]!.attachments.map((a) => [a.filename, a.description])).toEqual([
      ["image-1.png", "A blue field, wide"],
      ["image-2.png", "A blue field, tall"],
    ]);
    expect(sent.slice(1).every((m) => m.attachments.length === 0)).toBe(true);
    const { targets } = await postRows(world.deps, post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: sent[0]!.id, partsOut: sent.map((m) => m.id) });
    const hook = discord.webhooks.find((w) => w.name === "Garden club news")!;
    expect(targets[0]!.publishedUrl).toBe(`https://discord.com/channels/${hook.guildId}/${hook.channelId}/${sent[0]!.id}`);
    expect((await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: acct.key })).json.post.status).toBe("published");
  });

  test("withdraw deletes the message the webhook sent (delete_webhook_message); a second time answers false", async () => {
    const [row] = await listConnections(world.deps, acct.accountId);
    const open = openConnection(world.deps, row!);
    const message = discord.messages.find((m) => m.content === "Seed swap on Saturday")!;
    expect(await discordConnector.withdraw(world.deps, open, message.id)).toBe(true);
    expect(message.deleted).toBe(true);
    expect(await discordConnector.withdraw(world.deps, open, message.id)).toBe(false);
  });

  test("cancel before it is due: nothing is sent", async () => {
    const post = await schedulePost(acct, ["discord"], "Cancelled swap");
    const before = discord.messages.length;
    const del = await world.call("DELETE", `/api/v1/schedule/${post.id}`, { key: acct.key });
    expect(del.json).toEqual({ id: post.id, cancelled: true, providerPostWithdrawn: false });
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    expect(discord.messages.length).toBe(before);
  });

  test("an answer cut off after Discord stored the message: unconfirmed, never resent; Send again resumes after the parts out", async () => {
    const post = await schedulePost(acct, ["discord"], "Plant sale");
    const before = discord.messages.length;
    world.clock.advance(HOUR + 1000);
    // The first message goes out and is answered; the second is stored but its answer is cut off.
    discord.mode.cutAfter = 1;
    discord.mode.storeThenCut = 1;
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, post.id)).targets[0]!.partsOut).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      world.clock.advance(HOUR);
      await runDueOnce(world.deps);
    }
    const sent = discord.messages.slice(before);
    expect(sent.map((m) => m.content)).toEqual(["Plant sale", "Plant sale (2/3)"]);
    const read = (await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: acct.key })).json.post;
    expect(read.status).toBe("unconfirmed");
    expect(read.targets[0].status).toBe("unconfirmed");
    expect(read.targets[0].errorMessage).toContain("Discord did not confirm whether this went out");
    expect(read.targets[0].errorMessage).toContain("1 of 3 messages were confirmed; message 2 may or may not have gone out.");
    expect(read.errorMessage).toContain("Garden club news");
    for (const hook of discord.webhooks) expect(JSON.stringify(read)).not.toContain(hook.token);
    const [notice] = await world.sql("SELECT kind, title FROM notices WHERE account_id = ? AND kind = 'post_unconfirmed'", acct.accountId);
    expect(notice?.title).toContain("Check whether a post went out");

    // The person looked: part 2 did not show up for them (say), so: Send again. It resumes at part 2.
    const again = await world.call("POST", `/api/v1/schedule/${post.id}/targets/${read.targets[0].accountId}/resolve`, { key: acct.key, body: { outcome: "send_again" } });
    expect(again.status).toBe(200);
    expect(again.json.post.status).toBe("scheduled");
    await runDueOnce(world.deps);
    expect(discord.messages.slice(before).map((m) => m.content)).toEqual(["Plant sale", "Plant sale (2/3)", "Plant sale (2/3)", "Plant sale (3/3)"]);
    const done = (await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: acct.key })).json.post;
    expect(done).toMatchObject({ status: "published", targets: [{ status: "published", providerPostId: sent[0]!.id }] });
    const twice = await world.call("POST", `/api/v1/schedule/${post.id}/targets/${read.targets[0].accountId}/resolve`, { key: acct.key, body: { outcome: "posted" } });
    expect(twice.status).toBe(409);
    expect(twice.json.error).toBe("not_unconfirmed");
  });

});

describe("Telegram: who may post where (#getchatmember)", () => {
  const user = { id: 1, is_bot: true, first_name: "bot" };
  const group = { id: -100123, type: "supergroup" as const, title: "Growers" };
  test.each([
    ["channel owner", { id: -1, type: "channel" as const, username: "c" }, { status: "creator" as const, user }, null],
    ["channel admin with Post messages", { id: -1, type: "channel" as const, username: "c" }, { status: "administrator" as const, user, can_post_messages: true }, null],
    ["channel admin without it", { id: -1, type: "channel" as const, username: "c" }, { status: "administrator" as const, user, can_post_messages: false }, 'turn on "Post messages"'],
    ["channel member", { id: -1, type: "channel" as const, title: "Private" }, { status: "member" as const, user }, 'Add @b to the channel "Private" as an administrator'],
    ["group member, members may send", { ...group, permissions: { can_send_messages: true } }, { status: "member" as const, user }, null],
    ["group member, members may not send", { ...group, permissions: { can_send_messages: false } }, { status: "member" as const, user }, "may not send messages"],
    ["group member restricted", group, { status: "restricted" as const, user, is_member: true, can_send_messages: false, can_send_photos: false }, "may not send messages"],
    ["left the group", group, { status: "left" as const, user }, 'Add @b to the group "Growers"'],
    ["a private chat", { id: 5, type: "private" as const }, { status: "member" as const, user }, "enter a channel or a group"],
  ])("%s", (_name, chat, member, expected) => {
    const problem = postingProblem(chat, member, "@b");
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toContain(expected);
  });
});

describe("Telegram end to end", () => {
  let acct: TestAccount;
  let bot: ReturnType<TelegramStandIn["addBot"]>;

  beforeAll(async () => {
    acct = await world.createAccount();
    bot = telegram.addBot("garden_news_bot");
    telegram.addChannel("gardennews", bot);
  });

  test("connect: getMe, getChat, getChatMember; the channel's @name is the label; its id and the bot are remembered", async () => {
    const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "telegram", botToken: bot.token, chat: "https://t.me/gardennews" });
    expect(view).toMatchObject({ platform: "telegram", label: "@gardennews", readyToPost: true, blockedReason: null });
    const [row] = await world.sql("SELECT endpoint, credentials_sealed, meta FROM connections WHERE id = ?", view.accountId);
    expect(row!.endpoint).toBe("https://api.telegram.org");
    expect(row!.credentials_sealed).not.toContain(bot.token);
    expect(JSON.parse(row!.meta)).toMatchObject({ telegramChatId: String(telegram.chats[0]!.id), telegramChatType: "channel", telegramBotUsername: "garden_news_bot" });
    expect(telegram.calls.slice(0, 3)).toEqual(["getMe", "getChat", "getChatMember"]);
  });

  test("bad inputs: not a token, a wrong token, an unknown channel, a bot that is not an admin (or may not post): a sentence each, nothing stored", async () => {
    const other = await world.createAccount();
    const add = (botToken: string, chat: string) => addConnection(world.deps, { accountId: other.accountId, platform: "telegram", botToken, chat }, { keepWhenNotReady: false });
    const notToken = await refusal(add("my bot", "@gardennews"));
    expect(notToken.extra.details).toEqual([{ field: "botToken", problem: expect.stringContaining("This is not a bot token.") }]);
    const notChat = await refusal(add(bot.token, "garden news!"));
    expect(notChat.extra.details).toEqual([{ field: "chat", problem: expect.stringContaining("This is not a channel name or id") }]);
    const wrong = await refusal(add(`${bot.id}:AAE${"x".repeat(32)}`, "@gardennews"));
    expect(wrong.extra.details).toEqual([{ field: "botToken", problem: expect.stringContaining("Telegram does not accept this bot token.") }]);
    const unknown = await refusal(add(bot.token, "@nosuchchannel"));
    expect(unknown.extra.details).toEqual([{ field: "chat", problem: expect.stringContaining("Telegram cannot find @nosuchchannel for @garden_news_bot") }]);
    const outsider = telegram.addBot("outsider_bot");
    telegram.addChannel("outsiders", outsider, { status: "member" });
    const member = await refusal(add(outsider.token, "@outsiders"));
    expect(member.extra.details).toEqual([
      { field: "chat", problem: 'Add @outsider_bot to the channel @outsiders as an administrator with "Post messages" (channel settings → Administrators → Add Admin).' },
    ]);
    const mute = telegram.addBot("mute_bot");
    telegram.addChannel("mutes", mute, { status: "administrator", canPost: false });
    const noPost = await refusal(add(mute.token, "@mutes"));
    expect(noPost.extra.details).toEqual([
      { field: "chat", problem: '@mute_bot is an administrator of @mutes but may not post: in the channel\'s settings → Administrators → @mute_bot, turn on "Post messages".' },
    ]);
    expect(await listConnections(world.deps, other.accountId)).toEqual([]);
    // The same channel again (by its id this time), whichever bot: already connected.
    const again = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "telegram", botToken: bot.token, chat: String(telegram.chats[0]!.id) }));
    expect(again.message).toContain("@gardennews is already connected");
  });

  test("caption limits depend on the content: 1,024 with media, 4,096 without", async () => {
    const [row] = await listConnections(world.deps, acct.accountId);
    const open = openConnection(world.deps, row!);
    expect(telegramConnector.captionLimit(open, { images: 2 })?.maxGraphemes).toBe(1024);
    expect(telegramConnector.captionLimit(open, { images: 0 })?.maxGraphemes).toBe(4096);
    expect(telegramConnector.captionLimit(open)?.maxGraphemes).toBe(1024);
    // At scheduling, per part: 2,000 characters go as text alone, not as a photo's caption.
    const long = "w".repeat(2000);
    const image = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(64, 48), fileName: "small" });
    const schedule = async (body: Record<string, unknown>) => {
      const made = await world.call("POST", "/api/v1/creations", { key: acct.key, body: { type: "social_post", ...body } });
      return world.call("POST", "/api/v1/schedule", {
        key: acct.key,
        body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: ["telegram"] },
      });
    };
    const textOnly = await schedule({ caption: "Short", thread: [{ caption: long }] });
    expect(textOnly.status).toBe(200);
    await world.call("DELETE", `/api/v1/schedule/${textOnly.json.post.id}`, { key: acct.key });
    const withPhoto = await schedule({ caption: "Short", thread: [{ caption: long, images: [{ asset_id: image.id }] }] });
    expect(withPhoto.status).toBe(409);
    expect(withPhoto.json.problems).toEqual([
      { accountId: row!.id, platform: "telegram", field: "thread[0].caption", problem: "thread part 1 is 2000 characters; Telegram (@gardennews) allows 1024" },
    ]);
  });

  test("2 images become one media group (caption on the first, uploaded as multipart files), the thread the following messages, once", async () => {
    const post = await schedulePost(acct, ["telegram"], "Seedlings for everyone");
    const before = telegram.messages.length;
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    await runDueOnce(world.deps);
    const sent = telegram.messages.slice(before);
    expect(sent.map((m) => [m.caption ?? m.text, m.photos.length, m.mediaGroupId !== null])).toEqual([
      ["Seedlings for everyone", 1, true],
      [null, 1, true],
      ["Seedlings for everyone (2/3)", 0, false],
      ["Seedlings for everyone (3/3)", 0, false],
    ]);
    expect(sent[0]!.photos[0]!.type).toBe("image/png");
    const { targets } = await postRows(world.deps, post.id);
    const ids = sent.map((m) => String(m.messageId));
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: `${ids[0]},${ids[1]}`, partsOut: [`${ids[0]},${ids[1]}`, ids[2], ids[3]] });
    expect(targets[0]!.publishedUrl).toBe(`https://t.me/gardennews/${ids[0]}`);
    expect(telegram.calls.filter((c) => c.startsWith("send")).slice(-3)).toEqual(["sendMediaGroup", "sendMessage", "sendMessage"]);
  });

  test("withdraw deletes every message of the part (a media group's ids together); a second time answers false", async () => {
    const [row] = await listConnections(world.deps, acct.accountId);
    const open = openConnection(world.deps, row!);
    const group = telegram.messages.filter((m) => m.mediaGroupId !== null).slice(0, 2);
    const id = group.map((m) => m.messageId).join(",");
    expect(await telegramConnector.withdraw(world.deps, open, id)).toBe(true);
    expect(group.every((m) => m.deleted)).toBe(true);
    expect(await telegramConnector.withdraw(world.deps, open, id)).toBe(false);
  });

  test("cancel before it is due: nothing is sent", async () => {
    const post = await schedulePost(acct, ["telegram"], "Not this one");
    const before = telegram.messages.length;
    const del = await world.call("DELETE", `/api/v1/schedule/${post.id}`, { key: acct.key });
    expect(del.json.cancelled).toBe(true);
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    expect(telegram.messages.length).toBe(before);
  });

  test("an unknown outcome is unconfirmed and never resent; It was posted makes it published with the pasted URL", async () => {
    // An API client is told both steps: post.unconfirmed when nobody can tell, post.published once a person answers.
    const hook = await world.call("POST", "/api/v1/webhooks", {
      key: acct.key,
      body: { url: "http://127.0.0.1:9/events", events: ["post.unconfirmed", "post.published", "post.failed"] },
    });
    expect(hook.status).toBe(201);
    const post = await schedulePost(acct, ["telegram"], "Compost workshop");
    const before = telegram.messages.length;
    telegram.mode.storeThenCut = 1;
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    for (let i = 0; i < 3; i++) {
      world.clock.advance(HOUR);
      await runDueOnce(world.deps);
    }
    // The media group was stored (2 messages) but never confirmed: nothing after it, nothing twice.
    expect(telegram.messages.length - before).toBe(2);
    const read = (await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: acct.key })).json.post;
    expect(read).toMatchObject({ status: "unconfirmed", targets: [{ status: "unconfirmed", providerPostId: null }] });
    expect(read.targets[0].errorMessage).toContain("Telegram did not confirm whether this went out");
    expect(read.targets[0].errorMessage).toContain('answer "It was posted" or "Send again"');
    expect(JSON.stringify(read)).not.toContain(bot.token);
    // It may be in the channel already: cancelling would delete the only record of it.
    const cancel = await world.call("DELETE", `/api/v1/schedule/${post.id}`, { key: acct.key });
    expect(cancel.status).toBe(409);
    expect(cancel.json).toMatchObject({ error: "already_published", message: expect.stringContaining("It was posted") });
    const url = `https://t.me/gardennews/${telegram.messages[before]!.messageId}`;
    const answered = await world.call("POST", `/api/v1/schedule/${post.id}/targets/${read.targets[0].accountId}/resolve`, {
      key: acct.key,
      body: { outcome: "posted", published_url: url },
    });
    expect(answered.status).toBe(200);
    expect(answered.json.post).toMatchObject({ status: "published", targets: [{ status: "published", publishedUrl: url, errorMessage: null }] });
    const events = (await world.sql<{ type: string; body: string }>("SELECT type, body FROM webhook_events WHERE account_id = ? ORDER BY created_at, id", acct.accountId))
      .map((e) => ({ type: e.type, ...JSON.parse(e.body) }))
      .filter((e) => e.data.post.id === post.id);
    expect(events.map((e) => e.type)).toEqual(["post.unconfirmed", "post.published"]);
    expect(events[0].data.post).toMatchObject({ status: "unconfirmed", targets: [{ status: "unconfirmed" }] });
    expect(events[0].data.post.errorMessage).toContain("Telegram did not confirm whether this went out");
    expect(events[1].data.post).toMatchObject({ status: "published", targets: [{ status: "published", publishedUrl: url }] });
    expect(JSON.stringify(events)).not.toContain(bot.token);
    const bad = await world.call("POST", `/api/v1/schedule/${post.id}/targets/${read.targets[0].accountId}/resolve`, { key: acct.key, body: { outcome: "maybe" } });
    expect(bad.status).toBe(400);
    expect(telegram.messages.length - before).toBe(2);
  });

  test("a weekly post left unconfirmed holds its series: no next week until a person answers, and the post page says so", async () => {
    const made = await world.call("POST", "/api/v1/creations", { key: acct.key, body: { type: "social_post", caption: "Compost tip of the week" } });
    expect(made.status).toBe(201);
    // On a whole minute: a series keeps the wall-clock time to the minute.
    const first = Math.ceil((world.clock.now() + HOUR) / 60_000) * 60_000;
    const res = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(first), targets: ["telegram"], repeat: { every: "week" } },
    });
    expect(res.status).toBe(200);
    const { id, seriesId } = res.json.post;
    expect(seriesId).toEqual(expect.any(String));
    const occurrences = () => world.sql<{ id: string; status: string; scheduled_time: unknown }>("SELECT id, status, scheduled_time FROM scheduled_posts WHERE series_id = ? ORDER BY scheduled_time", seriesId);
    telegram.mode.storeThenCut = 1;
    world.clock.advance(first - world.clock.now() + 1000);
    await runDueOnce(world.deps);
    for (let i = 0; i < 3; i++) {
      world.clock.advance(HOUR);
      await runDueOnce(world.deps);
    }
    expect((await occurrences()).map((o) => [o.id, o.status])).toEqual([[id, "unconfirmed"]]);

    // The post page (the person's view of it) says why no next week is on the calendar yet.
    const [owner] = await world.sql<{ email: string }>("SELECT email FROM users WHERE id = ?", acct.userId);
    const b = new DashboardClient(world);
    expect((await b.login(owner!.email)).status).toBe(303);
    const page = await b.get(`/dashboard/calendar/posts/${id}`);
    expect(page.text).toContain("This post repeats: its next time is scheduled once you have answered.");

    const resolved = await world.call("POST", `/api/v1/schedule/${id}/targets/${res.json.post.targets[0].accountId}/resolve`, { key: acct.key, body: { outcome: "posted" } });
    expect(resolved.status).toBe(200);
    const after = await occurrences();
    expect(after.map((o) => o.status)).toEqual(["published", "scheduled"]);
    expect(Number(after[1]!.scheduled_time)).toBe(first + 7 * 24 * HOUR);
    // A page of a post that does not repeat says nothing of the kind (the one-off test above left none unconfirmed).
    expect((await b.get(`/dashboard/calendar/posts/${after[1]!.id}`)).text).not.toContain("This post repeats");
  });
});
