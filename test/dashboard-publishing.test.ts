/**
 * The dashboard as a publishing tool, in process (app.handle, manual clock): seeds written, searched, edited and
 * deleted with errors beside their fields; generating from a seed; the person's time zone; keys minted once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount } from "../src/modules/accounts/service";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";

let world: World;
let accountId = "";

beforeAll(async () => {
  world = await createWorld();
  accountId = (await createAccount(world.deps, { name: "Garden Club", email: "gc@garden.test", password: PASSWORD })).accountId;
});
afterAll(() => world.close());

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
    expect(world.deps.sqlite.query("SELECT count(*) AS n FROM seeds").get()).toEqual({ n: 0 });
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
    const row = world.deps.sqlite.query("SELECT aspect_ratio AS a, media_style AS m, image_asset_id AS img FROM creations").get() as { a: string; m: string; img: string | null };
    expect(row.a).toBe("portrait");
    expect(row.m).toBe("bold");
    expect(row.img).not.toBeNull();
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
});
