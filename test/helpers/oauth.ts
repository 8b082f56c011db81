/**
 * Helpers for the OAuth tests: the app served on a real socket the way `seedcast serve` serves it (Bun.serve on
 * 127.0.0.1 with the app's routes and fallback, BASE_URL = its own address),
 * a person with a known password, and a small cookie-keeping "browser" made of fetch that signs in on the dashboard's
 * login page and submits the consent form the way a browser would (reading the forms' hidden fields, CSRF included).
 */
import type { Server } from "bun";
import { addMember, createAccount } from "../../src/modules/accounts/service";
import { type World, createWorld } from "./world";

export const PASSWORD = "correct horse battery";

export interface ServedWorld extends World {
  /** `http://127.0.0.1:<port>` = BASE_URL = the issuer. */
  base: string;
  server: Server<undefined>;
  stop(): Promise<void>;
}

/** A world whose app listens on 127.0.0.1 with BASE_URL set to that address. */
export async function servedWorld(env: Record<string, string> = {}): Promise<ServedWorld> {
  let world: World | null = null;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) => (world ? world.app.handle(request) : new Response("starting", { status: 503 })),
  });
  const base = `http://127.0.0.1:${server.port}`;
  world = await createWorld({ env: { BASE_URL: base, ...env } });
  const w = world;
  // As `seedcast serve` does: Bun's router for the app's routes, the pipeline's handle for the rest.
  server.reload({ routes: w.app.servedRoutes(), fetch: (request) => w.app.handle(request) });
  return Object.assign(w, {
    base,
    server,
    async stop() {
      await server.stop(true);
      await w.close();
    },
  });
}

export interface Person {
  email: string;
  userId: string;
  accountId: string;
}

let people = 0;

/** An account with its owner, whose email and password are known. */
export async function ownerWithAccount(world: World, name = "Acme"): Promise<Person> {
  people += 1;
  const email = `person${people}-${crypto.randomUUID().slice(0, 6)}@example.test`;
  const created = await createAccount(world.deps, { name, email, password: PASSWORD, credits: 100 });
  return { email, ...created };
}

/** A new person added to `accountId` with `role`. */
export async function memberOf(world: World, accountId: string, role: "owner" | "editor" | "viewer"): Promise<Person> {
  people += 1;
  const email = `member${people}-${crypto.randomUUID().slice(0, 6)}@example.test`;
  const { userId } = await addMember(world.deps, { accountId, email, password: PASSWORD, role });
  return { email, userId, accountId };
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const unescape = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);

/** One <form> of a page: its method, action and the fields a browser would submit by default. */
export interface ParsedForm {
  method: string;
  action: string;
  hidden: [string, string][];
  /** Checkboxes: name, value, checked, disabled. */
  checkboxes: { name: string; value: string; checked: boolean }[];
  selects: { name: string; options: { value: string; selected: boolean }[] }[];
  buttons: { name: string; value: string }[];
}

function attr(tag: string, name: string): string | null {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescape(m[1] ?? "") : null;
}

/** Every form of an HTML page. */
export function parseForms(page: string): ParsedForm[] {
  const forms: ParsedForm[] = [];
  for (const m of page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const open = m[1] ?? "";
    const inner = m[2] ?? "";
    const form: ParsedForm = {
      method: (attr(open, "method") ?? "get").toUpperCase(),
      action: attr(open, "action") ?? "",
      hidden: [],
      checkboxes: [],
      selects: [],
      buttons: [],
    };
    for (const input of inner.matchAll(/<input\b[^>]*>/g)) {
      const tag = input[0];
      const type = attr(tag, "type") ?? "text";
      const name = attr(tag, "name");
      if (!name) continue;
      if (type === "hidden") form.hidden.push([name, attr(tag, "value") ?? ""]);
      if (type === "checkbox") form.checkboxes.push({ name, value: attr(tag, "value") ?? "on", checked: /\schecked/.test(tag) });
    }
    for (const select of inner.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      const options = [...(select[2] ?? "").matchAll(/<option\b([^>]*)>/g)].map((o) => ({
        value: attr(o[0], "value") ?? "",
        selected: /\sselected/.test(o[1] ?? ""),
      }));
      form.selects.push({ name: attr(select[1] ?? "", "name") ?? "", options });
    }
    for (const button of inner.matchAll(/<button\b[^>]*>/g)) {
      const name = attr(button[0], "name");
      if (name) form.buttons.push({ name, value: attr(button[0], "value") ?? "" });
    }
    forms.push(form);
  }
  return forms;
}

/** A fetch-based browser: keeps cookies per name, never follows redirects by itself. */
export class FormBrowser {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private absorb(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = (pair ?? "").indexOf("=");
      if (eq < 0) continue;
      const name = (pair ?? "").slice(0, eq).trim();
      const value = (pair ?? "").slice(eq + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join("; ") };
  }

  /** GET without following redirects. */
  async get(url: string): Promise<Response> {
    const response = await fetch(new URL(url, this.base), { redirect: "manual", headers: this.cookieHeader() });
    this.absorb(response);
    return response;
  }

  /** POST a form (urlencoded) without following redirects. */
  async post(url: string, fields: [string, string][]): Promise<Response> {
    const response = await fetch(new URL(url, this.base), {
      method: "POST",
      redirect: "manual",
      headers: { ...this.cookieHeader(), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    this.absorb(response);
    return response;
  }

  /** Submits a parsed form as a browser would: hidden fields, checked boxes (or `checked` instead), the button. */
  async submit(form: ParsedForm, opts: { button?: [string, string]; checked?: string[]; extra?: [string, string][] } = {}): Promise<Response> {
    const fields: [string, string][] = [...form.hidden];
    for (const box of form.checkboxes) {
      const on = opts.checked ? opts.checked.includes(box.value) : box.checked;
      if (on) fields.push([box.name, box.value]);
    }
    for (const select of form.selects) {
      const chosen = select.options.find((o) => o.selected) ?? select.options[0];
      if (chosen) fields.push([select.name, chosen.value]);
    }
    if (opts.button) fields.push(opts.button);
    fields.push(...(opts.extra ?? []));
    if (form.method === "GET") {
      const url = new URL(form.action, this.base);
      for (const [n, v] of fields) url.searchParams.append(n, v);
      return this.get(url.href);
    }
    return this.post(form.action, fields);
  }
}

/** The Location of a redirect, resolved against `base`. */
export function locationOf(response: Response, base: string): string {
  const location = response.headers.get("location");
  if (!location) throw new Error(`expected a redirect, got ${response.status}`);
  return new URL(location, base).href;
}

/**
 * From an authorization URL to the consent page, signing in on the way when needed. Returns the consent page's HTML
 * and the consent form.
 */
export async function reachConsent(browser: FormBrowser, authorizationUrl: string, person: Person): Promise<{ page: string; consent: ParsedForm; forms: ParsedForm[] }> {
  let response = await browser.get(authorizationUrl);
  if (response.status === 303 && (response.headers.get("location") ?? "").startsWith("/login")) {
    const loginPage = await browser.get(locationOf(response, browser.base));
    const login = parseForms(await loginPage.text()).find((f) => f.action === "/login");
    if (!login) throw new Error("no login form");
    response = await browser.submit(login, { extra: [["email", person.email], ["password", PASSWORD]] });
    if (response.status !== 303) throw new Error(`login answered ${response.status}`);
    response = await browser.get(locationOf(response, browser.base));
  }
  const page = await response.text();
  if (response.status !== 200) throw new Error(`consent page answered ${response.status}: ${page.slice(0, 400)}`);
  const forms = parseForms(page);
  const consent = forms.find((f) => f.method === "POST" && f.action === "/oauth/authorize");
  if (!consent) throw new Error("no consent form");
  return { page, consent, forms };
}
