/**
 * The dashboard's side of the connector: the overview shows `{base_url}/mcp` with a copy button, and "Connected apps"
 * lists the account's grants (client, groups capped by the role now, who granted, created, last used) with Revoke,
 * which the app feels at its next request. Other accounts never see or revoke them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setMemberRole } from "../src/modules/accounts/service";
import { authenticateAccessToken } from "../src/modules/oauth/access-token";
import { registerClient } from "../src/modules/oauth/clients";
import { createGrant } from "../src/modules/oauth/service";
import { FormBrowser, PASSWORD, type Person, type ServedWorld, memberOf, ownerWithAccount, parseForms, servedWorld } from "./helpers/oauth";

let world: ServedWorld;
let owner: Person;
let clientId: string;

beforeAll(async () => {
  world = await servedWorld();
  owner = await ownerWithAccount(world, "Dash Co");
  clientId = (await registerClient(world.deps, { client_name: "Claude", redirect_uris: ["https://claude.ai/api/mcp/auth_callback"], token_endpoint_auth_method: "none" })).client_id;
});
afterAll(() => world.stop());

async function signedIn(person: Person): Promise<FormBrowser> {
  const browser = new FormBrowser(world.base);
  const login = parseForms(await (await browser.get("/login")).text()).find((f) => f.action === "/login")!;
  const answer = await browser.submit(login, { extra: [["email", person.email], ["password", PASSWORD]] });
  expect(answer.status).toBe(303);
  return browser;
}

describe("overview", () => {
  test("shows the connector address with a copy button", async () => {
    const page = await (await (await signedIn(owner)).get("/dashboard")).text();
    expect(page).toContain(`value="${world.base}/mcp"`);
    expect(page).toContain('data-copy="connector-url"');
    expect(page).toContain('href="/dashboard/apps"');
  });
});

describe("connected apps", () => {
  test("lists grants with client, groups, who and when; Revoke applies at the next request", async () => {
    const editor = await memberOf(world, owner.accountId, "editor");
    const mine = await createGrant(world.deps, { clientId, accountId: owner.accountId, userId: owner.userId, scopes: ["read", "schedule"] });
    const theirs = await createGrant(world.deps, { clientId, accountId: owner.accountId, userId: editor.userId, scopes: ["read", "create", "voice"] });
    await authenticateAccessToken(world.deps, mine.accessToken);
    await setMemberRole(world.deps, editor.userId, "viewer", owner.accountId);

    const browser = await signedIn(owner);
    const page = await (await browser.get("/dashboard/apps")).text();
    expect(page).toContain("Claude");
    expect(page).toContain("claude.ai");
    expect(page).toContain("Read access, Scheduling");
    expect(page).toContain(editor.email);
    expect(page).toContain(`/dashboard/apps/${theirs.grantId}/revoke`);
    // The editor became a viewer: their app now holds read only, and the page says so.
    expect(page).not.toContain("Read access, Content creation, Brand voice");
    expect(page).toMatch(/<td data-label="Last used"><time/);

    const confirm = await browser.get(`/dashboard/apps/${mine.grantId}/revoke`);
    const form = parseForms(await confirm.text()).find((f) => f.action === `/dashboard/apps/${mine.grantId}/revoke`)!;
    const done = await browser.submit(form);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/dashboard/apps?notice=app-revoked");
    expect(await authenticateAccessToken(world.deps, mine.accessToken)).toBeNull();
    expect(await authenticateAccessToken(world.deps, theirs.accessToken)).not.toBeNull();
    const after = await (await browser.get("/dashboard/apps?notice=app-revoked")).text();
    expect(after).toContain("disconnected");
    expect(after).not.toContain(`/dashboard/apps/${mine.grantId}/revoke`);
  });

  test("a non-owner cannot revoke someone else's app; the revoke POST needs the CSRF token; other accounts get 404", async () => {
    const grant = await createGrant(world.deps, { clientId, accountId: owner.accountId, userId: owner.userId, scopes: ["read"] });
    const viewer = await memberOf(world, owner.accountId, "viewer");
    const viewerBrowser = await signedIn(viewer);
    expect((await viewerBrowser.get(`/dashboard/apps/${grant.grantId}/revoke`)).status).toBe(403);

    const ownerBrowser = await signedIn(owner);
    expect((await ownerBrowser.post(`/dashboard/apps/${grant.grantId}/revoke`, [["_csrf", "forged"]])).status).toBe(403);
    expect(await authenticateAccessToken(world.deps, grant.accessToken)).not.toBeNull();

    const stranger = await ownerWithAccount(world, "Stranger Co");
    const strangerBrowser = await signedIn(stranger);
    expect(await (await strangerBrowser.get("/dashboard/apps")).text()).not.toContain(grant.grantId);
    expect((await strangerBrowser.get(`/dashboard/apps/${grant.grantId}/revoke`)).status).toBe(404);
    expect(await authenticateAccessToken(world.deps, grant.accessToken)).not.toBeNull();
  });
});
