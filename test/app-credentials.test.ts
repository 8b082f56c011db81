/**
 * Network apps (decisions.md §12): the instance admin enters each network's app id and secret on the Instance page
 * (sealed at rest, shown only as "set" / "not set"), the environment's pair wins, and `appCredentials` is what every
 * sign-in reads. At the service, through the dashboard's forms, and in the configuration. SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { APP_NETWORKS, loadConfig } from "../src/config";
import { instanceSettings } from "../src/db/tables";
import { createAccount } from "../src/modules/accounts/service";
import { appCredentials, appCredentialsViews, clearAppCredentials, saveAppCredentials } from "../src/publishing/sign-in/app-credentials";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";

const X_ID = "eFhfY2xpZW50X2lkX2Zvcl90ZXN0cw";
const X_SECRET = "x-secret-Zq8s7D6f5G4h3J2k1L0mNbVcXz";
let world: World;

beforeAll(async () => {
  world = await createWorld({ env: { BASE_URL: "https://seedcast.bakery.test" } });
  await createAccount(world.deps, { name: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD, credits: 10 });
  await createAccount(world.deps, { name: "Other", email: "ben@other.test", password: PASSWORD, credits: 10 });
});
afterAll(async () => {
  await world.close();
});

async function storedColumn(): Promise<string | null> {
  const row = await world.deps.store.db.select({ sealed: instanceSettings.networkAppsSealed }).from(instanceSettings).where(eq(instanceSettings.id, 1)).get();
  return row?.sealed ?? null;
}

describe("app credentials at the service", () => {
  test("none set: every network answers null and shows not set", async () => {
    for (const network of APP_NETWORKS) expect(await appCredentials(world.deps, network)).toBeNull();
    expect(await appCredentials(world.deps, "mastodon")).toBeNull();
    expect((await appCredentialsViews(world.deps)).map((v) => v.source)).toEqual(APP_NETWORKS.map(() => "none"));
  });

  test("saved: answered to the sign-in, sealed at rest; empty fields keep; each network on its own; removed", async () => {
    await saveAppCredentials(world.deps, "x", { clientId: X_ID, clientSecret: X_SECRET });
    await saveAppCredentials(world.deps, "pinterest", { clientId: "1500001", clientSecret: "pin-secret-abc" });
    expect(await appCredentials(world.deps, "x")).toEqual({ clientId: X_ID, clientSecret: X_SECRET });
    expect(await appCredentials(world.deps, "linkedin")).toBeNull();
    const sealed = (await storedColumn())!;
    expect(sealed).not.toContain(X_SECRET);
    expect(sealed).not.toContain(X_ID);

    // A new secret alone keeps the id; nothing typed keeps both.
    await saveAppCredentials(world.deps, "x", { clientId: "", clientSecret: "x-secret-rotated-0001" });
    expect(await appCredentials(world.deps, "x")).toEqual({ clientId: X_ID, clientSecret: "x-secret-rotated-0001" });
    expect(await appCredentials(world.deps, "pinterest")).toEqual({ clientId: "1500001", clientSecret: "pin-secret-abc" });

    await clearAppCredentials(world.deps, "x");
    expect(await appCredentials(world.deps, "x")).toBeNull();
    expect(await appCredentials(world.deps, "pinterest")).not.toBeNull();
    await clearAppCredentials(world.deps, "pinterest");
    expect(await storedColumn()).toBeNull();
  });

  test("refused with the field named, nothing stored: a missing half, a value with spaces", async () => {
    await expect(saveAppCredentials(world.deps, "linkedin", { clientId: "86abc", clientSecret: "" })).rejects.toMatchObject({
      code: "invalid_request",
      extra: { details: [{ field: "clientSecret" }] },
    });
    await expect(saveAppCredentials(world.deps, "linkedin", { clientId: "86 abc", clientSecret: "s" })).rejects.toMatchObject({
      extra: { details: [{ field: "clientId" }] },
    });
    expect(await appCredentials(world.deps, "linkedin")).toBeNull();
  });
});

describe("the environment", () => {
  test("its pair wins over the page's, and is never printed with the configuration", async () => {
    const envWorld = await createWorld({ env: { X_CLIENT_ID: "env-client-id", X_CLIENT_SECRET: "env-secret-never-shown" } });
    try {
      await saveAppCredentials(envWorld.deps, "x", { clientId: "page-id", clientSecret: "page-secret" });
      expect(await appCredentials(envWorld.deps, "x")).toEqual({ clientId: "env-client-id", clientSecret: "env-secret-never-shown" });
      const view = (await appCredentialsViews(envWorld.deps)).find((v) => v.network === "x")!;
      expect(view).toEqual({ network: "x", source: "environment", storedOnPage: true });
      expect(JSON.stringify(envWorld.deps.config)).not.toContain("env-secret-never-shown");
      expect(Bun.inspect(envWorld.deps.config)).not.toContain("env-secret-never-shown");
    } finally {
      await envWorld.close();
    }
  });

  test("one variable of a pair without the other stops the start, naming both", () => {
    expect(() => loadConfig({ META_APP_ID: "123" })).toThrow("META_APP_ID and META_APP_SECRET are set together");
    expect(loadConfig({ THREADS_APP_ID: "1", THREADS_APP_SECRET: "s" }).networkApps.threads?.clientId).toBe("1");
  });
});

describe("the Instance page", () => {
  test("shows each network's redirect URI, scopes and console; saves a pair as set without showing it; admins only", async () => {
    const admin = new DashboardClient(world);
    expect((await admin.login("anna@bakery.test")).status).toBe(303);
    const before = await admin.get("/dashboard/instance");
    expect(before.status).toBe(200);
    for (const network of APP_NETWORKS) {
      expect(before.text).toContain(`id="app-${network}"`);
      expect(before.text).toContain(`https://seedcast.bakery.test/dashboard/connections/callback/${network}`);
    }
    expect(before.text).toContain("<code>media.write</code>");
    expect(before.text).toContain("https://developer.x.com/en/portal/dashboard");

    const saved = await admin.request("POST", "/dashboard/instance/apps/x", { _csrf: admin.csrf(), clientId: X_ID, clientSecret: X_SECRET });
    expect(saved.status).toBe(303);
    expect(await appCredentials(world.deps, "x")).toEqual({ clientId: X_ID, clientSecret: X_SECRET });
    const after = await admin.get("/dashboard/instance");
    expect(after.text).not.toContain(X_SECRET);
    expect(after.text).not.toContain(X_ID);
    expect(after.text).toMatch(/id="app-x"[\s\S]*?<span class="badge state-active">set<\/span> here\./);

    const halfMissing = await admin.request("POST", "/dashboard/instance/apps/threads", { _csrf: admin.csrf(), clientId: "77", clientSecret: "" });
    expect(halfMissing.status).toBe(400);
    expect(halfMissing.text).toContain("app&#39;s secret is needed");
    const unknown = await admin.request("POST", "/dashboard/instance/apps/myspace", { _csrf: admin.csrf(), clientId: "1", clientSecret: "2" });
    expect(unknown.status).toBe(404);

    const other = new DashboardClient(world);
    expect((await other.login("ben@other.test")).status).toBe(303);
    await other.get("/dashboard");
    const forbidden = await other.request("POST", "/dashboard/instance/apps/x", { _csrf: other.csrf(), clientId: "evil", clientSecret: "evil" });
    expect(forbidden.status).toBe(403);
    expect(await appCredentials(world.deps, "x")).toEqual({ clientId: X_ID, clientSecret: X_SECRET });

    const removed = await admin.request("POST", "/dashboard/instance/apps/x/clear", { _csrf: admin.csrf() });
    expect(removed.status).toBe(303);
    expect(await appCredentials(world.deps, "x")).toBeNull();
  });
});
